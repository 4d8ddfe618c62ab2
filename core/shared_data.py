"""Where the shared labelled data sets are: ``$WEBOMETRICS_DATA``, else ``../shared/data``
beside a checkout (:func:`core.folders.shared_data_root`); read in place, never copied."""

from __future__ import annotations

from pathlib import Path

from core.defaults import DATA_ENV
from core.exceptions import DataNotFoundError
from core.folders import shared_data_root


def data_dir(subdir: str | None = None) -> Path:
    """The shared data folder (or one of its corpora).

    Raises
    ------
    DataNotFoundError
        The folder is missing: set ``WEBOMETRICS_DATA``.
    """
    root = shared_data_root()
    path = root / subdir if subdir else root
    if not path.exists():
        raise DataNotFoundError(
            f"shared data not found at {path}: set {DATA_ENV} to the folder that holds "
            f"{subdir + '/' if subdir else 'reuters21578/, webkb-4universities/ ...'}"
        )
    return path
