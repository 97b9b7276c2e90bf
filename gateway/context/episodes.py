"""A customer's earlier conversations, as the cards a new conversation gets.

A finished conversation becomes a card (gateway.context.episode_card, or the summarizer
model when one is set) when it is closed, or when another conversation of the customer
first needs it. Shown to a caller, a card is redacted of what lies above the caller's
scopes: what the operator's scoped patterns find, and what the customer's facts above
them state. A card the model wrote is kept beside the deterministic one and shown only to
a caller holding every scope those use (`_holds_all`); any other caller gets the
deterministic card: redaction by value cannot find what a model rewrote.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from gateway.context.conversation_record import ConversationRecord, heard_in_of
from gateway.context.conversations import ConversationStore
from gateway.context.fact_docs import fact_from_json, facts_key
from gateway.context.heard import CLOCK_LEAD_MAX, FactExtractor, one_problem
from gateway.context.people import current_facts
from gateway.context.redaction import redact
from gateway.context.summaries import Pattern
from gateway.context.summarizer import EpisodeSource, Summarizer, on_behalf_of
from gateway.context.types import BASIC_SCOPE, Episode, Fact, fact_kind, heard_in_conversation
from gateway.context.unverified import as_stored, with_verified
from gateway.messages import role
from gateway.proxy.identity import Caller

EPISODE_CARD_TOKENS = 160


class EpisodeBook:
    def __init__(
        self,
        conversations: ConversationStore,
        summarizer: Summarizer,
        heard: FactExtractor,
        patterns: Sequence[Pattern],
    ) -> None:
        self.conversations = conversations
        self._summarizer = summarizer
        self._heard = heard
        self._patterns = list(patterns)

    async def of_customer(
        self,
        caller: Caller,
        record: ConversationRecord,
        model: str,
        now: float,
        facts: Sequence[Fact] | None = None,
        index: Sequence[dict[str, Any]] | None = None,
        refresh: bool = True,
    ) -> list[Episode]:
        """The customer's other conversations as cards, redacted for this caller by the
        customer's facts document: `facts` when the request already loaded it, else
        read here (once, and only when there is a card to redact); from their episode
        `index` when the request loaded it, else read here. A card marked stale (its
        conversation went on since it was made) is made anew when `refresh`, else shown
        as it was."""
        if not record.customer:
            return []
        if index is None:
            index = await self.conversations.episode_index(record.tenant, record.customer)
        out: list[Episode] = []
        for doc in index:
            if doc["conversation"] == record.id:
                continue
            if facts is None:
                facts = await self.conversations.customer_facts(record.tenant, record.customer)
            episode = await self._stored_or_made(caller, record, model, now, doc, refresh)
            if episode is None:
                continue
            # What another conversation heard may be above this caller's verified scopes:
            # what the patterns find, what the customer's facts above them state, and what
            # the card's own facts above them stated when it was made.
            # And what an unverified caller stated, whoever asks: the facts block shows it
            # marked, a card cannot (unless a caller within its scope has stated it since).
            verified = [f for f in facts if not f.stated_unverified]
            hidden = [*facts, *with_verified(episode.private, verified)]
            card = episode.summary
            if episode.model_summary and _holds_all(caller, hidden, self._patterns):
                card = episode.model_summary
            redacted = redact(card, self._patterns, caller.scopes, hidden)
            out.append(dataclasses.replace(episode, summary=redacted, model_summary=""))
        return out

    async def _stored_or_made(
        self,
        caller: Caller,
        record: ConversationRecord,
        model: str,
        now: float,
        doc: dict[str, Any],
        refresh: bool,
    ) -> Episode | None:
        """The card an index entry holds, or made now when it holds none, or a stale one
        and `refresh` (None: no card to show)."""
        # A card stored before the model's card was kept apart from the deterministic
        # one may be the model's: made again (not shown when its record is gone).
        legacy = "model_summary" not in doc and self._summarizer.writes_cards(record.tenant)
        stale = bool(doc.get("stale")) and refresh
        if doc.get("summary") is not None and not legacy and not stale:
            private = tuple(fact_from_json(f) for f in doc.get("private") or ())
            return Episode(
                doc["conversation"],
                doc["channel"],
                doc["summary"],
                doc.get("ended_at", 0.0),
                private,
                doc.get("model_summary") or "",
            )
        other = await self.conversations.load(record.tenant, doc["conversation"])
        if other is None or other.customer != record.customer:
            return None  # gone, or (an id reused) someone else's
        if not other.opening:
            return None  # listed as its first turn began, not answered yet: no card
        # An older conversation's card stops where this one began; a newer one's
        # (a customer back in an older conversation) holds all it heard.
        before = record.started if other.started < record.started else math.inf
        return await self.make(caller, other, model, now, before=before)

    async def closed(
        self, caller: Caller, record: ConversationRecord, model: str, now: float
    ) -> Episode:
        """The card of a conversation being closed, cut where the customer's next
        conversation began when one began since (an app that closes late)."""
        later = []
        if record.customer:
            for doc in await self.conversations.episode_index(record.tenant, record.customer):
                if doc["conversation"] != record.id:
                    other = await self.conversations.load(record.tenant, doc["conversation"])
                    if other is not None and other.started > record.started:
                        later.append(other.started)
        return await self.make(caller, record, model, now, before=min(later, default=math.inf))

    async def make(
        self,
        caller: Caller,
        record: ConversationRecord,
        model: str,
        now: float,
        before: float = math.inf,
    ) -> Episode:
        """A whole conversation as its card: topic, facts, promises, outcome; never a turn
        copied whole. Its facts: those heard in its turns still verbatim, and those the
        customer's facts document got while it ran (from the turns it folded), dated
        before `before`: the start of a later conversation of the customer (the one that
        asks for the card, or the next one at a late close), whose facts, dated past every
        fact it saw (heard.dated_after), are not this one's."""
        turns = [*record.opening, *record.recent]
        answered = record.last_reply_at == record.recent_at + len(record.recent)
        if record.last_reply and answered and turns and role(turns[-1]) != "assistant":
            # The last answer, which the app never sent back: what the agent said last
            # (a promise, a deadline) belongs to the episode. Not an older turn's answer
            # that finished after a newer turn was saved (it answers another message).
            turns.append({"role": "assistant", "content": record.last_reply})
        fkey = facts_key(record.customer, record.id)
        stored = await self.conversations.facts_for_turn(record.tenant, fkey) if fkey else []
        heard_as = heard_in_of(record)
        during = [
            f
            for f in stored
            # heard in its turns (sessions that shared a fingerprint's id told apart by
            # time), dated by the turns' clocks, which follow facts dated ahead
            # (heard.dated_after)
            if heard_in_conversation(f, record.started, heard_as)
            and f.created_at <= record.last_seen + CLOCK_LEAD_MAX
            and f.created_at < before
        ]
        heard = await self._heard.of_fold([], turns, record.channel, record.last_seen)
        heard = as_stored(heard, stored)
        facts = _few_deadlines(
            current_facts([*during, *one_problem(heard, during, record.started)])
        )
        # Withheld from a caller without their scope, and from every caller when stated
        # unverified: the card's facts, and the older values its turns stated (a phone
        # the customer replaced that the agent's last answer still quotes).
        ids = {f.id for f in facts}
        stated = [*facts, *(f for f in heard if f.id not in ids)]
        # A summarizer model is shown none of it, nor the customer's facts above `basic`.
        hidden = [*stored, *stated]

        def withhold(text: str) -> str:
            return redact(text, self._patterns, (BASIC_SCOPE,), hidden)

        source = EpisodeSource(record.channel, record.last_seen, turns, record.summary)
        card, written = await self._summarizer.card(
            on_behalf_of(caller, record), source, facts, EPISODE_CARD_TOKENS, model, withhold
        )
        private = tuple(f for f in stated if f.scope != BASIC_SCOPE)
        episode = Episode(record.id, record.channel, card, record.last_seen, private, written)
        if record.customer:
            await self.conversations.save_episode(
                record.tenant, record.customer, episode, now, record.plan
            )
        return episode


def _holds_all(caller: Caller, facts: Sequence[Fact], patterns: Sequence[Pattern]) -> bool:
    """Whether `caller` may read a card the summarizer model wrote: it holds every scope
    the customer's facts (and the card's own, and the operator's patterns) use, and no
    fact was stated by an unverified caller. Redaction by value cannot make a model's
    card safe for anyone else: the model read the turns, and a summary a model wrote
    from them, where a verified value may stand in any form ("02/03/1985", "born 2
    March 1985", "ana dot souza at example dot com")."""
    held = set(caller.scopes)
    return all(f.scope in held and not f.stated_unverified for f in facts) and all(
        p.scope in held for p in patterns
    )


CARD_DEADLINES = 2  # an agent states many time frames; the card keeps the newest


def _few_deadlines(facts: list[Fact]) -> list[Fact]:
    deadlines = [f for f in facts if fact_kind(f) == "deadline"]
    dropped = {id(f) for f in deadlines[:-CARD_DEADLINES]}
    return [f for f in facts if id(f) not in dropped]
