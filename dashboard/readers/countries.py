"""What the Countries page reads: the category shares per university and per country
under either definition, and both definitions side by side (:mod:`.common`)."""

from __future__ import annotations

from dashboard.cache import cached
from dashboard.readers.common import low_confidence, share_comparison, universities
from store.analytics import shares

__all__ = [
    "country_shares",
    "low_confidence",
    "share_comparison",
    "universities",
    "university_shares",
]

university_shares = cached(shares.university_shares)
country_shares = cached(shares.country_shares)
