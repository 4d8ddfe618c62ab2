"""Write the registry snapshot shipped in the package (``analyse/registry_data/``).

It is made from the raw registries of the shared data folder
(``$WEBOMETRICS_DATA/registries``: Hipo's ``world_universities_and_domains.json`` and the
ROR records' ``ror_records.csv.gz``, see their SOURCE.txt) with the same code as
``webometrics registries update`` (:func:`analyse.registries.merged_snapshot`), the
commits named in SOURCE.txt as the provenance's notes, and the two licence texts copied
beside it. The raw files are not shipped.

Run: ``.venv/bin/python scripts/registry_snapshot.py``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from analyse.registries import SNAPSHOT_NAME, DumpInput, merged_snapshot, write_snapshot
from core.shared_data import data_dir

OUT = Path(__file__).resolve().parents[1] / "analyse" / "registry_data"
FILES = {
    "hipo": "world_universities_and_domains.json",
    "ror": "ror_records.csv.gz",
}
LICENCES = ("LICENSE-university-domains-list.txt", "LICENSE-ror-records.txt")


def notes(source_txt: str) -> dict[str, str]:
    """The upstream repository and commit of each file, as SOURCE.txt names them."""
    out = {}
    blocks = re.split(r"\n\s*\d+\.\s+", source_txt)
    for key, name in FILES.items():
        block = next((b for b in blocks if b.startswith(name)), "")
        m = re.search(
            r"(https://github\.com/\S+)\s+commit\s+([0-9a-f]{40})\s*\n?\s*\(([^)]+)\)", block
        )
        if m:
            out[key] = f"{m.group(1)} commit {m.group(2)} ({m.group(3)}), via {name}"
    return out


def main() -> None:
    root = data_dir("registries")
    said = notes((root / "SOURCE.txt").read_text(encoding="utf-8"))
    dumps = [
        DumpInput((root / f).read_bytes(), f"shared data registries/{f}", said.get(k, ""))
        for k, f in FILES.items()
    ]
    records, provenance = merged_snapshot(dumps)
    path = write_snapshot(records, provenance, OUT / SNAPSHOT_NAME)
    for lic in LICENCES:
        shutil.copyfile(root / lic, OUT / lic)
    print(f"{path}: {len(records)} records, {path.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
