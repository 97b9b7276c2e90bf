"""URLs as a message or a log line may show them: without the secrets they may carry."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# A query parameter that carries a secret (`?password=`, `&api-key=`, `;sslpassword=`).
_SECRET_PARAM = re.compile(
    r"(?i)([?&;](?:[a-z0-9_.-]*(?:pass(?:word|wd)?|secret|token|key|sig|signature|auth"
    r"|credentials?))=)[^&;#]*"
)


def shown_url(url: str) -> str:
    """A URL as a log line may show it: a password in its userinfo (`redis://:secret@`;
    a user alone, which may be a token, too) and the value of a query parameter that
    carries a secret replaced by `***`; everything else as written (`serve` prints its
    config check into every replica's log)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # "http://[::1": nothing of it is shown
        return "(a URL that does not parse)"
    shown = url
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        user, colon, _ = userinfo.partition(":")
        hidden = f"{user}:***" if colon else "***"
        start = url.index(parts.netloc)
        shown = url[:start] + hidden + url[start + len(userinfo) :]
    return _SECRET_PARAM.sub(r"\1***", shown)
