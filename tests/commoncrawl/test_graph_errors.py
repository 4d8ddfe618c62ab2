"""Bad input to ``webometrics citing commoncrawl-graph``: exit code 2, a message naming the
file and the line (or part), and nothing stored."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.settings import Settings
from crawler.commoncrawl.dumps import GraphInputError, count_lines
from store import make_engine, schema, session_scope
from store import models as m
from tests.commoncrawl.graph_files import GraphCase, domain_graph
from webometrics.cli import main


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> GraphCase:
    return domain_graph(tmp_path_factory.mktemp("graph"))


@pytest.fixture
def db(graph_db: str) -> str:
    return graph_db


def _run(
    url: str, vertices: list[Path], edges: list[Path], ranks: Path | None = None, *extra: str
) -> int:
    args = ["--vertices", *map(str, vertices), "--edges", *map(str, edges)]
    if ranks is not None:
        args += ["--ranks", str(ranks)]
    return main(["--db-url", url, "citing", "commoncrawl-graph", *args, *extra])


def _nothing_stored(url: str) -> None:
    engine = make_engine(url)
    with session_scope(engine) as s:
        for model in (m.CrawlRun, m.CitingNode, m.Environment):
            assert s.scalar(select(func.count()).select_from(model)) == 0, model.__name__
    engine.dispose()


def _lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return fh.read().splitlines()


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


def _copy(case: GraphCase, dst: Path) -> tuple[list[Path], list[Path], Path]:
    """The release under ``dst`` (the same layout), to be spoilt by a test."""
    src_root = case.files.vertices[0].parents[3]
    shutil.copytree(src_root, dst, dirs_exist_ok=True)
    vs = [dst / p.relative_to(src_root) for p in case.files.vertices]
    es = [dst / p.relative_to(src_root) for p in case.files.edges]
    assert case.files.ranks is not None
    return vs, es, dst / case.files.ranks.relative_to(src_root)


def test_truncated_gzip_part(db: str, case: GraphCase, tmp_path: Path, capsys) -> None:
    vs, es, rs = _copy(case, tmp_path / "g")
    data = es[2].read_bytes()
    # cut at a line end of the inflated text too: a CSV reader alone would not notice
    es[2].write_bytes(data[: len(data) - 12])
    assert _run(db, vs, es, rs) == 2
    err = capsys.readouterr().err
    assert str(es[2]) in err and "truncated" in err and "line" in err
    _nothing_stored(db)


def test_edge_endpoint_without_vertex(db: str, case: GraphCase, tmp_path: Path, capsys) -> None:
    vs, es, rs = _copy(case, tmp_path / "g")
    n = len(case.files.names)
    lines = _lines(es[1])
    lines.insert(5, f"{lines[5].split(chr(9))[0]}\t{n + 41}")
    _write(es[1], lines)
    assert _run(db, vs, es, rs) == 2
    err = capsys.readouterr().err
    assert f"{es[1]}: line 6" in err and f"{n + 41:,}" in err and "no vertex" in err
    _nothing_stored(db)


def test_edge_source_without_vertex(db: str, case: GraphCase, tmp_path: Path, capsys) -> None:
    vs, es, rs = _copy(case, tmp_path / "g")
    n = len(case.files.names)
    # an edge into a university from an id the vertex files do not hold
    uni = case.files.names.index("edu.mit")
    lines = [*_lines(es[3]), f"{n + 2}\t{uni}"]
    _write(es[3], lines)
    assert _run(db, vs, es, rs) == 2
    err = capsys.readouterr().err
    assert f"{es[3]}: line {len(lines)}" in err and "no vertex" in err
    _nothing_stored(db)


def test_a_missing_vertex_part(db: str, case: GraphCase, tmp_path: Path, capsys) -> None:
    vs, es, rs = _copy(case, tmp_path / "g")
    assert _run(db, [vs[0], vs[2]], es, rs) == 2
    err = capsys.readouterr().err
    assert "not 0 .." in err and "a part is missing" in err
    _nothing_stored(db)


def test_wrong_column_count(db: str, case: GraphCase, tmp_path: Path, capsys) -> None:
    vs, es, rs = _copy(case, tmp_path / "g")
    lines = _lines(vs[1])
    fields = lines[7].split("\t")
    lines[7] = "\t".join(fields[:2])  # num_hosts lost
    _write(vs[1], lines)
    assert _run(db, vs, es, rs) == 2
    err = capsys.readouterr().err
    assert f"{vs[1]}: line 8" in err and "expected 3" in err and "found 2" in err
    _nothing_stored(db)


def test_host_vertices_given_as_domain_level(
    db: str, case: GraphCase, tmp_path: Path, capsys
) -> None:
    vs, es, rs = _copy(case, tmp_path / "g")
    assert _run(db, vs, es, rs, "--level", "host") == 2
    assert "--level host" in capsys.readouterr().err
    _nothing_stored(db)


def test_a_ranks_file_without_its_header(db: str, case: GraphCase, tmp_path: Path, capsys) -> None:
    vs, es, rs = _copy(case, tmp_path / "g")
    _write(rs, _lines(rs)[1:])
    assert _run(db, vs, es, rs) == 2
    err = capsys.readouterr().err
    assert f"{rs}: line 1" in err and "#harmonicc_pos" in err
    _nothing_stored(db)


def test_missing_file(db: str, case: GraphCase, tmp_path: Path, capsys) -> None:
    missing = tmp_path / "cc-main-2026-jan-feb-mar-domain-edges.txt.gz"
    assert _run(db, list(case.files.vertices), [*case.files.edges, missing]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no such file" in err
    _nothing_stored(db)


def test_no_university_stored(sqlite_url: str, case: GraphCase, capsys) -> None:
    engine = make_engine(sqlite_url)
    schema.upgrade(engine)
    engine.dispose()
    assert _run(sqlite_url, list(case.files.vertices), list(case.files.edges)) == 2
    assert "no university is stored" in capsys.readouterr().err
    _nothing_stored(sqlite_url)


def test_release_not_in_the_file_names(db: str, case: GraphCase, tmp_path: Path, capsys) -> None:
    v = tmp_path / "v.txt.gz"
    e = tmp_path / "e.txt.gz"
    shutil.copy(case.files.vertices[0], v)
    shutil.copy(case.files.edges[0], e)
    assert _run(db, [v], [e]) == 2
    assert "--release NAME" in capsys.readouterr().err
    _nothing_stored(db)


def test_count_lines_proves_a_gzip_part_complete(tmp_path: Path) -> None:
    whole = _write(tmp_path / "a.txt.gz", [f"{i}\t{i + 1}" for i in range(5000)])
    assert count_lines(whole) == 5000
    # two gzip members, as `cat part1.gz part2.gz` gives, read as one file
    joined = tmp_path / "b.txt.gz"
    joined.write_bytes(whole.read_bytes() * 2)
    assert count_lines(joined) == 10000
    cut = tmp_path / "c.txt.gz"
    cut.write_bytes(whole.read_bytes()[:-30])
    with pytest.raises(GraphInputError, match="truncated"):
        count_lines(cut)
    garbage = tmp_path / "d.txt.gz"
    garbage.write_bytes(b"not gzip at all\n")
    with pytest.raises(GraphInputError, match="not a valid gzip file"):
        count_lines(garbage)


def test_a_failure_while_storing_leaves_nothing(
    db: str, case: GraphCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run, its citing nodes and environment rows are one transaction."""
    from crawler.commoncrawl.graph import GraphResult
    from webometrics.stages import citing_graph

    real = GraphResult.batches

    def broken(self: GraphResult, size: int = 5000):
        for n, batch in enumerate(real(self, 3)):
            if n == 2:
                raise RuntimeError("disk full")
            yield batch

    monkeypatch.setattr(GraphResult, "batches", broken)
    engine = make_engine(db)
    with pytest.raises(RuntimeError, match="disk full"):
        citing_graph.run(
            engine,
            Settings(),
            citing_graph.GraphScope(
                vertices=tuple(map(str, case.files.vertices)),
                edges=tuple(map(str, case.files.edges)),
                ranks=str(case.files.ranks) if case.files.ranks else None,
            ),
        )
    engine.dispose()
    _nothing_stored(db)
