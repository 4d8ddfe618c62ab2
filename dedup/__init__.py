"""The library of the ``dedup`` stage: the near-duplicate methods of the seed documents
behind one interface (:mod:`dedup.base`, listed in :mod:`dedup.registry`) and their
grouping into duplicate groups with a canonical member (:mod:`dedup.groups`).

Imports neither the database nor the command line.
"""
