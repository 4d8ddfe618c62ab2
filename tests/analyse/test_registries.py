"""The registries of real organisations: the shipped snapshot against the raw files of
the shared data folder, parent-domain look-ups, websites with paths and platforms, the
mapping of ROR types, the dumps' layouts (Hipo's JSON, a ROR data-dump zip in schema v2,
the reduced CSV) and the atomic snapshot file."""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import re
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from analyse.categories import Assignment, categorize_domain
from analyse.registries import (
    PLATFORMS,
    DumpInput,
    Registry,
    RegistryMatch,
    RegistryRecord,
    category_of,
    merged_snapshot,
    packaged_snapshot,
    read_hipo,
    read_ror,
    read_snapshot,
    record_keys,
    site_keys,
    write_snapshot,
)
from analyse.taxonomy import Taxonomy, load_taxonomy
from core.choices import CATEGORY_DECIDERS
from core.exceptions import ConfigError
from core.settings import Settings
from store import make_engine
from store.models import DomainCategory
from tests.analyse.test_categories import REAL_DOMAINS
from tests.stored_world import Facts
from webometrics.stages import analyse
from webometrics.stages.analyse import AnalyseScope

SAMPLE = Path(__file__).resolve().parents[2] / "bench" / "data" / "registries_sample.json"
_NONE = RegistryMatch("", "", "", "", "", "", "ror", "")


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.load()


@pytest.fixture(scope="module")
def hipo(shared_data: Path) -> list[dict]:
    return json.loads(
        (shared_data / "registries" / "world_universities_and_domains.json").read_text()
    )


@pytest.fixture(scope="module")
def ror_rows(shared_data: Path) -> list[dict[str, str]]:
    with gzip.open(shared_data / "registries" / "ror_records.csv.gz", "rt") as fh:
        return list(csv.DictReader(fh))


def ror_record(
    rid: str,
    name: str,
    types: list[str],
    websites: list[str],
    cc: str = "FR",
    status: str = "active",
    domains: list[str] | None = None,
) -> dict:
    """A ROR record in schema v2's layout (as in the data dump's ``*_schema_v2.json``)."""
    return {
        "admin": {"created": {"date": "2020-01-01", "schema_version": "1.0"},
                  "last_modified": {"date": "2025-01-01", "schema_version": "2.1"}},
        "domains": domains or [],
        "established": 1950,
        "external_ids": [{"all": ["grid.1.2"], "preferred": "grid.1.2", "type": "grid"}],
        "id": f"https://ror.org/{rid}",
        "links": [{"type": "website", "value": w} for w in websites]
        + [{"type": "wikipedia", "value": f"https://en.wikipedia.org/wiki/{rid}"}],
        "locations": [{"geonames_id": 2988507, "geonames_details": {
            "continent_code": "EU", "continent_name": "Europe", "country_code": cc,
            "country_name": "France", "lat": 48.8, "lng": 2.3, "name": "Paris"}}],
        "names": [{"lang": None, "types": ["acronym"], "value": "ABC"},
                  {"lang": "en", "types": ["ror_display", "label"], "value": name}],
        "relationships": [],
        "status": status,
        "types": types,
    }  # fmt: skip


def ror_zip(records: list[dict], *, v1: bool = True) -> bytes:
    """A ROR data-dump zip: the v1 JSON beside the schema v2 JSON and its CSV, as the
    Zenodo dumps of 2024 hold them."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        stem = "v1.55-2024-10-31-ror-data"
        if v1:
            zf.writestr(f"{stem}.json", json.dumps([{"id": r["id"], "name": "v1 name"}
                                                    for r in records]))  # fmt: skip
        zf.writestr(f"{stem}_schema_v2.json", json.dumps(records))
        zf.writestr(f"{stem}_schema_v2.csv", "id,names.types.ror_display\n")
    return buf.getvalue()


# --- look-ups ---------------------------------------------------------------------------


def test_every_hipo_university_is_found_with_its_subdomains(
    registry: Registry, hipo: list[dict]
) -> None:
    """By name alone, every university of the list is a university, subdomains too
    (except a domain that is a platform or public suffix: none is a university's own)."""
    missed, wrong = [], []
    for uni in hipo:
        for dom in uni["domains"]:
            if not site_keys(dom):
                continue
            for q in (dom, f"www.{dom}", f"cs.dept.{dom}", f"https://lib.{dom}/a/b?x=1"):
                m = registry.lookup(q)
                if m is None:
                    missed.append(q)
                elif m.category != "universities":
                    wrong.append((q, m))
    assert not missed and not wrong


def test_every_ror_education_record_is_a_university(
    registry: Registry, ror_rows: list[dict[str, str]]
) -> None:
    rng = random.Random(34)
    edu = [r for r in ror_rows if "education" in r["types"] and r["status"] != "withdrawn"]
    for row in rng.sample(edu, 400):
        rec = read_ror(f"ror_id,name,types,websites,country_code,status\n"
                       f"{row['ror_id']},x,{row['types']},{row['websites']},XX,active\n"
                       .encode())[0][0]  # fmt: skip
        for key in record_keys(rec):
            m = registry.lookup(key)
            assert m is not None and m.category == "universities", (row, key, m)


def test_parent_domains_and_the_evidence(registry: Registry) -> None:
    m = registry.lookup("https://www.cs.ox.ac.uk/people/")
    assert m is not None
    assert (m.matched_domain, m.category, m.country) == ("ox.ac.uk", "universities", "GB")
    assert "Oxford" in m.name and m.source in ("hipo", "ror") and m.source_id
    assert m.query == "cs.ox.ac.uk/people"
    ev = m.as_evidence()
    assert json.loads(json.dumps(ev)) == ev
    assert registry.lookup("cs.ox.ac.uk") == registry.lookup("CS.OX.AC.UK.")


@pytest.mark.parametrize(
    "platform",
    ["google.com", "sites.google.com", "google.co.uk", "facebook.com", "www.facebook.com",
     "twitter.com", "vk.com", "t.me", "wordpress.com", "blogspot.com", "livejournal.com",
     "github.io", "github.com", "youtube.com", "linkedin.com", "narod.ru", "ucoz.ru",
     "wixsite.com", "wikipedia.org", "en.wikipedia.org", "researchgate.net", "doi.org",
     "ac.uk", "edu", "com"],
)  # fmt: skip
def test_a_platform_is_never_an_organisation(registry: Registry, platform: str) -> None:
    assert registry.lookup(platform) is None


def test_websites_on_platforms_and_with_paths() -> None:
    recs = [
        RegistryRecord("ror", "01", "Lab on Google Sites", ("facility",), "FR",
                       ("https://sites.google.com/site/somelab/",)),
        RegistryRecord("ror", "02", "Society on Facebook", ("nonprofit",), "RU",
                       ("https://www.facebook.com/SomeSociety", "https://vk.com/society")),
        RegistryRecord("ror", "03", "Blog Institute", ("facility",), "US",
                       ("https://blog-institute.wordpress.com/",)),
        RegistryRecord("ror", "04", "A channel", ("company",), "RU", ("https://t.me/chan",)),
        RegistryRecord("ror", "05", "Twitter home", ("company",), "US", ("https://x.com/",)),
        RegistryRecord("ror", "06", "Water agency", ("government",), "DE",
                       ("http://www.nlwkn.de/FSK/",)),
        RegistryRecord("ror", "07", "Team A", ("facility",), "FR",
                       ("https://team.inria.fr/a/",)),
        RegistryRecord("ror", "08", "Team B", ("facility",), "FR",
                       ("https://team.inria.fr/b/index.html",)),
        RegistryRecord("ror", "09", "Withdrawn", ("facility",), "FR", ("https://gone.fr/",),
                       "withdrawn"),
    ]  # fmt: skip
    reg = Registry(recs)
    assert reg.lookup("sites.google.com/site/somelab/home").name == "Lab on Google Sites"
    assert reg.lookup("https://sites.google.com/site/somelab").source_id == "01"
    assert reg.lookup("sites.google.com") is None and reg.lookup("google.com") is None
    assert reg.lookup("sites.google.com/site/other") is None
    assert reg.lookup("facebook.com/somesociety").source_id == "02"
    assert reg.lookup("vk.com/society/wall").source_id == "02"
    assert reg.lookup("facebook.com") is None and reg.lookup("vk.com") is None
    assert reg.lookup("www.blog-institute.wordpress.com").source_id == "03"
    assert reg.lookup("wordpress.com") is None and reg.lookup("other.wordpress.com") is None
    assert reg.lookup("t.me/chan").source_id == "04" and reg.lookup("t.me") is None
    assert reg.lookup("x.com") is None
    # a path on an ordinary host nobody else holds: the host is the organisation's too
    assert reg.lookup("nlwkn.de").source_id == "06"
    assert reg.lookup("www.nlwkn.de/fsk/x").source_id == "06"
    # a host shared by the paths of two records is neither's
    assert reg.lookup("team.inria.fr") is None and reg.lookup("inria.fr") is None
    assert reg.lookup("team.inria.fr/a/members").source_id == "07"
    assert reg.lookup("team.inria.fr/b").source_id == "08"
    assert reg.lookup("gone.fr") is None and len(reg) == 8


def test_no_platform_of_the_list_is_keyed_by_the_shipped_snapshot(registry: Registry) -> None:
    for platform in PLATFORMS:
        host = platform.replace("*", "com")
        assert registry.lookup(host) is None, platform
        assert registry.lookup("www." + host) is None, platform


def test_records_on_one_key() -> None:
    recs = [
        RegistryRecord("ror", "r1", "Univ hospital", ("healthcare",), "DE", ("uni-x.de",)),
        RegistryRecord("hipo", "uni-x.de", "Universität X", ("university",), "DE", ("uni-x.de",)),
        RegistryRecord("ror", "c1", "Co A", ("company",), "US", ("shared-host.com",)),
        RegistryRecord("ror", "c2", "Lab B", ("facility",), "US", ("shared-host.com",)),
        RegistryRecord("ror", "c3", "Lab C", ("facility",), "US", ("shared-host.com",)),
        RegistryRecord("ror", "i1", "Old lab", ("facility",), "US", ("old.org",), "inactive"),
        RegistryRecord("ror", "i2", "New firm", ("company",), "US", ("old.org",)),
    ]  # fmt: skip
    reg = Registry(recs)
    m = reg.lookup("uni-x.de")
    assert (m.source, m.category, m.records) == ("hipo", "universities", 2)
    assert m.also == ("ror:r1 Univ hospital (other_organisations)",)
    m = reg.lookup("shared-host.com")
    assert (m.category, m.source_id, m.records) == ("scientific_communities", "c2", 3)
    assert reg.lookup("old.org").source_id == "i2"  # an active record before an inactive


@pytest.mark.parametrize(
    ("types", "name", "want"),
    [
        (("education",), "Oxford", "universities"),
        (("education", "funder"), "Some University", "universities"),
        (("education", "healthcare"), "Medical University", "universities"),
        (("facility",), "Max Planck Institute for Physics", "scientific_communities"),
        (("facility", "government"), "Argonne National Laboratory", "scientific_communities"),
        (("company",), "IBM Research", "other_organisations"),
        (("company", "funder"), "Pfizer", "other_organisations"),
        (("government",), "Ministry of Science and Higher Education", "other_organisations"),
        (("government",), "Geological Survey of Estonia", "scientific_communities"),
        (("funder", "government"), "Federal Agency for Scientific Organizations",
         "other_organisations"),
        (("healthcare",), "Hospital Research Foundation", "other_organisations"),
        (("archive",), "National Archives", "other_organisations"),
        (("nonprofit",), "International Society for Stem Cell Research",
         "scientific_communities"),
        (("nonprofit",), "BookTrust", "other_organisations"),
        (("other",), "History of Science Society", "scientific_communities"),
        (("other",), "Shenzhen Stock Exchange", "other_organisations"),
    ],
)  # fmt: skip
def test_the_mapping_of_ror_types(types: tuple[str, ...], name: str, want: str) -> None:
    assert category_of("ror", types, name) == want


# --- snapshots and dumps ----------------------------------------------------------------


def test_the_packaged_snapshot_is_the_shared_data(
    hipo: list[dict], ror_rows: list[dict[str, str]]
) -> None:
    """The shipped snapshot holds every record of both raw files, with the keys the
    current rules make (else scripts/registry_snapshot.py must be run again)."""
    records, provenance, keys = read_snapshot(packaged_snapshot())
    assert keys is not None, "key rules changed: run scripts/registry_snapshot.py"
    by_source: dict[str, set[str]] = {"hipo": set(), "ror": set()}
    for r in records:
        by_source[r.source].add(r.id)
    assert len(by_source["hipo"]) == len(hipo)
    assert by_source["ror"] == {r["ror_id"] for r in ror_rows}
    assert provenance.sources["hipo"]["records"] == len(hipo)
    assert provenance.sources["ror"]["records"] == len(ror_rows)
    assert "commit" in provenance.sources["ror"]["note"]
    rng = random.Random(3)
    for i in rng.sample(range(len(records)), 500):
        assert keys[i] == record_keys(records[i])
    folder = packaged_snapshot().parent
    assert (folder / "LICENSE-ror-records.txt").is_file()
    assert (folder / "LICENSE-university-domains-list.txt").is_file()
    assert packaged_snapshot().stat().st_size < 4_000_000


def test_ror_zip_in_schema_v2(tmp_path: Path) -> None:
    data = ror_zip([
        ror_record("05abc1234", "Institut Test de Recherche", ["facility"],
                   ["https://www.itr.example.fr/"], domains=["itr-alt.fr"]),
        ror_record("05abc5678", "Université Test", ["education", "funder"],
                   ["https://univ-test.fr"], cc="FR"),
        ror_record("05abc9999", "Gone", ["company"], ["https://gone.fr"], status="withdrawn"),
    ])  # fmt: skip
    records, version = read_ror(data, origin="dump.zip")
    assert version == "v1.55-2024-10-31-ror-data_schema_v2"
    first = records[0]
    assert (first.id, first.name, first.kind, first.country) == (
        "05abc1234", "Institut Test de Recherche", ("facility",), "FR")  # fmt: skip
    assert first.websites == ("https://www.itr.example.fr/", "itr-alt.fr")
    reg = Registry(records)
    assert reg.lookup("itr.example.fr").category == "scientific_communities"
    assert reg.lookup("www.itr-alt.fr").source_id == "05abc1234"
    assert reg.lookup("univ-test.fr").category == "universities"
    assert reg.lookup("gone.fr") is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not json", "neither"),
        (b'[{"x": 1}]', "neither"),
        (b"a,b\n1,2\n", "neither"),
        (b"PK\x03\x04broken", "not a zip"),
    ],
)
def test_a_wrong_dump_is_refused_with_its_reason(data: bytes, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        merged_snapshot([DumpInput(data, "wrong.file")])


def test_a_zip_without_records_is_refused() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "no records")
    with pytest.raises(ConfigError, match="no JSON"):
        merged_snapshot([DumpInput(buf.getvalue(), "empty.zip")])
    bad = ror_zip([{"id": "https://ror.org/0", "names": "not a list"}], v1=False)
    with pytest.raises(ConfigError, match="malformed"):
        merged_snapshot([DumpInput(bad, "bad.zip")])


def test_hipo_json_and_a_merge_keeps_the_other_source(tmp_path: Path) -> None:
    hipo = [{"name": "Test University", "domains": ["test-u.edu", "tu.example.org"],
             "alpha_two_code": "US", "country": "United States", "web_pages": [],
             "state-province": None}]  # fmt: skip
    data = json.dumps(hipo).encode()
    assert read_hipo(data)[0].websites == ("test-u.edu", "tu.example.org")
    current = Registry.load()
    records, prov = merged_snapshot([DumpInput(data, "h.json", "test")], current)
    assert sum(r.source == "hipo" for r in records) == 1
    assert sum(r.source == "ror" for r in records) == sum(
        r.source == "ror" for r in current.records
    )
    assert prov.sources["hipo"]["note"] == "test"
    assert prov.sources["ror"] == current.provenance.sources["ror"]
    path = write_snapshot(records, prov, tmp_path / "registry.tsv.gz")
    again = Registry.load(tmp_path)
    assert again.path == path and len(again) == len(records)
    assert again.lookup("cs.tu.example.org").name == "Test University"
    # the same records give the same bytes
    other = write_snapshot(records, prov, tmp_path / "b" / "registry.tsv.gz")
    assert other.read_bytes() == path.read_bytes()
    with pytest.raises(ConfigError, match="second hipo"):
        merged_snapshot([DumpInput(data, "a.json"), DumpInput(data, "b.json")])


def test_a_broken_snapshot_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "registry.tsv.gz").write_bytes(gzip.compress(b"hello\n"))
    with pytest.raises(ConfigError, match="registries update"):
        Registry.load(tmp_path)
    (tmp_path / "registry.tsv.gz").write_bytes(b"garbage")
    with pytest.raises(ConfigError, match="registries update"):
        Registry.load(tmp_path)
    # an empty folder: the packaged snapshot
    assert Registry.load(tmp_path / "none").path == packaged_snapshot()


# --- the categoriser with the registries (the "done when") ------------------------


@pytest.fixture(scope="module")
def taxonomy() -> Taxonomy:
    return load_taxonomy()


def _outranked(a: Assignment) -> bool:
    """Decided by a taxonomy listing that outranks the registry (a listed domain as
    specific as the registry's key, in another category)."""
    return a.evidence["decided_by"] == "known_domain" and "outranked_by" in a.evidence.get(
        "registry", {}
    )


@pytest.mark.slow
def test_by_name_every_registered_university_is_a_university(
    registry: Registry, taxonomy: Taxonomy
) -> None:
    """Every host (and host path) the registries hold as a university's, and a
    subdomain of each, is a university by its name alone, its organisation named in the
    evidence; only a domain the taxonomy lists under another category is not."""
    wrong, outranked = [], []
    universities = [k for k, m in registry.matches() if m.category == "universities"]
    assert len(universities) > 20_000
    forms = set(random.Random(34).sample(universities, 2000))
    for key in universities:
        host, _, path = key.partition("/")
        sites = [key]
        if key in forms:  # a sample's www. and subdomain forms too
            sites += [f"www.{host}" + (f"/{path}" if path else "")] + [f"a.b.{host}"] * (not path)
        for site in sites:
            a = categorize_domain(site, taxonomy=taxonomy, registry=registry)
            if a.category == "universities":
                assert a.evidence["registry"]["name"] and a.evidence["registry"]["country"] != "?"
            elif _outranked(a):
                outranked.append((site, a.category, a.evidence["known"]))
            else:
                wrong.append((site, a.category, a.evidence))
    assert not wrong
    # the listings that outrank: non-universities the registries call universities
    assert {s.removeprefix("www.").removeprefix("a.b.") for s, _c, _k in outranked} <= {"ieee.org"}


def test_by_name_no_registered_non_university_is_a_university(
    registry: Registry, taxonomy: Taxonomy
) -> None:
    """A research institute, company, hospital or ministry is never a university by its
    name, even on a .edu or .ac.* domain (salk.edu, tmc.edu), unless it is a site under a
    university's domain (lib.umn.edu)."""
    others = [k for k, m in registry.matches() if m.category != "universities" and not m.part_of]
    # every one a university pattern or name part could call a university, and a sample
    risky = [k for k in others if re.search(r"\.(edu|ac)(\.|$|/)|univ|uni-|college|institut", k)]
    called = []
    for key in sorted(set(risky) | set(random.Random(34).sample(others, 4000))):
        a = categorize_domain(key, taxonomy=taxonomy, registry=registry)
        if a.category == "universities":
            called.append((key, a.evidence))
    assert not called
    for dom, want in (("salk.edu", "scientific_communities"), ("tmc.edu", "other_organisations"),
                      ("sdsc.edu", "scientific_communities")):  # fmt: skip
        a = categorize_domain(dom, taxonomy=taxonomy, registry=registry)
        assert a.category == want, (dom, a)
        assert a.evidence["decided_by"] == "registry"


def test_known_non_university_domains_keep_their_category(
    registry: Registry, taxonomy: Taxonomy
) -> None:
    """The real domains the taxonomy's tests name (search engines, social networks, media,
    news portals, other organisations) get the same category with the registries."""
    for dom, want in REAL_DOMAINS.items():
        a = categorize_domain(dom, taxonomy=taxonomy, hosts=[f"www.{dom}"], registry=registry)
        assert a.category == want, (dom, a.evidence)


def test_research_organisations_get_the_mapped_category_with_their_name(
    registry: Registry, taxonomy: Taxonomy
) -> None:
    """By name alone, a ROR research organisation (not under a university's domain, not
    listed by the taxonomy) is a scientific community with its name, country and source
    as evidence; another organisation is an other organisation or what its name's parts
    say (never a university or, for a company, hospital, archive or government body, a
    scientific community)."""
    rng = random.Random(34)
    items = [
        (k, m)
        for k, m in registry.matches()
        if m.source == "ror" and m.category != "universities" and not m.part_of
    ]
    for key, match in rng.sample(items, 3000):
        a = categorize_domain(key, taxonomy=taxonomy, registry=registry)
        if _outranked(a) or (
            match.category != "scientific_communities"
            and a.evidence["decided_by"] == "known_domain"
        ):
            continue  # a listing outranks the registry, or outweighs an "other" under it
        ev = a.evidence["registry"]
        assert (ev["name"], ev["country"], ev["source"], ev["source_id"]) == (
            match.name, match.country, "ror", match.source_id)  # fmt: skip
        if match.category == "scientific_communities":
            assert a.category == "scientific_communities", (key, a)
            assert a.evidence["decided_by"] == "registry"
        else:
            assert a.category not in ("universities",), (key, a)
            kinds = set(match.kind.split(";"))
            if kinds & {"company", "healthcare", "archive", "government"}:
                assert a.category != "scientific_communities", (key, a)


def test_the_test_webs_sites_are_no_universities_unless_they_are(
    registry: Registry, taxonomy: Taxonomy, shared_data: Path
) -> None:
    """On the test web's manifest, no site of another category is called a university by
    its name and the registries, except real universities the testbed labelled with
    another category (checked by hand: bench/data/registries_sample.json). Dead sites
    whose category the testbed drew by a hash are left out (they have no kind)."""
    from testbed.build import shared_build
    from testbed.manifest import load_manifest

    manifest = load_manifest(shared_build(data_dir=shared_data))
    checked = json.loads(SAMPLE.read_text(encoding="utf-8"))["manifest_disagreements"]
    real_universities = {
        d for d in checked["registry"] if (registry.lookup(d) or _NONE).category == "universities"
    }
    from testbed.sites import category_of as testbed_category

    called = set()
    for dom, site in manifest.data["sites"].items():
        if not site.get("category") or taxonomy.resolve(site["category"]) == "universities":
            continue
        if (
            site.get("kind") == "dead"
            and len({testbed_category(dom, seed=k) for k in (1, 2, 3)}) > 1
        ):
            continue  # never served, its category drawn by a hash of the seed: no kind
        a = categorize_domain(dom, taxonomy=taxonomy, hosts=site.get("hosts", []),
                              registry=registry)  # fmt: skip
        if a.category == "universities":
            called.add(dom)
    assert called <= real_universities, called - real_universities


def test_the_stage_stores_the_registry_evidence(filled: Facts, tmp_path: Path) -> None:
    """The analyse stage (SQLite and PostgreSQL) stores each domain's registry evidence
    and what decided; with ``[analyse] registries = false`` there is none."""
    engine = make_engine(filled.url)
    try:
        on = Settings().replace(analyse={"registry_dir": str(tmp_path / "none")})
        analyse.run(engine, on, progress=False)
        with Session(engine) as s:
            rows = {r.domain: r for r in s.scalars(select(DomainCategory))}
        mit = rows["mit.edu"].evidence
        assert mit["registry"]["name"] == "Massachusetts Institute of Technology"
        assert mit["registry"]["country"] == "US" and mit["decided_by"] == "registry"
        assert rows["mit.edu"].category == "universities"
        arxiv = rows["arxiv.org"].evidence
        assert arxiv["decided_by"] == "known_domain"
        assert arxiv["registry"]["outranked_by"] == "known domain arxiv.org"
        assert rows["arxiv.org"].category == "scientific_communities"
        assert "registry" not in rows["vk.com"].evidence  # a platform is no organisation
        for r in rows.values():
            assert r.evidence["decided_by"] in CATEGORY_DECIDERS
        off = Settings().replace(analyse={"registries": False})
        analyse.run(engine, off, AnalyseScope(redo=True), progress=False)
        with Session(engine) as s:
            again = {r.domain: r for r in s.scalars(select(DomainCategory))}
        assert all("registry" not in r.evidence for r in again.values())
        assert again["mit.edu"].category == "universities"  # listed and its pattern too
        assert again["mit.edu"].evidence["decided_by"] != "registry"
    finally:
        engine.dispose()
