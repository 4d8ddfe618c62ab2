"""Where the shared labelled data sets are: ``$WEBOMETRICS_DATA`` or ``../shared/data``
beside the repository (read in place, never copied into it)."""

from __future__ import annotations

import os
from pathlib import Path

from core.exceptions import DataNotFoundError


def data_dir(subdir: str | None = None) -> Path:
    """The shared data folder (or one of its corpora).

    Raises
    ------
    DataNotFoundError
        The folder is missing: set ``WEBOMETRICS_DATA``.
    """
    env = os.environ.get("WEBOMETRICS_DATA")
    root = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"
    path = root / subdir if subdir else root
    if not path.exists():
        raise DataNotFoundError(
            f"shared data not found at {path}: set WEBOMETRICS_DATA to the folder that holds "
            "reuters21578/, webkb-4universities/ ..."
        )
    return path
