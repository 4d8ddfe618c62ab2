"""``webometrics citing commoncrawl-index`` (registered by :mod:`webometrics.commands.citing`)."""

from __future__ import annotations

import argparse


def add_parser(csub: argparse._SubParsersAction) -> None:
    """Register the subcommand (not built yet: it is not listed)."""
