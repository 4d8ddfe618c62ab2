"""What a test web build makes: :class:`BuildOptions` (``[testbed]`` in the settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import defaults as D


@dataclass(frozen=True)
class BuildOptions:
    """What the build makes; see ``[testbed]`` in docs/configuration.md."""

    seed: int = D.TESTBED_SEED
    max_sites: int = D.TESTBED_MAX_SITES
    min_pages: int = D.TESTBED_MIN_PAGES
    max_pages: int = D.TESTBED_MAX_PAGES
    link_rot: float = D.TESTBED_LINK_ROT
    https_share: float = D.TESTBED_HTTPS_SHARE
    russian_share: float = D.TESTBED_RUSSIAN_SHARE
    backlink_share: float = D.TESTBED_BACKLINK_SHARE
    citing_sites: int = D.TESTBED_CITING_SITES
    slow_seconds: float = D.TESTBED_SLOW_SECONDS
    oversized_bytes: int = D.TESTBED_OVERSIZED_BYTES
    max_response_bytes: int = D.CRAWL_MAX_RESPONSE_BYTES

    @classmethod
    def from_settings(cls, settings: Any) -> BuildOptions:
        t = settings.testbed
        return cls(
            seed=t.seed,
            max_sites=t.max_sites,
            min_pages=t.min_pages,
            max_pages=t.max_pages,
            link_rot=t.link_rot,
            https_share=t.https_share,
            russian_share=t.russian_share,
            backlink_share=t.backlink_share,
            citing_sites=t.citing_sites,
            slow_seconds=t.slow_seconds,
            oversized_bytes=t.oversized_bytes,
            max_response_bytes=settings.crawl.max_response_bytes,
        )

    def validate(self) -> None:
        from core.exceptions import ParameterError

        if not 1 <= self.min_pages <= self.max_pages:
            raise ParameterError(
                f"testbed pages per site: need 1 <= min_pages ({self.min_pages}) <= "
                f"max_pages ({self.max_pages})"
            )
        for name in ("link_rot", "https_share", "russian_share", "backlink_share"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ParameterError(f"testbed {name}={v} must lie in [0, 1]")
        if self.max_sites < 0 or self.citing_sites < 1:
            raise ParameterError("testbed max_sites must be >= 0 and citing_sites >= 1")
