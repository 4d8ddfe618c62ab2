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
import zipfile
from pathlib import Path

import pytest

from analyse.registries import (
    PLATFORMS,
    DumpInput,
    Registry,
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
from core.exceptions import ConfigError


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
