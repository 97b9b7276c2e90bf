"""What of an upstream's answer the tenant may see. Pure.

Providers echo credentials back ("Incorrect API key provided: sk-..."), in an error
answer, in a 2xx body's `{"error": ...}` and in an event of a stream (OpenRouter and
LiteLLM-style upstreams report a failure mid-stream so). And a body that is not OpenAI's
error shape may be anything (an HTML page from a proxy, a stack trace). So:

- an error answer becomes its status and OpenAI's error shape, `{"error": {"message",
  "type", "param", "code"}}`, with the message scrubbed of the provider key, of any run
  of 8 or more of its characters, and of anything key-like; a body without that shape
  becomes a generic message naming the status (`scrubbed_error`);
- an error object where the API puts one (a body's or an event's top-level `error`, a
  Responses event's `response.error`, an error event) is scrubbed the same way
  (`scrubbed_reply`, `StreamScrub`), and the provider key is withheld wherever else it
  stands, in JSON escapes too (not a URL's user name or short password, which may be a
  word: `assistant`). Everything else is relayed byte for byte: an `"error"` deeper in
  (a JSON schema's property) is content, and a model's answer is not scrubbed of what
  reads as a key (it may be one the customer asked about).
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
# An event named `error` (`event: error`), whatever its data: JSON or text.
_ERROR_WORD = b"error"  # in both marks: what a chunk is searched for
_NAMED_ERROR = re.compile(rb"^event: ?error\r?$", re.MULTILINE)
# A JSON escape of a character a key is made of (`\u005a`, `\u002d`): no serializer writes
# ASCII letters or digits so (Go's `\u003c`, Python's `\u00e9` are not these), but it hides
# a key from a search of the bytes. A reply holding one is read to find the key.
_ESCAPE_MARK = b"\\u00"
_ESCAPED_KEY_CHAR = re.compile(rb"\\u00(?:2[dD]|3[0-9]|[4-7][0-9a-fA-F])")
_EVENT_END = re.compile(rb"(?<=\n\n)|(?<=\r\n\r\n)")
_WITHHELD_BYTES = WITHHELD.encode()
# An error event's own fields, kept beside its scrubbed error (Responses stream events).
_EVENT_FIELDS = ("type", "sequence_number")
# A secret other than the provider key is withheld wherever it stands only from this
# many characters on: a shorter one, or a URL's user name, may be a word a reply holds
# (a base_url user `assistant` made every `"role": "assistant"` `"[withheld]"`).
ANYWHERE_CHARS = 16


def withheld_anywhere(key: str | None, *others: str | None) -> tuple[str, ...]:
    """The secrets no reply may hold anywhere, not only in an error object: the provider
    `key` (from FRAGMENT_CHARS characters on; a shorter one is ordinary text) and those of
    `others` (a URL's password) too long and random to be a word."""
    out = [key] if key and len(key) >= FRAGMENT_CHARS else []
    return (*out, *(s for s in others if s and len(s) >= ANYWHERE_CHARS))


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


def _error_scrubbed(node: dict[str, Any], secrets: Sequence[str]) -> bool:
    """Scrubs `node`'s `"error"` value in place, if it has one; whether that changed it."""
    if "error" not in node or (value := _error_value(node["error"], secrets)) == node["error"]:
        return False
    node["error"] = value
    return True


def scrub_errors(doc: Any, secrets: Sequence[str], *, whole: bool = False) -> bool:
    """Scrubs in place the error objects of a reply's body or an event's data where the
    API puts one, and nowhere else: its top-level `"error"` (an error body's, a chat
    chunk's, a Responses reply's), a Responses event's `response.error` (response.failed),
    and the whole of an error event (`{"type": "error", ...}`, or any data of an event
    named `error`: `whole`). An `"error"` deeper in is content, relayed as it came (a JSON
    schema's property, which a Responses reply echoes in its tools and text.format).
    Whether anything changed."""
    if isinstance(doc, list):  # a batch of errors, as some OpenAI-compatible APIs answer
        return any([scrub_errors(item, secrets) for item in doc if isinstance(item, dict)])
    if not isinstance(doc, dict):
        return False
    if whole or doc.get("type") == "error":
        new = {k: doc[k] for k in _EVENT_FIELDS if k in doc}
        new.update(_error_fields(doc, secrets))
        if "error" in doc:
            new["error"] = _error_value(doc["error"], secrets)
        if new == doc:
            return False
        doc.clear()
        doc.update(new)
        return True
    changed = _error_scrubbed(doc, secrets)
    kind, response = doc.get("type"), doc.get("response")
    if isinstance(kind, str) and kind.startswith("response.") and isinstance(response, dict):
        changed = _error_scrubbed(response, secrets) or changed
    return changed


def _holds_a_key(data: bytes, keys: Sequence[bytes]) -> bool:
    for key in keys:  # noqa: SIM110 (a loop, not any(): this runs for every chunk)
        if key in data:
            return True
    return False


def _escaped(data: bytes, keys: Sequence[bytes]) -> bool:
    """Whether `data` holds a JSON escape that may hide a key's character."""
    return bool(keys) and _ESCAPE_MARK in data and _ESCAPED_KEY_CHAR.search(data) is not None


def _suspect(data: bytes, keys: Sequence[bytes]) -> bool:
    """Whether `data` may hold an error (`"error"`, `event: error`) or a key: else it is
    relayed unread. Three searches of its bytes, as few as can be: this runs for every
    chunk of every stream."""
    if _ERROR_WORD in data:
        return True
    for key in keys:  # as _holds_a_key, without the call
        if key in data:
            return True
    return _ESCAPE_MARK in data and bool(keys) and _ESCAPED_KEY_CHAR.search(data) is not None


def _secrets_withheld(data: bytes, keys: Sequence[bytes]) -> bytes:
    for key in keys:
        if key in data:
            data = data.replace(key, _WITHHELD_BYTES)
    return data


def _encoded(keys: Sequence[str]) -> tuple[bytes, ...]:
    return tuple(k.encode() for k in keys if k)


def _remade(
    doc: Any,
    secrets: Sequence[str],
    keys: Sequence[bytes],
    error: bool,
    escaped: bool,
    whole: bool = False,
) -> bytes | None:
    """The JSON of `doc` with its error objects scrubbed (`error`: it may hold one), when
    they changed or when it holds a key its bytes hid in escapes (`escaped`); None when
    the bytes that came may go as they came. Raises TypeError for a `doc` orjson cannot
    write (an integer past 64 bits)."""
    if error and scrub_errors(doc, secrets, whole=whole):
        return orjson.dumps(doc)
    if not escaped:
        return None
    dumped = orjson.dumps(doc)
    return dumped if _holds_a_key(dumped, keys) else None


def scrubbed_reply(body: bytes, secrets: Sequence[str], keys: Sequence[str]) -> bytes:
    """A whole reply's body as the tenant may see it: its error objects (`secrets` of
    the gateway's scrubbed from them) and the `keys` (`withheld_anywhere`) withheld;
    byte for byte as it came when it holds neither."""
    raw_keys = _encoded(keys)
    if not _suspect(body, raw_keys):
        return body
    error = _ERROR_MARK in body and _AN_ERROR.search(body) is not None
    escaped = _escaped(body, raw_keys)
    if (error or escaped) and (doc := _json(body)) is not None:
        try:
            remade = _remade(doc, secrets, raw_keys, error, escaped)
        except TypeError:  # read, but not to be written again: scrubbed as text
            remade = scrub(body.decode("utf-8", "replace"), secrets).encode()
        body = body if remade is None else remade
    return _secrets_withheld(body, raw_keys)


def _json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return lenient_object(body)  # a byte-order mark, NaN: read as the SDK reads it


def scrubbed_event(event: bytes, secrets: Sequence[str], keys: Sequence[str]) -> bytes:
    """One event of a stream (its blank line too) as the tenant may see it: its data's
    error objects scrubbed and the `keys` withheld. An event named `error` is an error
    object whole, or, when its data is no JSON, an error message. Its data lines become
    one when it is rewritten; its `event:`, `id:` and comment lines stay."""
    raw_keys = _encoded(keys)
    if not _suspect(event, raw_keys):
        return event
    lines = event.splitlines()
    data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
    if not data:
        return scrubbed_reply(event, secrets, keys)  # no event: a body that is not a stream
    named = _NAMED_ERROR.search(event) is not None
    error = named or (_ERROR_MARK in event and _AN_ERROR.search(event) is not None)
    escaped = _escaped(event, raw_keys)
    if not error and not escaped:
        return _secrets_withheld(event, raw_keys)
    doc = _json(b"\n".join(data))
    if named and not isinstance(doc, dict | list):
        doc = None  # an error event's JSON string or number: its text is the message
    try:
        remade = None if doc is None else _remade(doc, secrets, raw_keys, error, escaped, named)
    except TypeError:
        doc = remade = None
    if doc is None and error:  # not JSON: read as text, as an error message is
        text = scrub(event.decode("utf-8", "replace"), secrets)
        return _secrets_withheld(text.encode(), raw_keys)
    if remade is not None:
        event = _rewritten(lines, remade, event.endswith(b"\r\n\r\n"))
    return _secrets_withheld(event, raw_keys)


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
    each as `scrubbed_event` makes it. The bytes are only searched (for `"error"`, an
    `event: error`, the `keys` and an escape that may hide one), never parsed unless
    they hold one, and an unfinished event waits for its end (the relay sends only whole
    events anyway), at most `most` bytes of it."""

    def __init__(self, secrets: Sequence[str], keys: Sequence[str], most: int) -> None:
        self._secrets = tuple(secrets)
        self._keys = tuple(keys)
        self._raw_keys = _encoded(keys)
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
        return scrubbed_event(rest, self._secrets, self._keys) if rest.strip() else rest

    def _whole(self, events: bytes) -> bytes:
        if not _suspect(events, self._raw_keys):
            return events
        return b"".join(
            scrubbed_event(e, self._secrets, self._keys) for e in _EVENT_END.split(events) if e
        )

    def _overflow(self) -> bytes:
        """An event past `most` bytes, which the relay refuses (it cuts the stream): what
        is read of it goes on, the keys withheld in all of it before it is cut (a key
        across the cut would go out in two pieces, and be whole again for a relay that
        sends the unfinished event at the stream's end), less a tail that may begin a
        key the next chunk ends."""
        rest = _secrets_withheld(bytes(self._rest), self._raw_keys)
        cut = max(len(rest) - max((len(k) - 1 for k in self._raw_keys), default=0), 0)
        self._rest[:] = rest[cut:]
        return rest[:cut]


def _after_last_event(data: bytes | bytearray, start: int) -> int:
    """Where the last whole event in `data` ends (a blank line found from `start` on), or 0."""
    lf = data.rfind(b"\n\n", start)
    crlf = data.rfind(b"\r\n\r\n", start)
    return max(lf + 2 if lf >= 0 else 0, crlf + 4 if crlf >= 0 else 0)
