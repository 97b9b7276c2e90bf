"""`unstuttered` (a word said twice in a row in a transcript is read once) against a
plain run-by-run reading of the same rule, on text drawn from the cases that decide it:
letters of either case, number words, accents and letters outside ASCII, punctuation
and every kind of whitespace between them."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.context.people import unstuttered
from gateway.context.people_numbers import NUMBERS

_LETTERS = re.compile(r"[A-Za-z]+")


def by_run(folded: str) -> str:
    """The rule read one letter run at a time: a run equal (case aside) to the run
    before it, with only whitespace between, lower case and no number word, is blanked;
    the check runs only where two whitespace-separated words repeat."""
    words = folded.lower().split()
    if not any(map(str.__eq__, words, words[1:])):
        return folded
    out, prev_word, prev_end = list(folded), "", -1
    for m in _LETTERS.finditer(folded):
        word = m.group(0).lower()
        if (
            word == prev_word
            and word not in NUMBERS
            and not m.group(0)[0].isupper()
            and folded[prev_end : m.start()].isspace()
        ):
            out[m.start() : m.end()] = " " * (m.end() - m.start())
        prev_word, prev_end = word, m.end()
    return "".join(out)


# "\u017f" (long s) and "\u0130" (I with a dot) change under lower() and IGNORECASE.
WORDS = st.sampled_from(
    [
        *("a", "A", "the", "The", "seis", "Seis", "um", "x", "ab", "abc", "details", "oneone"),
        *("1", "2.", "Sk", "é", "-", "\u017f", "K", "k", "_", "\u0130", "ß", "ñ", "x,y", "em"),
    ]
)
SPACES = st.sampled_from(["", " ", "  ", ",", "\t", "\n", "\u00a0", "\u2003", ". "])


@settings(max_examples=3000)
@given(st.lists(st.tuples(WORDS, SPACES), max_size=16))
def test_blanks_exactly_the_repeats_a_run_by_run_reading_blanks(
    parts: list[tuple[str, str]],
) -> None:
    text = "".join(w + s for w, s in parts)
    assert unstuttered(text) == by_run(text)
    assert len(unstuttered(text)) == len(text)  # offsets into the original still hold


def test_a_message_repeating_every_word_keeps_only_the_first() -> None:
    assert unstuttered("details " * 3 + "Walla Walla seis seis") == (
        "details" + " " * 17 + "Walla Walla seis seis"
    )
