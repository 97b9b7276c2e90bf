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
    # the basic, supplementary and ideographic planes, the tags and selectors' plane
    codes = itertools.chain(range(0x80, 0x30000), range(0xE0000, 0xE1000))
    for code in codes:
        char = chr(code)
        category = unicodedata.category(char)
        compatible = unicodedata.normalize("NFKC", char)
        if char in _RAISED:
            continue  # read by `_RAISED_RUN`: only where no letter or digit comes before
        if category == "Cf" or _ignorable(code):
            table[code] = None  # zero-width, soft hyphen, BOM, tags, selectors, fillers
        elif code in (0x85, 0x2028, 0x2029):
            table[code] = "\n"
        elif category == "Zs" or code in _BLANKS:  # no-break, thin, ideographic...
            table[code] = " "
        elif category == "Pd" or code == 0x2212:  # non-breaking hyphen, en dash, minus
            table[code] = "-"
        elif code in _STOPS:
            table[code] = "."
        elif category in ("Nd", "No") and unicodedata.digit(char, None) is not None:
            table[code] = str(unicodedata.digit(char))  # Arabic-Indic, circled, ⑴, ❶, ⒈...
        elif _ascii_form(code, compatible):
            table[code] = compatible  # full-width, small, bold, circled letters, a dot leader
    return table


def _ascii_form(code: int, compatible: str) -> bool:
    """A form of one printable ASCII character; "ª" and "º" are what was written."""
    one = len(compatible) == 1 and compatible.isascii() and compatible.isprintable()
    return one and code not in (0xAA, 0xBA)


def _ignorable(code: int) -> bool:
    return any(a <= code <= b for a, b in _IGNORABLE)


# Code points that show as nothing (Unicode's default ignorables, assigned or not, less
# the format characters `Cf` already covers): the combining grapheme joiner, Hangul
# fillers, Khmer inherent vowels, Mongolian and other variation selectors, reserved
# ranges, the tags' plane.
_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# Letters and symbols that show as a blank: the Braille blank.
_BLANKS = frozenset([0x2800])
# Full stops of other scripts an address may be written with ("example。com").
_STOPS = frozenset([0x3002, 0xFF61, 0xFE52])
# Superscript and subscript digits: a footnote's mark or a unit's power after a number
# or a word ("R$ 99,90¹", "10³ litros", "m²") is what was written; a run of them on its
# own ("⁴¹⁵ ⁵⁵⁵ ⁰¹³⁴") is digits.
_RAISED_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉"
_RAISED = frozenset(_RAISED_DIGITS)
_RAISED_RUN = re.compile(f"(?<![0-9A-Za-z])[{_RAISED_DIGITS}]+")
_LOWERED = str.maketrans({c: str(unicodedata.digit(c)) for c in _RAISED_DIGITS})


def _marks() -> list[list[int]]:
    """Every combining mark (Mn, Me), as ranges."""
    ranges: list[list[int]] = []
    for code in range(0x300, 0x30000):
        if unicodedata.category(chr(code)) in ("Mn", "Me"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    ranges.append([0xE0100, 0xE01EF])  # the supplementary variation selectors
    return ranges


# Marks left after an ASCII character once composed (NFC): a "4" with a combining accent
# or a keycap's enclosing mark reads as "4", an email's letters likewise (a mark on a
# letter of another script is its own, kept).
_MARK_RANGES = _marks()
_MARK_CLASS = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in _MARK_RANGES)
_MARKED = re.compile(f"(?<=[!-~])[{_MARK_CLASS}]+")
_MARK_CHARS = frozenset(chr(c) for a, b in _MARK_RANGES for c in range(a, b + 1))
# An emoji's presentation selectors and joiner: common in chat, dropped before the table
# is looked at, so a message with a "❤️" is not translated whole for them.
_EMOJI_GLUE = ("\ufe0f", "\ufe0e", "\u200d")


_PLAIN = _plain_table()
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
