"""The one file of pinned quality floors (tests/quality_gates.toml) is whole and read.

Every gate names its test, what it measures, its inputs and their digest, the figures
measured and floors below them; the named test reads its gate; the digest check fails a
gate whose inputs changed; the docs link to the file rather than quote its numbers.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.quality_gates import GATES_FILE, floors, folder_digest, gates, inputs_digest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(gates()))
def test_a_gate_is_whole_and_its_test_reads_it(name: str) -> None:
    gate = gates()[name]
    assert {"test", "what", "inputs", "digest", "measured", "floors"} <= set(gate)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", gate["digest"]), gate["digest"]
    assert gate["floors"] and set(gate["floors"]) <= set(gate["measured"])
    for key, floor in gate["floors"].items():  # a floor, not a target
        assert floor <= gate["measured"][key], (name, key)
    test = REPO / gate["test"]
    text = test.read_text(encoding="utf-8")
    assert "tests.quality_gates import" in text and name in text, f"{test} reads no {name}"


def test_the_floors_hold_for_the_inputs_measured_on(tmp_path: Path) -> None:
    from core.shared_data import data_dir

    root = data_dir()
    assert floors("activity_websites") == gates()["activity_websites"]["floors"]
    # a copy of the inputs gives the same digest; one byte changed, another
    name = gates()["activity_lenta"]["inputs"][0]
    shutil.copytree(root / name, tmp_path / name)
    assert floors("activity_lenta", root=tmp_path) == gates()["activity_lenta"]["floors"]
    first = sorted(p for p in (tmp_path / name).rglob("*") if p.is_file())[0]
    first.write_bytes(first.read_bytes() + b" ")
    folder_digest.cache_clear()  # digests are kept per folder within a process
    assert inputs_digest([name], tmp_path) != gates()["activity_lenta"]["digest"]
    with pytest.raises(AssertionError, match=r"differ from those its floors were measured on"):
        floors("activity_lenta", root=tmp_path)
    with pytest.raises(FileNotFoundError, match=r"quality gate input"):
        floors("activity_websites", root=tmp_path)


def test_no_test_pins_a_gate_floor_of_its_own() -> None:
    """The tests of the gates keep no floor constants beside the file."""
    for gate in gates().values():
        text = (REPO / gate["test"]).read_text(encoding="utf-8")
        assert not re.search(r"^FLOOR_\w+ = [0-9.]+$", text, flags=re.M), gate["test"]


def test_the_docs_link_to_the_gates() -> None:
    page = (REPO / "docs" / "measurements.md").read_text(encoding="utf-8")
    assert GATES_FILE.relative_to(REPO).as_posix() in page
