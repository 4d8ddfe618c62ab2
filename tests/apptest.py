"""The dashboard in Streamlit's ``AppTest``, as every dashboard test opens it.

:func:`app` makes a fresh ``AppTest`` of ``dashboard/app.py`` that shares one scan of the
installed Streamlit components. A server scans them once at its start; each new
``AppTest`` scans them again (0.6 s, reading every installed package's metadata), which
the walk of every page and option (a hundred fresh AppTests) would pay a hundred times.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

import dashboard

APP = Path(dashboard.__file__).resolve().parent / "app.py"


@cache
def _components() -> Any:
    from streamlit.components.v2.component_manager import BidiComponentManager

    manager = BidiComponentManager()
    manager.discover_and_register_components(start_file_watching=False)
    return manager


def app(timeout: float = 60) -> AppTest:
    """A fresh ``AppTest`` of the dashboard (not run yet), the components scanned once
    per test session (``AppTest``'s own attribute for them, as its ``_run`` fills it)."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    at._bidi_component_manager = _components()
    return at


def open_page(url: str, monkeypatch: Any, path: str | None = None) -> AppTest:
    """The dashboard on the database at ``url`` (no settings file), run, then switched to
    the page ``path`` (e.g. ``"views/ranks.py"``; ``None``: the first page), each run
    without an exception."""
    monkeypatch.setenv("WEBOMETRICS_DB_URL", url)
    monkeypatch.delenv("WEBOMETRICS_CONFIG", raising=False)
    at = app()
    at.run()
    assert not at.exception, at.exception
    if path is not None:
        at.switch_page(path).run()
        assert not at.exception, at.exception
    return at
