"""The spiders: :mod:`~crawler.spiders.outgoing` (a university's site and the external
pages it links to) and :mod:`~crawler.spiders.citing` (pages said to link to it)."""
