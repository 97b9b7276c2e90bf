"""What the gateway keeps per conversation and per customer, namespaced by tenant (the
record itself: gateway.context.conversation_record).

Documents in the store (`Store.get_doc` / `patch_doc`), each with the expiry of
`policies/retention.yaml` (gateway.context.retention):
  conversation / {conversation id}    ConversationRecord, field by field: each verbatim
                                      message after the summary is a field of its own
                                      (`m:{place}`), so a turn writes what it changed
  episodes     / {customer, quoted}   the customer's index: one field per conversation
                                      (its channel and card), the newest N kept
  facts        / customer:{quoted id} the customer's durable facts (or conversation:{id}),
                                      a field per fact (gateway.context.fact_docs), read
                                      and written by gateway.context.facts_documents
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson

from gateway import offload
from gateway.context.conversation_record import RECORD_FIELDS, ConversationRecord, is_anonymous
from gateway.context.fact_docs import conversation_facts_key, customer_key, fact_to_json
from gateway.context.facts_documents import FACTS, FactsDocuments
from gateway.context.facts_limit import FactsLimit
from gateway.context.record_merge import merge
from gateway.context.retention import Retention
from gateway.context.types import Episode, Fact
from gateway.errors import Conflict, StoreUnavailable
from gateway.store import Store
from gateway.store.base import ERASED_DOC, ERASED_S, erased_at, erased_key

T = TypeVar("T")

CONVERSATION = "conversation"
EPISODES = "episodes"


log = logging.getLogger("gateway.context.conversations")
# A write that keeps losing to others gives up (the turn is still answered) once it has
# lost SAVE_TRIES times *and* tried for SAVE_PATIENCE_S: on a starved host (every write's
# read-merge-write window long) a steady stream of small writes (an app posting events)
# can beat a turn's save a dozen times in a row, and a turn lost is a turn not counted.
SAVE_TRIES = 16
SAVE_PATIENCE_S = 2.0  # the answer waits on the turn's save (a JSON body, a stream's end)
_SAVE_PAUSE_S = 0.05  # the longest random pause between two tries
# How far one replica's clock may trail another's: a customer's episode index is restarted
# this long before the conversation's record could outlive it (`ConversationRecord.index_until`).
CLOCK_SKEW_S = 60.0


class _Saving:
    """One conversation's saves in this process: one at a time, and what the last wrote."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.version = 0
        self.stored: dict[str, bytes] | None = None


class ConversationStore(FactsDocuments):
    """Typed access to the documents above, with the retention of each plan."""

    def __init__(
        self,
        store: Store,
        retention: Retention | None = None,
        facts_limit: FactsLimit | None = None,
    ) -> None:
        super().__init__(store, retention, facts_limit)
        # One save at a time per conversation in this process: concurrent turns of one
        # conversation then lose at most one race each here (to another replica's write
        # only), instead of retrying against each other.
        self._saving: weakref.WeakValueDictionary[tuple[str, str], _Saving] = (
            weakref.WeakValueDictionary()
        )

    async def save(self, record: ConversationRecord) -> int:
        """`_save` under this process's lock of the conversation. A turn that waited
        there for another turn's save of this conversation knows what that one wrote:
        it merges into it at once, instead of losing a write to it and reading it back."""
        key = (record.tenant, record.id)
        saving = self._saving.get(key)
        if saving is None:
            saving = self._saving[key] = _Saving()
        async with saving.lock:
            stored = saving.stored
            if stored is not None and saving.version > record.version and not record.replacing:
                theirs = {k: offload.loads(v) for k, v in stored.items()}
                self._rebase(record, {**theirs, "version": saving.version})
            await self._keep_index(record)
            own = _own_facts_key(record)
            if own is None or record.facts_held is False:  # False: the turn read none
                lost = await self._save(record)
            else:  # its facts expire with it: restarted beside the record's write
                ttl = self.retention.of(record.plan).conversation_s
                renewing = self._store.renew_doc(FACTS, record.tenant, own, ttl)
                lost, _ = await asyncio.gather(self._save(record), renewing)
            saving.version, saving.stored = record.version, record.stored
            return lost

    async def _keep_index(self, record: ConversationRecord) -> None:
        """The customer's episode index outlives this record (which this save keeps for
        `conversation_s`): an erasure or an export finds the record through it. Its expiry
        is restarted only when it could come first: about once per `episodes_s` less
        `conversation_s` of the conversation's life. An index found gone lists the
        conversation again, unless the customer was just erased."""
        if not record.customer or not record.version:
            return  # not a customer's, or its first save: the turn's end lists it (register)
        kept = self.retention.of(record.plan)
        now = time.time()
        # Moved to another plan: its index_until was counted with the old plan's retention.
        moved = record.stored.get("plan") != orjson.dumps(record.plan)
        if not moved and record.index_until - CLOCK_SKEW_S >= now + kept.conversation_s:
            return
        key = customer_key(record.customer)
        if await self._store.renew_doc(EPISODES, record.tenant, key, kept.episodes_s):
            record.index_until = now + kept.episodes_s
        elif not await self.erased(record):
            await self.register(record)

    async def load(self, tenant: str, conversation: str) -> ConversationRecord | None:
        doc = await self._store.get_doc(CONVERSATION, tenant, conversation)
        return None if doc is None else ConversationRecord.from_fields(doc)

    async def _save(self, record: ConversationRecord) -> int:
        """Write the fields that changed since the record was read or last saved (a turn:
        its counters, its new messages, the summary when it moved), if nobody wrote the
        record meanwhile (its version); else read what was written, merge this write
        into it (gateway.context.record_merge) and try again, until it has lost
        SAVE_TRIES times and SAVE_PATIENCE_S have passed. The conversation expires once
        idle for its plan's retention. Returns the tries that lost to another write."""
        ttl = self.retention.of(record.plan).conversation_s
        give_up = time.monotonic() + SAVE_PATIENCE_S
        lost = 0
        while lost < SAVE_TRIES or time.monotonic() < give_up:
            fields = record.to_fields()
            dumped = {k: orjson.dumps(v) for k, v in fields.items()}
            changed = {k: fields[k] for k, b in dumped.items() if record.stored.get(k) != b}
            removed = [k for k in record.stored if k not in dumped and k != "version"]
            if await self._store.swap_doc(
                CONVERSATION, record.tenant, record.id, changed, removed, ttl, record.version
            ):
                record.version += 1
                record.stored = dumped
                record.replacing = False
                return lost
            if lost:  # a crowd of writers: let the others through, at random
                await asyncio.sleep(random.uniform(0, min(_SAVE_PAUSE_S, 0.002 * lost)))
            lost += 1
            theirs = await self._store.get_doc(CONVERSATION, record.tenant, record.id) or {}
            if not theirs and record.version and await self.erased(record):
                log.info("a turn ended after its customer was erased: its record not saved")
                return lost
            if not theirs or record.replacing:
                # Gone meanwhile (expired, erased, forgotten): written whole, from version 0.
                # Or this record replaces another user's (anonymous): whole again.
                record.version = int(theirs.get("version") or 0)
                record.stored = {k: orjson.dumps(v) for k, v in theirs.items() if k != "version"}
                continue
            self._rebase(record, theirs)
        raise StoreUnavailable(
            f"conversation {record.id!r} changed under {lost} writes in a row; not saved"
        )

    @staticmethod
    def _rebase(record: ConversationRecord, theirs: dict[str, Any]) -> None:
        """This record's changes merged into `theirs` (a newer version, as stored). Never
        into another customer's: a turn that began the conversation for one customer
        while another's turn began it too is refused (409), not merged."""
        owner = theirs.get("customer")
        if record.customer and owner and owner != record.customer:
            raise Conflict(
                "This conversation id was just started for another customer: send a new "
                "X-Conversation-Id for this customer's conversation.",
                code="conversation_customer_mismatch",
            )
        merged = merge(record.stored, record.to_fields(), theirs)
        fresh = ConversationRecord.from_fields({**merged, "version": theirs.get("version", 0)})
        fresh.stored = {k: orjson.dumps(v) for k, v in theirs.items() if k != "version"}
        fresh.degraded = record.degraded
        for f in RECORD_FIELDS:
            setattr(record, f.name, getattr(fresh, f.name))
        record.stored = fresh.stored

    async def mark_erased(self, tenant: str, customer: str, now: float) -> None:
        """Remember for a day that this customer was erased (by a digest of the id, not
        the id), so a turn in flight at the erasure does not write its record back."""
        await self._store.put_doc(
            ERASED_DOC, tenant, erased_key(tenant, customer), {"at": now}, ERASED_S
        )

    async def erased_at(self, tenant: str, customer: str) -> float | None:
        """When the customer was last erased, within ERASED_S (None: not erased)."""
        return await erased_at(self._store, tenant, customer)

    async def erased(self, record: ConversationRecord) -> bool:
        """Whether the record's customer was erased since its turn began (since it was
        read: `erasure_seen`, an erasure known then, is its customer's past, not this
        turn's: a customer back after an erasure starts anew)."""
        if not record.customer:
            return False
        at = await self.erased_at(record.tenant, record.customer)
        return at is not None and at != record.erasure_seen

    async def claim(self, record: ConversationRecord) -> None:
        """A new conversation saved for its customer and listed in their index before
        its first turn is forwarded, so an erasure or an export finds it from then on
        (also when that turn fails). One whose customer was erased meanwhile is
        forgotten again: the erasure may have read the index before it was listed."""
        await self.save(record)
        await self.register(record)
        if await self.erased(record):
            await self.forget(record)

    async def forget(self, record: ConversationRecord) -> None:
        """A conversation written for a customer erased while its turn ran: its record
        and its entry in their index deleted (what the erasure would have deleted)."""
        await self._store.delete_doc(CONVERSATION, record.tenant, record.id)
        if record.customer:
            ttl = self.retention.of(record.plan).episodes_s
            await self._unlist(record.tenant, record.customer, record.id, ttl)

    async def _unlist(self, tenant: str, customer: str, conversation: str, ttl: float) -> None:
        """One conversation out of the customer's index; an index left empty deleted."""
        key = customer_key(customer)
        await self._store.patch_doc(EPISODES, tenant, key, {}, [conversation], ttl)
        if not await self._store.get_doc(EPISODES, tenant, key):
            await self._store.delete_doc(EPISODES, tenant, key)

    async def register(self, record: ConversationRecord) -> None:
        """List a conversation in its customer's episode index (its card made later). The
        index keeps the customer's conversations active last: one past the plan's
        `episodes_kept` forgets the one idle longest, with its record and the facts kept
        under its id, so what is held about a customer stays bounded and findable for an
        erasure. An id another caller reused since is unlisted, its record left alone."""
        if not record.customer:
            return
        kept = self.retention.of(record.plan)
        key = customer_key(record.customer)
        now = time.time()
        index = await self._store.get_doc(EPISODES, record.tenant, key) or {}
        others = [c for c in index if c != record.id]
        forgotten: list[str] = []
        strangers: list[str] = []  # ids reused by others since: unlisted, records kept
        if len(others) + 1 > kept.episodes:
            forgotten, strangers = await self._past_kept(record, index, others, kept.episodes)
        entry = {
            "conversation": record.id,
            "channel": record.channel,
            "summary": None,
            "summarized_at": 0.0,
            "at": record.started or record.last_seen,
        }
        gone = [*forgotten, *strangers]
        await self._store.patch_doc(
            EPISODES, record.tenant, key, {record.id: entry}, gone, kept.episodes_s
        )
        record.index_until = now + kept.episodes_s
        for conversation in forgotten:
            await self._store.delete_doc(CONVERSATION, record.tenant, conversation)
            await self._store.delete_doc(FACTS, record.tenant, conversation_facts_key(conversation))

    async def _past_kept(
        self,
        record: ConversationRecord,
        index: dict[str, Any],
        others: list[str],
        episodes: int,
    ) -> tuple[list[str], list[str]]:
        """(the customer's conversations to forget: those idle longest past `episodes`,
        the listed ids whose records are someone else's now: reused once they expired).
        By last activity, read from each record: an entry holds its conversation's start
        until its card is made, and its last turn then, which a customer back in that
        conversation moves on; a thread kept going for days outlives newer ones. (One read
        of the listed records, once per new conversation of a customer at the bound.)"""
        found = await self._store.get_docs(record.tenant, [(CONVERSATION, c) for c in others])
        records = dict(zip(others, found, strict=True))
        strangers = [
            c for c, r in records.items() if reused_by_another(index[c], r, record.customer)
        ]
        mine = sorted(
            (c for c in others if c not in strangers),
            key=lambda c: _active_at(index[c], records.get(c)),
        )
        return mine[: max(0, len(mine) + 1 - episodes)], strangers

    async def load_with_facts(
        self, tenant: str, conversation: str, facts_key_: str | None, customer: str | None = None
    ) -> tuple[ConversationRecord | None, list[Fact], list[dict[str, Any]] | None]:
        """The conversation, the facts a turn reads (`facts_for_turn`) and, when the turn
        names its `customer`, their `episode_index`, in one store round trip."""
        wanted = [(CONVERSATION, conversation)]
        if facts_key_ is not None:
            wanted.append((FACTS, facts_key_))
        if customer:
            wanted.append((EPISODES, customer_key(customer)))
        docs = await self._store.get_docs(tenant, wanted)
        conv = docs[0]
        facts = docs[1] if facts_key_ is not None else None
        index = _entries(docs[-1]) if customer else None
        record = None if conv is None else ConversationRecord.from_fields(conv)
        return record, await self._decoded(tenant, facts, bounded=True), index

    async def episode_index(self, tenant: str, customer: str) -> list[dict[str, Any]]:
        """The customer's conversations, oldest first."""
        return _entries(await self._store.get_doc(EPISODES, tenant, customer_key(customer)))

    async def save_episode(
        self, tenant: str, customer: str, episode: Episode, at: float, plan: str = ""
    ) -> None:
        entry = {
            "conversation": episode.conversation,
            "channel": episode.channel,
            "summary": episode.summary,
            "model_summary": episode.model_summary,
            "ended_at": episode.ended_at,
            "summarized_at": at,
            "at": episode.ended_at or at,  # its last turn: the index keeps the newest
            "private": [fact_to_json(f) for f in episode.private],
        }
        await self._list(tenant, customer, entry, plan)

    async def card_outdated(
        self, tenant: str, customer: str, entry: dict[str, Any], plan: str = ""
    ) -> None:
        """A listed conversation's card made before its latest turn (another conversation
        of the customer asked for it while this one went on): marked stale in its index
        entry, so a conversation that starts, or whose prompt cache went cold, makes it
        anew from the record as it is then, while one running on keeps showing it as it
        was (its cached prompt head unchanged). Made once, it stayed as it was for good."""
        await self._list(tenant, customer, {**entry, "stale": True}, plan)

    async def _list(self, tenant: str, customer: str, entry: dict[str, Any], plan: str) -> None:
        """`entry` written into the customer's index."""
        ttl = self.retention.of(plan).episodes_s
        key = customer_key(customer)
        conversation = entry["conversation"]
        await self._store.patch_doc(EPISODES, tenant, key, {conversation: entry}, (), ttl)
        # An entry written from a record read before the customer's erasure, after it:
        # its record is gone (the erasure marked before it deleted), so is its entry.
        if await self.erased_at(tenant, customer) is not None and await self._gone(
            tenant, conversation
        ):
            await self._unlist(tenant, customer, conversation, ttl)

    async def unless_erased(
        self,
        record: ConversationRecord,
        fkey: str,
        write: Callable[[], Awaitable[T]],
        look_first: bool = True,
    ) -> T | None:
        """A write of the customer's facts document by a turn (`write`'s result; None when
        not written): not made when the customer was erased since the turn began (when
        `look_first`: a write then taken back would leave its text in a SQLite log),
        taken back when the erasure ran while it was made (the erasure may have deleted
        the document before this wrote it)."""
        if look_first and await self.erased_with(record):
            return None
        done = await write()
        if await self.erased_with(record):
            await self.delete_facts(record.tenant, fkey, record.plan)
            return None
        return done

    async def erased_with(self, record: ConversationRecord) -> bool:
        """Whether the record's customer was erased since its turn began and took its
        conversation with them: what the turn writes after that is the erasure's to undo."""
        return await self.erased(record) and await self._gone(record.tenant, record.id)

    async def _gone(self, tenant: str, conversation: str) -> bool:
        return await self._store.get_doc(CONVERSATION, tenant, conversation) is None


def _entries(index: dict[str, Any] | None) -> list[dict[str, Any]]:
    """An episode index's entries, oldest first."""
    return sorted((index or {}).values(), key=_entry_at)


def _own_facts_key(record: ConversationRecord) -> str | None:
    """Where a conversation the app named without a customer keeps its facts (`facts_key`)."""
    if record.customer or is_anonymous(record):
        return None
    return conversation_facts_key(record.id)


def reused_by_another(
    entry: dict[str, Any], record: dict[str, Any] | None, customer: str | None
) -> bool:
    """Whether a customer's index entry's id now holds someone else's conversation: the
    app reused it once the record expired, for another customer, or for none (a record
    begun after the entry was made). A record of no customer begun before is theirs:
    listed at the end of the turn that named them, and saved just after."""
    if record is None:
        return False
    owner = record.get("customer")
    if owner is not None:
        return bool(owner != customer)
    started = record.get("started")
    at = entry.get("at") or 0.0
    return isinstance(started, (int, float)) and isinstance(at, (int, float)) and started > at


def _active_at(entry: dict[str, Any], record: dict[str, Any] | None) -> tuple[float, str]:
    """An index entry's place by its conversation's last turn when its record holds it."""
    at, conversation = _entry_at(entry)
    last = record.get("last_seen") if record is not None else None
    return max(at, float(last) if isinstance(last, (int, float)) else 0.0), conversation


def _entry_at(entry: dict[str, Any]) -> tuple[float, str]:
    """An index entry's place: its conversation's last known activity, then its id."""
    return float(entry.get("at") or 0.0), str(entry.get("conversation") or "")
