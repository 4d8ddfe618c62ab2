"""webometrics: the external web environment of universities, crawled, extracted,
de-duplicated and clustered by kind of activity.

The package holds the command line (:mod:`webometrics.cli`), the typed settings
(:mod:`webometrics.settings`, defaults in :mod:`webometrics.defaults`) and the
project's exceptions (:mod:`webometrics.exceptions`).
"""

__version__ = "0.1.0"
