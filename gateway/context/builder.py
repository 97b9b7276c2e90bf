"""The request chain's "build window" step: the I/O shell around `gateway.context.engine`.

Load the conversation, classify it, gather its facts and earlier episodes, ask the pure
engine what must leave the window; summarize those turns, extract their facts, and
persist the summary and cursor BEFORE the prompt without them is built.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from gateway import offload
from gateway.context.anchors import edited_within
from gateway.context.classify import Classifier, user_texts
from gateway.context.conversation_record import (
    ConversationRecord,
    answer_mark,
    archived_id,
    continued,
    conversation_fingerprint,
    repeated,
    started_over,
    transcript_of,
)
from gateway.context.conversations import ConversationStore
from gateway.context.engine import (
    SUMMARY_LEAST_TOKENS,
    Window,
    WindowInput,
    assemble,
    compacted_memory,
    plan_compaction,
    summary_room,
)
from gateway.context.episodes import EpisodeBook
from gateway.context.fact_docs import facts_key
from gateway.context.heard import (
    FactExtractor,
    dated_after,
    heard_here,
    known_elsewhere,
    merged_facts,
    not_heard_before,
    not_told_before,
)
from gateway.context.linear_regex import compile_linear
from gateway.context.people import crowded_kinds, crowded_out, said_again, with_said_again
from gateway.context.policy import Policies
from gateway.context.prompts import one_line
from gateway.context.summaries import Pattern, recompress
from gateway.context.summarizer import Summarizer, on_behalf_of
from gateway.context.turn import EngineTokens, Turn, TurnRequest
from gateway.context.turn_facts import PendingWrite, TurnFacts, settled
from gateway.context.types import Fact
from gateway.context.unverified import stated_by
from gateway.errors import Conflict, StoreUnavailable
from gateway.ledger.tokens import TokenCounter
from gateway.loops.state import LoopState, progressed
from gateway.messages import leading_system, message_text, role
from gateway.offload import content_chars
from gateway.ops.metrics import GatewayMetrics
from gateway.proxy.identity import Caller
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway.context.builder")
# A request that began this long after the last turn ended may edit its message.
EDIT_AFTER_S = 1.0
LAST_REPLY_CHARS = 8000  # of the answer relayed, kept for the episode card


def _check_customer(record: ConversationRecord | None, caller: Caller) -> None:
    """A conversation id already used for one customer is refused for another: the
    record holds the first one's summary, facts and card (an app that reuses session
    ids, a kiosk), and would carry them into the second one's prompt and cards."""
    theirs = record.customer if record is not None else ""
    if theirs and caller.customer and theirs != caller.customer:
        raise Conflict(
            "This conversation id belongs to another customer: send a new "
            "X-Conversation-Id for this customer's conversation.",
            code="conversation_customer_mismatch",
        )


class WindowBuilder:
    def __init__(
        self,
        conversations: ConversationStore,
        tokens: TokenCounter,
        policies: Policies,
        summarizer: Summarizer,
        metrics: GatewayMetrics,
        fail_open: bool = True,
    ) -> None:
        self.conversations = conversations
        self._fail_open = fail_open
        self._tokens = tokens
        self._policies = policies
        self._classifier = Classifier.from_policy(policies.file)
        self._patterns = [
            Pattern(name, compile_linear(p.regex), tuple(p.tags), p.scope)
            for name, p in policies.file.extraction.items()
        ]
        self._summarizer = summarizer
        self._heard = FactExtractor(self._patterns)
        self.episodes = EpisodeBook(conversations, summarizer, self._heard, self._patterns)
        self._turn_facts = TurnFacts(conversations, self._heard)
        self._metrics = metrics

    async def build(self, req: TurnRequest) -> Turn:
        # Tokenizing megabytes takes the better part of a CPU second: a big request has
        # its messages counted in a worker thread first, so the event loop serves everyone
        # else meanwhile; the engine's own counting on the loop then costs nothing.
        tokens = EngineTokens(self._tokens, req.model)
        ceiling = self._policies.context_window(req.model)
        chars = content_chars(req.messages)
        await offload.sized(chars, tokens.prime, req.messages, ceiling)
        # hashing a pasted megabyte lets go of the GIL: in a thread, the loop serves on
        caller = req.caller
        conv_id = caller.conversation
        if not conv_id:
            conv_id = await offload.sized(
                chars, conversation_fingerprint, caller.tenant.name, caller.customer, req.messages
            )
        try:
            return await self._build(req, conv_id, tokens)
        except StoreUnavailable:
            if not self._fail_open:
                raise
            return self._stateless(req, conv_id, tokens)

    def _stateless(self, req: TurnRequest, conv_id: str, tokens: EngineTokens) -> Turn:
        """fail_open with the store down: no memory to read, nowhere to persist a summary,
        so nothing may leave the window. The whole history goes, over quota if it must."""
        tenant = req.caller.tenant
        record = ConversationRecord(
            id=conv_id,
            tenant=tenant.name,
            started=req.now,
            customer=req.caller.customer,
            plan=tenant.plan,
            degraded=True,
        )
        record.conversation_class = self._classify(req, record, new=True)
        policy = self._policies.resolve(tenant.plan, record.conversation_class, req.model)
        inp = WindowInput(
            messages=req.messages,
            memory=record.memory,
            policy=policy,
            operational_state=req.operational_state,
            client_max_tokens=req.client_max_tokens,
        )
        window = assemble(inp, tokens)
        self._observe(record, window, 0)
        return Turn(record, window, policy, 0, window.report.over_quota, False)

    def _classify(self, req: TurnRequest, record: ConversationRecord, new: bool) -> str:
        return self._classifier.classify(
            header=req.caller.conversation_class,
            channel=req.caller.channel,
            model=req.model,
            user_texts=user_texts(req.messages, last_only=not new),
            previous=record.conversation_class,
        )

    async def _build(self, req: TurnRequest, conv_id: str, engine_tokens: EngineTokens) -> Turn:
        caller, model, messages, now = req.caller, req.model, req.messages, req.now
        tenant = caller.tenant
        # A conversation known only by its fingerprint may be two people who both said
        # "Hi" first: it gets no facts document of its own to share.
        fkey = facts_key(caller.customer, caller.conversation)
        record, facts, index = await self.conversations.load_with_facts(
            tenant.name, conv_id, fkey, caller.customer
        )
        _check_customer(record, caller)
        stored, record = record, continued(record, messages, req.retried)  # anonymous: its own
        if record is not None and started_over(record, messages):
            await self._archive(record)
            index = None  # it lists the archived session now: read again
            record = None  # the next session takes the fingerprint's record, anew
        now = dated_after(now, record.facts_until if record else 0.0, facts)
        new = record is None
        retry = record is not None and req.retried and repeated(record, messages)
        if record is None:
            record = ConversationRecord(id=conv_id, tenant=tenant.name, started=now)
            if stored is not None:  # another user's: replaced whole (of the version read)
                record.version, record.stored = stored.version, stored.stored
                record.replacing = True
        named = bool(caller.customer) and caller.customer != record.customer  # to index
        record.model = model
        claimed = await self._claimed(caller, record, new, named)
        if claimed:
            index = None  # listed now (and the index may have forgotten its oldest): read again
        if not new and _confirmed_since(facts, record.last_seen):
            # The app confirmed a fact of the customer's since the last turn (PUT facts):
            # the conversation moved on, before the turn ceiling is checked.
            state = LoopState.from_json(record.loop_state)
            record.loop_state = progressed(state, record.turns).to_json()
            record.escalation_pending = None
        record.conversation_class = self._classify(req, record, new)
        policy = self._policies.resolve(tenant.plan, record.conversation_class, model)
        if edited_within(messages, record.memory):
            facts = await self._turn_facts.forget_edited(record, messages, facts, fkey)
        elif not new and req.now > record.last_seen + EDIT_AFTER_S:
            # An edit is sent once the turn it edits was answered; a turn sent beside it
            # (two tabs, a double send) began before and has an edit's shape too.
            facts = await self._turn_facts.forget_unsent(record, messages, facts, fkey)
        facts, heard, facts_write = await self._turn_facts.newest(
            record, messages, facts, fkey, now, caller.scopes
        )
        # The request loaded the customer's document when it named the customer.
        loaded = facts if caller.customer else None
        # A conversation begun, or whose provider cache went cold, has the customer's
        # stale cards made anew; one running on keeps its prompt head as it was.
        cache_cold = (
            not new and policy.cache_idle_s > 0 and now - record.last_seen > policy.cache_idle_s
        )
        episodes = await self.episodes.of_customer(
            caller, record, model, now, loaded, index, refresh=new or cache_cold
        )
        inp = WindowInput(
            messages=messages,
            memory=record.memory,
            policy=policy,
            facts=not_told_before(facts, record.started),
            episodes=episodes,
            operational_state=req.operational_state or record.operational_state,
            subject_tags=caller.subject_tags,
            scopes=caller.scopes,
            client_max_tokens=req.client_max_tokens,
            started=record.started,
            conversation=record.id,
            cache_cold=cache_cold,
        )
        evicted_now, inp, learned, window, reason = await self._compact(
            caller, record, inp, engine_tokens, model, now, fkey, facts_write
        )
        # Its own facts expire with it: the save renews them, unless this turn wrote
        # them (the newest message's, a fold's), which restarted their expiry already.
        record.facts_held = bool(facts) and facts_write is None and learned == 0
        learned += heard
        if window is None:
            window = await _assembled(inp, engine_tokens)
        squeezed = evicted_now if reason == "quota" else 0  # a cold cache's: no quota hit
        quota_hit = squeezed > 0 or window.report.over_quota
        record.window_tokens = window.report.history_tokens
        record.evicted_messages = window.report.evicted_messages
        record.over_quota_turns += int(window.report.over_quota)
        record.quota_hits += int(quota_hit)
        self._observe(record, window, squeezed)
        return Turn(
            record,
            window,
            policy,
            evicted_now,
            quota_hit,
            # Listed in the customer's index at the turn's end: one never answered yet
            # (claimed unlisted by an earlier version, or not named by the app), or newly
            # named; not one its claim listed as the turn began.
            (named or record.turns == 0) and not claimed,
            learned,
            retry=retry,
            facts_write=facts_write,
            started=req.now,
            retried=req.retried,
            own_card=_own_card(index, record.id),
        )

    async def _claimed(
        self, caller: Caller, record: ConversationRecord, new: bool, named: bool
    ) -> bool:
        """The record made the caller's (customer, channel, plan); a new one named by the
        app is claimed for its customer before anything is forwarded: two first turns of
        one id for two customers at once would otherwise both pass `_check_customer`,
        and the second's save would merge into the first's record (409 instead). It is
        listed in their index then too: an erasure finds it while its turn runs, or
        after that turn failed. Whether it was claimed."""
        if caller.customer and (new or named or record.turns == 0):
            # Its saves tell an erasure of the customer while it runs from an earlier one.
            seen = await self.conversations.erased_at(caller.tenant.name, caller.customer)
            record.erasure_seen = seen
        record.customer = caller.customer or record.customer
        record.channel = caller.channel or record.channel
        record.plan, record.closed = caller.tenant.plan, False
        claimed = new and bool(caller.conversation and caller.customer) and not record.replacing
        if claimed:
            await self.conversations.claim(record)
        return claimed

    async def _archive(self, record: ConversationRecord) -> None:
        """The customer's previous session under a fingerprint kept as a closed
        conversation of its own (`{fingerprint}@{its start}`) with its card in the
        customer's episode index, so the next session, which takes the fingerprint,
        inherits none of its class, counters or loops, and sees it as an earlier episode."""
        doc = {**record.to_fields(), "id": archived_id(record), "closed": True}
        archived = ConversationRecord.from_fields(doc)
        archived.version, archived.stored = 0, {}  # a document of its own, new
        await self.conversations.save(archived)
        # Listed, its card made when first asked for (EpisodeBook.of_customer: by this
        # very turn, with the facts dated before it began): never made twice.
        await self.conversations.register(archived)

    def begin(self, turn: Turn) -> None:
        """The call is taken (by the spend guard and the rate limits): the turn's facts
        write begins, to run while it is forwarded. One refused before writes nothing."""
        if turn.facts_write is not None:
            turn.facts_write.begin()

    async def written(self, turn: Turn) -> None:
        """The turn's facts write is done (a failed one was logged: the call is already
        forwarded, so the answer goes to the client, as with `finish`)."""
        pending, turn.facts_write = turn.facts_write, None
        await settled(pending)

    async def _compact(
        self,
        caller: Caller,
        record: ConversationRecord,
        inp: WindowInput,
        tokens: EngineTokens,
        model: str,
        now: float,
        fkey: str | None,
        facts_write: PendingWrite | None = None,
    ) -> tuple[int, WindowInput, int, Window | None, str]:
        """(messages evicted, the input to assemble, facts learned, its window when it
        is already assembled, and why it compacted: `Compaction.reason`)."""
        compaction = await offload.walking(inp.messages, plan_compaction, inp, tokens)
        if not compaction.fold:
            inp, window = await self._summary_yields(record, inp, tokens)
            return 0, inp, 0, window, compaction.reason
        previous = inp.memory.summary if inp.memory.cursor == compaction.first else ""
        folded = await self._summarizer.appended(
            on_behalf_of(caller, record), previous, compaction.fold, inp.policy, tokens.text, model
        )
        summary, recompressed = folded.text, folded.recompressed
        record.cost_units += folded.cost_units  # its summarizer model's call, booked to it
        if not summary:
            return 0, inp, 0, None, compaction.reason  # nothing holds them: over quota, counted
        opening = inp.messages[leading_system(inp.messages) :][: compaction.head_end]
        mine = heard_here(inp.facts, record.started, record.id)
        elsewhere = known_elsewhere(inp.facts, record.started)
        said_at = record.relayed_times(compaction.first, compaction.fold)
        heard = await self._heard.of_fold(
            opening, compaction.fold, record.channel, now, mine, elsewhere, said_at
        )
        # Said when the app sent these turns, under its caller's scopes as far as the
        # gateway knows; what an earlier turn's caller stated was heard then (of_latest)
        # and keeps its mark (merged_facts keeps a held fact as it is).
        heard = stated_by(heard, caller.scopes, record.id)
        # A customer's fact is heard as it is said (of_latest): one heard again only now,
        # its kind full of facts heard since, lost to them before (an agent's is new).
        said = one_line("\n".join(message_text(m) for m in compaction.fold if role(m) == "user"))
        crowded = crowded_kinds(mine)  # (a fold of a long history hears thousands of facts)
        new_facts = [
            f
            for f in not_heard_before(heard, inp.facts, record.started)
            if not (f.value and crowded_out(f, crowded) and f.value in said)
        ]
        # A fact held and stated again by the agent in these turns keeps its place in its
        # kind's bound. Not by the customer: each of their messages was heard as the
        # newest (of_latest, which marks what it states again), and read again now it
        # would mark every fact it stated. Nor by the opening, read at every fold (a
        # bot's greeting quoting a sum would be said again at each).
        answers = one_line(
            "\n".join(message_text(m) for m in compaction.fold if role(m) == "assistant")
        )
        agent = [f for f in heard if "agent" in f.tags[1:2] and f.value and f.value in answers]
        renewed = said_again(inp.facts, agent)
        until = max([now, *(f.created_at for f in new_facts)])  # they are dated past `now`
        memory = await offload.walking(
            inp.messages, compacted_memory, inp.messages, compaction, summary, until
        )
        candidate = dataclasses.replace(
            inp, memory=memory, facts=merged_facts(with_said_again(inp.facts, renewed), new_facts)
        )
        window = await _assembled(candidate, tokens)
        report = window.report
        if report.over_quota:
            # No room at all (the opening, the facts and the last turns fill the quota):
            # the summary keeps a line or two, so the middle still leaves the window.
            room = max(summary_room(candidate, report, tokens), SUMMARY_LEAST_TOKENS)
            shorter = recompress(summary, room, tokens.text)
            if shorter:
                memory = dataclasses.replace(memory, summary=shorter)
                candidate = dataclasses.replace(candidate, memory=memory)
                window = await _assembled(candidate, tokens)
                recompressed = True
            whole = await _assembled(inp, tokens)
            if window.report.history_tokens >= whole.report.history_tokens:
                return 0, inp, 0, None, compaction.reason  # it would not even shrink
            # else: within quota, or over (the opening or last turns alone are too big)
            # but smaller than keeping everything: sent, and counted as over quota.
        if facts_write is not None:
            await facts_write.begin()  # add_facts reads the document that write changes
        learned = 0
        if fkey:  # not for a customer erased while this turn runs
            learned = (
                await self.conversations.unless_erased(
                    record,
                    fkey,
                    lambda: self.conversations.add_facts(
                        record.tenant, fkey, new_facts, record.plan, renewed
                    ),
                )
                or 0
            )
        record.remember(memory)
        record.summary_recompressions += int(recompressed)
        await self.conversations.save(record)  # persisted before the request is sent
        if recompressed:
            self._metrics.summary_recompressed.inc()
        evicted = compaction.new_cursor - compaction.first
        self._metrics.turns_evicted.labels(compaction.reason).inc(evicted)
        return evicted, candidate, learned, window, compaction.reason

    async def _summary_yields(
        self, record: ConversationRecord, inp: WindowInput, tokens: EngineTokens
    ) -> tuple[WindowInput, Window | None]:
        """Nothing left to fold and still over quota: the summary gives way (persisted)."""
        if not inp.memory.summary:
            return inp, None
        window = await _assembled(inp, tokens)
        if not window.report.over_quota:
            return inp, window
        room = summary_room(inp, window.report, tokens)
        shorter = recompress(inp.memory.summary, room, tokens.text) if room > 0 else ""
        if not shorter or shorter == inp.memory.summary:
            return inp, window
        memory = dataclasses.replace(inp.memory, summary=shorter)
        candidate = dataclasses.replace(inp, memory=memory)
        record.remember(memory)
        record.summary_recompressions += 1
        await self.conversations.save(record)
        self._metrics.summary_recompressed.inc()
        return candidate, await _assembled(candidate, tokens)

    def _observe(self, record: ConversationRecord, window: Window, evicted_now: int) -> None:
        cls = record.conversation_class or "default"
        report = window.report
        self._metrics.window_used.labels("true" if report.at_ceiling else "false").observe(
            report.history_tokens
        )
        self._metrics.class_turns.labels(cls).inc()
        if report.at_ceiling or evicted_now:
            self._metrics.class_turns_at_ceiling.labels(cls).inc()
        if evicted_now or report.over_quota:
            self._metrics.quota_hits.labels(cls).inc()
        if report.over_quota:
            self._metrics.over_quota.labels(cls).inc()
        if report.system_over_budget:
            self._metrics.system_over_budget.labels(cls).inc()

    async def finish(
        self, turn: Turn, messages: list[Any], cost_units: int | None, now: float, reply: str = ""
    ) -> None:
        """After the call: count the turn and keep what an episode summary will need,
        the answer relayed (`reply`) included. Never fails for the store: the upstream
        has answered, so the client gets the answer (with `fail_closed` too); a turn not
        saved is logged."""
        await self.written(turn)
        record = turn.record
        if record.degraded:
            return
        record.turns += 0 if turn.retry else 1  # a retry is the same turn again
        record.last_seen = now
        if cost_units is not None:
            record.cost_units += cost_units
            if record.first_turn_cost_units is None:
                record.first_turn_cost_units = cost_units
        transcript = transcript_of(messages)
        head = next((i + 1 for i, m in enumerate(transcript) if m.get("role") == "user"), 0)
        record.opening = transcript[:head]
        # Everything not yet in the summary (bounded by the quota): the episode summary
        # of this conversation is made from summary + opening + these.
        record.recent_at = max(record.cursor, head)
        record.recent = transcript[record.recent_at :]
        record.last_reply, record.last_reply_at = reply[:LAST_REPLY_CHARS], len(transcript)
        record.answered = answer_mark(transcript, turn.started, turn.retried)
        # numbered as the window engine numbers a fold: after the leading system messages
        record.relay(len(messages) - leading_system(messages), reply, now)
        try:
            await self._persist(turn)
        except (StoreUnavailable, Conflict) as exc:  # Conflict: taken by another customer
            warn_throttled(log, "conversation not updated this turn: %s", exc.message)

    async def _persist(self, turn: Turn) -> None:
        """The turn's record saved (and listed when `to_index`). A record this turn lists
        is written, then looked at again: the erasure of its customer may have read
        their index before it was listed; if one ran since the turn began, the record
        is forgotten (a record read before is found gone by its save: not written)."""
        record, conversations = turn.record, self.conversations
        if turn.to_index and await conversations.erased(record):
            log.info("a turn ended after its customer was erased: its record not saved")
            return
        if turn.to_index:
            await conversations.register(record)
        await conversations.save(record)
        if turn.to_index and await conversations.erased(record):
            await conversations.forget(record)
        # (a listed turn has just looked, and found no erasure)
        elif (
            turn.own_card is not None
            and record.customer
            and (turn.to_index or not await conversations.erased(record))
        ):
            # Made by another conversation's turn before this one: marked stale once this
            # turn is saved (marked as it began, a card made meanwhile from the record
            # before this turn would pass for current).
            await conversations.card_outdated(
                record.tenant, record.customer, turn.own_card, record.plan
            )


async def _assembled(inp: WindowInput, tokens: EngineTokens) -> Window:
    """The window of `inp` (in a worker thread past offload.OFFLOAD_MESSAGES messages)."""
    return await offload.walking(inp.messages, assemble, inp, tokens)


def _own_card(index: Sequence[dict[str, Any]] | None, conversation: str) -> dict[str, Any] | None:
    """The conversation's entry in the customer's index read at the turn's start, when it
    holds a card (another conversation's turn made it)."""
    own = next((e for e in index or () if e.get("conversation") == conversation), None)
    if own is None or own.get("summary") is None or own.get("stale"):
        return None  # no card, or one marked stale already
    return own


def _confirmed_since(facts: list[Fact], since: float) -> bool:
    """A fact the app confirmed (or put again confirmed) after `since`."""
    return any(f.confirmed and max(f.confirmed_at or 0.0, f.created_at) > since for f in facts)
