"""webometrics: the external web environment of universities, crawled, extracted,
de-duplicated and clustered by kind of activity.

The package is the top of the project: the command line (:mod:`webometrics.cli`, one
module per subcommand in :mod:`webometrics.commands`) and the pipeline's stages
(:mod:`webometrics.stages`), which call the libraries below them (``core``, ``store``,
``crawler``, ``extract``, ``dedup``, ``cluster``, ``analyse``).
"""

__version__ = "0.1.0"
