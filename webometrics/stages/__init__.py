"""The pipeline stages as functions over a database engine and the settings.

One module or package per stage (crawl, extract, dedup, cluster, analyse); each exposes
``run(engine, settings, ...) -> dict`` returning the stage's statistics, so that the
command line and the whole-pipeline run (``webometrics run``) call the same code.
The algorithms themselves live in ``extract/`` and ``cluster/`` and know no database.
"""
