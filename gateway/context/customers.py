"""Everything held about one customer of a tenant: what an erasure removes and an export
returns (`DELETE /v1/customers/{id}`, `GET /v1/customers/{id}/export`).

Held about a customer: their facts document, their episode index (one entry per
conversation that named them, with its card), each of those conversations' records
(summary, cursor, loop state) and the facts of a conversation kept under its own id,
ledger rows naming them, and their spend counters. An erasure deletes the documents and
gives the ledger rows and counters a random pseudonym (`erased-` and 16 hex digits): the
costs stay booked, to no one (the reservations of calls in flight stay under the id,
where those calls book, so they count against its ceilings until they end). The
pseudonym is not derived from the id, so it cannot be matched back to it.
"""

from __future__ import annotations

import time
from typing import Any

from gateway.context.conversation_record import ConversationRecord
from gateway.context.conversations import (
    CONVERSATION,
    EPISODES,
    ConversationStore,
    reused_by_another,
)
from gateway.context.fact_docs import (
    conversation_facts_key,
    customer_facts_key,
    customer_key,
    facts_in,
)
from gateway.context.facts_documents import FACTS
from gateway.store.base import Store, erased_customer

LEDGER_ROWS = 100_000  # an export's ledger rows, oldest first


def _listed(index: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of an episode index that name a conversation."""
    return [entry for entry in index if entry.get("conversation")]


async def _theirs(
    store: Store, tenant: str, customer: str, index: list[dict[str, Any]]
) -> list[tuple[str, dict[str, Any] | None]]:
    """The listed conversations that are still the customer's, with their records (None:
    gone). An id the app reused once the record expired, for another customer or for
    none, is listed in the first one's index still, but it holds another's conversation
    now (`reused_by_another`): that one is neither exported nor erased with them."""
    entries = _listed(index)
    ids = [str(e["conversation"]) for e in entries]
    records = await store.get_docs(tenant, [(CONVERSATION, c) for c in ids])
    return [
        (c, r)
        for c, e, r in zip(ids, entries, records, strict=True)
        if not reused_by_another(e, r, customer)
    ]


async def documents(
    store: Store, conversations: ConversationStore, tenant: str, customer: str
) -> list[tuple[str, str]]:
    """Every (kind, key) document that holds something of the customer."""
    found = [(FACTS, customer_facts_key(customer)), (EPISODES, customer_key(customer))]
    index = await conversations.episode_index(tenant, customer)
    for conversation, _ in await _theirs(store, tenant, customer, index):
        found += [(CONVERSATION, conversation), (FACTS, conversation_facts_key(conversation))]
    return found


async def erase(
    store: Store, conversations: ConversationStore, tenant: str, customer: str
) -> dict[str, Any]:
    alias = erased_customer()
    # First, before the index is read: a write for the customer that the erasure misses
    # (a conversation listed after the read, a card written after the delete) finds the
    # mark once written, and takes itself back (ConversationStore.claim, forget).
    await conversations.mark_erased(tenant, customer, time.time())
    wanted = await documents(store, conversations, tenant, customer)
    erased = await store.erase_customer(tenant, customer, alias, wanted)
    return {
        "customer": customer,
        # Nothing held under this id (a typo, another tenant's customer): say so.
        "found": bool(erased.documents or erased.ledger_rows or erased.budgets),
        "documents_deleted": erased.documents,
        "conversations": sum(kind == CONVERSATION for kind, _ in wanted),
        "ledger_rows_pseudonymized": erased.ledger_rows,
        "budgets_pseudonymized": erased.budgets,
        "pseudonym": alias,
        # False: a reader held SQLite's write-ahead log; its old frames go at its next reset
        "scrubbed": erased.scrubbed,
    }


async def export(
    store: Store, conversations: ConversationStore, tenant: str, customer: str
) -> dict[str, Any]:
    """The customer's documents as stored, and the ledger rows naming them."""
    index = await conversations.episode_index(tenant, customer)
    theirs = await _theirs(store, tenant, customer, index)
    ids = [c for c, _ in theirs]
    wanted = [
        (FACTS, customer_facts_key(customer)),
        *((FACTS, conversation_facts_key(c)) for c in ids),
    ]
    docs = await store.get_docs(tenant, wanted)
    ledger = [r.to_json() for r in await store.customer_ledger(tenant, customer, LEDGER_ROWS)]
    return {
        "customer": customer,
        "facts": facts_in(docs[0]),
        "episodes": index,
        "conversations": [
            ConversationRecord.from_fields(r).to_json() for _, r in theirs if r is not None
        ],
        "conversation_facts": {c: facts_in(d) for c, d in zip(ids, docs[1:], strict=True) if d},
        "ledger": ledger,
    }
