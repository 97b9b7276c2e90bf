"""What a caller outside a fact's scope must not read in text shown to it (an earlier
conversation's card): what an operator's pattern above its scopes finds, and what the
customer's stored facts above them state, as stored or, for a phone, in any format
(digits, number words or a mix); and what any caller must not read there as verified
data: a fact an unverified caller stated. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

from gateway.context.common_words import common_words
from gateway.context.linear_regex import compile_linear
from gateway.context.people_numbers import said_digits
from gateway.context.people_patterns import MIXED_NUMBER
from gateway.context.people_text import FOLD, plain, whole_words
from gateway.context.prompts import single_quoted, unbarred
from gateway.context.summaries import Pattern
from gateway.context.types import Fact


def _withheld(name: str) -> str:
    return f"[withheld {name.replace('_', ' ')}]"


def redact(
    text: str, patterns: Sequence[Pattern], scopes: Sequence[str], facts: Sequence[Fact] = ()
) -> str:
    """Withhold what a pattern above the caller's scopes would find (e.g. an email in an
    earlier episode's summary, shown to a customer not verified for it), and what the
    customer's stored facts above those scopes state, wherever it was repeated; also
    what a fact an unverified caller stated says (gateway.context.unverified), whatever
    the scopes: a card cannot say who stated it."""
    text = plain(text)  # "415 555 0134" with no-break spaces, an email with a zero-width space
    for pattern in patterns:
        if pattern.scope not in scopes:
            text = _withhold_pattern(pattern, text)
    hidden = [f for f in facts if f.scope not in scopes or f.stated_unverified]
    if not hidden:
        return text
    values = _values(hidden)
    phones = {d for f in hidden if f.tags[:1] == ("phone",) for d in _readings(f.value)}
    text = _withheld_values(values).sub("[withheld]", _withhold_phones(text, phones))
    return _withhold_cut_heads(text, values, phones)


def _withhold_pattern(pattern: Pattern, text: str) -> str:
    """What the pattern finds, read on the folded text ("maría.souza@..." is an email
    whole, not from its "a.souza"), each find widened to whole words: no piece of a word
    it holds stays readable (an email with a Cyrillic letter in it is withheld whole)."""
    withheld = _withheld(pattern.name)
    # on the text as written too: a pattern may spell its cue with accents ("contraseña")
    spans = sorted(
        whole_words(text, m.start(), m.end())
        for copy in {text, text.translate(FOLD)}
        for m in pattern.regex.finditer(copy)
        if m.end() > m.start()
    )
    kept, end = [], 0
    for start, stop in spans:
        if stop <= end:
            continue
        kept += [text[end : max(start, end)], withheld]
        end = stop
    return "".join(kept) + text[end:] if kept else text


_SAME_NUMBER_DIGITS = 8  # a country code or a trunk 0 aside, the digits that name it
_PHONE_DIGITS = 7  # fewer: not a phone's number


def _readings(number: str) -> set[str]:
    """The digits a number written in digits and number words says, read as English
    ("oh" a zero, "um" a hesitation) and as Portuguese or Spanish ("um" one): a card may
    be in either, and a phone read in one of them must not pass by being read in the
    other."""
    number = plain(number)  # Arabic-Indic and full-width digits are digits
    if not any(c.isalpha() for c in number):  # digits alone: most runs, read one way
        return {"".join(c for c in number if c.isdigit())}
    return {said_digits(number, english) for english in (True, False)}


def _withhold_phones(text: str, phones: set[str]) -> str:
    """Each hidden phone (`phones`: the digits each reads as), wherever its number is
    written, whatever the format: in digits ("+14155550199" for "(415) 555-0199"), in
    words ("four one five, five five five...", "quatro um cinco...") or a mix ("415
    555 zero one nine nine"). A run of
    digits and number words holding its last eight digits (all of them when it has
    fewer) is withheld whole, a number written next to it too ("07700900123 - 2
    attempts" is one run); number words that do not hold them ("two orders and one
    refund") stay. Nothing is read when no phone is hidden."""
    numbers = {d for d in phones if len(d) >= _PHONE_DIGITS}
    if not numbers:
        return text
    tails = {n[-_SAME_NUMBER_DIGITS:] for n in numbers}
    # Folding keeps offsets (one character for one): "três" is read, the text is cut.
    folded, kept, end = text.translate(FOLD), [], 0
    for m in MIXED_NUMBER.finditer(folded):
        said = _readings(folded[m.start() : m.end()])
        if any(tail in digits for tail in tails for digits in said):
            kept += [text[end : m.start()], "[withheld]"]
            end = m.end()
    return "".join(kept) + text[end:]


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
    source = plain(fact.value or fact.text)
    pieces = {m.group(0) for m in _FACT_PIECE.finditer(source)}
    pieces.update(_FACT_SEGMENT.split(source) if not fact.value else [source])
    return [p for p in (p.strip() for p in pieces) if len(p) >= _MIN_PIECE]


def _values(facts: Sequence[Fact]) -> set[str]:
    """Each value of `facts` as stored, and as a card writes it inside a segment (its
    bars made "/", its double quotes single when the segment is quoted:
    gateway.context.episode_card)."""
    stated = {v for f in facts for v in fact_values(f)}
    return stated | {w for v in stated for w in (unbarred(v), single_quoted(unbarred(v)))}


def _withheld_values(found: set[str]) -> re.Pattern[str]:
    """Any of the values `found`, a whole word or more of the text."""
    values = sorted(found, key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(map(re.escape, v.split())) for v in values)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE) if values else _NEVER


_NEVER = re.compile(r"(?!x)x")

# Where a card was shortened: its words cut ("..."), its text cut (" [...]", maybe
# inside a word), or a model's card cut its own way ("…").
_CUT_MARK = re.compile(r"\[\.\.\.\]|\.\.\.|\u2026")
_CHAR_CUT = "[...]"
_MIN_HEAD = 3  # characters of a value's head withheld at a cut: as _MIN_PIECE


def _withhold_cut_heads(text: str, values: set[str], phones: set[str]) -> str:
    """A hidden value a card was cut inside of: the head left before the cut mark ("Rua
    das Flo [...]", "four one five five five..."), which the whole value no longer
    finds. Withheld: a head of the value (as stored or as a card writes it, case and
    spacing aside) of 3 characters or more that starts a word (`_telling`); and
    a run of number words (digits among them or not) before the mark whose digits, 3
    or more, a hidden phone holds ("four one five..."; a run of digits alone is withheld
    by the pieces of the value, above). A word that only begins a value ("the..." for
    "Theodore Marsh") is left as it is."""
    if not _CUT_MARK.search(text):
        return text
    heads: dict[str, list[str]] = {}  # values by their first _MIN_HEAD characters
    for value in {" ".join(v.split()).lower() for v in values}:
        heads.setdefault(value[:_MIN_HEAD], []).append(value)
    longest = max(map(len, values), default=0)
    kept, end = [], 0
    for mark in _CUT_MARK.finditer(text):
        before = text[end : mark.start()].rstrip()
        start = _value_head(before, heads, longest, mark.group(0) == _CHAR_CUT)
        start = min(start, _phone_head(before, phones))
        kept += [before[:start], "[withheld]" if start < len(before) else ""]
        kept.append(text[end + len(before) : mark.start()])
        end = mark.start()
    return "".join(kept) + text[end:]


def _value_head(before: str, heads: dict[str, list[str]], longest: int, inside_words: bool) -> int:
    """Where in `before` the longest tail that is a telling head of a value starts (see
    `_withhold_cut_heads`); len(before) when none is. `heads`: the values (spacing
    collapsed, lower case) by their first _MIN_HEAD characters; `inside_words`: the cut
    may have ended inside a word."""
    lowered = before.lower()
    if len(lowered) != len(before):  # a letter whose lower case is longer: read as is
        lowered = before
    for start in range(max(0, len(before) - longest), len(before) - _MIN_HEAD + 1):
        if (start and before[start - 1].isalnum()) or not before[start].isalnum():
            continue
        tail = lowered[start:]
        for value in heads.get(tail[:_MIN_HEAD], ()):
            if value.startswith(tail) and _telling(tail, value, inside_words):
                return start
    return len(before)


def _telling(head: str, value: str, inside_words: bool) -> bool:
    """Whether `head`, a head of `value`, is to be withheld: after a cut between
    characters, any (3+ characters); after one between words ("..."), one that ends
    where a word of the value ends ("Theodore..." of "Theodore Marsh", "jdoe..." of
    "jdoe@example.com", "Rua das Flores..."), not a word of the text that only begins
    one of the value's ("the..." of "Theodore"), nor one common word ("will..." of
    "Will Turner", "support..." of "support@acme-shop.com": any text says them)."""
    if inside_words:
        return True
    if len(head) < len(value) and value[len(head)].isalnum():
        return False
    return " " in head or not head.strip(".,;:!?-'\"").isalpha() or head not in common_words()


def _phone_head(before: str, phones: set[str]) -> int:
    """Where a run of number words (and digits) ending `before` starts, when its digits
    (at least _MIN_HEAD) are part of a hidden phone's; len(before) otherwise."""
    if not phones:
        return len(before)
    folded = before.translate(FOLD)
    runs = list(MIXED_NUMBER.finditer(folded))
    last = runs[-1] if runs else None
    if last is None or before[last.end() :].strip(" .,;:-"):
        return len(before)
    said = _readings(folded[last.start() : last.end()])
    if not any(c.isalpha() for c in folded[last.start() : last.end()]):
        return len(before)  # digits alone: withheld by the value's pieces when they are
    if any(len(d) >= _MIN_HEAD and any(d in p for p in phones) for d in said):
        return last.start()
    return len(before)
