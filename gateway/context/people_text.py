"""How the people extractor reads a turn: on a folded copy of its text, with RE2 patterns
that report where they matched. Pure.

Folding drops a Latin letter's accent one character for one, so an offset in the folded
copy is an offset in the original (a value is cut from the original characters) and RE2's
ASCII `\\b` works on "São".
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterator
from typing import Protocol, cast

from gateway.context.linear_regex import compile_linear


class SpanMatch(Protocol):
    def group(self, index: int = 0) -> str | None: ...
    def start(self, index: int = 0) -> int: ...
    def end(self, index: int = 0) -> int: ...


class SpanPattern(Protocol):
    """A compiled RE2 pattern, typed with its matches' offsets (LinearPattern's are not)."""

    def search(self, text: str, pos: int = 0) -> SpanMatch | None: ...
    def finditer(self, text: str) -> Iterator[SpanMatch]: ...


def linear(pattern: str) -> SpanPattern:
    """Case-blind: customers write without capitals."""
    return cast(SpanPattern, compile_linear(pattern, ignore_case=True))


def word_set(text: str) -> frozenset[str]:
    """A word list written as one string, the way the tables here are kept."""
    return frozenset(text.split())


def _fold_table() -> dict[int, str]:
    """A Latin letter with a mark becomes its base letter, one character for one."""
    table = {ord(a): b for a, b in zip("\u2019\u2018ßæÆøØðÐþÞłŁ", "''saAoOdDtTlL", strict=True)}
    for code in range(0xAA, 0x250):
        base = unicodedata.normalize("NFKD", chr(code))[:1]
        if code not in table and chr(code).isalpha() and base.isascii() and base.isalpha():
            table[code] = base
    return table


FOLD = _fold_table()


MATCHES = 40  # per pattern and message: a message naming more is a paste, not facts


def first_matches(pattern: SpanPattern, text: str) -> Iterator[SpanMatch]:
    """The pattern's first MATCHES matches in the text."""
    return itertools.islice(pattern.finditer(text), MATCHES)


def next_word(folded: str, end: int) -> str:
    """The word after `end`, without its punctuation, lowercased."""
    after = folded[end : end + 24].split(None, 1)
    return after[0].strip(",.;:!?").lower() if after else ""
