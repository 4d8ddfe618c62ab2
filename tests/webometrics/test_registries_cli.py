"""``webometrics registries info | update | lookup`` as a user runs them (a real
subprocess): the packaged snapshot, an update from files and from a dump served over a
real loopback HTTP server, a wrong file refused with nothing replaced."""

from __future__ import annotations

import functools
import gzip
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from analyse.registries import SNAPSHOT_NAME, Registry, packaged_snapshot
from core.exceptions import ConfigError
from tests.analyse.test_registries import ror_record, ror_zip

Run = Callable[..., CompletedProcess[str]]

HIPO = [
    {"name": "Universidad de Prueba", "domains": ["uprueba.edu.ar"], "alpha_two_code": "AR",
     "country": "Argentina", "web_pages": ["https://uprueba.edu.ar/"], "state-province": None},
    {"name": "Test College", "domains": ["testcollege.ac.uk"], "alpha_two_code": "GB",
     "country": "United Kingdom", "web_pages": [], "state-province": None},
]  # fmt: skip


@pytest.fixture
def dumps(tmp_path: Path) -> Path:
    """Hipo's JSON and a ROR data-dump zip (schema v2) in a folder."""
    folder = tmp_path / "dumps"
    folder.mkdir()
    (folder / "world_universities_and_domains.json").write_text(json.dumps(HIPO))
    records = [
        ror_record("01test001", "Instituto de Investigación de Prueba", ["facility"],
                   ["https://www.iip-prueba.es/"], cc="ES"),
        ror_record("01test002", "Test Widgets Ltd", ["company"], ["https://widgets.example.com"],
                   cc="GB"),
    ]  # fmt: skip
    (folder / "v1.55-2024-10-31-ror-data.zip").write_bytes(ror_zip(records))
    return folder


@pytest.fixture
def served(dumps: Path) -> Iterator[str]:
    """The dumps folder over HTTP on 127.0.0.1 (a real server in a thread)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(dumps))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_DATA_HOME": str(tmp_path / "xdg")}


def test_info_on_the_packaged_snapshot(webometrics: Run, tmp_path: Path) -> None:
    out = webometrics("registries", "info", "--json", cwd=tmp_path, env=_env(tmp_path))
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert info["where"] == "packaged" and info["path"] == str(packaged_snapshot())
    assert info["registry_folder"] == str(tmp_path / "xdg" / "webometrics" / "registries")
    reg = Registry.load()
    assert info["records"] == reg.stats()["records"]
    assert set(info["sources"]) == {"hipo", "ror"}
    assert info["sources"]["ror"]["records"] >= info["records"]["ror"]  # withdrawn left out
    text = webometrics("registries", "info", cwd=tmp_path, env=_env(tmp_path))
    assert text.returncode == 0 and "packaged" in text.stdout and "registries update" in text.stdout
    assert "top countries" in text.stdout and "ROR records by type" in text.stdout


def test_update_from_files_then_a_wrong_file_replaces_nothing(
    webometrics: Run, tmp_path: Path, dumps: Path
) -> None:
    env = _env(tmp_path)
    out = webometrics(
        "registries", "update",
        "--from", str(dumps / "world_universities_and_domains.json"),
        "--from", str(dumps / "v1.55-2024-10-31-ror-data.zip"),
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "xdg" / "webometrics" / "registries"
    snapshot = folder / SNAPSHOT_NAME
    assert "hipo 2 records, ror 2 records" in out.stdout
    assert (folder / "LICENSE-ror-records.txt").is_file()
    look = webometrics(
        "registries", "lookup", "www.cs.uprueba.edu.ar", "iip-prueba.es/x", "ox.ac.uk",
        "--json", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert look.returncode == 0, look.stderr
    got = [json.loads(line) for line in look.stdout.splitlines()]
    assert got[0]["match"]["name"] == "Universidad de Prueba"
    assert got[0]["match"]["category"] == "universities"
    assert got[1]["match"]["category"] == "scientific_communities"
    assert got[1]["match"]["country"] == "ES" and got[1]["match"]["source_id"] == "01test001"
    assert got[2]["match"] is None  # the user's snapshot replaced the packaged one
    before = snapshot.read_bytes()
    for wrong, says in (
        (dumps.parent / "wrong.json", "neither"),
        (dumps.parent / "missing.zip", "no such file"),
    ):
        if wrong.suffix == ".json":
            wrong.write_text(json.dumps({"not": "a list"}))
        bad = webometrics(
            "registries", "update", "--from", str(dumps / "world_universities_and_domains.json"),
            "--from", str(wrong), cwd=tmp_path, env=env,
        )  # fmt: skip
        assert bad.returncode == 2, bad.stdout
        assert says in bad.stderr and str(wrong) in bad.stderr
        assert snapshot.read_bytes() == before
    # one source alone: the other's records are kept
    csv = tmp_path / "ror.csv.gz"
    csv.write_bytes(gzip.compress(
        b"ror_id,name,types,websites,country_code,status\n"
        b"0csvtest1,Observatorio de Prueba,facility,https://obs-prueba.cl/,CL,active\n"
    ))  # fmt: skip
    out = webometrics("registries", "update", "--from", str(csv), cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    reg = Registry.load(folder)
    assert reg.stats()["records"] == {"hipo": 2, "ror": 1}
    assert reg.lookup("obs-prueba.cl").name == "Observatorio de Prueba"
    assert reg.provenance.sources["hipo"]["source"].endswith("world_universities_and_domains.json")


def test_update_from_urls_over_http(
    webometrics: Run, tmp_path: Path, served: str, dumps: Path
) -> None:
    into = tmp_path / "my-registries"
    out = webometrics(
        "registries", "update", "--into", str(into),
        "--from", f"{served}/world_universities_and_domains.json",
        "--from", f"{served}/v1.55-2024-10-31-ror-data.zip",
        cwd=tmp_path, env=_env(tmp_path),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    reg = Registry.load(into)
    assert reg.provenance.sources["ror"]["source"] == f"{served}/v1.55-2024-10-31-ror-data.zip"
    assert reg.provenance.sources["ror"]["version"] == "v1.55-2024-10-31-ror-data_schema_v2"
    assert reg.lookup("widgets.example.com").category == "other_organisations"
    assert reg.lookup("testcollege.ac.uk").country == "GB"
    before = (into / SNAPSHOT_NAME).read_bytes()
    missing = webometrics(
        "registries", "update", "--into", str(into), "--from", f"{served}/nothing.zip",
        cwd=tmp_path, env=_env(tmp_path),
    )  # fmt: skip
    assert missing.returncode == 2
    assert "cannot download" in missing.stderr and "404" in missing.stderr
    assert (into / SNAPSHOT_NAME).read_bytes() == before


def test_help_explains_the_sources(webometrics: Run, tmp_path: Path) -> None:
    out = webometrics("registries", "update", "--help", cwd=tmp_path)
    assert out.returncode == 0
    for said in ("schema v2", "ror_id,name,types,websites", "nothing is replaced", "--into"):
        assert said in " ".join(out.stdout.split()), said


def test_the_latest_ror_dump_is_found_in_a_zenodo_record(served: str, dumps: Path) -> None:
    """Without --from, update asks Zenodo's API for the latest record and downloads its
    zip: here a record in Zenodo's layout served on 127.0.0.1."""
    from webometrics.commands.registries import latest_ror_zip

    record = {
        "id": 1,
        "metadata": {"title": "ROR Data", "version": "v1.55"},
        "files": [
            {"key": "README.md", "links": {"self": f"{served}/README.md"}},
            {"key": "v1.55-2024-10-31-ror-data.zip",
             "links": {"self": f"{served}/v1.55-2024-10-31-ror-data.zip"}},
        ],
    }  # fmt: skip
    (dumps / "record.json").write_text(json.dumps(record))
    assert latest_ror_zip(f"{served}/record.json") == f"{served}/v1.55-2024-10-31-ror-data.zip"
    (dumps / "nozip.json").write_text(json.dumps({"files": [{"key": "a.csv", "links": {}}]}))
    with pytest.raises(ConfigError, match="no zip"):
        latest_ror_zip(f"{served}/nozip.json")
    with pytest.raises(ConfigError, match="not a Zenodo record"):
        latest_ror_zip(f"{served}/v1.55-2024-10-31-ror-data.zip")
