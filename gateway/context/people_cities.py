"""Where one turn names the customer's city: after a cue that says so ("moro em", "I live
in", "ship it to") and, weakly, a big city's name where the words around only say where
("shippign 2 Boston.", "I'm baded in Boston"). Pure.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import cast

from gateway.context.common_words import is_common
from gateway.context.people_hits import Hit, add_hit, proper
from gateway.context.people_patterns import CITY, PLACE_AFTER, TOKEN_WORD
from gateway.context.people_text import MATCHES, SpanMatch, first_matches, next_word, word_set
from gateway.context.people_words import (
    COMMON_WORD_CITIES,
    CONNECTORS,
    GOERS,
    HOME_TOWN,
    NOT_CITY,
    NOT_MINE,
    PLACE_WORDS,
    STREET_WORDS,
    clause_ends,
)
from gateway.context.places import is_city


def city_hits(folded: str, hits: list[Hit]) -> None:
    """Each search resumes after the city it found, not after the words its cue took
    ("envió a Bogotá pero vivo en Cali" states both)."""
    pos = 0
    for _ in range(MATCHES):
        m = CITY.search(folded, pos)
        if m is None:
            return
        span = proper(folded, m.start(4), m.end(4), m.group(1) is None, True, city=True)
        span = _city_words(folded, *span) if span else None
        pos = span[1] if span else m.start(4)
        if not span or (m.group(3) is not None and folded[span[0]].islower()):
            continue  # "Ana from Recife", never "Ana from accounts"
        if m.group(1) is None and _infinitive(folded, *span):
            continue  # "sou de comprar sempre aqui" says what the customer does
        if _everyday(folded, *span):
            continue  # "sent to jail", "Jarvis from Iron Man": no place
        place = folded[span[0] : span[1]].lower() not in PLACE_WORDS
        if place and next_word(folded, span[1]) not in STREET_WORDS:  # "to Baker Street"
            add_hit(hits, "city", *span, cue=span[0] if m.group(2) else m.start())


def _everyday(folded: str, start: int, end: int) -> bool:
    """Everyday words only, where no big city is named ("if you live in state", "Iron
    Man"): no place. "Natal", "Reading" are cities first; "Vila Mariana" has a name."""
    words = [w for w in folded[start:end].split() if w.lower() not in CONNECTORS]
    return all(map(is_common, words)) and not is_city(folded[start:end])


_CITY_WORDS = 4  # "sao jose dos campos"
_CITY_WORD = re.compile(r"[^\W\d_][\w'-]*")  # any letters, as a city is written
_INFINITIVE_ENDS = ("ar", "er", "ir")


def _infinitive(folded: str, start: int, end: int) -> bool:
    """A lowercase first word shaped as a Portuguese or Spanish infinitive ("comprar",
    "reclamar") where no big city is named: what someone does, not where they are from."""
    first = folded[start:end].split(maxsplit=1)[0]
    return first.islower() and first.endswith(_INFINITIVE_ENDS) and not is_city(folded[start:end])


def big_city_hits(folded: str, hits: list[Hit]) -> None:
    """A big city's name where no cue said it is the customer's (PLACE_AFTER): the most
    words after the cue that name one, capitalised unless a word for city came before;
    not where a capitalised word or "'s" follows ("Paris Hilton", "Columbia Records",
    "in Jackson's case"), nor before a street word ("to Boston Avenue"), nor after words
    about a parcel or someone else ("stuck in Memphis", "my mom lives in Chicago"), nor
    "cidade natal" (home town). Weak: it never replaces a city already heard."""
    # A turn with no capital letter at all (a call's transcript, a hurried chat) says
    # nothing by its case: there a city where the order goes may be lowercase, if the
    # clause ends with it ("so it's going to dublin", "vai pra curitiba e ...").
    uncased = not any(ch.isupper() for ch in folded)
    for m in first_matches(PLACE_AFTER, folded):
        at = m.end()
        rest = folded[at : at + 80]
        # lowercase with no word for city before it: only where the order goes, uncased
        lowercase = bool(rest) and m.group(2) is None and not rest[0].isupper()
        if not rest or (lowercase and not (uncased and m.group(3) is not None)):
            continue  # "going to split the payment", "vai pra loja": no city
        words = list(itertools.islice(TOKEN_WORD.finditer(rest), _CITY_WORDS))
        first = (words[0].group(0) or "").lower() if words else ""
        if not words or words[0].start() != 0 or first in NOT_CITY or first in HOME_TOWN:
            continue
        ends = _phrase_ends(rest, words)
        end = next((e for e in reversed(ends) if is_city(rest[:e])), None)
        if end is None or rest.startswith("'s", end) or _capitalised_next(rest, end):
            continue
        said_two = (m.group(0) or "").rstrip().endswith("2")
        if said_two and rest[end : end + 1] not in ("", ",", ".", "!", "?", ";", "\n"):
            continue  # "ship 2 Victoria chairs" is two chairs; "shippign 2 Boston." is to
        before = folded[max(0, m.start() - 40) : m.start()].split()[-5:]
        if next_word(rest, end) in STREET_WORDS or any(w.lower() in NOT_MINE for w in before):
            continue
        if lowercase and not _lowercase_city(folded, m.start(), rest, end):
            continue
        add_hit(hits, "city", at, at + end, m.start(), weak=True)


_CLAUSE_END = re.compile(r"[.;!?\n]")
# Words that take a clause from the address to someone or somewhere else: between an
# address and a city they leave the city not the address's ("... 1500 mas eu estava
# viajando para recife", "12 Oak Street for my mom who lives in Denver").
_NOT_THE_ADDRESS = word_set(
    "que quem onde para pra pro pros por pela pelo mas porem e ou eu minha meu minhas meus "
    "sua seu dela dele em no na com sem mora moro vive vivo estou estava to for from in at "
    "and but or not my his her their who which where lives live living instead y o pero "
    "mi mis su sus en con sin donde estoy i we"
)


def address_city(folded: str, end: int) -> tuple[int, int] | None:
    """The big city that ends the clause of an address ending at `end` ("rua halfeld
    412 apto 301 centro juiz de fora", "..., centro, Juiz de Fora."): the address's city,
    in any case; not one everyday word in lowercase ("... apto 12 natal")."""
    tail = folded[end : end + 64]
    stop = _CLAUSE_END.search(tail)
    tail = tail[: stop.start()] if stop else tail
    words = list(_CITY_WORD.finditer(tail))
    if not words or tail[words[-1].end() :].strip(" \t,"):
        return None
    for n in range(min(_CITY_WORDS, len(words)), 0, -1):
        first = words[-n]
        if any((w.group(0) or "").lower() in _NOT_THE_ADDRESS for w in words[:-n]):
            return None  # "... para minha mãe que mora em campinas": someone else's
        said = tail[first.start() : words[-1].end()]
        if not all(tail[a.end() : b.start()].isspace() for a, b in itertools.pairwise(words[-n:])):
            continue
        # everyday words in lowercase ("... apto 12 natal") only as a name of two or more
        named = [w for w in said.split() if w.lower() not in CONNECTORS]
        everyday = said.islower() and len(named) < 2 and all(map(is_common, named))
        if is_city(said) and not everyday:
            return end + first.start(), end + words[-1].end()
    return None


# A capitalised word after a city goes on naming something else ("Victoria Park"); a
# postcode ("Leicester LE2") does not.
_NAMED_ON = re.compile(r" [A-Z][a-z]")


def city_at(folded: str, start: int) -> int:
    """Where the longest big city's name that starts at `start` ends (0: none): not one a
    capitalised word goes on from, nor, in lowercase, everyday words ("here in nice
    weather")."""
    words = list(itertools.islice(_CITY_WORD.finditer(folded[start : start + 60]), _CITY_WORDS))
    if not words or words[0].start() != 0:
        return 0
    for end in reversed(_phrase_ends(folded[start:], cast(Sequence[SpanMatch], words))):
        said = folded[start : start + end]
        if _NAMED_ON.match(folded, start + end):
            continue
        if is_city(said) and not (said.islower() and all(map(is_common, said.split()))):
            return start + end
    return 0


def _lowercase_city(folded: str, cue: int, rest: str, end: int) -> bool:
    """A lowercase big city where the order goes: the clause ends with it, it is no
    everyday word ("split", "reading") and no person is the one going ("i'm going to
    ...", "we are going to ..." say what someone will do)."""
    before = folded[max(0, cue - 16) : cue].lower().split()
    return (
        clause_ends(rest, end)
        and rest[:end].lower() not in COMMON_WORD_CITIES
        and not (before and before[-1] in GOERS)
    )


def _capitalised_next(rest: str, end: int) -> bool:
    """Whether a capitalised word follows with only a blank between ("Paris Hilton")."""
    after = rest[end : end + 2]
    return len(after) == 2 and after[0] == " " and after[1].isupper()


def _phrase_ends(folded: str, words: Sequence[SpanMatch]) -> list[int]:
    """Where each of the first words ends while only blanks lie between them ("Belo
    Horizonte", not "Boston, Mass")."""
    ends: list[int] = []
    for word in words:
        if ends and not folded[ends[-1] : word.start()].isspace():
            break
        ends.append(word.end())
    return ends


def _city_words(folded: str, start: int, end: int) -> tuple[int, int]:
    """A city in lowercase of three words, the last not after a "de", is one of two and
    the verb after it ("the delivery to porto seguro never happened"), unless its last
    word says city ("new york city"); "são josé dos campos" stays whole."""
    words = list(TOKEN_WORD.finditer(folded[start:end]))
    said = [(m.group(0) or "").lower() for m in words]
    named = [w for w in said if w not in CONNECTORS]
    if folded[start].isupper() or len(named) != 3 or said[-2] in CONNECTORS:
        return start, end
    return (start, end) if said[-1] in PLACE_WORDS else (start, start + words[-2].end())
