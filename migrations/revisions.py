"""What a revision reads of an earlier one (the SQL of the views it replaces, to put
them back on downgrade): :func:`revision_module` loads a revision script by its file
name (names such as ``0007_citing_node.py`` cannot be imported by ``import``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

VERSIONS = Path(__file__).with_name("versions")


def revision_module(name: str) -> ModuleType:
    """The revision script ``versions/<name>`` as a module (loaded anew each call)."""
    path = VERSIONS / name
    spec = importlib.util.spec_from_file_location(f"_webometrics_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no revision script {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
