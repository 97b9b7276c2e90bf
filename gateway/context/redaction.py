"""What a caller outside a fact's scope must not read in text shown to it (an earlier
conversation's card): what an operator's pattern above its scopes finds, and what the
customer's stored facts above them state, as stored or, for a phone, in any format; and
what any caller must not read there as verified data: a fact an unverified caller stated.
Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from gateway.context.linear_regex import LinearMatch, compile_linear
from gateway.context.summaries import Pattern
from gateway.context.types import Fact


def _replacement(name: str) -> Callable[[LinearMatch], str]:
    """A function, not a template: a backslash in a pattern's name stays literal."""
    withheld = f"[withheld {name.replace('_', ' ')}]"
    return lambda _match: withheld


def redact(
    text: str, patterns: Sequence[Pattern], scopes: Sequence[str], facts: Sequence[Fact] = ()
) -> str:
    """Withhold what a pattern above the caller's scopes would find (e.g. an email in an
    earlier episode's summary, shown to a customer not verified for it), and what the
    customer's stored facts above those scopes state, wherever it was repeated; also
    what a fact an unverified caller stated says (gateway.context.unverified), whatever
    the scopes: a card cannot say who stated it."""
    for pattern in patterns:
        if pattern.scope not in scopes:
            text = pattern.regex.sub(_replacement(pattern.name), text)
    hidden = [f for f in facts if f.scope not in scopes or f.stated_unverified]
    if not hidden:
        return text
    return _withheld_values(hidden).sub("[withheld]", _withhold_numbers(text, hidden))


# A phone said again in another format ("+44 7700 900123", "07700 900123", "(415)
# 555-0199" as "+14155550199"): a run of digits and the separators people put in them.
_NUMBER_RUN = compile_linear(r"\+?\(?\d[\d\s().-]{5,}\d")
_SAME_NUMBER_DIGITS = 8  # a country code or a trunk 0 aside, the digits that name it


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def _withhold_numbers(text: str, hidden: Sequence[Fact]) -> str:
    """A hidden phone's number wherever it is written, whatever its format: a run of
    digits holding its last eight digits (all of them when it has fewer) is withheld
    whole, a number written next to it too ("07700900123 - 2 attempts" is one run)."""
    numbers = {d for f in hidden if f.tags[:1] == ("phone",) if len(d := _digits(f.value)) >= 7}
    if not numbers:
        return text
    tails = {n[-_SAME_NUMBER_DIGITS:] for n in numbers}

    def holds(run: str) -> bool:
        got = _digits(run)
        return any(tail in got for tail in tails)

    return _NUMBER_RUN.sub(lambda m: "[withheld]" if holds(m.group(0)) else m.group(0), text)


# Pieces of a fact's text that identify it when repeated: words with a digit ("48213",
# "ORD-7"), emails, and runs of two or more capitalised words ("Secret Lane").
# RE2: a fact's text can be a long match or an app's own sentence; `[\w...]*\d` backtracks
# quadratically in `re` over a long run with no digit.
_FACT_PIECE = compile_linear(
    r"[\w.+-]+@[\w-]+\.[\w.-]+|[\w$€£#/-]*\d[\w$€£#/.,-]*\w|\b[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)+"
)
_FACT_SEGMENT = re.compile(r"[,;:\n()]")
_MIN_PIECE = 3  # characters: shorter pieces ("12") would withhold too much


def fact_values(fact: Fact) -> list[str]:
    """What a fact states, as it could appear in a transcript: its `value` when it has
    one, else its comma-separated segments and the identifying pieces of its text."""
    source = fact.value or fact.text
    pieces = {m.group(0) for m in _FACT_PIECE.finditer(source)}
    pieces.update(_FACT_SEGMENT.split(source) if not fact.value else [fact.value])
    return [p for p in (p.strip() for p in pieces) if len(p) >= _MIN_PIECE]


def _withheld_values(facts: Sequence[Fact]) -> re.Pattern[str]:
    values = sorted({v for f in facts for v in fact_values(f)}, key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(map(re.escape, v.split())) for v in values)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE) if values else _NEVER


_NEVER = re.compile(r"(?!x)x")
