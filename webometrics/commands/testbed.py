"""``webometrics testbed build | serve``: the local test web the crawler is tested on."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webometrics.cli import Context

ORDER = 90


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "testbed",
        help="build or serve the local test web (real 1997 university sites, generated "
        "external sites, trouble cases)",
        description="Build the local test web from the shared data, or serve it on "
        "127.0.0.1 as an HTTP proxy for the crawler (see testbed/__init__.py for the "
        "manifest format).",
    )
    tsub = p.add_subparsers(dest="testbed_command", metavar="ACTION", required=True)
    b = tsub.add_parser(
        "build",
        help="write the site index, manifest.json and the backlink files",
        description="Build the test web deterministically from [testbed] seed.",
    )
    b.add_argument("--out", metavar="DIR", help="output folder (default: [testbed] directory)")
    b.add_argument("--seed", type=int, help="overrides [testbed] seed")
    b.add_argument("--max-sites", type=int, help="overrides [testbed] max_sites")
    b.add_argument("--data", metavar="DIR", help="shared data folder (default $WEBOMETRICS_DATA)")
    b.set_defaults(func=_build)
    s = tsub.add_parser(
        "serve",
        help="serve a built test web on 127.0.0.1 (the crawler's HTTP proxy)",
        description="Answer every URL of the test web. Use it as an HTTP proxy "
        "(http://127.0.0.1:PORT), or send a Host header. Stops on Ctrl-C.",
    )
    s.add_argument("--dir", metavar="DIR", help="built test web (default: [testbed] directory)")
    s.add_argument("--port", type=int, help="port (default [testbed] port; 0 = any free port)")
    s.add_argument("--host", help="address to bind (default [testbed] host, 127.0.0.1)")
    s.add_argument("--log-file", metavar="PATH", help="append every fetch as a JSON line")
    s.add_argument(
        "--latency",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long before every answer, like a distant site (default 0)",
    )
    s.add_argument(
        "--latency-max",
        type=float,
        metavar="SECONDS",
        help="with --latency: wait a log-uniform draw between --latency and this before "
        "every answer, as real sites' answer times spread (e.g. --latency 0.1 "
        "--latency-max 0.5: median 0.22 s, mean 0.25 s)",
    )
    s.set_defaults(func=_serve)


def _build(ctx: Context) -> int:
    import json

    from testbed.build import BuildOptions, build

    settings = ctx.settings.with_options(
        testbed={"seed": ctx.args.seed, "max_sites": ctx.args.max_sites}
    )
    out = ctx.output_folder(ctx.args.out or settings.testbed.directory)
    stats = build(out, BuildOptions.from_settings(settings), ctx.args.data, progress=True)
    print(f"test web written to {out}")
    print(json.dumps(stats, indent=2))
    return 0


def _serve(ctx: Context) -> int:
    from testbed.server import TestbedServer

    t = ctx.settings.testbed
    folder = ctx.args.dir or t.directory
    port = t.port if ctx.args.port is None else ctx.args.port
    server = TestbedServer(
        folder,
        port=port,
        host=ctx.args.host or t.host,
        log_file=ctx.args.log_file or t.log_file,
        latency=ctx.args.latency,
        latency_max=ctx.args.latency_max,
    )
    print(
        f"test web {folder} ({len(server.index)} URLs) on {server.proxy_url}: use it as the "
        f"HTTP proxy; fetch log at {server.proxy_url}/__testbed__/log; Ctrl-C stops",
        flush=True,
    )
    try:
        server.serve_forever()
    finally:
        server.stop()
    return 0
