"""Secrets in URLs: the one place that masks them for messages, files and stored rows.

A URL may carry a password in its user information (``scheme://user:password@host``):
the database URL, an HTTP proxy (``http://user:pw@proxy:3128``), a Redis server
(``redis://:pw@host:6379/0``). What is shown, written to a job folder or stored in a run
row holds :func:`redact_url`'s form (``***`` for the password); the process that needs
the secret gets it in its environment (see
:func:`webometrics.stages.crawl.job.child_environment`).

Examples
--------
>>> redact_url("http://alice:s3cret@proxy.example.org:3128")
'http://alice:***@proxy.example.org:3128'
>>> redact_url("redis://:s3cret@127.0.0.1:6379/0")
'redis://:***@127.0.0.1:6379/0'
>>> redact_url("http://127.0.0.1:8899")
'http://127.0.0.1:8899'
>>> has_secret("redis://:s3cret@h:6379/0"), has_secret("http://h:3128")
(True, False)
>>> redact_text("--proxy http://a:b@h:1 --redis redis://:c@r:6379/0")
'--proxy http://a:***@h:1 --redis redis://:***@r:6379/0'
"""

from __future__ import annotations

import re

MASK = "***"

#: ``scheme://[user]:password@`` anywhere in a text (the password: up to the last ``@``
#: before the host part, no white space)
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*:)[^\s/]*@")


def has_secret(url: str | None) -> bool:
    """Whether ``url`` carries a password in its user information."""
    return bool(url) and _USERINFO.search(str(url)) is not None


def redact_url(url: str) -> str:
    """``url`` with the password of its user information replaced by ``***`` (the user
    name kept, so that the reader knows which account); a URL without one unchanged."""
    return redact_text(url)


def shell_word(value: str, env: str, what: str) -> str:
    """``value`` as one word of a shell command that an operator pastes: quoted as it is
    without a password, else a reference to the environment variable ``env`` that holds
    it, which the shell refuses to expand when it is unset (so the command never runs
    with an empty value: a crawl without its proxy would fetch the real web).

    >>> shell_word("http://127.0.0.1:8899", "WEBOMETRICS_CRAWL__PROXY", "the proxy URL")
    'http://127.0.0.1:8899'
    >>> shell_word("http://a:pw@h:1", "WEBOMETRICS_CRAWL__PROXY", "the proxy URL")
    '"${WEBOMETRICS_CRAWL__PROXY:?set it to the proxy URL with its password}"'
    """
    import shlex

    if not has_secret(value):
        return shlex.quote(value)
    return f'"${{{env}:?set it to {what} with its password}}"'


def redact_text(text: str) -> str:
    """``text`` with the password of every URL in it masked (:func:`redact_url`)."""
    return _USERINFO.sub(rf"\1{MASK}@", text)


__all__ = ["MASK", "has_secret", "redact_text", "redact_url", "shell_word"]
