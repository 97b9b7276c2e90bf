"""Whether a word is a first name people are given: the first names Faker (MIT) ships for
the customers' languages (Portuguese, Spanish and English locales), case- and
accent-folded. Pure: no I/O but importing those lists once (importing them sets up
faker's package, ~0.3 s; the gateway does it at start-up, off the event loop).

Used where a word may be a name or something else: in lowercase after a weak cue ("i'm
kevin" names Kevin, "i'm petty upset" and "I'm baded in Boston" name no one; a
capitalised word is taken as the customer wrote it, listed or not), after "speaking",
"aquí", "habla" ("Ryan speaking", not "Technically speaking"), and a bare corrected word
("o correto é Beatriz Pereira" names, "o correto é Samsung" does not).
"""

from __future__ import annotations

import importlib
from functools import cache

from gateway.context.people_text import FOLD

_LOCALES = ("pt_BR", "pt_PT", "es_ES", "es_MX", "es_AR", "es_CO", "en_US", "en_GB", "en_IE")
_LISTS = ("first_names", "first_names_male", "first_names_female")


def _listed(lists: tuple[str, ...]) -> frozenset[str]:
    """Every name Faker lists under these attributes in the customers' locales, folded."""
    names: set[str] = set()
    for locale in _LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        for listed in lists:
            names.update(
                str(name).translate(FOLD).casefold() for name in getattr(provider, listed, ())
            )
    return frozenset(names)


@cache
def first_names() -> frozenset[str]:
    """Every listed first name, accent-folded and case-folded."""
    return _listed(_LISTS)


def is_first_name(word: str) -> bool:
    """`word` (any case, accents or not) is a listed first name."""
    return word.translate(FOLD).casefold() in first_names()


@cache
def last_names() -> frozenset[str]:
    """Every listed family name, folded as `first_names`: "torres", "prado", "costa" are
    everyday words too, and still a name after a first name."""
    return _listed(("last_names",))


def is_last_name(word: str) -> bool:
    return word.translate(FOLD).casefold() in last_names()
