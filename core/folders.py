"""The folders the program keeps its files in, outside any checkout.

An installed program has no checkout beside it, so every default folder is the user's
(the XDG base directories: ``$XDG_DATA_HOME``, ``$XDG_CACHE_HOME``, ``$XDG_STATE_HOME``,
with their standard fallbacks under the home folder), or one beside the database file.
Only :func:`shared_data_root` looks beside the checkout, and only when it runs from one.

Examples
--------
>>> str(user_folder("data", {"XDG_DATA_HOME": "/data"}))
'/data/webometrics'
>>> str(user_folder("cache", {"HOME": "/home/ana"}))
'/home/ana/.cache/webometrics'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from core.defaults import DATA_ENV

__all__ = ["checkout_root", "shared_data_root", "user_folder"]

UserFolderKind = Literal["data", "cache", "state"]

_XDG = {
    "data": ("XDG_DATA_HOME", (".local", "share")),
    "cache": ("XDG_CACHE_HOME", (".cache",)),
    "state": ("XDG_STATE_HOME", (".local", "state")),
}


def user_folder(kind: UserFolderKind, environ: Mapping[str, str] | None = None) -> Path:
    """The program's folder of ``kind`` for this user: ``$XDG_<KIND>_HOME/webometrics``,
    else the standard place under the home folder (``~/.local/share``, ``~/.cache``,
    ``~/.local/state``)."""
    env = os.environ if environ is None else environ
    variable, fallback = _XDG[kind]
    if env.get(variable):
        return Path(env[variable]) / "webometrics"
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home.joinpath(*fallback) / "webometrics"


def checkout_root() -> Path | None:
    """The source checkout this program runs from (the folder of ``pyproject.toml``), or
    None once installed (a wheel has no checkout around it)."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() and (root / ".git").exists() else None


def shared_data_root(environ: Mapping[str, str] | None = None) -> Path:
    """Where the shared labelled data sets are: ``$WEBOMETRICS_DATA``; else, run from a
    checkout, ``../shared/data`` beside it; else the user's data folder's ``shared-data``
    (:func:`user_folder`)."""
    env = os.environ if environ is None else environ
    if env.get(DATA_ENV):
        return Path(env[DATA_ENV])
    checkout = checkout_root()
    if checkout is not None:
        return checkout.parent / "shared" / "data"
    return user_folder("data", env) / "shared-data"
