"""``webometrics registries info | update | lookup``: the registries of organisations
(Hipo's world universities list, ROR) that the categoriser takes as evidence
(:mod:`analyse.registries`)."""

from __future__ import annotations

import argparse
import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analyse.registries import DumpInput, Registry
    from webometrics.cli import Context

ORDER = 62

#: Hipo's list as its repository publishes it
HIPO_URL = (
    "https://raw.githubusercontent.com/Hipo/university-domains-list/master/"
    "world_universities_and_domains.json"
)
#: the latest version of ROR's data dump on Zenodo (concept record 6347574): its files
ROR_LATEST = "https://zenodo.org/api/records/6347574/versions/latest"
_TIMEOUT = 120.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "registries",
        help="the registries of universities and research organisations used as category "
        "evidence (info, update, lookup)",
        description="The categoriser takes a site found in Hipo's world universities list "
        "or in ROR (the Research Organization Registry), at its host or any parent domain, "
        "as strong evidence of its category. A snapshot of both ships with the package; "
        "`update` writes a newer one into the registry folder ([analyse] registry_dir, "
        "default ~/.local/share/webometrics/registries), which then takes precedence.",
    )
    rsub = p.add_subparsers(dest="registries_command", metavar="ACTION", required=True)
    info = rsub.add_parser(
        "info",
        help="what is loaded, from where and when, how many by source, kind and country",
    )
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.add_argument("--top", type=int, default=10, help="countries listed (default 10)")
    info.set_defaults(func=_info)
    up = rsub.add_parser(
        "update",
        help="refresh the registries from the official dumps (or given files or URLs)",
        description="Read the dumps, check them, and replace the registry folder's "
        "snapshot at once (a temporary file renamed over it). Without --from, Hipo's "
        f"JSON ({HIPO_URL}) and ROR's latest data-dump zip (Zenodo, {ROR_LATEST}) are "
        "downloaded. A --from names a file or an http(s) URL of either source: Hipo's "
        "world_universities_and_domains.json; ROR's data-dump zip (its schema v2 JSON is "
        "read), that JSON itself, or a CSV with columns ror_id,name,types,websites,"
        "country_code,status (gzip'd or not). A source not given keeps its current "
        "records. Input that is neither is refused (exit 2) and nothing is replaced.",
        epilog="examples:\n  webometrics registries update\n  webometrics registries "
        "update --from v1.55-2024-10-31-ror-data.zip\n  webometrics registries update "
        "--from world_universities_and_domains.json --from ror_records.csv.gz",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    up.add_argument(
        "--from",
        dest="sources",
        action="append",
        metavar="FILE|URL",
        help="a dump to read (repeat for both sources)",
    )
    up.add_argument(
        "--into",
        metavar="DIR",
        help="the registry folder to write (default [analyse] registry_dir, else "
        "~/.local/share/webometrics/registries)",
    )
    up.set_defaults(func=_update)
    look = rsub.add_parser(
        "lookup",
        help="the organisation the registries hold at hosts, URLs or site keys",
        description="For each argument, the organisation at the host or its nearest "
        "parent domain (or a site key with a path, e.g. vk.com/spbu), with its category.",
    )
    look.add_argument("hosts", nargs="+", metavar="HOST")
    look.add_argument("--json", action="store_true", help="print JSON lines")
    look.set_defaults(func=_lookup)


def _folder(ctx: Context) -> Path:
    into = getattr(ctx.args, "into", None)
    return Path(into).expanduser() if into else ctx.settings.analyse.registry_folder()


def _loaded(ctx: Context) -> Registry:
    from analyse.registries import Registry

    return Registry.load(_folder(ctx))


def _info(ctx: Context) -> int:
    from analyse.registries import packaged_snapshot

    reg = _loaded(ctx)
    stats = reg.stats(top=ctx.args.top)
    where = "packaged" if reg.path == packaged_snapshot() else "registry folder"
    out: dict[str, Any] = {
        "path": str(reg.path),
        "where": where,
        "registry_folder": str(_folder(ctx)),
        "written": reg.provenance.written,
        "sources": reg.provenance.sources,
        "keys_total": reg.keys,
        **stats,
    }
    if ctx.args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False, sort_keys=True))
        return 0
    print(f"registries: {reg.path} ({where}; written {reg.provenance.written or '?'})")
    if where == "packaged":
        print(f"  (no snapshot in {_folder(ctx)}: `webometrics registries update` writes one)")
    for src, entry in sorted(reg.provenance.sources.items()):
        said = entry.get("note") or entry.get("version") or ""
        print(
            f"  {src}: {entry.get('records', '?')} records from {entry.get('source', '?')}, "
            f"retrieved {entry.get('retrieved', '?')}" + (f"; {said}" if said else "")
        )
    print(
        f"records by source (withdrawn left out): {_pairs(stats['records'])}; keys (hosts, "
        f"host paths): {reg.keys} ({_pairs(stats['keys'])})"
    )
    print(f"ROR records by type: {_pairs(stats['ror_types'])}")
    print(f"records by category: {_pairs(stats['categories'])}")
    print(f"top countries: {_pairs(stats['top_countries'])}")
    return 0


def _pairs(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def _fetch(source: str) -> bytes:
    """The bytes of a file or an http(s) URL."""
    from core.exceptions import ConfigError

    if source.startswith(("http://", "https://")):
        try:
            with urllib.request.urlopen(source, timeout=_TIMEOUT) as resp:
                return bytes(resp.read())
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            if isinstance(exc, urllib.error.HTTPError):
                reason: object = f"HTTP {exc.code} {exc.reason}"
            else:
                reason = getattr(exc, "reason", None) or exc
            raise ConfigError(
                f"{source}: cannot download ({reason}); check the URL and the network, or "
                "download the file and give it with --from FILE (nothing replaced)"
            ) from exc
    path = Path(source).expanduser()
    if not path.is_file():
        raise ConfigError(f"{source}: no such file (nothing replaced)")
    return path.read_bytes()


def latest_ror_zip(api: str = ROR_LATEST) -> str:
    """The URL of the zip of ROR's latest data dump, from a Zenodo record's JSON
    (``files[].key`` and ``files[].links.self``).

    Raises
    ------
    ConfigError
        The record cannot be fetched, is not JSON or lists no zip.
    """
    from core.exceptions import ConfigError

    try:
        meta = json.loads(_fetch(api))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{api}: not a Zenodo record (JSON): {exc} (nothing replaced)") from exc
    files = meta.get("files") or [] if isinstance(meta, dict) else []
    zips = [f for f in files if str(f.get("key", "")).endswith(".zip")]
    if not zips:
        raise ConfigError(f"{api}: no zip among the record's files (nothing replaced)")
    link = zips[0].get("links", {})
    return str(link.get("self") or link.get("content"))


def _dumps(sources: list[str]) -> list[DumpInput]:
    from analyse.registries import DumpInput

    return [DumpInput(_fetch(src), src) for src in sources]


def _update(ctx: Context) -> int:
    from analyse.registries import (
        SNAPSHOT_NAME,
        Registry,
        merged_snapshot,
        packaged_snapshot,
        write_snapshot,
    )

    sources = ctx.args.sources or [HIPO_URL, latest_ror_zip()]
    folder = ctx.output_folder(_folder(ctx), "--into")
    dumps = _dumps(sources)  # every input read before anything is written
    current = Registry.load(folder)
    records, provenance = merged_snapshot(dumps, current)
    path = write_snapshot(records, provenance, folder / SNAPSHOT_NAME)
    for lic in packaged_snapshot().parent.glob("LICENSE-*.txt"):
        shutil.copyfile(lic, folder / lic.name)
    reg = Registry.from_file(path)
    counts = reg.stats()["records"]
    print(
        f"registries written to {path}: "
        + ", ".join(f"{src} {n} records" for src, n in counts.items())
        + f", {reg.keys} keys"
    )
    for src in sorted({d for d in provenance.sources}):
        entry = provenance.sources[src]
        print(f"  {src}: {entry['source']} ({entry.get('retrieved', '?')})")
    return 0


def _lookup(ctx: Context) -> int:
    reg = _loaded(ctx)
    for host in ctx.args.hosts:
        match = reg.lookup(host)
        if ctx.args.json:
            print(json.dumps({"query": host, "match": match and match.as_evidence()}))
        elif match is None:
            print(f"{host}: not in the registries")
        else:
            part = f"; part of {match.part_of}" if match.part_of else ""
            print(
                f"{host}: {match.category} - {match.name} ({match.country}; {match.source} "
                f"{match.source_id}, {match.kind}) at {match.matched_domain}{part}"
            )
    return 0
