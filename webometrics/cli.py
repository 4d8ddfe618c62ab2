"""The ``webometrics`` command line: one subcommand per stage.

Subcommands live in :mod:`webometrics.commands`, one module each, found at start-up;
every module has ``ORDER`` (its place in ``--help``) and ``register(subparsers)``.
Heavy imports (Scrapy, trafilatura, Streamlit) happen inside the subcommand.

Exit codes: see :mod:`core.exceptions`; SIGTERM is handled like Ctrl-C (exit 130, the
run marked ``interrupted``). Every command that opens the database for writing first marks
``interrupted`` the runs whose process died (:func:`webometrics.liveness.mark_stale`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import pkgutil
import signal
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from core.exceptions import EXIT_CODES, ConfigError, WebometricsError
from webometrics import __version__

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from core.settings import Settings

log = logging.getLogger("webometrics")

EPILOG = (
    "configuration: defaults < webometrics.toml (--config or $WEBOMETRICS_CONFIG) < environment\n"
    "(WEBOMETRICS_DB_URL, WEBOMETRICS_<SECTION>__<KEY>) < command-line options.\n"
    "exit codes:\n"
    + "".join(
        textwrap.fill(what, 88, initial_indent=f"  {code:<4} ", subsequent_indent=" " * 7) + "\n"
        for code, what in EXIT_CODES.items()
    )
)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the stages record the run ``interrupted``."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated("terminated (SIGTERM)")


@dataclass
class Context:
    """What every subcommand receives: the parsed arguments and the loaded settings."""

    args: argparse.Namespace
    settings: Settings
    _engines: dict[bool, Engine] = field(default_factory=dict)

    def engine(self, *, read_only: bool = False, check_schema: bool = True) -> Engine:
        """The run's engine, made once; the schema must be at head unless told otherwise."""
        if read_only not in self._engines:
            from store import open_database

            engine = open_database(
                self.settings.database.url, read_only=read_only, check_schema=check_schema
            )
            self._engines[read_only] = engine
            if not read_only and check_schema:
                _mark_stale_runs(engine, self.settings.database.run_lease_seconds)
        return self._engines[read_only]

    def refresh_figures(self) -> None:
        """After a command that writes data outside a stage (an import of universities or
        of WARC files, sites re-keyed): compute the figures the dashboard and the report
        read, as every stage does at its end (:func:`webometrics.stages.refresh_figures`)."""
        from webometrics.stages import refresh_figures

        refresh_figures(self.engine(), f"`webometrics {self.args.command}`")

    def reader(self) -> Engine:
        """The engine of a command that only reads: the writing one when the database
        can be written (so stale runs are marked first), else a read-only one (a
        read-only file, folder or mount)."""
        from core.exceptions import ReadOnlyDatabaseError

        try:
            return self.engine()
        except ReadOnlyDatabaseError:
            return self.engine(read_only=True)

    def output_folder(self, path: str | os.PathLike[str], option: str = "--out") -> Path:
        """The folder a command writes into, made now (with its parents) and checked
        writable, before any work: a path that cannot hold the output is bad input, told
        at once and not after minutes of work.

        Raises
        ------
        ConfigError
            The folder cannot be made (a file of that name, no permission, a read-only
            file system) or written into (exit code 2).
        """
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"{option} {folder}: a file of that name is there; give a folder")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError as exc:
            raise ConfigError(
                f"{option} {folder}: cannot write there ({exc.strerror or exc}); give a "
                "folder that can be created and written"
            ) from exc
        return folder

    def close(self) -> None:
        for engine in self._engines.values():
            engine.dispose()


def _mark_stale_runs(engine: Engine, lease_seconds: float) -> None:
    """Mark ``interrupted`` the runs whose process died, and say so (a cheap SELECT)."""
    from core.exceptions import DatabaseError
    from webometrics.liveness import mark_stale

    try:
        stale = mark_stale(engine, lease_seconds)
    except DatabaseError as exc:  # the command itself will say what is wrong
        log.debug("stale runs not checked: %s", exc)
        return
    for run in stale:
        print(
            f"webometrics: note: {run.kind} run {run.run_id} had no heartbeat since "
            f"{run.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC (its process died): marked interrupted"
            + (f"; resume it with:\n  {run.resume}" if run.resume else ""),
            file=sys.stderr,
        )


def _command_modules() -> list:
    import webometrics.commands as pkg

    mods = [
        importlib.import_module(f"{pkg.__name__}.{m.name}")
        for m in pkgutil.iter_modules(pkg.__path__)
    ]
    return sorted((m for m in mods if hasattr(m, "register")), key=lambda m: (m.ORDER, m.__name__))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="webometrics",
        description=(
            "Crawl the external web environment of universities (outgoing and citing), "
            "extract main text, remove fuzzy duplicates, cluster external sites by kind of "
            "activity (a tf-idf k-NN graph with Leiden communities, or the paper's modified "
            "LSH single link), and report/serve the results."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"webometrics {__version__}")
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="settings file (TOML); default "
        "$WEBOMETRICS_CONFIG, else ./webometrics.toml when present",
    )
    parser.add_argument(
        "--db-url",
        metavar="URL",
        help="database URL (overrides "
        "WEBOMETRICS_DB_URL and [database] url); default sqlite:///webometrics.db",
    )
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    verbosity.add_argument("-q", "--quiet", action="store_true", help="warnings and errors only")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for module in _command_modules():
        module.register(sub)
    return parser


def _setup_logging(verbose: int, quiet: bool) -> None:
    level = logging.WARNING if quiet else logging.DEBUG if verbose > 1 else logging.INFO
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
        stream=sys.stderr,
    )
    if verbose < 2:
        for noisy in (
            "scrapy",
            "twisted",
            "alembic",
            "trafilatura",
            "htmldate",
            "urllib3",
            "charset_normalizer",
        ):
            logging.getLogger(noisy).setLevel(logging.WARNING if verbose == 0 else logging.INFO)


def _database_error(exc: Exception, ctx: Context | None) -> WebometricsError | None:
    """The one-line error of a database driver's exception (else None), naming the
    database from the settings (:func:`store.session.database_error`)."""
    errors = sys.modules.get("sqlalchemy.exc")  # loaded by whatever raised it
    if errors is None or not isinstance(exc, errors.DBAPIError):
        return None
    from store.session import database_error

    return database_error(exc, ctx.settings.database.url if ctx is not None else None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    _setup_logging(args.verbose, args.quiet)
    previous = signal.getsignal(signal.SIGTERM)
    with contextlib.suppress(ValueError):  # not the main thread (a test calling main)
        signal.signal(signal.SIGTERM, _on_sigterm)
    ctx: Context | None = None
    try:
        from core.settings import load_settings

        settings = load_settings(args.config)
        if args.db_url:
            settings = settings.replace(database={"url": args.db_url})
        ctx = Context(args=args, settings=settings)
        code = args.func(ctx)
        return int(code or 0)
    except WebometricsError as exc:
        log.debug("the error's traceback", exc_info=True)
        print(f"webometrics: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a file or folder that cannot be read or written, a full disk
        log.debug("the file system refused", exc_info=True)
        where = f" {exc.filename}:" if exc.filename else ""
        print(
            f"webometrics: error:{where} {exc.strerror or exc}; check the path, its "
            "permissions and the free space (what was stored is kept; -vv shows where)",
            file=sys.stderr,
        )
        return 1
    except Exception as exc:
        # a driver error no stage translated (a server gone, a damaged file): one line
        error = _database_error(exc, ctx)
        if error is None:
            raise
        log.debug("the database refused", exc_info=True)
        print(f"webometrics: error: {error} (-vv shows where)", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt as exc:
        what = str(exc) if isinstance(exc, Terminated) else "interrupted"
        # only crawl, pipeline and import runs are listed by `webometrics runs`
        listed = args.command in ("crawl", "run", "schedule", "import")
        print(
            f"webometrics: {what}; what was stored is kept ("
            + (
                "`webometrics runs` shows how to resume)"
                if listed
                else f"run `webometrics {args.command}` again to go on)"
            ),
            file=sys.stderr,
        )
        return 130
    finally:
        if ctx is not None:
            ctx.close()
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
