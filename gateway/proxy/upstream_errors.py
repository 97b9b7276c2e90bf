"""An upstream's error answer, as the tenant receives it. Pure.

Providers echo credentials back ("Incorrect API key provided: sk-..."), and a body that
is not OpenAI's error shape may be anything (an HTML page from a proxy, a stack trace).
So the tenant gets the status and OpenAI's error shape, `{"error": {"message", "type",
"param", "code"}}`, with the message scrubbed of the provider key and anything key-like;
a body without that shape becomes a generic message naming the status.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

import orjson

from gateway.errors import error_body

ERROR_BODY_LIMIT = 64 * 1024  # an error body larger than this is not read further
MAX_MESSAGE_CHARS = 1000
WITHHELD = "[withheld]"
# Key-like text: prefixed API keys and account ids (sk-..., gk-..., org-...), bearer tokens,
# credentials in URLs, `key=...` parameters, and long opaque tokens.
_KEY_NAME = r"(?i:\b(?:api[-_]?key|key|token|secret|password)\b[\"']?\s*[=:]\s*[\"']?)"
_KEY_LIKE = re.compile(
    r"\b(?:sk|pk|rk|gk|ak|org|proj)[-_][A-Za-z0-9_*\-]{4,}"
    r"|\b[Bb]earer\s+\S+"
    r"|(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"
    rf"|{_KEY_NAME}[^\s\"'&,;]+"
    r"|\b[A-Za-z0-9_\-]{32,}\b"
)
_NAME_OF_KEY = re.compile(_KEY_NAME)
_SHORT_FIELD = re.compile(r"^[A-Za-z0-9_.\-\[\]]{1,64}$")  # "messages[0].content" too
# A field of lowercase words ("proj_limit_exceeded", "unsupported_country_region_territory"),
# as every OpenAI type and code reads: kept although _KEY_LIKE would withhold it from a
# message (a prefix, or 32 characters). A key has digits, capitals or a long run of letters.
_WORDS_FIELD = re.compile(r"[a-z]{1,16}(?:_[a-z]{1,16})*")


def scrub(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, WITHHELD)
    return _KEY_LIKE.sub(_withhold, text)


def _withhold(match: re.Match[str]) -> str:
    # Keep the `key=` of a `key=value` pair readable; withhold only the value.
    found = match.group(0)
    name = _NAME_OF_KEY.match(found)
    return (name.group(0) if name else "") + WITHHELD


def _field(value: Any, secrets: Sequence[str]) -> str | None:
    """`type`, `code`, `param`: short identifiers, or nothing; never one holding a
    secret of the gateway's or reading as a key."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not _SHORT_FIELD.match(value):
        return None
    if any(secret in value for secret in secrets if secret):
        return None
    if _KEY_LIKE.search(value) and not _WORDS_FIELD.fullmatch(value):
        return None
    return value


def _generic(status: int) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Error"
    kind = "invalid_request_error" if status < 500 else "api_error"
    return error_body(f"The upstream provider answered {status} {reason}.", kind, None)


def scrubbed_error(status: int, body: bytes, secrets: Sequence[str]) -> bytes:
    """The body to relay for an upstream error answer with this status and body."""
    if len(body) > ERROR_BODY_LIMIT:
        return _generic(status)
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _generic(status)
    error = doc.get("error") if isinstance(doc, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(error, dict) or not isinstance(message, str):
        return _generic(status)
    fallback = "invalid_request_error" if status < 500 else "api_error"
    return error_body(
        scrub(message, secrets)[:MAX_MESSAGE_CHARS],
        _field(error.get("type"), secrets) or fallback,
        _field(error.get("code"), secrets),
        _field(error.get("param"), secrets),
    )
