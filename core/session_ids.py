"""Session ids removed from URLs, so that one page is one URL.

Many sites (Java servlet containers, PHP, ColdFusion, ASP and ASP.NET) put the visitor's
session id into every internal link when the visitor sends no cookie, which a crawler
never does: each answer then links to "new" URLs of pages already fetched, and a crawl
fetches the same pages again and again. The forms removed here are those of Heritrix's
URL canonicalisation rules (``StripSessionIDs``, ``StripSessionCFIDs``) and of the
servers that write them:

* path parameters ``;jsessionid=...`` (also ``;phpsessid=``, ``;sessionid=``, ``;sid=``),
  in any case, on any path segment;
* ASP.NET's cookieless path segment ``/(S(...))/`` (and ``(A(...))``, ``(F(...))``);
* query parameters ``jsessionid``, ``phpsessid``, ``aspsessionid<xxxxxxxx>``, ``cfid``,
  ``cftoken``, ``oscsid``, ``zenid``, ``sessid`` and ``session_id`` whatever their
  value, and ``sid`` and ``sessionid`` when the value looks like a token (at least
  :data:`TOKEN_MIN` letters, digits, ``-`` or ``_``: ``?sid=3`` may be a section number).

Everything else of the URL is left as written. Time: linear in the URL's length.

Examples
--------
>>> strip_session_ids("http://u.edu/a/b.jsp;jsessionid=0A1B2C3D4E5F?x=1")
'http://u.edu/a/b.jsp?x=1'
>>> strip_session_ids("http://u.edu/p.php?PHPSESSID=9f8e7d6c5b4a39281706&id=4")
'http://u.edu/p.php?id=4'
>>> strip_session_ids("http://u.edu/list?sid=3&sid2=a")
'http://u.edu/list?sid=3&sid2=a'
>>> strip_session_ids("http://u.edu/(S(lit3py55t21z5v55vlm25s55))/default.aspx")
'http://u.edu/default.aspx'
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

#: query parameters that are session ids whatever their value (compared in lower case)
ALWAYS = frozenset(
    {"jsessionid", "phpsessid", "cfid", "cftoken", "oscsid", "zenid", "sessid", "session_id"}
)
#: query parameters that are session ids when their value looks like a token
TOKEN_NAMES = frozenset({"sid", "sessionid", "s_id"})
#: the shortest value of a ``sid`` / ``sessionid`` parameter taken for a token
TOKEN_MIN = 16

_PATH_PARAM = re.compile(r";(?:jsessionid|phpsessid|sessionid|sid)=[^/;?#]*", re.IGNORECASE)
_ASPNET_SEGMENT = re.compile(r"/\([SAF]\([A-Za-z0-9]{16,}\)\)(?=/)")
_TOKEN = re.compile(r"^[A-Za-z0-9_\-.]+$")


def is_session_param(name: str, value: str) -> bool:
    """True when the query parameter ``name=value`` is a session id.

    >>> is_session_param("JSESSIONID", "x"), is_session_param("sid", "12")
    (True, False)
    >>> is_session_param("ASPSESSIONIDQQGGQGPG", "ABCDEFGHIJKLMNOPQRSTUVWX")
    True
    """
    key = name.strip().lower()
    if key in ALWAYS or key.startswith("aspsessionid"):
        return True
    return key in TOKEN_NAMES and len(value) >= TOKEN_MIN and bool(_TOKEN.match(value))


def strip_session_ids(url: str) -> str:
    """``url`` without session ids in its path or query (see the module docstring);
    the URL unchanged when it has none."""
    low = url.lower()
    if not any(mark in low for mark in ("sess", "sid", "cfid", "cftoken", "zenid", "(s(")):
        return url  # the common case: nothing to look at
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    path = _ASPNET_SEGMENT.sub("", _PATH_PARAM.sub("", parts.path))
    query = parts.query
    if query:
        kept = []
        for pair in query.split("&"):
            name, _, value = pair.partition("=")
            if pair and not is_session_param(name, value):
                kept.append(pair)
        query = "&".join(kept)
    if path == parts.path and query == parts.query:
        return url
    return urlunsplit((parts.scheme, parts.netloc, path, query, parts.fragment))
