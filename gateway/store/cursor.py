"""A ledger page's cursor: where the next page of a newest-first listing starts. Keyed on
the last row's (ts, id), so rows booked meanwhile never shift a page."""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct

from gateway.store.records import UsageRecord

# A page cursor: version byte, the last row's ts (a double, exact) and its id, in
# URL-safe base64 without padding.
_CURSOR_VERSION = 1
_CURSOR_HEAD = struct.Struct(">Bd")
_CURSOR_TEXT = re.compile(r"[A-Za-z0-9_-]+")


def encode_cursor(record: UsageRecord) -> str:
    raw = _CURSOR_HEAD.pack(_CURSOR_VERSION, record.ts) + record.id.encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_cursor(cursor: str) -> tuple[float, str]:
    problem = ValueError("malformed ledger cursor: pass back one a previous page returned")
    if not _CURSOR_TEXT.fullmatch(cursor) or len(cursor) % 4 == 1:
        raise problem
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        version, ts = _CURSOR_HEAD.unpack_from(raw)
        row_id = raw[_CURSOR_HEAD.size :].decode()
    except (binascii.Error, struct.error, UnicodeDecodeError):
        raise problem from None
    if version != _CURSOR_VERSION or not math.isfinite(ts) or not row_id:
        raise problem
    return ts, row_id
