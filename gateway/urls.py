"""URLs as a message or a log line may show them: without the secrets they may carry."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def shown_url(url: str) -> str:
    """A URL as a log line may show it: a password in its userinfo or its query
    (`redis://:secret@host`, `?password=...`) replaced by `***` (`serve` prints its
    config check into every replica's log)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # "http://[::1": nothing of it is shown
        return "(a URL that does not parse)"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        netloc = f"{user}{colon and ':***'}@{host}" if colon else f"***@{host}"
    query = "&".join(
        f"{name}=***" if name.lower() in _SECRET_PARAMS else f"{name}{eq}{value}"
        for name, eq, value in (pair.partition("=") for pair in parts.query.split("&") if pair)
    )
    if (netloc, query) == (parts.netloc, parts.query):
        return url  # (urlunsplit would write "sqlite:///x" as "sqlite:/x")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


_SECRET_PARAMS = frozenset({"password", "pass", "passwd", "secret", "token", "key", "api_key"})
