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


def _plain_table() -> dict[int, str | None]:
    """Unicode's other spaces, dashes, digits and invisible characters as the ASCII the
    patterns read (`plain`)."""
    table: dict[int, str | None] = {}
    # the basic and supplementary planes, the tag characters and variation selectors
    codes = itertools.chain(range(0x80, 0x20000), range(0xE0000, 0xE0200))
    for code in codes:
        char = chr(code)
        category = unicodedata.category(char)
        compatible = unicodedata.normalize("NFKC", char)
        if _lookalike(code) and compatible.isascii() and compatible.isprintable():
            table[code] = compatible  # full-width, small and bold digits, letters, signs
        elif category == "No" and compatible.isdigit() and compatible.isascii():
            table[code] = compatible  # superscript, circled, parenthesised digits
        elif category == "Cf" or code in _SELECTORS:  # zero-width, soft hyphen, BOM, tags
            table[code] = None
        elif code in (0x85, 0x2028, 0x2029):
            table[code] = "\n"
        elif category == "Zs" or code in _BLANKS:  # no-break, thin, ideographic...
            table[code] = " "
        elif category == "Pd" or code == 0x2212:  # non-breaking hyphen, en dash, minus
            table[code] = "-"
        elif category == "Nd":  # Arabic-Indic, Devanagari... digits
            table[code] = str(unicodedata.digit(char))
    return table


# Variation selectors and the combining grapheme joiner: they change no character's
# meaning; "4" with one after it is still "4" (a keycap's enclosing mark is dropped as a
# mark after a digit, `_MARKED`).
_SELECTORS = frozenset([0x034F, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])
# Letters and symbols that show as nothing: Hangul fillers, the Braille blank.
_BLANKS = frozenset([0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0])
# Marks left after an ASCII character once composed (NFC): a "4" with a combining
# accent or a keycap's enclosing mark reads as "4" (a mark on a letter of another script
# is its own, kept).
_MARK_RANGES = (
    (0x300, 0x36F),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
    (0x20D0, 0x20FF),
    (0xFE20, 0xFE2F),
)
_MARKED = re.compile("(?<=[!-~])[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in _MARK_RANGES) + "]+")
_MARK_CHARS = frozenset(chr(c) for a, b in _MARK_RANGES for c in range(a, b + 1))


def _lookalike(code: int) -> bool:
    """Forms of ASCII letters, digits and signs kept apart only for their look."""
    return 0xFF01 <= code <= 0xFF5E or 0xFE50 <= code <= 0xFE6B or 0x1D400 <= code < 0x1D800


_PLAIN = _plain_table()
_PLAIN_CHARS = frozenset(map(chr, _PLAIN))


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
