"""One small text field of a `multipart/form-data` body (an image edit's or a
transcription's `model`), read from the bytes already buffered: the parts are found by
their boundary and only the field's own value is copied, at most `most` bytes of it;
the uploads around it are scanned, never decoded or copied.
"""

from __future__ import annotations

import re

# RFC 2046: a boundary is 1 to 70 characters; quoted or not in the header.
_BOUNDARY = re.compile(r'boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;,"]{1,70}))', re.I)
_NAME = re.compile(rb'(?:^|;)\s*name\s*=\s*(?:"([^"]*)"|([^\s;"]+))', re.I)
_FILENAME = re.compile(rb"(?:^|;)\s*filename\*?\s*=", re.I)
_MOST_HEAD_BYTES = 8192  # one part's headers


class Ambiguous(ValueError):
    """The field is there more than once, or its part cannot be read: a server might
    read another value than the gateway does."""


def is_multipart(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "multipart/form-data"


def boundary_of(content_type: str) -> bytes | None:
    if not is_multipart(content_type):
        return None
    found = _BOUNDARY.search(content_type)
    return (found.group(1) or found.group(2)).encode("latin-1") if found else None


def form_field(body: bytes, boundary: bytes, name: str, most: int = 256) -> str | None:
    """The text value of the form field `name` (not a file), or None when the body has
    none. Raises `Ambiguous` when it has two, or one longer than `most` bytes, not UTF-8,
    or a part that is cut off before its value ends."""
    delimiter = b"--" + boundary
    wanted = name.encode()
    found: str | None = None
    at = body.find(delimiter)
    while at >= 0:
        start = at + len(delimiter)
        if body.startswith(b"--", start):
            break  # the close delimiter: no more parts
        head_end = body.find(b"\r\n\r\n", start, start + _MOST_HEAD_BYTES)
        if head_end < 0:
            break  # not a part a server reads either
        value_start = head_end + 4
        end = body.find(b"\r\n" + delimiter, value_start)
        head = body[start:head_end]
        if _field_name(head) == wanted:
            if found is not None or end < 0 or end - value_start > most:
                raise Ambiguous(name)
            try:
                found = body[value_start:end].decode()
            except UnicodeDecodeError as exc:
                raise Ambiguous(name) from exc
        at = end + 2 if end >= 0 else -1
    return found


def _field_name(head: bytes) -> bytes | None:
    """The `name` of a part's Content-Disposition, when it is a field (no filename)."""
    for line in head.split(b"\r\n"):
        key, _, value = line.partition(b":")
        if key.strip().lower() != b"content-disposition":
            continue
        if _FILENAME.search(value):
            return None
        params = value.split(b";", 1)
        found = _NAME.search(params[1]) if len(params) > 1 else None
        return (found.group(1) or found.group(2)) if found else None
    return None
