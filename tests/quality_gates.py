"""The pinned quality floors of the tests, read from one file: tests/quality_gates.toml.

Each gate of the file names the test that enforces it, what it measures, its inputs (the
data sets of the shared data folder it reads, as trafilatura's evaluation gate pins its
files by digest), the digest of those inputs, the figures measured when the floors were
set, and the floors. A test asks for its gate's floors with :func:`floors`, which first
checks that the inputs are the ones the floors were measured on: a data set that changed
fails the gate with a message saying what to do, rather than comparing a floor with
figures of other data.

Run ``.venv/bin/python tests/quality_gates.py`` to print each gate's current digest
(after measuring again on new data, paste it into the file with the new figures).
"""

from __future__ import annotations

import functools
import hashlib
import sys
import tomllib
from pathlib import Path
from typing import Any

GATES_FILE = Path(__file__).resolve().with_name("quality_gates.toml")
"""The one file of every pinned floor (the docs link to it instead of quoting numbers)."""


@functools.cache
def gates() -> dict[str, dict[str, Any]]:
    """Every gate of :data:`GATES_FILE` by name."""
    return tomllib.loads(GATES_FILE.read_text(encoding="utf-8"))


@functools.cache
def folder_digest(folder: Path) -> str:
    """SHA-256 over the relative path and the bytes of every file under ``folder``, in
    sorted order (a data set's identity, whatever its modification times)."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def inputs_digest(inputs: list[str], root: Path) -> str:
    """The digest of a gate's inputs: of each data set's :func:`folder_digest`, in order."""
    h = hashlib.sha256()
    for name in inputs:
        folder = root / name
        if not folder.is_dir():
            raise FileNotFoundError(f"quality gate input {folder} is missing")
        h.update(name.encode("utf-8") + b"\0" + folder_digest(folder).encode("ascii"))
    return "sha256:" + h.hexdigest()


def _data_root() -> Path:
    from core.shared_data import data_dir

    return data_dir()


def floors(name: str, root: Path | None = None) -> dict[str, Any]:
    """The floors of gate ``name``, after checking that its inputs are the ones they
    were measured on.

    Raises
    ------
    KeyError
        No gate of that name in the file.
    AssertionError
        The inputs' digest differs from the one recorded (the message says what to do).
    """
    gate = gates()[name]
    got = inputs_digest(list(gate["inputs"]), root or _data_root())
    assert got == gate["digest"], (
        f"the inputs of quality gate {name!r} ({', '.join(gate['inputs'])}) differ from those "
        f"its floors were measured on ({gate['digest']}, now {got}): measure again, then "
        f"update its figures, floors and digest in {GATES_FILE.name} "
        f"(`python tests/quality_gates.py` prints the digests)"
    )
    return dict(gate["floors"])


def main() -> int:
    """Print every gate's digest of its inputs as they are now."""
    root = _data_root()
    for name, gate in gates().items():
        print(f"{name}: {inputs_digest(list(gate['inputs']), root)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main())
