"""A customer correcting part of a value they gave: "o apto é 201 e não 210", "é 323 não
233", "no es cuarenta y cinco es cuarenta y tres", "não é dois dois oito no final é dois
oito oito". The value said before, that part said again right, supersedes it. Pure.

Only a number of at least two digits, found whole in the newest value of a kind made of
numbers (an address, a phone, an order, a product code, a date): "tenho 2 pedidos e não 3"
corrects nothing, nor does a number no earlier value holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from gateway.context.people_numbers import spelled_number
from gateway.context.people_patterns import NUMBER_RUN
from gateway.context.people_text import SpanMatch, first_matches, linear

# The kinds a part of which a customer corrects, the likeliest first when a number is in
# two of them (a door number and an order's digits).
KINDS = ("address", "phone", "order", "sku", "date")
_N = rf"(\d{{2,6}}\b|{NUMBER_RUN})"
_IS = r"(?:e|eh|is|it'?s|es|era|was)"
_NOT = r"(?:nao|not|no)"
# "201 e não 210", "é 323 não 233", "twelve not twenty-one": (right, wrong)
_RIGHT_NOT_WRONG = linear(
    rf"(?:^|[^\w'])(?:{_IS}\s+)?{_N}[\s,]+(?:(?:e|y|and)\s+)?{_NOT}\s+(?:{_IS}\s+)?"
    rf"(?:(?:o|a|el|la|the)\s+)?{_N}"
)
# "não é 233, é 323", "no es cuarenta y cinco es cuarenta y tres", "não é dois dois oito no
# final é dois oito oito": (wrong, right)
_NOT_WRONG_RIGHT = linear(
    rf"\b{_NOT}\s+{_IS}\s+(?:(?:o|a|el|la|the)\s+)?{_N}(\s+(?:no\s+final|at\s+the\s+end"
    rf"|al\s+final))?[\s,.;]+(?:(?:mas|but|sino|sim)\s+)?{_IS}\s+{_N}"
)
_DIGIT_RUN = re.compile(r"\d+")


def partial_corrections(
    folded: str, newest: Mapping[str, str], english: bool
) -> Iterator[tuple[str, str, SpanMatch]]:
    """(kind, the corrected value, where it is said) for each part of an earlier value
    this customer turn says again right. `newest`: the newest value heard of each kind."""
    found = [
        *((m, 1, 2, False) for m in first_matches(_RIGHT_NOT_WRONG, folded)),
        *((m, 3, 1, bool(m.group(2))) for m in first_matches(_NOT_WRONG_RIGHT, folded)),
    ]
    for m, right_at, wrong_at, at_end in sorted(found, key=lambda f: f[0].start()):
        right = _digits(m.group(right_at) or "", english)
        wrong = _digits(m.group(wrong_at) or "", english)
        if not right or not wrong or right == wrong or len(right) != len(wrong):
            continue
        for kind in KINDS:
            value = newest.get(kind, "")
            corrected = _replaced(kind, value, wrong, right, english, at_end)
            if corrected:
                yield kind, corrected, m
                break


def _digits(said: str, english: bool) -> str:
    said = said.strip()
    if said.isdigit():
        return said
    spelled = spelled_number(said, english)
    return spelled if spelled and len(spelled) >= 2 else ""


def _replaced(kind: str, value: str, wrong: str, right: str, english: bool, at_end: bool) -> str:
    """`value` with its number `wrong` (whole; the last one, as a door comes after a
    street's number; or, said to end it, "no final", the end of its last number) said as
    `right`; "" when it holds no such number. A phone said in words is read as its
    digits, where the wrong part may end it."""
    runs = [m for m in _DIGIT_RUN.finditer(value) if m.group(0) == wrong]
    if runs:
        last = runs[-1]
        return value[: last.start()] + right + value[last.end() :]
    numbers = list(_DIGIT_RUN.finditer(value))
    if at_end and numbers and numbers[-1].group(0).endswith(wrong):
        return value[: numbers[-1].end() - len(wrong)] + right + value[numbers[-1].end() :]
    if kind != "phone" or any(c.isdigit() for c in value):
        return ""
    digits = spelled_number(value, english) or ""
    if digits.endswith(wrong):
        return digits[: len(digits) - len(wrong)] + right
    at = digits.rfind(wrong)
    return digits[:at] + right + digits[at + len(wrong) :] if at >= 0 else ""
