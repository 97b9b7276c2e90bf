"""Regular expressions whose running time is linear in the text: every pattern that meets
client text (the operator's in context.yaml and the gateway's own) is compiled here.

Python's `re` backtracks. `\\d[\\d,]*USD` over "1,1,1,..." starts a match at every digit
and runs to the end of the run from each, so 40 KB of it took seconds and 10 MB hours,
on the event loop. RE2 never backtracks; the price is no lookaround and no
backreferences, and `\\w \\d \\s \\b` are ASCII only (non-ASCII letters are not `\\w`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, Protocol, cast

import re2  # type: ignore[import-untyped]

try:  # the compiled pattern's own matcher, under google-re2's Python layer
    from re2 import _Anchor

    _UNANCHORED, _START = _Anchor.UNANCHORED, _Anchor.ANCHOR_START
except ImportError:  # another layout: every search goes through the Python layer
    _UNANCHORED = _START = None
_NO_SPAN = (-1, -1)
_ANY_BYTE = re.compile(r"(?<!\\)(?:\\\\)*\\C")  # \C not itself escaped


class LinearMatch(Protocol):
    def group(self, index: int = 0) -> str: ...

    def start(self, index: int = 0) -> int: ...

    def end(self, index: int = 0) -> int: ...


class LinearPattern(Protocol):
    """The part of a compiled RE2 pattern the gateway uses (re.Pattern's names)."""

    @property
    def pattern(self) -> str: ...

    def search(self, text: str | bytes) -> LinearMatch | None: ...

    def finditer(self, text: str) -> Iterator[LinearMatch]: ...

    def sub(self, repl: Callable[[LinearMatch], str], text: str) -> str: ...


def compile_linear(pattern: str, ignore_case: bool = False) -> LinearPattern:
    """Raises ValueError (naming the reason) for a pattern RE2 cannot run, or one with
    `\\C` (any byte: a match could end inside a character)."""
    if _ANY_BYTE.search(pattern):
        raise ValueError(f"{pattern!r}: \\C (any byte) is not supported; use . (any character)")
    options = re2.Options()
    options.log_errors = False  # the reason goes into the error, not to stderr
    options.case_sensitive = not ignore_case
    try:
        return cast(LinearPattern, _Linear(re2.compile(pattern, options)))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        raise ValueError(
            f"{pattern!r} is not a valid RE2 regex: {reason} (patterns run in linear time: "
            "no lookbehind, lookahead or backreferences)"
        ) from exc


class _Linear:
    """A compiled RE2 pattern that reads ASCII text and bytes without google-re2's
    Python layer.

    That layer makes a str search cost ~5 µs and each further match of `finditer` ~3 µs
    (it maps byte offsets back to characters in Python, per match). For ASCII text a
    byte offset is a character offset, so the text is encoded once and the compiled
    pattern's matcher is called directly: ~1 µs a search or a match. Other text (a
    Portuguese or Spanish turn: "não", "ação", "€") is encoded as UTF-8, matched the same
    way, and each offset a caller asks for counted back to characters by decoding the
    bytes before it (at C speed). The methods not defined here go through the layer,
    with the same results."""

    __slots__ = ("_layer", "_match_at", "pattern")

    def __init__(self, compiled: Any) -> None:
        self._layer = compiled
        self.pattern: str = compiled.pattern
        inner = getattr(compiled, "_regexp", None)
        self._match_at: Callable[..., Any] | None = (
            inner.Match if _UNANCHORED is not None and inner is not None else None
        )

    def _spans(
        self, text: str | bytes, pos: int | None, endpos: int | None
    ) -> tuple[bytes, int, int, Callable[..., Any]] | None:
        """The text as bytes, the bounds clamped as the layer clamps them (in the
        text's own units, then as byte offsets), and the matcher; None when the fast
        path does not apply (another layout of google-re2, or text of another type)."""
        match_at = self._match_at
        data = _as_bytes(text)
        if match_at is None or data is None:
            return None
        size = len(text)
        start = 0 if pos is None else max(0, min(pos, size))
        end = size if endpos is None else max(0, min(endpos, size))
        if len(data) != size:  # str beyond ASCII: characters to bytes
            assert isinstance(text, str)
            start = len(text[:start].encode()) if start else 0
            end = len(data) if end == size else len(text[:end].encode())
        return data, start, end, match_at

    def search(self, text: str | bytes, pos: int | None = None, endpos: int | None = None) -> Any:
        return self._first(_UNANCHORED, text, pos, endpos, self._layer.search)

    def match(self, text: str | bytes, pos: int | None = None, endpos: int | None = None) -> Any:
        return self._first(_START, text, pos, endpos, self._layer.match)

    def _first(
        self,
        anchor: object,
        text: str | bytes,
        pos: int | None,
        endpos: int | None,
        layer: Callable[..., Any],
    ) -> Any:
        fast = self._spans(text, pos, endpos)
        if fast is None:
            return layer(text, pos, endpos)
        data, start, end, match_at = fast
        if start > end:
            return None
        spans = match_at(anchor, data, start, end)
        return None if spans[0] == _NO_SPAN else _match(text, data, spans, _Chars(data))

    def finditer(
        self, text: str, pos: int | None = None, endpos: int | None = None
    ) -> Iterator[Any]:
        fast = self._spans(text, pos, endpos)
        if fast is None:
            return cast(Iterator[Any], self._layer.finditer(text, pos, endpos))
        return _scan(text, *fast)

    def split(self, text: Any, maxsplit: int = 0) -> list[Any]:
        groups = range(1, self._layer.groups + 1)
        cut = self._cut(text, maxsplit, lambda found: [found.group(g) for g in groups])
        return cast(list[Any], self._layer.split(text, maxsplit)) if cut is None else cut

    def sub(self, repl: Any, text: Any, count: int = 0) -> Any:
        """As the layer's: a callable `repl` is called with each match; a template with
        backslashes (group references) is the layer's to expand."""
        template = isinstance(repl, str | bytes)
        if template and "\\" in str(repl):
            return self._layer.sub(repl, text, count)
        cut = self._cut(text, count, lambda found: [repl if template else repl(found)])
        return self._layer.sub(repl, text, count) if cut is None else type(text)().join(cut)

    def _cut(
        self, text: Any, most: int, between: Callable[[AsciiMatch], list[Any]]
    ) -> list[Any] | None:
        """The text cut at its first `most` matches (0: all), `between(match)` put where
        each was; None when the fast path does not apply."""
        fast = self._spans(text, None, None) if most >= 0 else None
        if fast is None:
            return None
        pieces, end = [], 0
        for n, found in enumerate(_scan(text, *fast)):
            if most and n >= most:
                break
            pieces.append(text[end : found.start()])
            pieces.extend(between(found))
            end = found.end()
        pieces.append(text[end:])
        return pieces

    def __getattr__(self, name: str) -> Any:  # groups, fullmatch, findall, ...: the layer's
        return getattr(self._layer, name)


def _scan(
    text: str | bytes, data: bytes, start: int, end: int, match_at: Callable[..., Any]
) -> Iterator[AsciiMatch]:
    """Every match in data[start:end], as the layer's finditer finds them."""
    if start > end:
        return
    utf8 = len(data) != len(text)  # a str beyond ASCII, as UTF-8
    chars = _Chars(data)  # one count for the whole scan: each match's offsets follow
    while True:
        spans = match_at(_UNANCHORED, data, start, end)
        if spans[0] == _NO_SPAN:
            return
        yield _match(text, data, spans, chars)
        if start == end:
            return
        if spans[0][1] != start:  # from the match's end
            start = spans[0][1]
            continue
        start += 1  # past an empty match by one character (its UTF-8 bytes)
        while utf8 and start < end and data[start] & 0xC0 == 0x80:
            start += 1


def _as_bytes(text: object) -> bytes | None:
    """The text as the matcher reads it: bytes as they are, str as UTF-8 (its offsets
    the text's own when it is ASCII); None for other types."""
    if type(text) is bytes:
        return text
    if type(text) is str:
        return text.encode("ascii") if text.isascii() else text.encode()
    return None


def _match(text: str | bytes, data: bytes, spans: Any, chars: _Chars) -> AsciiMatch:
    if len(data) == len(text):
        return AsciiMatch(text, spans)
    return Utf8Match(text, data, spans, chars)


class _Chars:
    """Byte offsets of one UTF-8 text counted back to characters from the last offset
    asked, not from the start: a scan's matches, asked in order, cost what the bytes
    between them do (from the start each time, 200 KB of matches took seconds)."""

    __slots__ = ("_byte", "_char", "_data")

    def __init__(self, data: bytes) -> None:
        self._data, self._byte, self._char = data, 0, 0

    def of(self, offset: int) -> int:
        if offset <= 0:  # the start, or a group that took no part (-1)
            return int(offset)
        if offset < self._byte:
            self._byte = self._char = 0
        self._char += len(self._data[self._byte : offset].decode())
        self._byte = offset
        return self._char


class AsciiMatch:
    """A match in ASCII text (or in bytes): its groups' spans index the text."""

    __slots__ = ("_spans", "_text")

    def __init__(self, text: str | bytes, spans: Any) -> None:
        self._text, self._spans = text, spans

    def group(self, index: int = 0) -> Any:
        start, end = self._spans[index]
        return None if start < 0 else self._text[start:end]

    __getitem__ = group

    def groups(self) -> tuple[Any, ...]:
        return tuple(self.group(i) for i in range(1, len(self._spans)))

    def start(self, index: int = 0) -> int:
        return int(self._spans[index][0])

    def end(self, index: int = 0) -> int:
        return int(self._spans[index][1])

    def span(self, index: int = 0) -> tuple[int, int]:
        start, end = self._spans[index]
        return int(start), int(end)


class Utf8Match(AsciiMatch):
    """A match in a str beyond ASCII, found in its UTF-8 bytes: an offset is the count
    of characters the bytes before it decode to."""

    __slots__ = ("_chars", "_data")

    def __init__(self, text: str | bytes, data: bytes, spans: Any, chars: _Chars) -> None:
        super().__init__(text, spans)
        self._data, self._chars = data, chars

    def group(self, index: int = 0) -> Any:
        start, end = self._spans[index]
        return None if start < 0 else self._data[start:end].decode()

    __getitem__ = group

    def start(self, index: int = 0) -> int:
        return self._chars.of(self._spans[index][0])

    def end(self, index: int = 0) -> int:
        return self._chars.of(self._spans[index][1])

    def span(self, index: int = 0) -> tuple[int, int]:
        return self.start(index), self.end(index)
