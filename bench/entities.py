"""Sites as web entities: how many sites change under the new default, and how the
figures move.

The old site was the registered domain without the Public Suffix List's private section
(:func:`core.domains.registered_domain`); the new default is :mod:`core.entities` (the PSL
with its private section and the shipped hosting-platform rules, no analyst's rule).

Two sources:

* **the test web** (``--manifest DIR``, default ``/work/demo-base/testbed`` or
  ``demo/testbed``): every external link target of the four universities in its
  manifest, keyed the old way and the new way: sites per university, and which rule made
  the new sites (which platforms the 1997 pages link to);
* **a database stored the old way** (``--db-url URL`` of a database at revision 0015, or
  ``--demo FILE``, default ``/work/demo-base/webometrics.db``, which is copied first and
  never written): the rows re-keyed by migration 0016 (``webometrics db upgrade``) and,
  after ``webometrics extract`` and ``webometrics analyse`` on the copy (the documents
  and categories of the new sites), the external sites per university and direction and
  each university's category shares (each site its own category, the analyst's override
  applied, ``unknown`` for none), old against new. Clusters are not rebuilt here
  (``webometrics cluster`` would follow).

Run: ``nice .venv/bin/python bench/entities.py`` (about 2 minutes on 2 cores); writes
``bench/results/entities.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.domains import registered_domain  # noqa: E402
from core.entities import SiteRules  # noqa: E402

RESULTS = REPO / "bench" / "results"
DEMO_DB = Path("/work/demo-base/webometrics.db")
DEMO_TESTBED = Path("/work/demo-base/testbed")


def _rule_class(rule: str) -> str:
    """``platform path geocities.com`` -> ``platform path``; ``public suffix list`` ..."""
    for prefix in ("platform path", "platform subdomain", "split", "merge"):
        if rule.startswith(prefix):
            return prefix
    return rule


# -- the test web ----------------------------------------------------------------------------


def testweb(manifest_dir: Path, rules: SiteRules) -> dict[str, Any]:
    """Old and new sites of every external link target of the test web's universities."""
    manifest = json.loads((manifest_dir / "manifest.json").read_text("utf-8"))
    per_uni: dict[str, dict[str, int]] = {}
    moved: dict[str, set[str]] = defaultdict(set)  # rule -> new sites
    platforms: Counter[str] = Counter()  # the platform (rule target) -> new sites
    urls_moved = 0
    all_old: set[str] = set()
    all_new: set[str] = set()
    for uni in manifest["universities"]:
        old, new = set(), set()
        for link in uni["external_links"]:
            url = link["target"]
            host = (urlsplit(url).hostname or "").lower()
            o, e = registered_domain(host), rules.entity(url)
            old.add(o)
            new.add(e.key)
            if e.key != o:
                urls_moved += 1
                if e.key not in moved[e.rule]:
                    platforms[e.rule] += 1
                moved[e.rule].add(e.key)
        per_uni[uni["name"]] = {"old": len(old), "new": len(new), "change": len(new) - len(old)}
        all_old |= old
        all_new |= new
    by_class: Counter[str] = Counter()
    for rule, keys in moved.items():
        by_class[_rule_class(rule)] += len(keys)
    return {
        "targets": sum(len(u["external_links"]) for u in manifest["universities"]),
        "urls_moved": urls_moved,
        "sites_old": len(all_old),
        "sites_new": len(all_new),
        "per_university": per_uni,
        "new_sites_by_rule_class": dict(by_class.most_common()),
        "new_sites_by_rule": dict(platforms.most_common()),
        "examples": {rule: sorted(keys)[:4] for rule, keys in sorted(moved.items())},
    }


# -- real organisations' websites -------------------------------------------------------------


def registries(data_dir: Path, rules: SiteRules) -> dict[str, Any]:
    """Old and new sites of real organisations' websites: the Research Organization
    Registry's (ROR) websites, the world universities list's web pages and
    website-classification's URLs (``WEBOMETRICS_DATA``/registries and
    website-classification). Counted: websites whose site changes, by rule, and old sites
    shared by several organisations that the new default tells apart."""
    import csv
    import gzip

    sources: dict[str, list[tuple[str, str]]] = {}  # source -> (organisation, url)
    ror = data_dir / "registries" / "ror_records.csv.gz"
    if ror.is_file():
        with gzip.open(ror, "rt", encoding="utf-8", newline="") as fh:
            sources["ROR"] = [
                (row["ror_id"], url)
                for row in csv.DictReader(fh)
                for url in (row["websites"] or "").split(";")
                if url.strip()
            ]
    uni = data_dir / "registries" / "world_universities_and_domains.json"
    if uni.is_file():
        sources["world universities"] = [
            (u["name"], url)
            for u in json.loads(uni.read_text("utf-8"))
            for url in u.get("web_pages") or ()
        ]
    wc = data_dir / "website-classification" / "website_classification.csv"
    if wc.is_file():
        with wc.open(encoding="utf-8", newline="") as fh:
            sources["website-classification"] = [
                (row["website_url"], row["website_url"]) for row in csv.DictReader(fh)
            ]
    out: dict[str, Any] = {}
    for name, pairs in sources.items():
        old_orgs: dict[str, set[str]] = defaultdict(set)
        new_orgs: dict[str, set[str]] = defaultdict(set)
        by_rule: Counter[str] = Counter()
        examples: dict[str, list[str]] = defaultdict(list)
        changed = 0
        for org, url in pairs:
            url = url.strip()
            host = (urlsplit(url if "://" in url else "http://" + url).hostname or "").lower()
            if not host:
                continue
            o, e = registered_domain(host), rules.entity(url)
            old_orgs[o].add(org)
            new_orgs[e.key].add(org)
            if e.key != o:
                changed += 1
                by_rule[e.rule] += 1
                if len(examples[e.rule]) < 3:
                    examples[e.rule].append(e.key)
        shared_old = sum(1 for orgs in old_orgs.values() if len(orgs) > 1)
        shared_new = sum(1 for orgs in new_orgs.values() if len(orgs) > 1)
        out[name] = {
            "websites": len(pairs),
            "changed": changed,
            "sites_old": len(old_orgs),
            "sites_new": len(new_orgs),
            "sites_shared_old": shared_old,
            "sites_shared_new": shared_new,
            "by_rule": dict(by_rule.most_common(15)),
            "examples": dict(examples),
        }
    return out


# -- a database --------------------------------------------------------------------------------


def figures(url: str) -> dict[str, Any]:
    """External sites per university x direction, and category shares (%), of every run
    with environment rows."""
    from sqlalchemy import select

    from store import make_engine
    from store.models import DomainCategory, Environment, University
    from store.session import session_scope

    engine = make_engine(url)
    try:
        with session_scope(engine) as s:
            names = dict(s.execute(select(University.id, University.name)).all())
            cats = {
                d: (o or c or "unknown")
                for d, c, o in s.execute(
                    select(
                        DomainCategory.domain,
                        DomainCategory.category,
                        DomainCategory.override_category,
                    )
                )
            }
            sites: dict[tuple[int, str, str], set[str]] = defaultdict(set)
            for run, uid, direction, dom in s.execute(
                select(
                    Environment.run_id,
                    Environment.university_id,
                    Environment.direction,
                    Environment.domain,
                )
            ):
                sites[(run, names[uid], direction)].add(dom)
    finally:
        engine.dispose()
    out: dict[str, Any] = {}
    for (run, uni, direction), doms in sorted(sites.items()):
        c = Counter(cats.get(d, "unknown") for d in doms)
        out[f"{run}|{uni}|{direction}"] = {
            "sites": len(doms),
            "shares": {k: round(100 * n / len(doms), 1) for k, n in sorted(c.items())},
        }
    return out


def _webometrics(url: str, *args: str) -> float:
    start = time.perf_counter()
    env = {**os.environ, "WEBOMETRICS_DB_URL": url}
    env.pop("WEBOMETRICS_CONFIG", None)
    subprocess.run(
        [sys.executable, "-m", "webometrics", *args],
        env=env,
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    return time.perf_counter() - start


def database(demo: Path, work: Path) -> dict[str, Any]:
    """Migrate a copy of an old-keyed database, rebuild its documents and categories, and
    compare its figures."""
    from sqlalchemy import select

    from store import make_engine, schema
    from store.entities import plan_rekey, rule_history
    from store.session import session_scope

    db = work / "entities.db"
    shutil.copyfile(demo, db)
    url = f"sqlite:///{db}"
    engine = make_engine(url)
    try:
        revision = schema.current_revision(engine)
        if revision != "0015":
            raise SystemExit(f"{demo} is at revision {revision}, not 0015 (keyed the old way)")
        rules = SiteRules.default()
        with session_scope(engine) as s:
            plan = plan_rekey(s, rules)
            from store.models import Page

            external_old = set(
                s.scalars(select(Page.registered_domain).where(Page.role != "university"))
            )
        before = figures(url)
        started = time.perf_counter()
        schema.upgrade(engine)
        migrate_seconds = time.perf_counter() - started
        applied = [e.counts for e in rule_history(engine) if e.action == "apply"]
    finally:
        engine.dispose()
    seconds = {"migration": round(migrate_seconds, 1)}
    seconds["extract"] = round(_webometrics(url, "extract"), 1)
    seconds["analyse"] = round(_webometrics(url, "analyse"), 1)
    after = figures(url)
    by_class: Counter[str] = Counter()
    by_rule: Counter[str] = Counter()
    new_keys: dict[str, set[str]] = defaultdict(set)
    split_old: set[str] = set()
    for m in plan.moves:
        e = rules.entity(m.example)
        if m.new not in new_keys[e.rule]:
            by_class[_rule_class(e.rule)] += 1
            by_rule[e.rule] += 1
        new_keys[e.rule].add(m.new)
        split_old.add(m.old)
    return {
        "database": str(demo),
        "rows_rekeyed": plan.rows,
        "keys_before": plan.keys_before,
        "keys_after": plan.keys_after,
        "old_sites_split_or_moved": len(split_old & external_old),
        "new_sites_by_rule_class": dict(by_class.most_common()),
        "new_sites_by_rule": dict(by_rule.most_common()),
        "history": applied,
        "seconds": seconds,
        "before": before,
        "after": after,
    }


# -- report --------------------------------------------------------------------------------


def markdown(result: dict[str, Any]) -> str:
    lines = ["# Sites as web entities: what changes under the new default", ""]
    lines += [
        "Old site: registered domain without the PSL's private section; new default: "
        "`core.entities` (PSL with private section + `core/site_rules.toml`), no analyst's "
        "rule. Repeat: `nice .venv/bin/python bench/entities.py`.",
        "",
    ]
    tw = result.get("testweb")
    if tw:
        lines += [
            "## The test web (manifest: every external link target of the four universities)",
            "",
            f"{tw['targets']} external links (source, target); {tw['urls_moved']} of them "
            "change site; "
            f"distinct sites {tw['sites_old']} -> {tw['sites_new']}.",
            "",
            "| university | sites (old) | sites (new) | change |",
            "|---|---:|---:|---:|",
        ]
        for name, r in tw["per_university"].items():
            lines.append(f"| {name} | {r['old']} | {r['new']} | {r['change']:+d} |")
        lines += ["", "New sites by the rule that made them:", ""]
        lines += ["| rule | new sites | examples |", "|---|---:|---|"]
        for rule, n in tw["new_sites_by_rule"].items():
            ex = ", ".join(tw["examples"].get(rule, [])[:3])
            lines.append(f"| {rule} | {n} | {ex} |")
        lines += [
            "",
            "The test web is WebKB's January 1997 pages: no LiveJournal, Blogspot, narod.ru "
            "or uCoz existed. What it has is 1990s personal hosting (GeoCities, AOL "
            "members, CompuServe OurWorld, Tripod, dial-up providers' /~user pages) and a "
            "few PSL private-section names (e.g. ras.ru's institutes, ruhr-uni-bochum.de).",
            "",
        ]
    reg = result.get("registries")
    if reg:
        lines += [
            "## Real organisations' websites (ROR, world universities list, "
            "website-classification)",
            "",
            "Each website keyed the old way and the new way; *shared* = a site several "
            "organisations (or listed websites) fall into.",
            "",
            "| source | websites | site changes | sites old -> new | shared sites old -> new |",
            "|---|---:|---:|---|---|",
        ]
        for name, r in reg.items():
            lines.append(
                f"| {name} | {r['websites']} | {r['changed']} | {r['sites_old']} -> "
                f"{r['sites_new']} | {r['sites_shared_old']} -> {r['sites_shared_new']} |"
            )
        lines += ["", "| source | rule | websites | examples |", "|---|---|---:|---|"]
        for name, r in reg.items():
            for rule, n in r["by_rule"].items():
                ex = ", ".join(r["examples"].get(rule, []))
                lines.append(f"| {name} | {rule} | {n} | {ex} |")
        lines.append("")
    db = result.get("database")
    if db:
        lines += [
            f"## The demo database ({db['database']}, copied, migrated to 0016)",
            "",
            f"Rows re-keyed by migration 0016: {db['rows_rekeyed']}; external keys "
            f"{db['keys_before']} -> {db['keys_after']}; {db['old_sites_split_or_moved']} "
            "old sites lose rows to new ones. Seconds: "
            + ", ".join(f"{k} {v}" for k, v in db["seconds"].items())
            + ".",
            "",
            "| rule | new sites |",
            "|---|---:|",
        ]
        for rule, n in db["new_sites_by_rule"].items():
            lines.append(f"| {rule} | {n} |")
        lines += [
            "",
            "External sites per university and direction, and category shares (% of its "
            "sites; each site its own category, overrides applied; categories after "
            "`webometrics analyse` on the migrated copy), old -> new:",
            "",
            "| run | university | direction | sites | universities % | scientific % "
            "| social % | news % | other % | unknown % |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        keys = {
            "universities": "universities",
            "scientific": "scientific_communities",
            "social": "social_networks",
            "news": "news_portals",
            "other": "other_organisations",
            "unknown": "unknown",
        }
        for k, b in db["before"].items():
            a = db["after"].get(k, {"sites": 0, "shares": {}})
            run, uni, direction = k.split("|")
            cells = [f"{b['sites']} -> {a['sites']}"]
            for cat in keys.values():
                x, y = b["shares"].get(cat, 0.0), a["shares"].get(cat, 0.0)
                cells.append(f"{x:g} -> {y:g}")
            lines.append(f"| {run} | {uni} | {direction} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


SMOKE_SKIP = "builds the test web and its database (about 2 minutes)"
"""Why the smoke test (tests/bench) does not run this script on tiny data."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", type=Path, default=DEMO_TESTBED, help="a built test web")
    ap.add_argument("--demo", type=Path, default=DEMO_DB, help="an old-keyed SQLite database")
    ap.add_argument("--no-database", action="store_true", help="the test web and registries only")
    args = ap.parse_args(argv)
    rules = SiteRules.default()
    result: dict[str, Any] = {"fingerprint": rules.fingerprint()}
    if (args.manifest / "manifest.json").is_file():
        result["testweb"] = testweb(args.manifest, rules)
    from core.shared_data import data_dir

    result["registries"] = registries(data_dir(), rules)
    if not args.no_database and args.demo.is_file():
        with tempfile.TemporaryDirectory() as tmp:
            result["database"] = database(args.demo, Path(tmp))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "entities.json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    text = markdown(result)
    (RESULTS / "entities.md").write_text(text, "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
