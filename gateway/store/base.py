"""The `Store` Protocol every backend implements, and what `/healthz` reads of it."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gateway.store.records import SpendRow, UsageRecord


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """What `/healthz` reports: `ok`, or what is wrong (`unreachable`, `locked`,
    `disk_full`, `writer_wedged`, `slow`) and a line for the operator."""

    state: str = "ok"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.state == "ok"


@dataclass(frozen=True, slots=True)
class Erased:
    """What an erasure changed."""

    documents: int  # deleted
    ledger_rows: int  # now under the pseudonym
    budgets: int  # spend counters (and their reservations) renamed to the pseudonym
    # False when no copy of the deleted data could be ruled out yet (SQLite: a reader
    # held the write-ahead log; its old frames go at a later checkpoint. Redis: a file of
    # the server may hold it. The PostgreSQL ledger: VACUUM does not zero freed space)
    scrubbed: bool = True


# A conversation id the gateway made (gateway.context.conversation_record's
# FINGERPRINT_PREFIX): a digest of the tenant, the customer id and the conversation's
# opening, which whoever guesses the opening (the app's system prompt, a "Hi") recomputes
# for each candidate customer id. An erasure gives each such id of the customer's ledger
# rows a random one, the same for each row of one conversation (`erased_conversation`).
FINGERPRINT_PREFIX = "fp-"
ERASED_CONVERSATION_PREFIX = "fp-erased-"


# Customers erased in the last ERASED_S, each a document of this kind under a digest of
# the tenant and the id (not the id), holding when (`at`): a turn in flight at the
# erasure does not write its record back (gateway.context.conversations), and a booking
# written late (held through an outage, spilled, journaled at a kill) is written under a
# pseudonym (gateway.ledger.booking).
ERASED_DOC = "erased"
ERASED_S = 86400.0


def erased_key(tenant: str, customer: str) -> str:
    return hashlib.blake2b(f"{tenant}\x1f{customer}".encode(), digest_size=16).hexdigest()


async def erased_at(store: Store, tenant: str, customer: str) -> float | None:
    """When the customer was last erased, within ERASED_S (None: not erased)."""
    doc = await store.get_doc(ERASED_DOC, tenant, erased_key(tenant, customer))
    if doc is None:
        return None
    at = doc.get("at")
    return float(at) if isinstance(at, int | float) else 0.0


def erased_customer() -> str:
    """The pseudonym an erasure gives a customer's ledger rows and spend counters."""
    return "erased-" + secrets.token_hex(8)


def erased_conversation() -> str:
    """A new id for one fingerprinted conversation of an erased customer's ledger rows:
    random, so nothing of the customer can be recomputed from it."""
    return ERASED_CONVERSATION_PREFIX + secrets.token_hex(12)


@dataclass(frozen=True, slots=True)
class RateUse:
    """What `Store.count_rate` saw (gateway.spend.rate_limits reads it): whether the call
    was admitted, the store's clock (ms) and the bucket the amounts went to, and per
    counter its (bucket, amount) pairs still in the span, this call's included."""

    admitted: bool
    now_ms: int
    bucket: int
    used: tuple[tuple[tuple[int, int], ...], ...]


class Store(Protocol):
    """Durable bookings. Every method raises `StoreUnavailable` when the backend is down
    or does not answer within its bounded wait."""

    async def book_many(self, records: Sequence[UsageRecord]) -> list[bool]:
        """Append each record to the ledger and add it to its tenant-month counters,
        each atomically. Idempotent on `record.id`: False for a record already booked.
        Raises `StoreRejected` when a record cannot be stored at all (retrying is futile);
        the caller then books the batch's records one by one to find it."""

    async def spend(self, period: str | None) -> list[SpendRow]:
        """Counters per tenant for a 'YYYY-MM' period, or all periods summed when None."""

    async def ledger(
        self, period: str, tenant: str | None = None, limit: int = 1000
    ) -> list[UsageRecord]:
        """Ledger records of a period, oldest first."""

    async def ledger_page(
        self, tenant: str | None, period: str | None, before: str | None, limit: int
    ) -> tuple[list[UsageRecord], str | None]:
        """Ledger records newest first, from the cursor `before` a previous page returned
        (None: the newest), and the next page's cursor (None after the last). Raises
        ValueError for a cursor no page returned."""

    async def reserve(
        self, reservation: str, budgets: Sequence[tuple[str, int]], amount: int, ttl_s: float
    ) -> str | None:
        """Atomically: if `amount` fits under every (budget key, ceiling) counting what is
        spent and what live reservations hold, reserve it against all of them for `ttl_s`
        and return None; else reserve nothing and return the first budget it would pass.
        `book_many` settles a reservation named by `UsageRecord.reservation`."""

    async def release(self, reservation: str, budgets: Sequence[str]) -> None:
        """Drop a reservation that will never be settled."""

    async def renew(self, reservation: str, budgets: Sequence[str], ttl_s: float) -> bool:
        """Push a live reservation's expiry to `ttl_s` from now (its call still runs).
        False when it is no longer held (settled, released or already expired)."""

    async def budgets(self, keys: Sequence[str]) -> dict[str, tuple[int, int]]:
        """(spent, held by live reservations) per budget key, in 1e-10 USD units."""

    async def count_rate(
        self,
        tenant: str,
        counters: Sequence[tuple[str, int, int]],
        bucket_ms: int,
        span: int,
        settle_bucket: int | None = None,
    ) -> RateUse:
        """Rate-limit counters of one tenant, each (name, limit, amount), counted in
        buckets of `bucket_ms` (bucket = store's now // bucket_ms); a counter's use is the
        sum of the current bucket and the `span` before it. Atomically: when every
        counter's use plus its amount stays within its limit, add every amount to the
        current bucket and admit; else add nothing. With `settle_bucket`: add the amounts
        to that bucket without a check (a reply's output tokens), unless it has left the
        span."""

    # Documents: JSON objects (conversation state, a customer's facts, ...) by tenant,
    # kind and key, stored field by field: `patch_doc` writes only the top-level fields
    # that changed. Each document may expire `ttl_s` after its last write.

    async def get_doc(self, kind: str, tenant: str, key: str) -> dict[str, Any] | None:
        """The document (its top-level fields), or None when absent or expired."""

    async def get_docs(
        self, tenant: str, wanted: Sequence[tuple[str, str]]
    ) -> list[dict[str, Any] | None]:
        """Several (kind, key) documents in one round trip, in the order asked."""

    async def put_doc(
        self, kind: str, tenant: str, key: str, doc: dict[str, Any], ttl_s: float | None = None
    ) -> None:
        """Replace the whole document; it expires `ttl_s` from now (None: never)."""

    async def patch_doc(
        self,
        kind: str,
        tenant: str,
        key: str,
        changed: Mapping[str, Any],
        removed: Sequence[str] = (),
        ttl_s: float | None = None,
    ) -> None:
        """Set the `changed` fields and drop the `removed` ones, in one atomic step,
        creating the document when absent; the other fields are not rewritten. The
        expiry restarts as in `put_doc`."""

    async def swap_doc(
        self,
        kind: str,
        tenant: str,
        key: str,
        changed: Mapping[str, Any],
        removed: Sequence[str],
        ttl_s: float | None,
        version: int,
    ) -> bool:
        """`patch_doc` if the document's `version` field still equals `version` (an
        absent or expired document is version 0), setting it to `version` + 1, in one
        atomic step; False, writing nothing, when another write came first."""

    async def renew_doc(self, kind: str, tenant: str, key: str, ttl_s: float) -> bool:
        """Restart the expiry of a live document, writing nothing else: it expires
        `ttl_s` from now. False, writing nothing, when it is absent or expired."""

    async def delete_doc(self, kind: str, tenant: str, key: str) -> bool: ...

    async def list_docs(self, kind: str, tenant: str, prefix: str) -> list[dict[str, Any]]:
        """Every live document of the kind whose key starts with `prefix`, in key order.
        Reads the tenant's every document of the kind (Redis: a SCAN of the keyspace):
        for offline reports, never on a request's path."""

    async def customer_ledger(self, tenant: str, customer: str, limit: int) -> list[UsageRecord]:
        """The tenant's ledger rows naming the customer, oldest first, at most `limit`."""

    async def erase_customer(
        self, tenant: str, customer: str, alias: str, docs: Sequence[tuple[str, str]]
    ) -> Erased:
        """Privacy erasure, in one step where the backend allows: delete the (kind, key)
        documents, give the customer's ledger rows and spend counters the pseudonym
        `alias` (their costs stay) and each conversation id the gateway made from the
        customer's id (FINGERPRINT_PREFIX) a random one, and leave no copy of what was
        deleted in the raw store (SQLite: deleted pages zeroed, the WAL truncated)."""

    async def ping(self) -> None: ...

    async def health(self) -> StoreHealth:
        """What is wrong, if anything; never raises, answers within about a second."""

    async def close(self) -> None: ...
