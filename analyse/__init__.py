"""The library of the ``analyse`` stage: what the clusters mean.

- :mod:`analyse.taxonomy`: the taxonomy file (``analyse/taxonomy.toml``), its checks and
  types;
- :mod:`analyse.categories`: the category of a domain or a cluster, with its evidence;
- :mod:`analyse.themes`: names of clusters (distinctive terms, titles, domains);
- :mod:`analyse.networks`: university-domain graphs, co-link overlaps, centralities and
  their export (GEXF, GraphML, CSV).

Imports neither the database nor the command line.
"""
