"""Default folders: never inside the checkout once installed (core.folders)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from core.folders import checkout_root, shared_data_root, user_folder

REPO = Path(__file__).resolve().parents[2]


def test_from_the_checkout_the_shared_data_is_beside_it(monkeypatch) -> None:
    monkeypatch.delenv("WEBOMETRICS_DATA", raising=False)
    assert checkout_root() == REPO
    assert shared_data_root() == REPO.parent / "shared" / "data"
    assert shared_data_root({"WEBOMETRICS_DATA": "/corpora"}) == Path("/corpora")


def test_each_kind_of_user_folder_follows_its_xdg_variable() -> None:
    env = {"HOME": "/home/ana", "XDG_STATE_HOME": "/var/state"}
    assert user_folder("data", env) == Path("/home/ana/.local/share/webometrics")
    assert user_folder("cache", env) == Path("/home/ana/.cache/webometrics")
    assert user_folder("state", env) == Path("/var/state/webometrics")


def test_installed_without_a_checkout_the_defaults_are_the_users(tmp_path: Path) -> None:
    """The package copied where an installer puts it (no pyproject.toml, no .git beside
    it): the shared data default is the user's data folder, not a path that would name
    a folder two levels above site-packages."""
    site = tmp_path / "site-packages"
    shutil.copytree(REPO / "core", site / "core", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "WEBOMETRICS_DATA"}
    env |= {"PYTHONPATH": str(site), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    code = (
        "from core.folders import checkout_root, shared_data_root as r; print(checkout_root(), r())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", str(tmp_path / "xdg" / "webometrics" / "shared-data")]
