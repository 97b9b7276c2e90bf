"""How much of a customer's facts document the app may fill, and what a turn reads of a
document filled past that. The app's facts (`PUT .../facts`) are never pruned, so their
number and size are bounded where they are written; facts heard in turns are bounded
by their kinds (gateway.context.people.current_facts). A document stored before the
limit existed may hold more: a turn reads at most the limit's worth of it, so its cost
stays bounded whatever was stored, and nothing is deleted. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from gateway.context.types import BASIC_SCOPE

F = TypeVar("F", bound=Mapping[str, Any])


@dataclass(frozen=True)
class FactsLimit:
    """`limits.max_customer_facts` and `limits.max_customer_facts_bytes` (gateway.config
    takes its defaults from here). A window shows a few dozen facts at most (its facts
    slice is some hundreds of tokens), so 500 of the app's facts leave plenty to choose
    from, and ranking 256 KB of them costs a turn milliseconds, not the seconds 54 MB
    did."""

    facts: int = 500
    bytes: int = 256 * 1024


def stored_bytes(fact: Mapping[str, Any]) -> int:
    """A fact's size as the store holds it (its JSON)."""
    return len(orjson.dumps(fact))


def over_limit(count: int, stored: Iterable[Mapping[str, Any]], limit: FactsLimit) -> str | None:
    """Why a document holding `count` facts put by the app, `stored` as the store holds
    them (read only when `count` is within the limit), passes the limit, or None."""
    if count > limit.facts:
        return (
            f"it would hold {count} facts put by the app, more than "
            f"limits.max_customer_facts ({limit.facts})"
        )
    total = sum(stored_bytes(f) for f in stored)
    if total > limit.bytes:
        return (
            f"the facts put by the app would take {total} bytes, more than "
            f"limits.max_customer_facts_bytes ({limit.bytes})"
        )
    return None


def within_limit(facts: Sequence[F], limit: FactsLimit) -> list[F]:
    """What a turn reads of a stored document's facts (oldest first, as returned): of the
    app's facts, and apart of those heard in turns, at most `limit.facts` taking at most
    `limit.bytes`; the ones that withhold something from a card first (scoped above
    `basic`, or stated unverified: gateway.context.redaction), then the newest. A
    document within the limit is read whole."""
    chosen: set[int] = set()
    for extracted in (False, True):
        group = [i for i, f in enumerate(facts) if (f.get("extracted") is True) == extracted]
        chosen.update(_newest(facts, group, limit))
    if len(chosen) == len(facts):
        return list(facts)
    return [f for i, f in enumerate(facts) if i in chosen]


def _newest(facts: Sequence[F], group: list[int], limit: FactsLimit) -> Iterable[int]:
    """Of `group` (indexes into `facts`, oldest first), what a turn reads: all of it
    within the limit, else the withholding ones and then the newest, up to the limit."""
    if len(group) <= limit.facts and sum(stored_bytes(facts[i]) for i in group) <= limit.bytes:
        return group
    ranked = sorted(group, key=lambda i: (_withholds(facts[i]), i), reverse=True)
    taken: list[int] = []
    used = 0
    for i in ranked[: limit.facts]:
        used += stored_bytes(facts[i])
        if used > limit.bytes:
            break
        taken.append(i)
    return taken


def _withholds(fact: Mapping[str, Any]) -> bool:
    return fact.get("scope", BASIC_SCOPE) != BASIC_SCOPE or fact.get("stated_unverified") is True
