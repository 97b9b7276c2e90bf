"""What of an upstream's answer the tenant may see. Pure.

Providers echo credentials back ("Incorrect API key provided: sk-..."), in an error
answer, in a 2xx body's `{"error": ...}` and in an event of a stream (OpenRouter and
LiteLLM-style upstreams report a failure mid-stream so). And a body that is not OpenAI's
error shape may be anything (an HTML page from a proxy, a stack trace). So:

- an error answer becomes its status and OpenAI's error shape, `{"error": {"message",
  "type", "param", "code"}}`, with the message scrubbed of the provider key, of any run
  of 8 or more of its characters, and of anything key-like; a body without that shape
  becomes a generic message naming the status (`scrubbed_error`);
- an error object inside a 2xx body or a stream's event is scrubbed the same way
  (`scrubbed_reply`, `StreamScrub`), and the provider key is withheld wherever else it
  stands. Everything else is relayed byte for byte: a model's answer is not scrubbed of
  what reads as a key (it may be one the customer asked about).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

import orjson

from gateway.errors import error_body
from gateway.proxy.reply_text import lenient_object

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
# A run of this many characters of a secret (in any case) gives part of it away: withheld
# ("Key PROVIDERSECRETCANARY01 is invalid"), unless it reads as a word ("provider").
FRAGMENT_CHARS = 8
_WORD = re.compile(r"[A-Za-z][a-z]{,14}")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def scrub(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, WITHHELD)
    text = _fragments_withheld(text, secrets)
    return _KEY_LIKE.sub(_withhold, text)


def _withhold(match: re.Match[str]) -> str:
    # Keep the `key=` of a `key=value` pair readable; withhold only the value.
    found = match.group(0)
    name = _NAME_OF_KEY.match(found)
    return (name.group(0) if name else "") + WITHHELD


def _fragments(text: str, secrets: Sequence[str]) -> list[tuple[int, int]]:
    """Where `text` holds FRAGMENT_CHARS or more characters in a row of a secret (ASCII
    case ignored), as (start, end) spans; a span that reads as a word is not one."""
    folded = text.translate(_ASCII_LOWER)  # the same length: the spans are the text's
    covered = bytearray(len(text))
    for secret in secrets:
        key = secret.translate(_ASCII_LOWER)
        for piece in {key[i : i + FRAGMENT_CHARS] for i in range(len(key) - FRAGMENT_CHARS + 1)}:
            at = folded.find(piece)
            while at >= 0:
                covered[at : at + FRAGMENT_CHARS] = b"\x01" * FRAGMENT_CHARS
                at = folded.find(piece, at + 1)
    spans = [m.span() for m in re.finditer(b"\x01+", covered)]
    return [(a, b) for a, b in spans if not _WORD.fullmatch(text, a, b)]


def _fragments_withheld(text: str, secrets: Sequence[str]) -> str:
    for start, end in reversed(_fragments(text, secrets)):
        text = text[:start] + WITHHELD + text[end:]
    return text


def _field(value: Any, secrets: Sequence[str]) -> str | None:
    """`type`, `code`, `param`: short identifiers, or nothing; never one holding a
    secret of the gateway's (or a run of its characters) or reading as a key."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not _SHORT_FIELD.match(value):
        return None
    if any(secret in value for secret in secrets if secret) or _fragments(value, secrets):
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


# -- error objects in a reply or a stream ---------------------------------------------------

# An `"error"` that may hold one (not `"error": null`, as every Responses event carries):
# an error object or string, or a Responses stream's `{"type": "error", ...}` event.
_ERROR_MARK = b'"error"'
_AN_ERROR = re.compile(rb'"error"(?!\s*:\s*null\b)')
_EVENT_END = re.compile(rb"(?<=\n\n)|(?<=\r\n\r\n)")
_WITHHELD_BYTES = WITHHELD.encode()
# An error event's own fields, kept beside its scrubbed error (Responses stream events).
_EVENT_FIELDS = ("type", "sequence_number")


def _error_fields(error: dict[str, Any], secrets: Sequence[str]) -> dict[str, Any]:
    """An error object's `message`, `type`, `code` and `param` (those it has), scrubbed
    as an error answer's are; nothing else of it (OpenRouter's `metadata.raw` is the
    provider's own error, which may hold anything)."""
    out: dict[str, Any] = {}
    if "message" in error:
        message = error["message"]
        text = isinstance(message, str)
        out["message"] = scrub(message, secrets)[:MAX_MESSAGE_CHARS] if text else None
    for name in ("type", "code", "param"):
        if name in error:
            value = error[name]
            numeric = isinstance(value, int) and not isinstance(value, bool)
            out[name] = value if numeric else _field(value, secrets)
    return out


def _error_value(value: Any, secrets: Sequence[str]) -> Any:
    if isinstance(value, dict):
        return _error_fields(value, secrets)
    if isinstance(value, str):
        return scrub(value, secrets)[:MAX_MESSAGE_CHARS]
    return value if isinstance(value, int | float | bool) else None


def scrub_errors(doc: Any, secrets: Sequence[str]) -> bool:
    """Scrubs every error in `doc` in place: an `"error"` value (an object or a string),
    and an object whose `type` is "error" (a Responses stream's error event). Whether
    anything changed."""
    changed = False
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, dict | list))
            continue
        if not isinstance(node, dict):
            continue
        if node.get("type") == "error":
            new = {k: node[k] for k in _EVENT_FIELDS if k in node}
            new.update(_error_fields(node, secrets))
            if "error" in node:
                new["error"] = _error_value(node["error"], secrets)
            if new != node:
                node.clear()
                node.update(new)
                changed = True
            continue
        if "error" in node and (value := _error_value(node["error"], secrets)) != node["error"]:
            node["error"] = value
            changed = True
        stack.extend(v for k, v in node.items() if k != "error" and isinstance(v, dict | list))
    return changed


def _marks(secrets: Sequence[str]) -> tuple[bytes, ...]:
    """What a reply holding an error or a secret holds: `"error"`, a secret's bytes (a
    secret shorter than FRAGMENT_CHARS, a URL's user name, would mark ordinary text)."""
    return (_ERROR_MARK, *(s.encode() for s in secrets if len(s) >= FRAGMENT_CHARS))


def _secrets_withheld(data: bytes, secrets: Sequence[str]) -> bytes:
    for secret in secrets:
        if len(secret) >= FRAGMENT_CHARS and (raw := secret.encode()) in data:
            data = data.replace(raw, _WITHHELD_BYTES)
    return data


def scrubbed_reply(body: bytes, secrets: Sequence[str]) -> bytes:
    """A whole reply's body as the tenant may see it: its error objects scrubbed and the
    provider key withheld; byte for byte as it came when it holds neither."""
    if not any(mark in body for mark in _marks(secrets)):
        return body
    if _AN_ERROR.search(body) is not None:
        doc = _json(body)
        if doc is not None and scrub_errors(doc, secrets):
            body = orjson.dumps(doc)
    return _secrets_withheld(body, secrets)


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return lenient_object(body)  # a byte-order mark, NaN: read as the SDK reads it


def scrubbed_event(event: bytes, secrets: Sequence[str]) -> bytes:
    """One event of a stream (its blank line too) as the tenant may see it: its data's
    error objects scrubbed and the provider key withheld. Its data lines become one
    when it is rewritten; its `event:`, `id:` and comment lines stay."""
    if not any(mark in event for mark in _marks(secrets)):
        return event
    lines = event.splitlines()
    data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
    if not data:
        return scrubbed_reply(event, secrets)  # no event: a body that is not a stream
    if _AN_ERROR.search(event) is not None:
        doc = _json(b"\n".join(data))
        if doc is None:  # not JSON: read as text, as an error message is
            text = scrub(event.decode("utf-8", "replace"), secrets)
            return _secrets_withheld(text.encode(), secrets)
        if scrub_errors(doc, secrets):
            event = _rewritten(lines, orjson.dumps(doc), event.endswith(b"\r\n\r\n"))
    return _secrets_withheld(event, secrets)


def _rewritten(lines: list[bytes], data: bytes, crlf: bool) -> bytes:
    """An event's lines with its data lines made one, holding `data`."""
    out: list[bytes] = []
    for line in lines:
        if not line.startswith(b"data:"):
            out += [line] if line else []
        elif data:
            out.append(b"data: " + data)
            data = b""
    eol = b"\r\n" if crlf else b"\n"
    return eol.join(out) + eol + eol


class StreamScrub:
    """An event stream's bytes as the tenant may see them, chunk by chunk: whole events,
    each as `scrubbed_event` makes it. The bytes are only searched (for `"error"` and
    the provider key), never parsed unless they hold one, and an unfinished event waits
    for its end (the relay sends only whole events anyway), at most `most` bytes of it."""

    def __init__(self, secrets: Sequence[str], most: int) -> None:
        self._secrets = tuple(secrets)
        self._keys = _marks(secrets)[1:]
        self._most = most
        self._rest = bytearray()

    def feed(self, chunk: bytes) -> bytes:
        if not self._rest and chunk.endswith(b"\n\n"):  # whole events, as most chunks are
            return self._whole(chunk)
        searched = max(len(self._rest) - 3, 0)  # a blank line may span the two
        self._rest += chunk
        end = _after_last_event(self._rest, searched)
        if end == 0:
            return self._overflow() if len(self._rest) > self._most else b""
        whole = bytes(self._rest[:end])
        del self._rest[:end]
        return self._whole(whole)

    def finish(self) -> bytes:
        """What is left once the upstream's body ended: an event without its blank line,
        or a body that is not a stream at all (a JSON reply)."""
        rest = bytes(self._rest)
        self._rest.clear()
        return scrubbed_event(rest, self._secrets) if rest.strip() else rest

    def _whole(self, events: bytes) -> bytes:
        if _ERROR_MARK not in events and not self._holds_a_key(events):
            return events
        return b"".join(scrubbed_event(e, self._secrets) for e in _EVENT_END.split(events) if e)

    def _holds_a_key(self, events: bytes) -> bool:
        for key in self._keys:  # a loop, not any(): this runs for every chunk
            if key in events:
                return True
        return False

    def _overflow(self) -> bytes:
        """An event past `most` bytes, which the relay refuses (it cuts the stream): what
        is read of it goes on, the provider key withheld, so the relay sees its size."""
        keep = max((len(m) for m in (_ERROR_MARK, *self._keys))) - 1
        out = _secrets_withheld(bytes(self._rest[: len(self._rest) - keep]), self._secrets)
        del self._rest[: len(self._rest) - keep]
        return out


def _after_last_event(data: bytes | bytearray, start: int) -> int:
    """Where the last whole event in `data` ends (a blank line found from `start` on), or 0."""
    lf = data.rfind(b"\n\n", start)
    crlf = data.rfind(b"\r\n\r\n", start)
    return max(lf + 2 if lf >= 0 else 0, crlf + 4 if crlf >= 0 else 0)
