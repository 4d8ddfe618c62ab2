"""Storing the universities of a universities file (parsed by :mod:`core.universities`)."""

from __future__ import annotations

from sqlalchemy import Engine, select

from core.exceptions import UniversitiesFileError
from core.universities import UniversitySpec
from store.models import University, UniversityDomain
from store.session import session_scope


def import_universities(engine: Engine, specs: list[UniversitySpec]) -> tuple[int, int]:
    """Insert or update universities by name, in one transaction.

    Returns
    -------
    (created, updated) : tuple of int

    Raises
    ------
    UniversitiesFileError
        A domain already belongs to another university in the database.
    """
    created = updated = 0
    with session_scope(engine) as session:
        for spec in specs:
            owner = {
                d: n
                for d, n in session.execute(
                    select(UniversityDomain.domain, University.name)
                    .join(University)
                    .where(UniversityDomain.domain.in_(spec.domains))
                )
            }
            for d, other in owner.items():
                if other != spec.name:
                    raise UniversitiesFileError(
                        f"domain {d!r} of {spec.name!r} already belongs to {other!r} in the "
                        "database; nothing was imported"
                    )
            uni = session.scalar(select(University).where(University.name == spec.name))
            if uni is None:
                uni = University(
                    name=spec.name,
                    country=spec.country,
                    rank=spec.rank,
                    impact_rank=spec.impact_rank,
                    home_urls=list(spec.start_urls),
                )
                session.add(uni)
                created += 1
            else:
                uni.country, uni.rank, uni.impact_rank, uni.home_urls = (
                    spec.country,
                    spec.rank,
                    spec.impact_rank,
                    list(spec.start_urls),
                )
                updated += 1
            have = {d.domain for d in uni.domains}
            for d in list(uni.domains):
                if d.domain not in spec.domains:
                    uni.domains.remove(d)
            for d in spec.domains:
                if d not in have:
                    uni.domains.append(UniversityDomain(domain=d))
            session.flush()
    return created, updated
