"""Whether a word is an everyday word of the customers' languages: one of the
`COMMON_RANK` (10,000) most frequent words of English, Portuguese or Spanish in the
word-frequency lists `pyspellchecker` packages (MIT; counts from subtitles and
Wiktionary), case- and accent-folded. Pure: no I/O but reading those three lists once
(~0.5 s; the gateway reads them at start-up, off the event loop).

Used where a weak cue gives a capitalised word that is neither a listed first name nor
a big city: "Same here", "I'm Frozen solid", "I meant Frozen", "Jarvis from Iron Man"
name no one and no place, as real small talk says them (`bench/facts_on_chitchat.py`),
while "I'm Deandra" and "from Itaquaquecetuba" still do. A first name or a city that is
also an everyday word ("Rosa", "Natal") is known by its own list first. A word no list
holds passes, an acronym too ("I'm OCD" is still heard as a name).

Ranking the three lists takes ~0.8 s, on every start of every process: the result ships
as `gateway/data/common_words.txt` (one folded word a line), read in a few
milliseconds. `python -m gateway.context.common_words` writes it again from the
installed lists; tests/test_people.py checks that it still matches them.
"""

from __future__ import annotations

import gzip
import importlib.resources
import json
from functools import cache

from gateway.context.people_text import FOLD

COMMON_RANK = 10_000  # per language: the words a speaker says every day, not names
_LANGUAGES = ("en", "pt", "es")


PACKAGED = "common_words.txt"  # in gateway/data


@cache
def common_words() -> frozenset[str]:
    """The most frequent words of each language, folded: the packaged list, or ranked
    from the word-frequency lists when it is missing."""
    packaged = importlib.resources.files("gateway") / "data" / PACKAGED
    if packaged.is_file():
        lines = packaged.read_text(encoding="utf-8").splitlines()
        return frozenset(line for line in lines if line and not line.startswith("#"))
    return ranked_words()


def ranked_words() -> frozenset[str]:
    """The COMMON_RANK most frequent words of each language's list, folded."""
    words: set[str] = set()
    for language in _LANGUAGES:
        path = importlib.resources.files("spellchecker") / "resources" / f"{language}.json.gz"
        with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as text:
            counts: dict[str, int] = json.load(text)
        ranked = sorted(counts, key=counts.__getitem__, reverse=True)[:COMMON_RANK]
        words.update(w.translate(FOLD).casefold() for w in ranked)
    return frozenset(words)


def is_common(word: str) -> bool:
    """`word` (any case, accents or not) is an everyday word in one of the languages."""
    return word.translate(FOLD).casefold() in common_words()


def main() -> None:
    """Write the packaged list (to stdout) from the installed word-frequency lists."""
    print(
        f"# The {COMMON_RANK:,} most frequent words of each of {', '.join(_LANGUAGES)}, folded:"
        "\n# pyspellchecker's word-frequency lists (MIT), ranked by"
        " `python -m gateway.context.common_words`."
    )
    print("\n".join(sorted(ranked_words())))


if __name__ == "__main__":
    main()
