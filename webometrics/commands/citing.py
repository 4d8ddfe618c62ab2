"""``webometrics citing SOURCE ...``: citing environments from public web data.

Each source is one subcommand, defined in a module of its own:

* ``commoncrawl-graph`` (:mod:`webometrics.commands.citing_graph`): the domains and
  hosts that link to each university in a Common Crawl web graph release;
* ``commoncrawl-index`` (:mod:`webometrics.commands.citing_index`): the captured
  pages of the citing domains, found in a Common Crawl URL index and fetched from
  their WARC files by byte range.
"""

from __future__ import annotations

import argparse

ORDER = 25


def register(sub: argparse._SubParsersAction) -> None:
    from webometrics.commands import citing_graph, citing_index

    p = sub.add_parser(
        "citing",
        help="citing environments from Common Crawl (web graph, URL index)",
        description="Collect the citing environment of the stored universities from public "
        "web data instead of a paid backlink service.",
    )
    csub = p.add_subparsers(dest="citing_command", metavar="SOURCE", required=True)
    citing_graph.add_parser(csub)
    citing_index.add_parser(csub)
