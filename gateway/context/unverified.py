"""Facts an unverified caller stated: heard in a turn whose caller did not hold the
fact's scope (an impostor calling as the customer: "my new email is x@evil.com"). Such a
fact is the customer's to see in the conversation that stated it, like the turn itself,
but it is never verified data for another: a caller within its scope sees it marked
"stated by an unverified caller" (gateway.context.prompts), the earlier-episode cards
withhold its value (gateway.context.episodes), and it displaces no fact of its kind a
caller within the scope stated (gateway.context.people.current_facts). A caller within
the scope stating the value itself makes it verified. Pure."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from gateway.context.types import BASIC_SCOPE, Fact


def stated_by(facts: Sequence[Fact], scopes: Sequence[str], conversation: str) -> list[Fact]:
    """Facts heard in a turn of `conversation` whose caller holds `scopes`: each marked
    as heard there, and each above the scopes marked as stated unverified."""
    held = set(scopes)
    return [
        dataclasses.replace(f, heard_in=conversation, stated_unverified=f.scope not in held)
        for f in facts
    ]


def verified_again(known: Sequence[Fact], heard: Sequence[Fact]) -> list[Fact]:
    """The facts of `known` an unverified caller stated that `heard` (a turn's facts,
    `stated_by` its caller) states again from within their scope: verified now."""
    said = {f.id for f in heard if not f.stated_unverified}
    return [
        dataclasses.replace(f, stated_unverified=False)
        for f in known
        if f.stated_unverified and f.id in said
    ]


def with_verified(facts: Sequence[Fact], verified: Sequence[Fact]) -> list[Fact]:
    """`facts`, each that `verified` (`verified_again`) names no longer marked: only the
    mark is taken, the rest as `facts` has it (the app may have edited it since)."""
    ids = {f.id for f in verified}
    return [dataclasses.replace(f, stated_unverified=False) if f.id in ids else f for f in facts]


def as_stored(heard: Sequence[Fact], stored: Sequence[Fact]) -> list[Fact]:
    """Facts read again from a conversation's turns (its card), marked as the customer's
    facts document has them: who stated a turn is not kept with it, so a scoped value the
    document does not hold (or holds marked) counts as stated unverified."""
    verified = {f.id for f in stored if not f.stated_unverified}
    return [
        f
        if f.scope == BASIC_SCOPE or f.id in verified
        else dataclasses.replace(f, stated_unverified=True)
        for f in heard
    ]
