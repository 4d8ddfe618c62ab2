"""The registries as category evidence (analyse/registries.py): the mapping of ROR types
onto the paper's categories against independent evidence, coverage of real external
domains, and the look-up's speed and memory.

Measured:

* **the mapping** (:func:`analyse.registries.category_of`): ROR records per type
  combination and the categories they get;
* **a hand-labelled random sample** (``bench/data/registries_sample.json``: 100 ROR and
  20 Hipo records drawn with seed 34 and labelled by hand from name, types and website):
  the mapping's accuracy, its confusion and every disagreement;
* **ROR against Hipo**: the ROR records on a site Hipo lists as a university's (their
  types), and the ROR ``education`` records Hipo holds at the same site or a parent;
* **the taxonomy's known domains** (``analyse/taxonomy.toml``, the analyst's list): the
  registry's category of each listed domain it holds, against the listing;
* **the test web's manifest** (``testbed build``; real domains of WebKB's 1997 links and
  of the generated sites): the registry's category of each manifest site it holds
  against the manifest's category (dead sites whose category the testbed drew by hash
  left out: nothing can recover those), and categories by name alone with and without
  the registry against the manifest;
* **the demo database** (``--db-url``, a copy of ``make demo``'s; manifest with
  ``--manifest``): its external domains the registries hold, and the categoriser on
  their stored pages with and without the registry against the manifest;
* **speed and memory**: loading the packaged snapshot (CPU seconds, traced peak memory,
  resident memory added) and look-ups per second over the manifest's and demo's hosts.

Run: ``nice .venv/bin/python bench/registries.py [--db-url sqlite:///COPY.db --manifest
DIR]`` (about a minute; without ``--manifest``, the shared test-web build); writes
``bench/results/registries.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from analyse.categories import categorize_domain, load_taxonomy  # noqa: E402
from analyse.registries import (  # noqa: E402
    Registry,
    RegistryRecord,
    category_of,
    packaged_snapshot,
    read_snapshot,
    record_keys,
)
from analyse.taxonomy import Taxonomy  # noqa: E402
from bench.common import RESULTS, machine, run_date, write_results  # noqa: E402
from core.choices import UNKNOWN  # noqa: E402

SAMPLE = REPO / "bench" / "data" / "registries_sample.json"
CATS = ("universities", "scientific_communities", "other_organisations")
SHORT = {"universities": "univ", "scientific_communities": "sci", "other_organisations": "other"}


def _share(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


# --- the mapping and the sample ---------------------------------------------------------


def mapping_table(records: list[RegistryRecord]) -> list[dict[str, Any]]:
    """ROR records per type combination with the categories they are given."""
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        if r.source == "ror" and r.status != "withdrawn":
            rows[";".join(sorted(r.kind)) or "(none)"][category_of(r.source, r.kind, r.name)] += 1
    out = [{"types": t, "records": sum(c.values()), **dict(c)} for t, c in rows.items()]
    return sorted(out, key=lambda row: -row["records"])


def sample_agreement(records: list[RegistryRecord]) -> dict[str, Any]:
    """The mapping against the hand labels of the seeded sample (drawn again and checked)."""
    sample = json.loads(SAMPLE.read_text(encoding="utf-8"))
    ror = [r for r in records if r.source == "ror" and r.status != "withdrawn"]
    hipo = [r for r in records if r.source == "hipo"]
    rng = random.Random(sample["seed"])
    drawn = rng.sample(ror, 100) + rng.sample(hipo, 20)
    labelled = sample["records"]
    if [f"{r.source}:{r.id}" for r in drawn] != [x["id"] for x in labelled]:
        raise SystemExit(
            f"{SAMPLE}: the seeded draw no longer gives its records (snapshot changed)"
        )
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    wrong = []
    for rec, lab in zip(drawn, labelled, strict=True):
        got = category_of(rec.source, rec.kind, rec.name)
        confusion[lab["label"]][got] += 1
        if got != lab["label"]:
            wrong.append({**lab, "got": got})
    n = len(labelled)
    right = n - len(wrong)
    per = {}
    for c in CATS:
        tp = confusion[c][c]
        pred = sum(confusion[w][c] for w in confusion)
        true = sum(confusion[c].values())
        per[c] = {"labelled": true, "precision": _share(tp, pred), "recall": _share(tp, true)}
    ror_right = sum(1 for w in wrong if w["id"].startswith("ror:"))
    return {
        "seed": sample["seed"],
        "labelled_by": sample["labelled_by"],
        "records": n,
        "accuracy": _share(right, n),
        "ror_accuracy": _share(100 - ror_right, 100),
        "per_category": per,
        "confusion": {k: dict(v) for k, v in sorted(confusion.items())},
        "disagreements": wrong,
    }


# --- Hipo, ROR and the taxonomy -----------------------------------------------------------


def _parents(key: str) -> Iterable[str]:
    host = key.split("/", 1)[0]
    labels = host.split(".")
    yield from (".".join(labels[i:]) for i in range(len(labels) - 1))


def hipo_vs_ror(records: list[RegistryRecord]) -> dict[str, Any]:
    """ROR's types on the sites Hipo lists, and Hipo's cover of ROR's education records."""
    hipo_keys = {k for r in records if r.source == "hipo" for k in record_keys(r)}
    same_site: Counter[str] = Counter()
    same_cat: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    edu = edu_in_hipo = 0
    for r in records:
        if r.source != "ror" or r.status == "withdrawn":
            continue
        keys = record_keys(r)
        if "education" in r.kind:
            edu += 1
            edu_in_hipo += any(p in hipo_keys for k in keys for p in _parents(k))
        if any(k in hipo_keys for k in keys):
            t = ";".join(sorted(r.kind))
            same_site[t] += 1
            cat = category_of(r.source, r.kind, r.name)
            same_cat[cat] += 1
            if cat != "universities" and len(examples[cat]) < 8:
                examples[cat].append(f"{r.name} ({t}) at {keys[0]}")
    on_hipo = sum(same_site.values())
    return {
        "hipo_keys": len(hipo_keys),
        "ror_records_on_a_hipo_site": on_hipo,
        "their_types": dict(same_site.most_common()),
        "their_categories": dict(same_cat.most_common()),
        "share_universities": _share(same_cat["universities"], on_hipo),
        "non_university_examples": dict(examples),
        "ror_education_records": edu,
        "ror_education_under_a_hipo_site": edu_in_hipo,
        "share_education_in_hipo": _share(edu_in_hipo, edu),
    }


def taxonomy_agreement(reg: Registry, tax: Taxonomy) -> dict[str, Any]:
    """The registry's category of the taxonomy's listed domains it holds."""
    rows = []
    for c in tax.categories:
        for d in c.exact_domains:
            m = reg.lookup(d)
            if m is not None:
                rows.append(
                    {
                        "domain": d,
                        "listed": c.key,
                        "registry": m.category,
                        "name": m.name,
                        "kind": m.kind,
                        "matched": m.matched_domain,
                    }
                )
    agree = sum(r["listed"] == r["registry"] for r in rows)
    in_reach = [r for r in rows if r["listed"] in CATS]
    agree_in_reach = sum(r["listed"] == r["registry"] for r in in_reach)
    listed = sum(len(c.exact_domains) for c in tax.categories)
    return {
        "listed_domains": listed,
        "held": len(rows),
        "agree": agree,
        "agreement": _share(agree, len(rows)),
        "held_in_registry_categories": len(in_reach),
        "agreement_in_registry_categories": _share(agree_in_reach, len(in_reach)),
        "by_listed_category": {
            c.key: {
                "held": sum(r["listed"] == c.key for r in rows),
                "agree": sum(r["listed"] == c.key == r["registry"] for r in rows),
            }
            for c in tax.categories
        },
        "disagreements": [r for r in rows if r["listed"] != r["registry"]],
    }


# --- the test web and the demo ------------------------------------------------------------


def manifest_truth(manifest: Any, tax: Taxonomy) -> dict[str, tuple[str, str]]:
    """site -> (category, kind) of the manifest's external sites whose category can be
    known (dead sites whose category the testbed drew by a hash of the seed are left out)."""
    from testbed.sites import category_of as testbed_category

    out = {}
    for dom, site in manifest.data["sites"].items():
        if not site.get("category"):
            continue
        kind = str(site.get("kind"))
        if kind == "dead" and len({testbed_category(dom, seed=s) for s in (1, 2, 3)}) > 1:
            continue
        out[dom] = (tax.resolve(site["category"]), kind)
    return out


def _lookup_site(reg: Registry, dom: str, hosts: Iterable[str] = ()) -> Any:
    for h in (dom, *hosts):
        m = reg.lookup(h)
        if m is not None:
            return m
    return None


def registry_vs_manifest(
    reg: Registry, truth: Mapping[str, tuple[str, str]], hosts: Mapping[str, list[str]]
) -> dict[str, Any]:
    """The registry's category of the manifest's sites it holds against the manifest."""
    held: dict[str, Counter[str]] = defaultdict(Counter)
    cover: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    wrong = []
    for dom, (want, _kind) in sorted(truth.items()):
        m = _lookup_site(reg, dom, hosts.get(dom, ()))
        cover[want][1] += 1
        if m is None:
            continue
        cover[want][0] += 1
        held[want][m.category] += 1
        if m.category != want:
            wrong.append(
                {
                    "domain": dom,
                    "manifest": want,
                    "registry": m.category,
                    "name": m.name,
                    "kind": m.kind,
                    "source": m.source,
                }
            )
    checked = json.loads(SAMPLE.read_text(encoding="utf-8"))["manifest_disagreements"]
    who = Counter(
        "registry"
        if w["domain"] in checked["registry"]
        else "manifest"
        if w["domain"] in checked["manifest"]
        else "neither"
        if w["domain"] in checked["neither"]
        else "not checked"
        for w in wrong
    )
    n_held = sum(sum(c.values()) for c in held.values())
    agree = sum(held[c][c] for c in held)
    called_univ = sum(held[c]["universities"] for c in held)
    return {
        "sites": len(truth),
        "held": n_held,
        "coverage": _share(n_held, len(truth)),
        "coverage_by_category": {
            c: {"sites": n, "held": h, "share": _share(h, n)} for c, (h, n) in sorted(cover.items())
        },
        "agree": agree,
        "agreement": _share(agree, n_held),
        "called_university": called_univ,
        "called_university_rightly": held["universities"]["universities"],
        "confusion": {k: dict(v) for k, v in sorted(held.items())},
        "disagreements": wrong,
        "disagreements_checked": dict(who.most_common()),
        "checked_by": checked["checked_by"],
        "agreement_checked": _share(agree + who["registry"], n_held),
    }


def corrected(
    truth: Mapping[str, tuple[str, str]], reg: Registry, hosts: Mapping[str, list[str]]
) -> dict[str, tuple[str, str]]:
    """The manifest's truth with the hand check's corrections: the registry's category
    where the check found it right, the real category where neither was."""
    checked = json.loads(SAMPLE.read_text(encoding="utf-8"))["manifest_disagreements"]
    out = dict(truth)
    for dom, (_want, kind) in truth.items():
        if dom in checked["registry"]:
            out[dom] = (_lookup_site(reg, dom, hosts.get(dom, ())).category, kind)
        elif dom in checked["neither"]:
            out[dom] = (checked["neither"][dom], kind)
    return out


def names_only(
    reg: Registry,
    tax: Taxonomy,
    truth: Mapping[str, tuple[str, str]],
    hosts: Mapping[str, list[str]],
) -> dict[str, Any]:
    """Categories by name alone (hosts, no page) with and without the registry."""
    out = {}
    for label, registry in (("taxonomy", None), ("taxonomy + registry", reg)):
        got = {
            d: categorize_domain(d, taxonomy=tax, hosts=hosts.get(d, ()), registry=registry)
            for d in truth
        }
        out[label] = _score({d: w for d, (w, _k) in truth.items()}, got)
    return out


def _score(truth: Mapping[str, str], got: Mapping[str, Any]) -> dict[str, Any]:
    """Accuracy over the sites with evidence (unknown apart), recall and precision per
    category, what decided."""
    decided: Counter[str] = Counter()
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # tp, predicted, true
    unknown = right = 0
    for d, want in truth.items():
        a = got[d]
        decided[a.evidence.get("decided_by", "?")] += 1
        if a.category == UNKNOWN:
            unknown += 1
            continue
        right += a.category == want
        per[want][2] += 1
        per[a.category][1] += 1
        per[want][0] += a.category == want
    n = len(truth) - unknown
    return {
        "sites": len(truth),
        "unknown": unknown,
        "agree": right,
        "accuracy": _share(right, n),
        "decided_by": dict(decided.most_common()),
        "per_category": {
            c: {"true": t, "predicted": p, "recall": _share(tp, t), "precision": _share(tp, p)}
            for c, (tp, p, t) in sorted(per.items())
        },
    }


def demo(
    reg: Registry,
    tax: Taxonomy,
    url: str,
    truth: Mapping[str, tuple[str, str]],
    fixed: Mapping[str, tuple[str, str]],
) -> dict[str, Any]:
    """The demo database's external domains: registry coverage by stored category, and the
    categoriser on their stored pages with and without the registry against the manifest."""
    from sqlalchemy import select

    from store import make_engine
    from store.models import DomainCategory, UniversityDomain
    from webometrics.stages.analyse import iter_domain_pages

    engine = make_engine(url)
    with engine.connect() as conn:
        stored = dict(conn.execute(select(DomainCategory.domain, DomainCategory.category)).all())
        known = {d: "universities" for d in conn.scalars(select(UniversityDomain.domain))}
    cover: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    held_cats: Counter[str] = Counter()
    for dom, cat in stored.items():
        m = reg.lookup(dom)
        cover[cat or "-"][1] += 1
        if m is not None:
            cover[cat or "-"][0] += 1
            held_cats[m.category] += 1
    with_truth = sorted(d for d in stored if d in truth)
    runs: dict[str, dict[str, Any]] = {"taxonomy": {}, "taxonomy + registry": {}}
    started = time.perf_counter()
    for dp in iter_domain_pages(engine, with_truth, per_domain=20):
        for label, registry in (("taxonomy", None), ("taxonomy + registry", reg)):
            runs[label][dp.domain] = categorize_domain(
                dp.domain,
                taxonomy=tax,
                hosts=dp.hosts,
                titles=dp.titles,
                texts=dp.texts,
                known=known,
                registry=registry,
            )
    engine.dispose()
    want = {d: truth[d][0] for d in with_truth}
    changed = [
        {
            "domain": d,
            "manifest": want[d],
            "taxonomy": runs["taxonomy"][d].category,
            "with_registry": runs["taxonomy + registry"][d].category,
            "organisation": runs["taxonomy + registry"][d].evidence.get("registry", {}).get("name"),
        }
        for d in with_truth
        if runs["taxonomy"][d].category != runs["taxonomy + registry"][d].category
    ]
    return {
        "domains": len(stored),
        "held": sum(h for h, _n in cover.values()),
        "coverage": _share(sum(h for h, _n in cover.values()), len(stored)),
        "coverage_by_stored_category": {
            c: {"domains": n, "held": h} for c, (h, n) in sorted(cover.items())
        },
        "held_by_registry_category": dict(held_cats.most_common()),
        "in_manifest": len(with_truth),
        "categorised": {label: _score(want, got) for label, got in runs.items()},
        "categorised_checked": {
            label: _score({d: fixed[d][0] for d in with_truth}, got) for label, got in runs.items()
        },
        "changed_by_registry": changed,
        "seconds": round(time.perf_counter() - started, 1),
    }


# --- speed and memory ---------------------------------------------------------------------


def speed(queries: list[str]) -> tuple[Registry, dict[str, Any]]:
    """Load the packaged snapshot (CPU seconds, traced peak, resident memory added) and
    time look-ups of ``queries`` (repeated to at least 200,000)."""
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu = time.process_time()
    reg = Registry.load()
    load_cpu = time.process_time() - cpu
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()  # a second load, traced (tracing slows it: not timed)
    kept = Registry.load()
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    reps = max(1, 200_000 // max(1, len(queries)))
    hits = sum(reg.lookup(q) is not None for q in queries)
    cpu = time.process_time()
    for _ in range(reps):
        for q in queries:
            reg.lookup(q)
    per = (time.process_time() - cpu) / (reps * len(queries))
    return reg, {
        "snapshot_bytes": packaged_snapshot().stat().st_size,
        "records": len(reg),
        "keys": reg.keys,
        "load_cpu_seconds": round(load_cpu, 2),
        "load_traced_peak_mb": round(peak / 1e6, 1),
        "load_max_rss_added_mb": round((rss1 - rss0) / 1024, 1),
        "lookup_queries": len(queries),
        "lookup_hits": hits,
        "lookup_microseconds": round(per * 1e6, 2),
        "lookups_per_second": round(1 / per) if per else None,
    }


# --- report -------------------------------------------------------------------------------


def _table(head: list[str], rows: Iterable[Iterable[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def report(res: dict[str, Any]) -> str:
    sp, smp, hr = res["speed"], res["sample"], res["hipo_vs_ror"]
    tx, mf = res["taxonomy"], res["manifest"]
    md = [
        f"# Registries as category evidence\n\n{res['machine']}; {res['date']}. Repeat: "
        f"`{res['command']}`.\n\nSnapshot: {sp['records']:,} organisations "
        f"({res['sources']}), {sp['keys']:,} keys (hosts and host paths), "
        f"{sp['snapshot_bytes'] / 1e6:.2f} MB gzip.\n"
    ]
    md.append(
        "\n## The mapping of ROR types onto the paper's categories\n\n"
        "`analyse.registries.category_of`: education -> universities; facility -> "
        "scientific communities; company, healthcare, archive -> other organisations; "
        "government -> scientific communities when the name says research and not "
        "administration (ministry, office, agency ...), else other; nonprofit, funder, "
        "other -> scientific communities when the name says a learned or research body "
        "(society, academy, institute, research ...), else other. Records per type "
        "combination (withdrawn left out; top 20):\n\n"
    )
    md.append(
        _table(
            ["ROR types", "records", "universities", "scientific", "other"],
            (
                [
                    r["types"],
                    r["records"],
                    r.get("universities", 0),
                    r.get("scientific_communities", 0),
                    r.get("other_organisations", 0),
                ]
                for r in res["mapping"][:20]
            ),
        )
    )
    md.append(
        f"\n## A hand-labelled random sample\n\n{smp['records']} records (100 ROR, 20 Hipo) "
        f"drawn with seed {smp['seed']} (`bench/data/registries_sample.json`), labelled by "
        f"{smp['labelled_by']}.\n\nThe mapping agrees with {_pct(smp['accuracy'])} of the "
        f"labels ({_pct(smp['ror_accuracy'])} of the ROR records).\n\n"
    )
    md.append(
        _table(
            ["category", "labelled", "precision", "recall"],
            (
                [c, v["labelled"], _pct(v["precision"]), _pct(v["recall"])]
                for c, v in smp["per_category"].items()
            ),
        )
    )
    md.append("\nDisagreements (label -> mapping):\n\n")
    md += [
        f"- {w['name']} ({w['kind']}): {SHORT[w['label']]} -> {SHORT[w['got']]}\n"
        for w in smp["disagreements"]
    ]
    md.append(
        f"\n## ROR against Hipo\n\n{hr['ror_records_on_a_hipo_site']} ROR records sit on a "
        f"site Hipo lists as a university's; {_pct(hr['share_universities'])} of them map to "
        f"universities (their types: {_fmt(hr['their_types'], 8)}). Others there: "
        + "; ".join(
            f"{SHORT.get(c, c)}: {', '.join(x[:4])}"
            for c, x in hr["non_university_examples"].items()
        )
        + f". On a shared key Hipo speaks (a university's site). Of ROR's "
        f"{hr['ror_education_records']:,} education records, "
        f"{hr['ror_education_under_a_hipo_site']:,} ({_pct(hr['share_education_in_hipo'])}) "
        "are at or under a Hipo site: the rest is what ROR adds to Hipo's universities.\n"
    )
    md.append(
        f"\n## The taxonomy's listed domains\n\nThe registries hold {tx['held']} of the "
        f"{tx['listed_domains']} domains `analyse/taxonomy.toml` lists; their registry "
        f"category agrees with the listing for {tx['agree']} ({_pct(tx['agreement'])}; "
        f"{_pct(tx['agreement_in_registry_categories'])} of those listed under universities, "
        "scientific communities or other organisations). The listing outranks the "
        "registry in the categoriser (a registry says what kind of organisation runs a "
        "site, the list what kind of site it is):\n\n"
    )
    md.append(
        _table(
            ["domain", "listed", "registry", "organisation (ROR types)"],
            (
                [d["domain"], d["listed"], d["registry"], f"{d['name']} ({d['kind']})"]
                for d in tx["disagreements"]
            ),
        )
    )
    md.append(
        f"\n## The test web's manifest\n\n{mf['sites']:,} external sites with a knowable "
        f"category; the registries hold {mf['held']} ({_pct(mf['coverage'])}). Their "
        f"registry category agrees with the manifest's for {mf['agree']} "
        f"({_pct(mf['agreement'])}); {mf['called_university']} are called universities by "
        f"the registry, {mf['called_university_rightly']} rightly.\n\n"
    )
    md.append(
        _table(
            ["manifest category", "sites", "held", "share"],
            (
                [c, v["sites"], v["held"], _pct(v["share"])]
                for c, v in mf["coverage_by_category"].items()
            ),
        )
    )
    md.append(
        "\nConfusion (manifest -> registry): "
        + "; ".join(f"{c}: {_fmt(v, 5)}" for c, v in mf["confusion"].items())
        + "\n\n"
    )
    md.append(
        f"The manifest's categories of real domains are partly the testbed's own choice "
        f"(issue 34, part 4: a real university's domain serving news texts). Each of the "
        f"{len(mf['disagreements'])} disagreements was checked by hand ({mf['checked_by']}): "
        f"{_fmt(mf['disagreements_checked'], 4)}; against the checked truth the registry "
        f"agrees for {_pct(mf['agreement_checked'])} of the sites it holds.\n\n"
    )
    md.append(
        "Disagreements (first 25):\n\n"
        + _table(
            ["site", "manifest", "registry", "organisation"],
            (
                [d["domain"], d["manifest"], d["registry"], f"{d['name']} ({d['kind']})"]
                for d in mf["disagreements"][:25]
            ),
        )
    )
    md.append("\n### By name alone, with and without the registry\n\nAgainst the manifest:\n\n")
    md.append(_score_table(res["names_only"]))
    md.append("\nAgainst the manifest as the hand check corrects it:\n\n")
    md.append(_score_table(res["names_only_checked"]))
    if res.get("demo"):
        dm = res["demo"]
        md.append(
            f"\n## The demo database\n\n{dm['domains']:,} external domains categorised; the "
            f"registries hold {dm['held']} ({_pct(dm['coverage'])}) of them: "
            f"{_fmt(dm['held_by_registry_category'], 5)}. By stored category (held / "
            "domains): "
            + ", ".join(
                f"{c} {v['held']}/{v['domains']}"
                for c, v in dm["coverage_by_stored_category"].items()
            )
            + f".\n\nThe {dm['in_manifest']:,} of them in the manifest, categorised from their "
            "stored pages (as the analyse stage does) with and without the registry:\n\n"
        )
        md.append(_score_table(dm["categorised"]))
        md.append("\nAgainst the manifest as the hand check corrects it:\n\n")
        md.append(_score_table(dm["categorised_checked"]))
        md.append(f"\nChanged by the registry ({len(dm['changed_by_registry'])}):\n\n")
        md.append(
            _table(
                ["domain", "manifest", "taxonomy", "with registry", "organisation"],
                (
                    [
                        c["domain"],
                        c["manifest"],
                        c["taxonomy"],
                        c["with_registry"],
                        c["organisation"],
                    ]
                    for c in dm["changed_by_registry"][:40]
                ),
            )
        )
    md.append(
        f"\n## Speed and memory\n\nLoading the packaged snapshot: {sp['load_cpu_seconds']} s "
        f"CPU, {sp['load_traced_peak_mb']} MB traced peak ({sp['load_max_rss_added_mb']} MB "
        f"resident added). A look-up: {sp['lookup_microseconds']} µs "
        f"({sp['lookups_per_second']:,} per second) over {sp['lookup_queries']:,} hosts of the "
        f"manifest and the demo ({sp['lookup_hits']:,} found). O(labels + path segments) "
        "dictionary probes per look-up.\n"
    )
    return "".join(md)


def _fmt(counts: Mapping[str, Any], n: int) -> str:
    return ", ".join(f"{k} {v}" for k, v in list(counts.items())[:n])


def _score_table(runs: Mapping[str, Mapping[str, Any]]) -> str:
    cats = sorted({c for r in runs.values() for c in r["per_category"]})
    head = ["evidence", "accuracy", "unknown", *[f"{c} P / R" for c in cats], "decided by"]
    rows = []
    for label, r in runs.items():
        pc = r["per_category"]
        rows.append(
            [
                label,
                f"{_pct(r['accuracy'])} ({r['agree']}/{r['sites'] - r['unknown']})",
                r["unknown"],
                *[
                    f"{_pct(pc.get(c, {}).get('precision'))} / {_pct(pc.get(c, {}).get('recall'))}"
                    for c in cats
                ],
                _fmt(r["decided_by"], 6),
            ]
        )
    return _table(head, rows)


SMOKE_SKIP = "reads a crawled database and the test web's manifest (about a minute)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db-url", help="a COPY of the demo database (make demo)")
    ap.add_argument("--manifest", help="the test web's folder (default: the shared build)")
    args = ap.parse_args(argv)
    from testbed.manifest import load_manifest

    if args.manifest:
        folder = Path(args.manifest)
    else:
        from core.shared_data import data_dir
        from testbed.build import shared_build

        folder = shared_build(data_dir=data_dir())
    manifest = load_manifest(folder)
    tax = load_taxonomy()
    truth = manifest_truth(manifest, tax)
    hosts = {d: list(s.get("hosts", [])) for d, s in manifest.data["sites"].items()}
    queries = sorted({h for hs in hosts.values() for h in hs} | set(hosts))
    reg, sp = speed(queries)
    records, provenance, _keys = read_snapshot(packaged_snapshot())
    res: dict[str, Any] = {
        "machine": machine(),
        "date": run_date(),
        "command": "nice .venv/bin/python bench/registries.py"
        + (" --db-url COPY.db --manifest DIR" if args.db_url else ""),
        "sources": ", ".join(
            f"{k} {v['records']:,} records ({v.get('note') or v['source']})"
            for k, v in provenance.sources.items()
        ),
        "speed": sp,
        "mapping": mapping_table(records),
        "sample": sample_agreement(records),
        "hipo_vs_ror": hipo_vs_ror(records),
        "taxonomy": taxonomy_agreement(reg, tax),
        "manifest": registry_vs_manifest(reg, truth, hosts),
        "names_only": names_only(reg, tax, truth, hosts),
    }
    fixed = corrected(truth, reg, hosts)
    res["names_only_checked"] = names_only(reg, tax, fixed, hosts)
    if args.db_url:
        res["demo"] = demo(reg, tax, args.db_url, truth, fixed)
    md = report(res)
    write_results(RESULTS / "registries", res, md, ensure_ascii=False)
    print(md)


if __name__ == "__main__":
    main()
