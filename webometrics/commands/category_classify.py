"""``webometrics category classify`` (each domain's category with its confidence and
evidence) and ``webometrics category train`` (the text model of categories), registered
under ``webometrics category`` by :func:`register_classify`."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from analyse.categories import Assignment
    from webometrics.cli import Context

FORMATS = ("table", "csv", "json")


def register_classify(csub: argparse._SubParsersAction) -> None:
    """Add ``classify`` and ``train`` to the subcommands of ``webometrics category``."""
    c = csub.add_parser(
        "classify",
        help="each domain's category with its confidence and evidence",
        description=(
            "The category of each DOMAIN (or host, or URL) with a confidence (0..1) and the "
            "evidence that decided it: the registries (world universities, ROR), the "
            "taxonomy's listed domains, host patterns and name parts, the taxonomy's "
            "keywords and the text model, pooled (docs/categories.md). Read from the pages "
            "the database has stored for the domain (up to [analyse] pages_per_domain), "
            "else from its name and the registries alone; `unknown` when nothing speaks. "
            "Nothing is stored."
        ),
        epilog=(
            "examples: webometrics category classify spbu.ru ras.ru vk.com\n"
            "          webometrics category classify --file domains.txt --format csv > out.csv\n"
            "exit 2: no domain given, an unreadable or empty --file, an invalid domain "
            "(named with its line)"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("domains", nargs="*", metavar="DOMAIN")
    c.add_argument(
        "--file",
        metavar="F",
        help="read domains from F, one a line (# comments and blank lines skipped; '-': stdin)",
    )
    c.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default), csv (columns domain,category,confidence,decided_by,...) or json",
    )
    c.add_argument(
        "--no-pages",
        action="store_true",
        help="do not read the database's pages: the name and the registries only",
    )
    c.set_defaults(func=_classify)
    t = csub.add_parser(
        "train",
        help="train the text model of categories from real labelled texts",
        description=(
            "Train the text model (analyse/text_model.py: tf-idf of stemmed English and "
            "Russian terms, a linear SVM, calibrated probabilities) on the shared corpora "
            "(WebKB -> universities; BBC, Lenta.ru, tgcontest -> news portals; "
            "website-classification -> social networks, news portals, media, other "
            "organisations; found via WEBOMETRICS_DATA or ../shared/data) and, with "
            "--from-db, on the database's own labelled sites (analysts' overrides; "
            "registry-, listing- or pattern-labelled domains with fetched text). Writes "
            "the model to [analyse] text_model (default: category-model.npz in the user's "
            "data folder), which `webometrics analyse` and `category classify` then use. "
            "The corpora's licences forbid shipping a model trained on them: it is made "
            "here, on your machine."
        ),
    )
    t.add_argument(
        "--corpora",
        nargs="*",
        metavar="NAME",
        help="corpora to train on (default: all: webkb bbc lenta tgcontest websites; "
        "none with an empty list)",
    )
    t.add_argument(
        "--from-db", action="store_true", help="also train on the database's labelled sites"
    )
    t.add_argument("--out", metavar="FILE", help="write the model here (default: the setting)")
    t.set_defaults(func=_train)


# --- classify ---------------------------------------------------------------------------


def _read_domains(args: argparse.Namespace) -> list[str]:
    """The domains of the arguments and of ``--file``, normalised, in order, once each.

    Raises
    ------
    ParameterError
        No domain, an unreadable or empty file, an invalid domain (with its line).
    """
    from core.domains import host_of, is_valid_domain
    from core.exceptions import ParameterError

    given: list[tuple[str, str]] = [(d, "argument") for d in args.domains]
    if args.file:
        try:
            text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ParameterError(f"cannot read --file {args.file}: {exc}") from exc
        lines = [
            (line.split("#", 1)[0].strip(), f"{args.file} line {n}")
            for n, line in enumerate(text.splitlines(), 1)
        ]
        from_file = [(d, where) for d, where in lines if d]
        if not from_file:
            raise ParameterError(f"--file {args.file} holds no domain: give one a line")
        given += from_file
    if not given:
        raise ParameterError("no domain to classify: give DOMAIN ... or --file F")
    out: list[str] = []
    for raw, where in given:
        d = raw.strip().lower()
        if "/" in d or ":" in d:
            d = host_of(d if "//" in d else f"http://{d}")
        d = d.removeprefix("www.")
        if not is_valid_domain(d):
            raise ParameterError(
                f"{raw!r} ({where}) is not a valid domain: give a host name such as spbu.ru"
            )
        out.append(d)
    return list(dict.fromkeys(out))


def _row(domain: str, a: Assignment) -> dict[str, Any]:
    ev = a.evidence
    reg = ev.get("registry") or {}
    sources = ev.get("sources") or {}
    text = sources.get("text") or {}
    return {
        "domain": domain,
        "category": a.category,
        "confidence": round(a.score, 4),
        "decided_by": ev.get("decided_by") or "",
        "pages": ev.get("pages", 0),
        "registry": f"{reg['name']} ({reg['country']}, {reg['source']})" if reg else "",
        "known": " ".join(ev.get("known") or []),
        "patterns": " ".join(ev.get("patterns") or []),
        "name_parts": " ".join(ev.get("name_parts") or []),
        "keywords": " ".join(
            dict.fromkeys([*(ev.get("title_keywords") or {}), *(ev.get("text_keywords") or {})])
        ),
        "text": (f"{text['category']} {text['p']:.2f}: " + " ".join(text.get("terms", [])))
        if text
        else "",
    }


def _print(rows: list[dict[str, Any]], details: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        print(json.dumps({**details, "domains": rows}, indent=2, ensure_ascii=False))
    elif fmt == "csv":
        w = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    else:
        width = max(len(r["domain"]) for r in rows)
        for r in rows:
            why = "; ".join(
                f"{k} {r[k]}"
                for k in ("registry", "known", "patterns", "name_parts", "keywords", "text")
                if r[k]
            )
            print(
                f"{r['domain']:<{width}}  {r['category']:<22} {r['confidence']:.2f}  "
                f"{r['decided_by'] or '-':<12} pages {r['pages']:<3} {why}"
            )
        print(f"text model: {details['text_model']}", file=sys.stderr)


def _classify(ctx: Context) -> int:
    from webometrics.stages import analyse

    domains = _read_domains(ctx.args)  # exit 2 on bad input, before any database work
    engine = ctx.engine(read_only=True)
    result = analyse.classify_domains(
        engine, ctx.settings, domains, read_pages=not ctx.args.no_pages
    )
    rows = [_row(d, result.assignments[d]) for d in domains]
    _print(rows, {"text_model": result.text_model}, ctx.args.format)
    return 0


# --- train ------------------------------------------------------------------------------


def _train(ctx: Context) -> int:
    from core.exceptions import ParameterError
    from corpora.site_kinds import CORPORA
    from webometrics.stages import analyse

    a = ctx.args
    corpora = list(CORPORA) if a.corpora is None else a.corpora
    unknown = [c for c in corpora if c not in CORPORA]
    if unknown:
        raise ParameterError(f"unknown corpus {unknown[0]!r}: use some of {', '.join(CORPORA)}")
    out = Path(a.out) if a.out else analyse.text_model_path(ctx.settings.analyse)
    if out is None:
        raise ParameterError(
            '[analyse] text_model = "none": give --out FILE to write a model anyway'
        )
    engine = ctx.engine(read_only=True) if a.from_db else None
    done = analyse.train_text_model(engine, ctx.settings, corpora=corpora, out=out)
    print(json.dumps(done, indent=2, ensure_ascii=False))
    return 0
