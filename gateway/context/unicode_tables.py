"""Unicode tables the people extractor reads text with (`gateway.context.people_text`):
Latin letters folded to their base letter, other scripts' spaces, dashes, digits and
ASCII look-alikes made ASCII, and the ranges of combining marks.

Building them walks Unicode's ~200,000 code points: ~0.5 s on every start of every
process (~4 s under a line tracer such as coverage's). They ship as
`gateway/data/unicode_tables.json`, built for one Unicode version (Python's
`unicodedata.unidata_version`); on another Unicode, or with the file missing or damaged,
they are built at start, as before.
`python -m gateway.context.unicode_tables` writes the file again; tests/test_people.py
checks that it still matches what the builders make.
"""

from __future__ import annotations

import importlib.resources
import itertools
import json
import sys
import unicodedata
from dataclasses import dataclass
from functools import cache

PACKAGED = "unicode_tables.json"  # in gateway/data

# Superscript and subscript digits: a footnote's mark or a unit's power after a number
# or a word ("R$ 99,90¹", "10³ litros", "m²") is what was written; a run of them on its
# own ("⁴¹⁵ ⁵⁵⁵ ⁰¹³⁴") is digits (people_text reads them, the plain table leaves them).
RAISED_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉"


@dataclass(frozen=True)
class Tables:
    fold: dict[int, str]  # str.translate table: a Latin letter with a mark -> its base
    plain: dict[int, str | None]  # str.translate table: see people_text.plain
    mark_ranges: list[list[int]]  # every combining mark (Mn, Me), as [first, last]


@cache
def tables() -> Tables:
    """The packaged tables when they were built for this Python's Unicode, else built."""
    packaged = importlib.resources.files("gateway") / "data" / PACKAGED
    try:
        doc = json.loads(packaged.read_text(encoding="utf-8"))
        if doc["unidata_version"] == unicodedata.unidata_version:
            return Tables(
                fold={int(k): str(v) for k, v in doc["fold"]},
                plain={int(k): None if v is None else str(v) for k, v in doc["plain"]},
                mark_ranges=[[int(a), int(b)] for a, b in doc["mark_ranges"]],
            )
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing or damaged: built, as on another Unicode
    return built()


def built() -> Tables:
    """The tables built from this Python's `unicodedata`."""
    return Tables(_fold_table(), _plain_table(), _marks())


def _fold_table() -> dict[int, str]:
    """A Latin letter with a mark becomes its base letter, one character for one."""
    table = {ord(a): b for a, b in zip("\u2019\u2018ßæÆøØðÐþÞłŁ", "''saAoOdDtTlL", strict=True)}
    for code in range(0xAA, 0x250):
        base = unicodedata.normalize("NFKD", chr(code))[:1]
        if code not in table and chr(code).isalpha() and base.isascii() and base.isalpha():
            table[code] = base
    return table


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
        if char in RAISED_DIGITS:
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


def main() -> None:
    """Write the packaged tables (to stdout) from this Python's `unicodedata`."""
    made = built()
    doc = {
        "unidata_version": unicodedata.unidata_version,
        "fold": sorted(made.fold.items()),
        "plain": sorted(made.plain.items()),
        "mark_ranges": made.mark_ranges,
    }
    json.dump(doc, sys.stdout, ensure_ascii=True, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
