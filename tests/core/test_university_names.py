"""A university name with a doubled space (or a tab, or spaces at its ends) is the same
university, not a new one (issue 36)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from core.universities import parse_universities
from store.models import University
from store.session import session_scope
from store.universities import import_universities
from tests.crawler.conftest import migrated_engine


def test_a_doubled_space_in_a_name_is_the_same_university(
    migrated_url: str, tmp_path: Path
) -> None:
    engine = migrated_engine(migrated_url)
    for i, name in enumerate(("Alpha University", "Alpha  University", " Alpha\\tUniversity ")):
        path = tmp_path / f"u{i}.toml"
        path.write_text(
            f'[[university]]\nname = "{name}"\ncountry = "USA"\ndomains = ["alpha.edu"]\n',
            encoding="utf-8",
        )
        (spec,) = parse_universities(path)
        assert spec.name == "Alpha University"
        import_universities(engine, [spec])
    with session_scope(engine) as s:
        assert s.scalar(select(func.count()).select_from(University)) == 1
        assert s.scalar(select(University.name)) == "Alpha University"
    engine.dispose()
