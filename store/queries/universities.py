"""The stored universities with their domains and home URLs, by rank."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, selectinload

from store.models import (
    University,
)


@dataclass(frozen=True)
class UniversityRow:
    id: int
    name: str
    country: str
    rank: int | None
    domains: tuple[str, ...]
    home_urls: tuple[str, ...]


def list_universities(engine: Engine) -> list[UniversityRow]:
    """Every stored university with its domains, by rank then name."""
    with Session(engine) as s:
        unis = s.scalars(select(University).options(selectinload(University.domains))).all()
        rows = [
            UniversityRow(
                u.id,
                u.name,
                u.country,
                u.rank,
                tuple(d.domain for d in u.domains),
                tuple(u.home_urls or ()),
            )
            for u in unis
        ]
    return sorted(rows, key=lambda r: (r.rank is None, r.rank or 0, r.name))
