"""Every page of the dashboard on both worlds — the hand-made one (:mod:`tests.stored_world`)
and the one the real pipeline made (:mod:`tests.pipeline_world`) — opened, every select
box and radio walked (up to :data:`MAX_OPTIONS` options each) and every toggle switched
on, in Streamlit's AppTest: no exception anywhere.

Generic on purpose: the pages come from ``st.Page`` in ``dashboard/app.py`` and the
widgets are discovered on each page, so a new page or widget is walked without a new
test. Then what an analyst reads on the pipeline-made database: each clustering's own
levels (Leiden resolutions, the paper's r), readable category labels, no "None" cells.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dashboard
from tests import apptest

APP = Path(dashboard.__file__).resolve().parent / "app.py"
PAGES = re.findall(r'st\.Page\(\s*"([^"]+)"', APP.read_text(encoding="utf-8"))
MAX_OPTIONS = 3  # per widget: the first options (the default and its neighbours)
KINDS = ("selectbox", "radio")


@pytest.fixture(scope="module", params=["stored", "pipeline"])
def world_url(request: pytest.FixtureRequest) -> str:
    """The database URL of the hand-made world, then of the pipeline-made one."""
    fixture = "dashboard_db" if request.param == "stored" else "pipeline_db"
    return request.getfixturevalue(fixture).url


def page_opener(
    url: str, monkeypatch: pytest.MonkeyPatch, *, strict: bool
) -> Callable[[str], AppTest]:
    """A function that opens a page of the app on ``url`` in a fresh AppTest (``strict``:
    asserting that neither the app nor the page raised)."""
    monkeypatch.setenv("WEBOMETRICS_DB_URL", url)
    monkeypatch.delenv("WEBOMETRICS_CONFIG", raising=False)

    def fresh(path: str) -> AppTest:
        at = apptest.app(120)
        at.run()
        at.switch_page(path).run()
        if strict:
            assert not at.exception, at.exception
        return at

    return fresh


@pytest.fixture
def open_page(world_url: str, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], AppTest]:
    return page_opener(world_url, monkeypatch, strict=False)


@dataclass
class Walk:
    """What a walk saw: the views rendered and the exceptions met (where: message)."""

    views: int = 0
    errors: list[str] | None = None

    def note(self, at: AppTest, where: str) -> None:
        self.views += 1
        self.errors = self.errors or []
        for exc in at.exception:
            first = (exc.value or "").splitlines()[0] if exc.value else str(exc)
            self.errors.append(f"{where}: {first}")


def _widgets(at: AppTest) -> list[tuple[str, str | int]]:
    """``(kind, key or index)`` of every select box and radio on the page."""
    found = []
    for kind in KINDS:
        for i, w in enumerate(getattr(at, kind)):
            found.append((kind, w.key if w.key else i))
    return found


def _find(at: AppTest, kind: str, ident: str | int) -> object | None:
    widgets = list(getattr(at, kind))
    if isinstance(ident, int):
        return widgets[ident] if ident < len(widgets) else None
    return next((w for w in widgets if w.key == ident), None)


def _toggles_on(at: AppTest) -> None:
    for t in at.toggle:
        t.set_value(True)
    at.run()


def walk_page(fresh: Callable[[str], AppTest], path: str) -> Walk:
    """Open ``path``; for each select box and radio (first with the toggles off, then the
    widgets only the toggles reveal), from a fresh page, choose each of its first
    :data:`MAX_OPTIONS` options in turn; then every toggle on."""
    walk = Walk(errors=[])
    at = fresh(path)
    walk.note(at, path)
    plain = _widgets(at)
    has_toggles = bool(list(at.toggle))
    revealed: list[tuple[str, str | int]] = []
    if has_toggles:
        on = fresh(path)
        _toggles_on(on)
        walk.note(on, f"{path} toggles on")
        revealed = [w for w in _widgets(on) if w not in plain and not isinstance(w[1], int)]
    for toggles, widgets in ((False, plain), (True, revealed)):
        for kind, ident in widgets:
            at = fresh(path)
            if toggles:
                _toggles_on(at)
            widget = _find(at, kind, ident)
            n = len(widget.options) if widget is not None else 0
            for i in range(min(n, MAX_OPTIONS)):
                widget = _find(at, kind, ident)
                if widget is None or i >= len(widget.options):
                    break
                where = f"{path} {kind} {ident}={widget.options[i]!r}"
                try:
                    if kind == "selectbox":
                        widget.select_index(i).run()
                    else:
                        widget.set_value(widget.options[i]).run()
                except Exception as exc:  # a widget that cannot be set is a failure too
                    walk.errors.append(f"{where}: {type(exc).__name__}: {exc}"[:300])
                    continue
                walk.note(at, where)
    return walk


def test_every_page_is_found_and_named_as_the_command_line_says() -> None:
    # the walk below and ../shared/tools/walk_dashboard.py find the pages by reading the
    # st.Page literals of app.py: a page built otherwise would silently not be walked
    titles = re.findall(r'st\.Page\(\s*"[^"]+",\s*title="([^"]+)"', APP.read_text("utf-8"))
    assert len(PAGES) == len(dashboard.PAGE_TITLES), PAGES
    assert tuple(titles) == dashboard.PAGE_TITLES


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", PAGES, ids=[Path(p).stem for p in PAGES])
def test_walk_every_option_of_every_page(open_page: Callable[[str], AppTest], path: str) -> None:
    walk = walk_page(open_page, path)
    assert walk.views >= 1
    assert not walk.errors, "\n".join(walk.errors)


# --- what the pipeline-made database shows ------------------------------------------------


@pytest.fixture
def pipeline_page(pipeline_db, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], AppTest]:
    return page_opener(pipeline_db.url, monkeypatch, strict=True)


def _frames(at: AppTest) -> list[pd.DataFrame]:
    return [df.value for df in at.dataframe]


def _percent(cell: str) -> float:
    """A rendered share (``"45.7 %"``, ``"45.7 % (2.0)"``) as a fraction."""
    return float(cell.split(" %")[0]) / 100


def _levels_table(at: AppTest) -> pd.DataFrame:
    return next(df for df in _frames(at) if "n_clusters" in df.columns)


def _pick_clustering(at: AppTest, algorithm: str) -> None:
    # AppTest lists a select box's options as the labels it shows
    box = at.selectbox(key="clustering")
    box.select_index(next(i for i, o in enumerate(box.options) if f"· {algorithm} " in o)).run()
    assert not at.exception, at.exception


def test_university_shows_leiden_levels_of_the_default_method(pipeline_page) -> None:
    at = pipeline_page("views/university.py")
    # the paper's method ran after the default, so its clustering is the newest; the page
    # opens on the default method's all the same
    box = at.selectbox(key="clustering")
    assert "· lsh-link " in box.options[0] and "· activity " in box.options[box.index], box.options
    _pick_clustering(at, "activity")
    levels = _levels_table(at)
    assert list(levels["level"]) == list(range(len(levels)))
    assert "resolution" in levels.columns and "r" not in levels.columns
    # the finer level splits the clusters, the coarser one merges them
    assert list(levels["role"]) == ["finer", "clusters", "coarser"], levels
    # finer levels at higher resolutions: more clusters
    assert levels["resolution"].is_monotonic_decreasing
    assert levels["n_clusters"].is_monotonic_decreasing
    captions = " ".join(c.value for c in at.caption)
    assert "resolution" in captions and "rows per band" not in captions
    # the finer-level picker lists the stored levels by resolution, and shows their rows
    picker = at.selectbox(key=f"level-{at.selectbox(key='clustering').value}")  # per clustering
    names = list(picker.options)
    assert names[0].startswith("final") and any("resolution 2" in n for n in names), names
    assert any("resolution 0.5 · broader groups of the clusters" in n for n in names), names
    picker.set_value(0).run()
    assert not at.exception, at.exception
    rows = _frames(at)[-1]
    assert len(rows) == int(levels.loc[levels["level"] == 0, "n_clusters"].iloc[0])
    _assert_named(rows)


def _assert_named(rows: pd.DataFrame) -> None:
    """Every cluster row of a level shows its theme terms and its category's label."""
    assert list(rows.columns) == ["label", "size", "category", "theme", "member domains"]
    assert rows["theme"].str.len().gt(0).all(), rows
    assert rows["category"].str.len().gt(0).all(), rows
    assert not rows["category"].str.contains("_").any(), rows  # labels, not keys


def test_university_shows_r_levels_of_the_papers_method(pipeline_page) -> None:
    at = pipeline_page("views/university.py")
    _pick_clustering(at, "lsh-link")
    levels = _levels_table(at)
    assert "r" in levels.columns and "resolution" not in levels.columns
    assert levels["r"].is_monotonic_decreasing
    captions = " ".join(c.value for c in at.caption)
    assert "rows per band" in captions and "resolution" not in captions
    picker = at.selectbox(key=f"level-{at.selectbox(key='clustering').value}")  # per clustering
    assert any(n.startswith("level 0 · r=") for n in picker.options), picker.options
    picker.set_value(0).run()
    assert not at.exception, at.exception
    _assert_named(_frames(at)[-1])


def test_countries_leave_unknown_out_unless_asked(pipeline_page, pipeline_db) -> None:
    from store import analytics as A

    engine = pipeline_db.engine
    try:
        stored = A.to_frame(A.category_shares(engine, run_id=1, direction="outgoing"))
    finally:
        engine.dispose()
    unknown = "Unknown (not fetched or no text)"
    assert (stored["category"] == "unknown").any()  # the crawl leaves domains unfetched
    at = pipeline_page("views/countries.py")
    per_uni = _frames(at)[0].set_index("university")
    assert unknown not in per_uni.columns
    shares = per_uni.drop(columns="country").map(_percent)
    # over the domains with evidence (each rounded to 0.1 point)
    assert shares.sum(axis=1).sub(1.0).abs().le(0.005).all()
    known = stored[stored["category"] == "universities"].set_index("university")["known_share"]
    assert shares["Universities"].to_dict() == pytest.approx(known.to_dict(), abs=5e-4)
    at.toggle(key="countries-unknown").set_value(True).run()
    assert not at.exception, at.exception
    per_uni = _frames(at)[0].set_index("university").drop(columns="country").map(_percent)
    share = stored[stored["category"] == "unknown"].set_index("university")["share"]
    # a university without unknown domains has no unknown row stored: a share of 0
    share = share.reindex(per_uni.index, fill_value=0.0)
    assert share.gt(0).any()
    assert per_uni[unknown].to_dict() == pytest.approx(share.to_dict(), abs=5e-4)
    assert per_uni.sum(axis=1).sub(1.0).abs().le(0.005).all()


def test_countries_source_filter(pipeline_page) -> None:
    at = pipeline_page("views/countries.py")
    at.radio(key="countries-direction").set_value("citing").run()
    every = _frames(at)[2]  # the domain counts behind the shares, per university
    at.multiselect(key="countries-source").set_value(["backlinks"]).run()
    assert not at.exception, at.exception
    backlinks = _frames(at)[2]
    assert 0 < backlinks["domains"].sum() <= every["domains"].sum()
    # the test web has no Common Crawl graph: nothing left, and said so
    at.multiselect(key="countries-source").set_value(["commoncrawl"]).run()
    assert not at.exception, at.exception
    assert any("for these filters" in i.value for i in at.info)
    assert not any("webometrics analyse" in i.value for i in at.info)


def test_a_run_without_near_duplicates_says_so(pipeline_page, pipeline_db) -> None:
    """The pipeline's dedup run on the test web groups nothing: the page says so and why,
    with no empty table."""
    assert pipeline_db.stats["dedup"]["n_groups"] == 0
    at = pipeline_page("views/duplicates.py")
    # no table but the run's parameters
    assert [list(df.columns) for df in _frames(at)] == [["parameter", "value", "meaning"]]
    (said,) = [i.value for i in at.info if "No near-duplicate group" in i.value]
    assert said.startswith("No near-duplicate group in this run"), said
    assert f"{pipeline_db.stats['dedup']['n_documents']} documents" in said


def test_stages_run_one_by_one_leave_no_empty_pipeline_table(pipeline_page) -> None:
    """The pipeline-made database ran its stages as separate commands: the Runs page says
    that `webometrics run` records a pipeline run, and shows no empty table for it."""
    at = pipeline_page("views/runs.py")
    (said,) = [i.value for i in at.info if "whole-pipeline run" in i.value]
    assert "`webometrics run`" in said
    assert all("trigger" not in frame.columns for frame in _frames(at))
    assert any("kind" in frame.columns for frame in _frames(at))  # the crawl runs are shown
