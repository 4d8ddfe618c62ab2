"""The citing domains and hosts of universities in a Common Crawl web graph release.

Common Crawl publishes, several times a year, a host-level and a domain-level web graph
of everything its crawls saw (``https://commoncrawl.org/web-graphs``). The text dumps are
gzip-compressed, tab-separated files, split into parts and sorted by the reversed name:

===============  =========================================================================
file             columns
===============  =========================================================================
domain vertices  ``id``, reversed domain (``edu.mit``), number of hosts of the domain
host vertices    ``id``, reversed host (``edu.mit.cs``; a leading ``www.`` is stripped)
edges            ``from_id``, ``to_id`` (one per pair of linked nodes)
ranks            a ``#``-header, then ``#harmonicc_pos #harmonicc_val #pr_pos #pr_val
                 #host_rev`` (and ``#n_hosts`` in the domain graph), ordered by rank
===============  =========================================================================

Names are ASCII (internationalised names in their IDNA form); vertex ids are ``0 ..
n-1``.

Algorithm
---------
:class:`GraphReader` reads the dumps with DuckDB's CSV reader (typed columns, streamed
from the ``.gz`` parts, a memory limit and a thread count) in three passes, so that
memory depends on the number of universities and of their citing nodes, never on the
size of the dump:

1. **vertices**: the ids of every node of a university -- at domain level the node
   named by one of its registered domains, at host level also every host under them --
   and the count and id range of all vertices;
2. **edges**: the edges into those ids (a hash semi-join against a table of a few
   thousand rows), without the university's links between its own nodes, counted per
   citing node; every edge's ids are checked against the vertex id range on the way;
3. **vertices** again, and the **ranks** file: the name (and number of hosts) of each
   citing node, its harmonic centrality and PageRank with their positions.

Before DuckDB reads them, every gzip part is inflated once with :mod:`zlib`
(:func:`crawler.commoncrawl.dumps.count_lines`) to count its lines and to prove that it is
complete: a part cut short by a broken download ends
inside its deflate stream, and a CSV reader would otherwise take the lines it got for
the whole file.

The citing nodes stay in DuckDB's tables (within its memory limit, spilled to disk
beyond it) and reach Python a batch at a time (:meth:`GraphResult.batches`).

Time: linear in the size of the dumps (two reads of the vertices, one of the edges, one
of the ranks, plus the integrity check). Memory: DuckDB's ``memory_limit`` (its scans'
own buffers level off: ``bench/commoncrawl.py`` measures the peak RSS at 1, 10 and 30
million edges with the same citing nodes) plus one batch of citing nodes in Python.

References
----------
Boldi, P., Vigna, S. (2014). Axioms for centrality. *Internet Mathematics* 10(3-4)
(harmonic centrality, the ranking Common Crawl publishes first).
Common Crawl, cc-webgraph: the tools that build and rank the graphs.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from core.exceptions import ParameterError
from crawler.commoncrawl.dumps import (
    EDGE_COLUMNS,
    LEVELS,
    RANK_COLUMNS,
    RANK_HEADER,
    VERTEX_COLUMNS,
    GraphInputError,
    count_lines,
    find_line,
    first_line,
    graph_name,
    release_of,
    reverse_name,
)

log = logging.getLogger(__name__)


# -- results ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class GraphCitingNode:
    """A node of the graph with at least one edge into a university's nodes.

    ``links`` counts the university's nodes it links to (the graph keeps one edge per
    pair of nodes); ``num_hosts`` is the number of hosts of a citing domain (domain
    level only); the ranks are ``None`` without a ranks file or when the node is not in
    it.
    """

    university_id: int
    name: str  # normal notation, ASCII
    level: str
    links: int
    num_hosts: int | None = None
    harmonic_rank: int | None = None
    harmonic_centrality: float | None = None
    pagerank_rank: int | None = None
    pagerank: float | None = None


@dataclass
class GraphResult:
    """What :meth:`GraphReader.read` or :meth:`GraphReader.stream` found.

    ``nodes`` holds the citing nodes after :meth:`~GraphReader.read`; inside
    :meth:`~GraphReader.stream` it is empty and :meth:`batches` fetches them from DuckDB
    (ordered by university and name) so that they never all sit in Python's memory.
    """

    level: str
    release: str | None
    university_nodes: dict[int, int]  # university id -> its nodes in the graph
    vertices: int
    edges: int
    edges_in: int  # edges into university nodes, internal links included
    citing_nodes: int
    seconds: dict[str, float] = field(default_factory=dict)
    nodes: list[GraphCitingNode] = field(default_factory=list)
    _fetch: Callable[[int], Iterator[list[GraphCitingNode]]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def edges_per_second(self) -> float:
        total = sum(self.seconds.values())
        return self.edges / total if total > 0 else 0.0

    def batches(self, size: int = 5000) -> Iterator[list[GraphCitingNode]]:
        """The citing nodes in lists of at most ``size`` (inside ``stream`` only)."""
        if self._fetch is None:
            for start in range(0, len(self.nodes), size):
                yield self.nodes[start : start + size]
            return
        yield from self._fetch(size)


# -- the reader ---------------------------------------------------------------------------------
_CSV_LINE = re.compile(r"CSV Error on Line: (\d+)")
_CSV_FILE = re.compile(r"^\s*file = (.+?)\s*$", re.M)
_CSV_ORIGINAL = re.compile(r"Original Line: (.*)")
_CSV_COLUMNS = re.compile(r"Expected Number of Columns: (\d+) Found: (\d+)")


def _sql_list(paths: Sequence[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def _sql_columns(columns: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"'{k}': '{v}'" for k, v in columns.items()) + "}"


class GraphReader:
    """Reads the citing nodes of universities from a Common Crawl web graph release.

    Parameters
    ----------
    level : {"domain", "host"}, optional
        The graph's level; by default told by the vertex files' column count (three at
        domain level, two at host level).
    memory_limit : str
        DuckDB's ``memory_limit`` (``"1GB"``); beyond it DuckDB spills to ``temp_dir``.
    threads : int
        DuckDB's threads (and the parallel gzip checks).
    temp_dir : str or Path, optional
        Where DuckDB may spill; a fresh temporary folder by default, removed afterwards.

    Examples
    --------
    >>> GraphReader(level="planet")
    Traceback (most recent call last):
    ...
    core.exceptions.ParameterError: level='planet': use 'domain' or 'host'
    """

    def __init__(
        self,
        *,
        level: str | None = None,
        memory_limit: str = "1GB",
        threads: int = 2,
        temp_dir: str | Path | None = None,
    ) -> None:
        if level is not None and level not in LEVELS:
            raise ParameterError(f"level={level!r}: use 'domain' or 'host'")
        if threads < 1:
            raise ParameterError(f"threads={threads}: use 1 or more")
        self.level = level
        self.memory_limit = memory_limit
        self.threads = threads
        self.temp_dir = temp_dir

    # public ---------------------------------------------------------------------------------
    def read(
        self,
        universities: Mapping[int, Sequence[str]],
        vertices: Sequence[str | Path],
        edges: Sequence[str | Path | EdgeStream],
        ranks: str | Path | None = None,
        *,
        release: str | None = None,
        lines: Mapping[str, int] | None = None,
    ) -> GraphResult:
        """Find every node that links to each university's nodes; all in ``nodes``.

        The arguments, result and errors are those of :meth:`stream`.
        """
        with self.stream(
            universities, vertices, edges, ranks, release=release, lines=lines
        ) as result:
            result.nodes = [node for batch in result.batches() for node in batch]
            result._fetch = None
        return result

    @contextlib.contextmanager
    def stream(
        self,
        universities: Mapping[int, Sequence[str]],
        vertices: Sequence[str | Path],
        edges: Sequence[str | Path | EdgeStream],
        ranks: str | Path | None = None,
        *,
        release: str | None = None,
        lines: Mapping[str, int] | None = None,
    ) -> Iterator[GraphResult]:
        """Find every node that links to each university's nodes, and keep them in DuckDB.

        Every file is checked and read on entering the ``with`` block; inside it,
        :meth:`GraphResult.batches` fetches the citing nodes batch by batch.

        Parameters
        ----------
        universities : mapping
            University id -> its registered domains (as stored).
        vertices, edges : sequence of path
            Every part of the release's vertex and edge files (gzip or plain); an edges
            part may also be an :class:`EdgeStream` (a part read over the network,
            :class:`crawler.commoncrawl.download.StreamedPart`), checked as it is read.
        ranks : path, optional
            The release's ranks file (with its ``#`` header).
        release : str, optional
            The release name (``cc-main-2024-nov-feb-apr``); from the file names when
            ``None``.
        lines : mapping, optional
            File (as ``str``) -> its line count, for files already proven complete (a
            download checked them as they arrived): these are not inflated again.

        Yields
        ------
        GraphResult

        Raises
        ------
        GraphInputError
            A file is missing, truncated or malformed (the message names it and the line),
            the vertex ids are not ``0 .. n-1``, or an edge names an id without a vertex.
        ParameterError
            No university, or ``level`` does not fit the vertex files.
        """
        if not universities:
            raise ParameterError(
                "no university is stored: load them first with "
                "`webometrics universities import FILE`"
            )
        vpaths = [Path(p) for p in vertices]
        epaths: list[Path | EdgeStream] = [
            Path(p) if isinstance(p, str | Path) else p for p in edges
        ]
        local_edges = [p for p in epaths if isinstance(p, Path)]
        streamed = [p for p in epaths if not isinstance(p, Path)]
        rpath = Path(ranks) if ranks is not None else None
        if not vpaths or not epaths:
            raise ParameterError("give at least one vertices file and one edges file")
        level = self._level(vpaths[0])
        named = [*vpaths, *local_edges, *(Path(s.name) for s in streamed)]
        release = release or self._release(named + ([rpath] if rpath else []))
        rank_columns = self._rank_columns(rpath, level) if rpath is not None else None

        seconds: dict[str, float] = {}
        t0 = time.perf_counter()
        known = dict(lines or {})
        all_files = [*vpaths, *local_edges, *([rpath] if rpath else [])]
        unchecked = [p for p in all_files if str(p) not in known]
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            counts = dict(zip(unchecked, pool.map(count_lines, unchecked), strict=True))
        counts.update({p: known[str(p)] for p in all_files if str(p) in known})
        n_edges = sum(counts[p] for p in local_edges)
        seconds["check"] = time.perf_counter() - t0
        log.info(
            "commoncrawl-graph: %d files complete (%d checked before; %s vertices, %s edges "
            "lines%s) in %.1f s",
            len(all_files),
            len(all_files) - len(unchecked),
            f"{sum(counts[p] for p in vpaths):,}",
            f"{n_edges:,}",
            f" and {len(streamed)} streamed edges parts" if streamed else "",
            seconds["check"],
        )
        keys = {uid: sorted({graph_name(d) for d in doms}) for uid, doms in universities.items()}
        with self._connect() as con:
            t = time.perf_counter()
            n_vertices, uni_nodes = self._pass_vertices(con, vpaths, level, keys)
            seconds["vertices"] = time.perf_counter() - t
            log.info(
                "pass 1/3 vertices: %s vertices, %d university nodes in %.1f s",
                f"{n_vertices:,}",
                len(uni_nodes),
                seconds["vertices"],
            )
            t = time.perf_counter()
            edges_in = self._pass_edges(con, epaths, n_vertices)
            n_edges += sum(int(p.lines or 0) for p in streamed)
            seconds["edges"] = time.perf_counter() - t
            log.info(
                "pass 2/3 edges: %s edges, %s into the universities in %.1f s (%s edges/s)",
                f"{n_edges:,}",
                f"{edges_in:,}",
                seconds["edges"],
                f"{n_edges / max(seconds['edges'], 1e-9):,.0f}",
            )
            t = time.perf_counter()
            n_citing = self._pass_names(con, vpaths, epaths, level, rpath, rank_columns)
            seconds["names"] = time.perf_counter() - t
            log.info(
                "pass 3/3 names%s: %s citing nodes in %.1f s",
                " and ranks" if rpath else "",
                f"{n_citing:,}",
                seconds["names"],
            )
            per_uni: dict[int, int] = {uid: 0 for uid in universities}
            for uid, _node_id, _name in uni_nodes:
                per_uni[uid] += 1
            absent = [uid for uid, n in sorted(per_uni.items()) if n == 0]
            if absent:
                log.warning(
                    "%d of %d universities have no node in this %s graph: %s%s",
                    len(absent),
                    len(per_uni),
                    level,
                    "; ".join(", ".join(universities[uid]) for uid in absent[:10]),
                    " ..." if len(absent) > 10 else "",
                )
            yield GraphResult(
                level=level,
                release=release,
                university_nodes=per_uni,
                vertices=n_vertices,
                edges=n_edges,
                edges_in=edges_in,
                citing_nodes=n_citing,
                seconds=seconds,
                _fetch=lambda size: self._fetch_nodes(con, level, size),
            )

    # set-up -------------------------------------------------------------------------------
    def _level(self, first_vertices: Path) -> str:
        line = first_line(first_vertices)
        found = {3: "domain", 2: "host"}.get(len(line.split("\t")))
        if found is None:
            raise GraphInputError(
                f"{first_vertices}: line 1: expected 2 (host graph: id, reversed host) or 3 "
                f"(domain graph: id, reversed domain, number of hosts) tab-separated columns, "
                f"found {len(line.split(chr(9)))}: {line[:200]!r}"
            )
        if self.level is not None and self.level != found:
            raise ParameterError(
                f"--level {self.level} but {first_vertices} has the columns of a {found} "
                f"graph: give the {self.level} graph's vertices or use --level {found}"
            )
        return found

    @staticmethod
    def _release(paths: Sequence[Path]) -> str | None:
        found = {r[0] for p in paths if (r := release_of(p)) is not None}
        if len(found) > 1:
            raise ParameterError(
                f"the files belong to different releases ({', '.join(sorted(found))}): give "
                "the files of one release"
            )
        return found.pop() if found else None

    @staticmethod
    def _rank_columns(path: Path, level: str) -> dict[str, str]:
        header = tuple(first_line(path).split("\t"))
        columns = dict(RANK_COLUMNS)
        if header == (*RANK_HEADER, "#n_hosts"):
            columns["num_hosts"] = "BIGINT"
        elif header != RANK_HEADER:
            raise GraphInputError(
                f"{path}: line 1: not a Common Crawl ranks header: expected "
                f"{' '.join(RANK_HEADER)} [#n_hosts], found {' '.join(header)[:200]!r}"
            )
        return columns

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Any]:
        import duckdb

        tmp = Path(self.temp_dir) if self.temp_dir else Path(tempfile.mkdtemp(prefix="ccgraph-"))
        con = duckdb.connect(":memory:")
        try:
            con.execute(f"SET threads = {int(self.threads)}")
            con.execute(f"SET memory_limit = '{self.memory_limit}'")
            con.execute(f"SET temp_directory = '{str(tmp).replace(chr(39), '')}'")
            con.execute("SET preserve_insertion_order = false")
            con.execute("SET enable_progress_bar = false")
            # DuckDB knows no cardinality of a CSV scan and may build a join's hash table
            # on the dump's side (memory growing with the dump: 690 MB instead of 350 MB
            # at 30 M edges); as written, every join builds on the small table
            con.execute("SET disabled_optimizers = 'join_order,build_side_probe_side'")
            yield con
        finally:
            con.close()
            if not self.temp_dir:
                shutil.rmtree(tmp, ignore_errors=True)

    @staticmethod
    def _scan(paths: Sequence[Path], columns: Mapping[str, str], **extra: Any) -> str:
        opts = "".join(f", {k} = {v}" for k, v in extra.items())
        return (
            f"read_csv({_sql_list(paths)}, delim = '\\t', header = false, quote = '', "
            f"escape = '', auto_detect = false, columns = {_sql_columns(columns)}{opts})"
        )

    @staticmethod
    def _query(con: Any, sql: str, what: str, params: Sequence[Any] = ()) -> Any:
        import duckdb

        try:
            return con.execute(sql, list(params))
        except duckdb.Error as exc:
            raise _translate(exc, what) from exc

    # passes ----------------------------------------------------------------------------------
    def _pass_vertices(
        self,
        con: Any,
        paths: Sequence[Path],
        level: str,
        keys: Mapping[int, Sequence[str]],
    ) -> tuple[int, list[tuple[int, int, str]]]:
        owners: dict[str, list[int]] = {}
        for uid, names in keys.items():
            for name in names:
                owners.setdefault(name, []).append(uid)
        con.execute("CREATE TEMP TABLE target_key (name VARCHAR, labels INTEGER)")
        con.executemany(
            "INSERT INTO target_key VALUES (?, ?)", [(k, k.count(".") + 1) for k in owners]
        )
        if level == "domain":
            condition = "name IN (SELECT name FROM target_key)"
        else:  # the node itself or a host under it: its first k labels name the university
            parts = []
            for k in sorted({k.count(".") + 1 for k in owners}):
                prefix = ", ".join(f"split_part(name, '.', {i})" for i in range(1, k + 1))
                parts.append(
                    f"concat_ws('.', {prefix}) IN (SELECT name FROM target_key WHERE labels = {k})"
                )
            condition = " OR ".join(parts)
        sql = (
            "SELECT count(*), min(id), max(id), "
            f"list(struct_pack(id := id, name := name)) FILTER (WHERE {condition}) "
            f"FROM {self._scan(paths, VERTEX_COLUMNS[level])}"
        )
        n, lo, hi, hits = self._query(con, sql, "vertices").fetchone()
        if n == 0:
            raise GraphInputError(f"{paths[0]}: the vertex files have no line")
        if lo != 0 or hi != n - 1:
            raise GraphInputError(
                f"the vertex files ({paths[0]}{' ...' if len(paths) > 1 else ''}) hold "
                f"{n:,} vertices with ids {lo:,} .. {hi:,}, not 0 .. {n - 1:,}: a part is "
                "missing or repeated, or the parts come from different releases"
            )
        uni_nodes: list[tuple[int, int, str]] = []
        for hit in hits or []:
            name = hit["name"]
            labels = name.split(".")
            # the node itself, and at host level every shorter prefix of its labels
            prefixes = (
                [name]
                if level == "domain"
                else [".".join(labels[:j]) for j in range(1, len(labels) + 1)]
            )
            for key in prefixes:
                uni_nodes += [(uid, hit["id"], name) for uid in owners.get(key, ())]
        uni_nodes = sorted(set(uni_nodes))  # a node under two domains of one university
        con.execute("CREATE TEMP TABLE uni_node (university_id INTEGER, id BIGINT, name VARCHAR)")
        if uni_nodes:
            con.executemany("INSERT INTO uni_node VALUES (?, ?, ?)", uni_nodes)
        return int(n), uni_nodes

    def _pass_edges(self, con: Any, parts: Sequence[Path | EdgeStream], n_vertices: int) -> int:
        hi = n_vertices - 1
        out_of_range = f"from_id < 0 OR from_id > {hi} OR to_id < 0 OR to_id > {hi}"
        keep = f"WHERE to_id IN (SELECT id FROM uni_node) OR {out_of_range}"
        paths = [p for p in parts if isinstance(p, Path)]
        con.execute("CREATE TEMP TABLE hit (from_id BIGINT, to_id BIGINT)")
        if paths:
            scan = self._scan(paths, EDGE_COLUMNS)
            self._query(con, f"INSERT INTO hit SELECT from_id, to_id FROM {scan} {keep}", "edges")
        for part in parts:
            if not isinstance(part, Path):
                _insert_stream(con, part, f"INSERT INTO hit SELECT from_id, to_id FROM {{}} {keep}")
        bad = con.execute(
            f"SELECT from_id, to_id FROM hit WHERE {out_of_range} ORDER BY from_id, to_id LIMIT 1"
        ).fetchone()
        if bad is not None:  # the error path: find the file and line in Python
            a, b = bad
            missing = a if not 0 <= a <= hi else b
            where = f"{parts[0]}{' ...' if len(parts) > 1 else ''}: edge {a} -> {b}"
            for path in paths:
                found = find_line(path, lambda f: int(f[0]) == a and int(f[1]) == b)
                if found is not None:
                    where = f"{path}: line {found[0]}: {found[1]!r}"
                    break
            raise GraphInputError(
                f"{where}: vertex id {missing:,} has no vertex (the vertex files hold ids "
                f"0 .. {hi:,}): the vertex and edge files do not belong together (another "
                "release or level, or a vertex part is missing)"
            )
        con.execute(
            "CREATE TEMP TABLE citing AS "
            "SELECT u.university_id, h.from_id AS id, count(DISTINCT h.to_id) AS links "
            "FROM hit h JOIN uni_node u ON u.id = h.to_id "
            "WHERE NOT EXISTS (SELECT 1 FROM uni_node s "
            "                  WHERE s.id = h.from_id AND s.university_id = u.university_id) "
            "GROUP BY u.university_id, h.from_id"
        )
        return int(con.execute("SELECT count(*) FROM hit").fetchone()[0])

    def _pass_names(
        self,
        con: Any,
        vpaths: Sequence[Path],
        epaths: Sequence[Path | EdgeStream],
        level: str,
        rpath: Path | None,
        rank_columns: Mapping[str, str] | None,
    ) -> int:
        hosts = "v.num_hosts" if level == "domain" else "NULL"
        sql = (
            f"CREATE TEMP TABLE named AS SELECT v.id, v.name, {hosts} AS num_hosts "
            f"FROM {self._scan(vpaths, VERTEX_COLUMNS[level])} v "
            "WHERE v.id IN (SELECT id FROM citing)"
        )
        self._query(con, sql, "vertices")
        lost = con.execute(
            "SELECT id FROM citing WHERE id NOT IN (SELECT id FROM named) ORDER BY id LIMIT 1"
        ).fetchone()
        if lost is not None:  # only with duplicated ids, which the id range check misses
            raise GraphInputError(
                f"edge source id {lost[0]:,} in {epaths[0]}{' ...' if len(epaths) > 1 else ''} "
                "has no vertex: the vertex and edge files do not belong together"
            )
        if rpath is not None and rank_columns is not None:
            sql = (
                "CREATE TEMP TABLE ranked AS SELECT r.name, r.harmonicc_pos, "
                "r.harmonicc_val, r.pr_pos, r.pr_val "
                f"FROM {self._scan([rpath], rank_columns, skip=1)} r "
                "WHERE r.name IN (SELECT name FROM named)"
            )
            self._query(con, sql, "ranks")
        else:
            con.execute(
                "CREATE TEMP TABLE ranked (name VARCHAR, harmonicc_pos BIGINT, "
                "harmonicc_val DOUBLE, pr_pos BIGINT, pr_val DOUBLE)"
            )
        return int(con.execute("SELECT count(*) FROM citing").fetchone()[0])

    @staticmethod
    def _fetch_nodes(con: Any, level: str, size: int) -> Iterator[list[GraphCitingNode]]:
        cursor = con.execute(
            "SELECT c.university_id, n.name, c.links, n.num_hosts, r.harmonicc_pos, "
            "r.harmonicc_val, r.pr_pos, r.pr_val "
            "FROM citing c JOIN named n ON n.id = c.id "
            "LEFT JOIN (SELECT name, min(harmonicc_pos) AS harmonicc_pos, "
            "           max(harmonicc_val) AS harmonicc_val, min(pr_pos) AS pr_pos, "
            "           max(pr_val) AS pr_val FROM ranked GROUP BY name) r ON r.name = n.name "
            "ORDER BY c.university_id, n.name"
        )
        while rows := cursor.fetchmany(size):
            yield [
                GraphCitingNode(
                    university_id=int(uid),
                    name=reverse_name(name),
                    level=level,
                    links=int(links),
                    num_hosts=None if nh is None else int(nh),
                    harmonic_rank=None if hpos is None else int(hpos),
                    harmonic_centrality=None if hval is None else float(hval),
                    pagerank_rank=None if ppos is None else int(ppos),
                    pagerank=None if pval is None else float(pval),
                )
                for uid, name, links, nh, hpos, hval, ppos, pval in rows
            ]


class EdgeStream(Protocol):
    """An edges part read once from a stream (a network download that is not stored):
    ``name`` (its URL), ``open()`` (its inflated text; the reader raises when the stream
    proves incomplete), ``lines`` (its line count once read) and ``error`` (what ended the
    read, if anything did)."""

    name: str
    lines: int | None
    error: BaseException | None

    def open(self) -> BinaryIO: ...


def _insert_stream(con: Any, part: EdgeStream, sql: str) -> None:
    """Run ``sql`` (``{}`` = the table) over a streamed edges part, read by Arrow's CSV
    reader a block at a time and scanned once by DuckDB."""
    import duckdb
    import pyarrow as pa
    from pyarrow import csv

    names = list(EDGE_COLUMNS)
    registered = False
    try:
        reader = csv.open_csv(
            part.open(),
            read_options=csv.ReadOptions(column_names=names, block_size=8 << 20),
            parse_options=csv.ParseOptions(delimiter="\t", quote_char=False),
            convert_options=csv.ConvertOptions(column_types={n: pa.int64() for n in names}),
        )
        # a RecordBatchReader: DuckDB scans it once, a batch at a time
        con.register("edge_stream", pa.RecordBatchReader.from_batches(reader.schema, reader))
        registered = True
        con.execute(sql.format("edge_stream"))
    except (duckdb.Error, pa.ArrowException, ValueError) as exc:
        if part.error is not None:
            raise part.error from None
        raise GraphInputError(
            f"{part.name}: not an edges part of the published format "
            f"(from_id<TAB>to_id): {str(exc).splitlines()[0]}"
        ) from exc
    finally:
        if registered:
            con.unregister("edge_stream")
    if part.error is not None:
        raise part.error


def _translate(exc: Exception, what: str) -> GraphInputError:
    """A DuckDB reading error as a message naming the file and the line."""
    text = str(exc)
    file_m = _CSV_FILE.search(text)
    line_m = _CSV_LINE.search(text)
    if file_m and line_m:
        where = f"{file_m.group(1)}: line {line_m.group(1)}"
        cols = _CSV_COLUMNS.search(text)
        original = _CSV_ORIGINAL.search(text)
        shown = f": {original.group(1)[:200]!r}" if original else ""
        if cols:
            return GraphInputError(
                f"{where}: expected {cols.group(1)} tab-separated columns, found "
                f"{cols.group(2)}{shown} (a {what} file of the published format has "
                f"{cols.group(1)}; a truncated or wrong file?)"
            )
        first = text.splitlines()[0] if text else type(exc).__name__
        return GraphInputError(f"{where}: {first}{shown}")
    if "No files found" in text:
        return GraphInputError(f"{what}: {text.splitlines()[0]}")
    first = text.splitlines()[0] if text else type(exc).__name__
    return GraphInputError(f"cannot read the {what} files: {first}")


__all__ = ["EdgeStream", "GraphCitingNode", "GraphReader", "GraphResult"]
