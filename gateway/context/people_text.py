"""How the people extractor reads a turn: on a folded copy of its text, with RE2 patterns
that report where they matched. Pure.

Folding drops a Latin letter's accent one character for one, so an offset in the folded
copy is an offset in the original (a value is cut from the original characters) and RE2's
ASCII `\\b` works on "São".
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator
from typing import Protocol, cast

from gateway.context import unicode_tables
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


_RAISED_DIGITS = unicode_tables.RAISED_DIGITS
_RAISED = frozenset(_RAISED_DIGITS)
_RAISED_RUN = re.compile(f"(?<![0-9A-Za-z])[{_RAISED_DIGITS}]+")
_LOWERED = str.maketrans({c: str(unicodedata.digit(c)) for c in _RAISED_DIGITS})

_TABLES = unicode_tables.tables()
FOLD = _TABLES.fold

# Marks left after an ASCII character once composed (NFC): a "4" with a combining accent
# or a keycap's enclosing mark reads as "4", an email's letters likewise (a mark on a
# letter of another script is its own, kept).
_MARK_RANGES = _TABLES.mark_ranges
_MARK_CLASS = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in _MARK_RANGES)
_MARKED = re.compile(f"(?<=[!-~])[{_MARK_CLASS}]+")
_MARK_CHARS = frozenset(chr(c) for a, b in _MARK_RANGES for c in range(a, b + 1))
# An emoji's presentation selectors and joiner: common in chat, dropped before the table
# is looked at, so a message with a "❤️" is not translated whole for them.
_EMOJI_GLUE = ("\ufe0f", "\ufe0e", "\u200d")

_PLAIN = _TABLES.plain
_PLAIN_CHARS = frozenset(map(chr, _PLAIN)) - set(_EMOJI_GLUE)


def whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """A span widened to the whole words it cuts: an ASCII pattern stops at a letter it
    does not know ("maría.souza@..." found from its "a.souza", or an email with a Cyrillic
    letter in it), and what it finds must not leave a piece of the word behind."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return start, end


def plain(text: str) -> str:
    """A text as the patterns can read it: composed (NFC: an accent typed apart joins its
    letter), the full-width, small and mathematical forms of ASCII's characters made
    ASCII (not "º" nor "…": they are what was written), Unicode's other spaces, dashes
    and digits made ASCII, invisible characters (zero-width, soft hyphen, tag
    characters) dropped. Where the gateway reads and withholds facts: a phone written
    with no-break spaces, or an email with a zero-width space in it, is still one."""
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    for glue in _EMOJI_GLUE:
        if glue in text:
            text = text.replace(glue, "")
    if not _RAISED.isdisjoint(text):
        text = _RAISED_RUN.sub(lambda m: m.group(0).translate(_LOWERED), text)
    if not _PLAIN_CHARS.isdisjoint(text):
        text = text.translate(_PLAIN)
    return text if _MARK_CHARS.isdisjoint(text) else _MARKED.sub("", text)


MATCHES = 40  # per pattern and message: a message naming more is a paste, not facts


def first_matches(pattern: SpanPattern, text: str) -> Iterator[SpanMatch]:
    """The pattern's first MATCHES matches in the text."""
    return itertools.islice(pattern.finditer(text), MATCHES)


def next_word(folded: str, end: int) -> str:
    """The word after `end`, without its punctuation, lowercased."""
    after = folded[end : end + 24].split(None, 1)
    return after[0].strip(",.;:!?").lower() if after else ""
