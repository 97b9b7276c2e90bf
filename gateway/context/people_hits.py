"""A fact's span in one turn (`Hit`), and the words a name or a city is made of
(`proper`): what the extractor's steps share. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from gateway.context.people_patterns import TOKEN_WORD
from gateway.context.people_words import (
    ABBREVIATIONS,
    CONNECTORS,
    CONTRACTIONS,
    GERUND_ENDINGS,
    GERUND_NAMES,
    NOT_CITY,
    NOT_FIRST,
    NOT_PROPER,
    RESUMING_STEMS,
    SUFFIXES,
    TITLES,
)


class Hit(NamedTuple):
    """Where a turn states a fact of one kind (offsets into the folded turn, which are the
    original's)."""

    kind: str
    start: int
    end: int
    cue: int  # where the words that introduce it start (a problem skips past intros)
    correction: bool = False
    # Heard with no cue that says it is the customer's own (a big city's name where
    # something goes): it never replaces a value of its kind already heard.
    weak: bool = False


def free(hits: Sequence[Hit], start: int, end: int) -> bool:
    """Whether no fact but a problem (a sentence, which may hold facts) has this span."""
    return all(end <= h.start or start >= h.end for h in hits if h.kind != "problem")


def add_hit(
    hits: list[Hit], kind: str, start: int, end: int, cue: int = -1, weak: bool = False
) -> None:
    if end > start and free(hits, start, end):
        hits.append(Hit(kind, start, end, start if cue < 0 else cue, weak=weak))


def proper(
    folded: str, start: int, end: int, weak: bool, joins: bool, city: bool = False
) -> tuple[int, int] | None:
    """The span of 1-3 name words at the head of folded[start:end]: stops at a common word,
    at a sentence's end, and at a lowercase word after a capitalised one. A "de"/"da"
    joins words when `joins` (else only before a capitalised word: "sou a ana de recife"
    is not one name). A name's title ("Dr.", "Dona") is not part of it."""
    common = NOT_CITY if city else NOT_PROPER
    kept: list[tuple[int, int]] = []
    joined = False
    for m in TOKEN_WORD.finditer(folded[start:end]):
        word, stop = m.group(0) or "", start + m.end()
        low = word.lower()
        if (not kept and not city and low in TITLES) or (kept and not joined and low in CONNECTORS):
            joined = bool(kept)
            continue
        first = folded[kept[0][0]] if kept else ""
        if not _fits(word, first, joined and not joins, weak, common):
            break
        kept.append((start + m.start(), stop))
        joined = False
        if len(kept) == 3 or (folded[stop : stop + 1] == "." and low not in ABBREVIATIONS):
            break
    if not kept or (len(kept) == 1 and not city and _verb(folded[slice(*kept[0])].lower())):
        return None
    return kept[0][0], kept[-1][1]


def _verb(low: str) -> bool:
    """Whether a name of one word is a verb: "retomando", "following" (not "Fernando"
    nor "Sterling"; "Xiaoming Wang" is two words; a city may be "Reading")."""
    gerund = len(low) >= 5 and low.endswith(GERUND_ENDINGS) and low not in GERUND_NAMES
    return gerund or low.startswith(RESUMING_STEMS)


def _fits(word: str, first: str, capital: bool, weak: bool, common: frozenset[str]) -> bool:
    """Whether a word continues a name that starts with `first` (a letter, or "": then
    the word opens it, and "frustrated" or "pequena" may not)."""
    if (first.isupper() or capital) and not word[0].isupper():
        return False
    if not first and word.lower() in NOT_FIRST:
        return False
    return _name_like(word, weak, common)


def _name_like(word: str, weak: bool, common: frozenset[str]) -> bool:
    low = word.lower().strip("'-")
    if len(low) < 2 or low in common or low.endswith(CONTRACTIONS):
        return False
    return not (weak and word.islower() and len(low) >= 6 and low.endswith(SUFFIXES))
