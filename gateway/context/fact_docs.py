"""How a customer's (or a conversation's) facts are kept in the store: a facts document
holds each fact in a field of its own, as its JSON; and the keys documents are kept
under, quoted so that no id can pose as another. Pure."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from gateway.context.types import BASIC_SCOPE, LATEST_TIME, Fact

FACT_FIELD = "f:"  # a facts document holds each fact in a field of its own, by id


def facts_in(doc: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The facts a stored facts document holds, oldest first (an earlier version's
    `facts` list, then the fields; a field wins over a listed fact with its id)."""
    if not doc:
        return []
    found = {f["id"]: f for f in doc.get("facts") or () if isinstance(f, dict) and "id" in f}
    found.update(
        {k.removeprefix(FACT_FIELD): v for k, v in doc.items() if k.startswith(FACT_FIELD)}
    )
    return sorted(found.values(), key=lambda f: (f.get("created_at") or 0.0, str(f["id"])))


def fact_changes(facts: Sequence[Fact], before: Sequence[Fact]) -> tuple[dict[str, Any], list[str]]:
    """The fields to write and to drop for a facts document read as `before` to hold
    `facts`: only the facts that changed (a write is O(what changed), not O(the
    customer's facts)). An earlier version's `facts` list is for the caller to drop."""
    read = {f.id: f for f in before}
    changed = {FACT_FIELD + f.id: fact_to_json(f) for f in facts if read.get(f.id) != f}
    ids = {f.id for f in facts}
    return changed, [FACT_FIELD + f.id for f in before if f.id not in ids]


def fact_to_json(fact: Fact) -> dict[str, Any]:
    # Field by field: dataclasses.asdict deep-copies, and this runs per fact per save.
    doc = {name: getattr(fact, name) for name in _FACT_NAMES}
    doc["tags"] = list(fact.tags)
    return doc


_FACT_NAMES = tuple(f.name for f in dataclasses.fields(Fact))


def fact_from_json(doc: dict[str, Any]) -> Fact:
    names = {f.name for f in dataclasses.fields(Fact)}
    values = {k: v for k, v in doc.items() if k in names}
    values["tags"] = tuple(values.get("tags") or ())
    values["said_again_at"] = _time_or_none(values.get("said_again_at"))
    values["stated_unverified"] = _stated_unverified(doc)
    heard_in = values.get("heard_in")
    values["heard_in"] = heard_in if isinstance(heard_in, str) else ""
    return Fact(**values)


def _stated_unverified(doc: dict[str, Any]) -> bool:
    """Stored by a version that did not record who stated a fact: a scoped fact heard in
    turns may have been stated by anyone, an impostor too, so it is taken as stated
    unverified (a caller within the scope stating it again, or the app putting it,
    makes it verified). The app's facts are the app's."""
    stated = doc.get("stated_unverified")
    if isinstance(stated, bool):
        return stated
    return doc.get("extracted") is True and doc.get("scope", BASIC_SCOPE) != BASIC_SCOPE


def _time_or_none(value: Any) -> float | None:
    """A stored time as a number of seconds, or None when it cannot be one (a damaged
    document's "2024-01-01" would fail every turn that compares it; 1e300 would pin the
    fact for ever)."""
    if type(value) not in (int, float) or not 0 <= value <= LATEST_TIME:
        return None
    return float(value)


def facts_key(customer: str | None, conversation: str | None) -> str | None:
    """Where a conversation's facts live: its customer's, else its own (only when the app
    named the conversation), else nowhere. Ids are quoted: no id can pose as another."""
    if customer:
        return customer_facts_key(customer)
    if conversation:
        return conversation_facts_key(conversation)
    return None


CONVERSATION_FACTS = "conversation:"


def conversation_facts_key(conversation: str) -> str:
    return CONVERSATION_FACTS + quote(conversation, safe="")


def customer_facts_key(customer: str) -> str:
    return "customer:" + quote(customer, safe="")


def customer_key(customer: str) -> str:
    return quote(customer, safe="")
