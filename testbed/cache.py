"""The shared cached build: one built test web per machine for the test suites.

:func:`shared_build` keys a folder under the system temporary directory by the options,
the testbed's code (:func:`_code_digest`) and the shared WebKB archive, builds it once
under a file lock, and prunes other cached builds left unused for an hour.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

from testbed.options import BuildOptions
from testbed.universities import UNIVERSITIES_FILE


def _code_digest() -> str:
    """A digest of the testbed's code and the universities file (a cached build's
    version)."""
    import hashlib

    h = hashlib.blake2b(digest_size=8)
    folder = Path(__file__).parent
    skip = ("server.py", "manifest.py")  # they do not change what a build writes
    built_by = [p for p in sorted(folder.glob("*.py")) if p.name not in skip]
    for path in [*built_by, UNIVERSITIES_FILE]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def shared_build(options: BuildOptions | None = None, data_dir: str | Path | None = None) -> Path:
    """A built test web in a cache folder shared by every process on the machine.

    The folder (under the system temporary directory) is named after the options, the
    testbed's code and the shared data's WebKB archive, so a change of any of them builds
    anew; concurrent callers wait on a file lock and build once. Meant for test suites
    (the crawler's and the testbed's) that all need the same test web.

    Returns
    -------
    Path
        The folder to give :class:`testbed.server.TestbedServer`.
    """
    import fcntl
    import hashlib
    import tempfile

    from testbed.build import build

    options = options or BuildOptions()
    if data_dir is None:
        from core.shared_data import data_dir as shared

        data_dir = shared()
    archive = Path(data_dir) / "webkb-4universities" / "webkb.tar.gz"
    stat = archive.stat() if archive.is_file() else None
    ident = json.dumps(
        [asdict(options), _code_digest(), str(Path(data_dir).resolve()),
         stat.st_size if stat else None, stat.st_mtime_ns if stat else None],
        sort_keys=True,
    )  # fmt: skip
    digest = hashlib.blake2b(ident.encode(), digest_size=8).hexdigest()
    folder = Path(tempfile.gettempdir()) / f"webometrics-testbed-{digest}"
    stamp = folder / "BUILD-OK"
    if stamp.is_file():
        stamp.touch()  # marks it as in use for the pruning below
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not stamp.is_file():
                build(folder, options, data_dir)
                stamp.write_text(ident, encoding="utf-8")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    _prune_shared_builds(folder)
    return folder


def _prune_shared_builds(keep: Path, max_age_seconds: float = 3600) -> None:
    """Remove other cached builds (about 100 MB each) unused for ``max_age_seconds``."""
    import time

    now = time.time()
    for other in keep.parent.glob("webometrics-testbed-*"):
        if other == keep or not other.is_dir():
            continue
        stamp = other / "BUILD-OK"
        used = stamp.stat().st_mtime if stamp.is_file() else other.stat().st_mtime
        if now - used > max_age_seconds:
            shutil.rmtree(other, ignore_errors=True)
            other.with_suffix(".lock").unlink(missing_ok=True)
