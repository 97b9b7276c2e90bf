"""A customer's (or a conversation's) facts document in the store: what the app reads,
puts and deletes (`/v1/customers/{id}/facts`), what a turn reads of it (within
`limits.max_customer_facts`: gateway.context.facts_limit) and adds to it. How a fact
is kept there: gateway.context.fact_docs."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from gateway.context.fact_docs import (
    CONVERSATION_FACTS,
    FACT_FIELD,
    customer_facts_key,
    fact_changes,
    fact_from_json,
    fact_to_json,
    facts_in,
)
from gateway.context.facts_limit import FactsLimit, over_limit, within_limit
from gateway.context.people import current_facts, with_said_again
from gateway.context.retention import Retention
from gateway.context.types import Fact
from gateway.context.unverified import with_verified
from gateway.errors import ChangedMeanwhile, InvalidRequest
from gateway.store import Store
from gateway.throttled_log import warn_throttled

FACTS = "facts"  # the documents' kind
PUT_TRIES = 16  # the app's facts: PUTs of one customer at once, read and checked again
PUT_PAUSE_S = 0.05  # the longest random pause between two tries
T = TypeVar("T")
# A change of a facts document: the fields to set (None: nothing to write), to drop,
# and what the change answers.
_Change = tuple[dict[str, Any] | None, list[str], T]

log = logging.getLogger("gateway.context.facts_documents")


class FactsDocuments:
    """Typed access to the facts documents, with the retention of each plan."""

    def __init__(
        self,
        store: Store,
        retention: Retention | None = None,
        facts_limit: FactsLimit | None = None,
    ) -> None:
        self._store = store
        self.retention = retention or Retention()
        # What the app may put in a customer's facts document, and what a turn reads of it.
        self.facts_limit = facts_limit or FactsLimit()

    async def facts(self, tenant: str, key: str) -> list[Fact]:
        """Every fact of the document: what the app reads, edits and deletes."""
        doc = await self._store.get_doc(FACTS, tenant, key)
        return await self._decoded(tenant, doc, bounded=False)

    async def facts_for_turn(self, tenant: str, key: str) -> list[Fact]:
        """The facts a turn reads: all of a document within `facts_limit`, the limit's
        worth of one stored past it (gateway.context.facts_limit.within_limit). A turn
        writes back only what it changed of these: the rest stays stored as it is."""
        doc = await self._store.get_doc(FACTS, tenant, key)
        return await self._decoded(tenant, doc, bounded=True)

    async def customer_facts(self, tenant: str, customer: str) -> list[Fact]:
        """The customer's facts as a turn reads them (`facts_for_turn`)."""
        return await self.facts_for_turn(tenant, customer_facts_key(customer))

    async def _decoded(
        self, tenant: str, doc: dict[str, Any] | None, *, bounded: bool
    ) -> list[Fact]:
        """A stored facts document as facts, oldest first. One holding more facts than a
        document within the limit can (the app's and those heard in turns, up to
        `facts_limit.facts` each: stored before the limit existed) is sorted and decoded
        in a worker thread: tens of thousands of them took the event loop a second."""
        if doc and len(doc) > 2 * self.facts_limit.facts:
            facts, held = await asyncio.to_thread(self._facts_of, doc, bounded)
        else:
            facts, held = self._facts_of(doc, bounded)
        if held > len(facts):
            warn_throttled(
                log,
                "a facts document of tenant %r holds %d facts, past limits.max_customer_facts"
                " or _bytes (stored before the limit): a turn reads %d of them",
                tenant,
                held,
                len(facts),
            )
        return facts

    def _facts_of(self, doc: dict[str, Any] | None, bounded: bool) -> tuple[list[Fact], int]:
        """(the facts read, how many the document holds)."""
        held = facts_in(doc)
        raw = within_limit(held, self.facts_limit) if bounded else held
        return [fact_from_json(f) for f in raw], len(held)

    async def save_facts(
        self,
        tenant: str,
        key: str,
        facts: list[Fact],
        plan: str = "",
        before: list[Fact] | None = None,
    ) -> None:
        """`facts` become the document: only what differs from `before` (the facts read)
        is written, a field per fact, so two turns that learn facts at once keep both."""
        ttl = self._facts_ttl(key, plan)
        if before is None:
            new = {FACT_FIELD + f.id: fact_to_json(f) for f in facts}
            await self._store.put_doc(FACTS, tenant, key, new, ttl)
            return
        changed, removed = fact_changes(facts, before)
        if not changed and not removed and ttl is None:
            return  # nothing to write, no expiry to restart
        await self._store.patch_doc(FACTS, tenant, key, changed, [*removed, "facts"], ttl)

    async def put_app_facts(self, tenant: str, key: str, new: list[Fact], plan: str) -> list[Fact]:
        """The document with the app's `new` facts added (replacing theirs by id), or
        400 `customer_facts_limit`, writing nothing, when the app's facts would then
        pass `facts_limit`. Written only if no other PUT wrote since it was read (else
        read and checked again): PUTs at once cannot pass the limit together."""

        async def added(doc: dict[str, Any] | None) -> _Change[list[Fact]]:
            before = await self._decoded(tenant, doc, bounded=False)
            had = {f.id: f for f in before}
            put = {f.id: _as_before(f, had.get(f.id)) for f in new}
            facts = list((had | put).values())
            app = [f for f in facts if not f.extracted]  # heard in turns: bounded by kind
            why = over_limit(len(app), map(fact_to_json, app), self.facts_limit)
            if why is not None:
                raise InvalidRequest(
                    f"The customer's facts were not changed: {why}. Delete facts first "
                    "(DELETE /v1/customers/{id}/facts?id=...) or raise the limit in "
                    "config.yaml.",
                    param="facts",
                    code="customer_facts_limit",
                )
            changed, removed = fact_changes(facts, before)
            return changed, [*removed, "facts"], facts

        return await self._swapped(tenant, key, plan, added)

    def _facts_ttl(self, key: str, plan: str) -> float | None:
        """A customer's facts are kept per the plan's `facts_days` (by default until
        deleted); a conversation's own facts as long as the conversation."""
        kept = self.retention.of(plan)
        return kept.conversation_s if key.startswith(CONVERSATION_FACTS) else kept.facts_s

    async def delete_facts(self, tenant: str, key: str, plan: str = "") -> int:
        """Every fact of the document gone (how many there were). The document itself
        stays, holding its version alone: deleted, it would start again at version 0,
        and a PUT that read it before could then pass its limit check on what it read,
        once other PUTs brought the version back to the one it saw."""

        async def emptied(doc: dict[str, Any] | None) -> _Change[int]:
            if not doc:
                return None, [], 0
            return {}, [k for k in doc if k != "version"], len(facts_in(doc))

        return await self._swapped(tenant, key, plan, emptied)

    async def _swapped(
        self,
        tenant: str,
        key: str,
        plan: str,
        change: Callable[[dict[str, Any] | None], Awaitable[_Change[T]]],
    ) -> T:
        """`change` of the document as read (fields to set, to drop, and its result;
        None to set: nothing to write), written only if no other write of the app's
        came first (the document's version), else read and changed again: 409
        `customer_facts_busy` after PUT_TRIES."""
        for _ in range(PUT_TRIES):
            doc = await self._store.get_doc(FACTS, tenant, key)
            changed, removed, result = await change(doc)
            if changed is None:
                return result
            version, ttl = int((doc or {}).get("version") or 0), self._facts_ttl(key, plan)
            if await self._store.swap_doc(FACTS, tenant, key, changed, removed, ttl, version):
                return result
            await asyncio.sleep(random.uniform(0, PUT_PAUSE_S))  # the writers fall apart
        raise ChangedMeanwhile(
            "The customer's facts were being changed by other requests at the same time: "
            "nothing was changed; send it again.",
            code="customer_facts_busy",
        )

    async def add_facts(
        self,
        tenant: str,
        key: str,
        new: list[Fact],
        plan: str = "",
        renewed: Sequence[Fact] = (),
        verified: Sequence[Fact] = (),
    ) -> int:
        """Merge facts by id; a fact already known (perhaps confirmed) is kept as it is,
        but for when it was last said (`renewed`: gateway.context.people.said_again) and
        whether an unverified caller stated it (`verified`: gateway.context.unverified).
        What a newer fact supersedes (a corrected city, a fifth order number) leaves the
        document: it stays small (gateway.context.people.current_facts)."""
        if not new and not renewed and not verified:
            return 0
        read = await self.facts_for_turn(tenant, key)
        known = with_verified(with_said_again(read, renewed), verified)
        ids = {f.id for f in known}
        added = [f for f in new if f.id not in ids]
        if added or known != read:
            await self.save_facts(tenant, key, current_facts(known + added), plan, read)
        return len(added)


def _as_before(put: Fact, had: Fact | None) -> Fact:
    """An app's fact put again as it stands (an app syncing its CRM profile before each
    turn): its stored times kept. A confirmed fact put "now" is progress for the loop
    detector and the turn ceiling (builder._confirmed_since); one that did not change
    is none, or an app that syncs would turn both off."""
    if had is None or had.extracted:
        return put
    same = (put.text, put.value, put.tags, put.scope, put.confirmed, put.stated_unverified) == (
        had.text,
        had.value,
        had.tags,
        had.scope,
        had.confirmed,
        had.stated_unverified,
    )
    if not same:
        return put
    return dataclasses.replace(put, created_at=had.created_at, confirmed_at=had.confirmed_at)
