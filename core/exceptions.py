"""The project's exceptions, in one place.

Every error the command line reports to a user derives from :class:`WebometricsError`.
Each carries a message that says what is wrong *and what to do*; the command line
prints it and exits with :attr:`WebometricsError.exit_code`.

Exit codes (stable, scripts may rely on them):

====  ==========================================================
0     success
1     the work ran and failed (a stage error, a failed crawl)
2     bad input: configuration, universities file, parameters, database URL
3     the database schema is out of date (run ``webometrics db upgrade``)
4     another pipeline run is in progress (the run lock is held)
5     done with gaps: rows or universities left unmatched or ambiguous (listed)
130   interrupted by the user (Ctrl-C); what was stored is kept
====  ==========================================================
"""

from __future__ import annotations

#: every exit code of the command line and what it means (the ``--help`` epilog is made
#: from it; each error class's ``exit_code`` is one of these)
EXIT_CODES: dict[int, str] = {
    0: "ok",
    1: "the work failed",
    2: "bad input (configuration, universities file, parameters) or unreachable database",
    3: "schema out of date (run `webometrics db upgrade`)",
    4: "another run holds the run lock, or another stage its stage lock (crawl with crawl, "
    "cluster with analyse, ...; the holder is named; which stages may overlap: "
    "docs/operations.md)",
    5: "done with gaps: `universities import-ranks` stored the rows it matched but listed "
    "rows it could not match, ambiguous rows or stored universities the table does not rank",
    130: "interrupted (Ctrl-C or SIGTERM; the run is marked interrupted, `webometrics runs` "
    "shows how to resume it)",
}


class WebometricsError(Exception):
    """Base class of every error the project reports to its users."""

    exit_code: int = 1


class ConfigError(WebometricsError):
    """A configuration or input file is invalid (syntax, unknown key, bad value).

    The message names the file and the line or the field.
    """

    exit_code = 2


class UniversitiesFileError(ConfigError):
    """The universities file is invalid: missing field, malformed or duplicate domain."""


class RankTableError(ConfigError):
    """A ranking table (``webometrics universities import-ranks``) cannot be read: not a
    table, no header naming the name or domain and the rank, a rank that is no positive
    whole number. The message names the file and the line."""


class ParameterError(WebometricsError, ValueError):
    """A parameter given on the command line or to an algorithm is outside its range."""

    exit_code = 2


class DatabaseError(WebometricsError):
    """The database cannot be reached or refused an operation."""

    exit_code = 2


class ReadOnlyDatabaseError(DatabaseError):
    """A command that writes was given a database file it cannot write (a read-only file,
    folder or mount); the reading commands work on it."""


class SchemaOutOfDateError(DatabaseError):
    """The database schema is older (or newer) than this version of the code."""

    exit_code = 3


class StageError(WebometricsError):
    """A pipeline stage (crawl, extract, dedup, cluster, report) failed."""

    exit_code = 1


class NothingToDoError(StageError):
    """A stage found nothing to work on in its scope (e.g. no document to cluster).

    A run over several scopes skips the empty ones and fails only when every one is empty.
    """


class DataNotFoundError(WebometricsError):
    """A shared data set (``WEBOMETRICS_DATA`` or ``../shared/data``) is missing."""

    exit_code = 2


class RunLockedError(WebometricsError):
    """Another pipeline run holds the run lock; runs never overlap."""

    exit_code = 4
