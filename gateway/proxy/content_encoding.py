"""Undoing a reply's content-encoding: an upstream may ignore the `accept-encoding:
identity` the gateway sends and answer in gzip or deflate. Each chunk is undone in
pieces of at most PIECE bytes, so the reply's size limits stop a "zip bomb" as it grows;
any other coding (br, zstd, several stacked) is undecodable here."""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import httpx

# What a piece of decompressed body may be at most: a small compressed chunk may expand
# a thousandfold (a "zip bomb"), so it is read out in pieces of this size, each one
# checked against the reply's limits before the next is made.
PIECE = 64 * 1024


class Inflater:
    """gzip or deflate, undone piece by piece (never more than `PIECE` bytes at once)."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._z: zlib._Decompress | None = None

    def _start(self, data: bytes) -> zlib._Decompress:
        if self._gzip:
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        # "deflate" is zlib-wrapped by the standard, raw deflate by some servers.
        wrapped = len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
        return zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if self._z is None:
                self._z = self._start(data)
            z = self._z
            while True:
                piece = z.decompress(data, PIECE)
                data = z.unconsumed_tail
                if piece:
                    yield piece
                if z.eof or (not data and len(piece) < PIECE):
                    break
            if not z.eof:
                return
            # A gzip body may be several members one after another; a deflate one ends.
            data = z.unused_data if self._gzip else b""
            self._z = None


class Undecodable:
    """A content-encoding the gateway does not undo."""


UNDECODABLE = Undecodable()


def content_decoder(headers: httpx.Headers) -> Inflater | Undecodable | None:
    """How to undo the reply's content-encoding: None (none, or `identity`), an
    `Inflater`, or `UNDECODABLE` (anything else, or more than one coding)."""
    value = headers.get("content-encoding")
    if value is None:
        return None
    codings = [c.strip().lower() for c in value.split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in ("gzip", "x-gzip", "deflate"):
        return Inflater(gzip=codings[0] != "deflate")
    return UNDECODABLE
