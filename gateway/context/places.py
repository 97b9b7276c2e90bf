"""Whether a word or two name a big city: the GeoNames cities of 100,000 people or more
(from the list of 15,000 or more that `geotext` packages, MIT; data CC-BY GeoNames),
each as written and in ASCII. Pure: no I/O but reading the packaged list once (~0.2 s;
the gateway reads it at start-up, off the event loop).

Used where a value's kind is otherwise a guess: a bare value after a customer's
correction cue ("foi mal, o correto é Goiânia"), and a city named where no cue says it
is the customer's but the words around say where ("shippign 2 Boston", "I'm baded in
Boston"; gateway.context.people_spans). Many first names are towns ("Mariana", "Lucas",
"Tyler": 15,000 people or more); fewer are cities this big ("Victoria", "Austin" still
are, and gateway.context.first_names tells them apart).
"""

from __future__ import annotations

import importlib.resources
from functools import cache

_PACKAGE, _PATH = "geotext", "data/cities15000.txt"  # geonameid, name, asciiname, ...
_NAMES, _POPULATION = slice(1, 3), 14  # columns
LEAST_POPULATION = 100_000
_MILLIONS = 1_000_000


@cache
def city_names() -> frozenset[str]:
    """Every big city's name and ASCII name, case-folded; a city of millions GeoNames
    calls "... City" also without the word, as people say it ("New York", "Mexico")."""
    names: set[str] = set()
    with (importlib.resources.files(_PACKAGE) / _PATH).open(encoding="utf-8") as lines:
        for line in lines:
            fields = line.split("\t")
            population = fields[_POPULATION] if len(fields) > _POPULATION else ""
            people = int(population) if population.isdigit() else 0
            if people >= LEAST_POPULATION:
                said = [name.casefold() for name in fields[_NAMES] if name]
                names.update(said)
                if people >= _MILLIONS:
                    names.update(n.removesuffix(" city") for n in said if n.endswith(" city"))
    return frozenset(names)


def is_city(value: str) -> bool:
    """`value` (whitespace collapsed, any case) is a big city's name."""
    return " ".join(value.split()).casefold() in city_names()
