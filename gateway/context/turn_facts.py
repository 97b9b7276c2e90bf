"""The facts of a turn: what the customer's newest message states, kept at once (it is
progress, and durable before the turn is folded), and what goes when the app edited
the history a summary was made from."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from gateway.context.conversation_record import ConversationRecord, transcript_of
from gateway.context.conversations import ConversationStore
from gateway.context.heard import FactExtractor, heard_here, known_elsewhere, one_problem
from gateway.context.people import DATED, current_facts, said_again, with_said_again
from gateway.context.people_text import plain
from gateway.context.prompts import one_line
from gateway.context.types import Fact, Memory, fact_kind
from gateway.context.unverified import stated_by, verified_again, with_verified
from gateway.errors import StoreUnavailable
from gateway.messages import message_text, role
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway.context.turn_facts")
# Of the agent's message before the newest, the end a question it asks is read in: a
# pasted page there costs nothing.
ASKED_CHARS = 2000
# Of the customer's earlier messages, how many a fact said again is looked for in (`new_to`).
LOOKBACK = 10


class TurnFacts:
    def __init__(self, conversations: ConversationStore, heard: FactExtractor) -> None:
        self.conversations = conversations
        self._heard = heard

    async def newest(
        self,
        record: ConversationRecord,
        messages: list[Any],
        facts: list[Fact],
        fkey: str | None,
        now: float,
        scopes: Sequence[str],
    ) -> tuple[list[Fact], int, PendingWrite | None]:
        """(the facts with those the newest message states, how many of them are
        learned (`new_to` the conversation), their write). The held facts it states
        again are marked so (`said_again`) and written too, but add nothing; so are
        those an unverified caller stated that this caller, holding their scope (of
        `scopes`), states: verified now (gateway.context.unverified). The write
        is made ready, not begun: this request's window cannot show them (they are in
        the newest message, and the facts block shows those of folded turns), so it
        begins once the call is taken (a call refused before it is forwarded, by the
        spend guard or a rate limit, writes nothing) and overlaps the upstream call. A
        fold that adds facts begins it and waits for it first, and so does the relay
        of the answer."""
        latest = messages[-1] if messages and isinstance(messages[-1], dict) else None
        if fkey is None or latest is None or latest.get("role") != "user":
            return facts, 0, None
        known = {f.id: f.text for f in facts}
        mine = heard_here(facts, record.started, record.id)
        elsewhere = known_elsewhere(facts, record.started)
        previous = messages[-2] if len(messages) > 1 and isinstance(messages[-2], dict) else {}
        before = message_text(previous) if previous.get("role") == "assistant" else ""
        heard = await self._heard.of_latest(
            latest, record.channel, now, mine, elsewhere, before[-ASKED_CHARS:]
        )
        heard = stated_by(heard, scopes, record.id)
        # a fact said again on another day ("ontem" a week later) is new: its day differs
        fresh = [
            f
            for f in one_problem(heard, facts, record.started)
            if f.id not in known or (fact_kind(f) in DATED and known[f.id] != f.text)
        ]
        # A fact held and stated again ("the R$ 380 you promised") keeps its place in
        # its kind's bound: written, but not counted as progress.
        renewed = said_again(facts, heard)
        verified = verified_again(facts, heard)
        if not fresh and not renewed and not verified:
            return facts, 0, None
        held = with_verified(with_said_again(facts, renewed), verified)
        kept = current_facts([*held, *fresh])
        # A fact the bounds drop at once ("Siobhan" beside the "Siobhan Marsh" of an
        # earlier conversation, a pasted amount past the pattern's eight) is not learned:
        # nothing to write, and no progress to count (it would reset a loop every turn).
        kept_ids = {f.id for f in kept}
        fresh = [f for f in fresh if f.id in kept_ids]
        if not fresh and not renewed and not verified:
            return facts, 0, None

        def written() -> Awaitable[Any]:
            if renewed or verified:  # on the document as it is then: the app may edit it
                return self._renew(record, fkey, fresh, renewed, verified)
            return self.conversations.save_facts(record.tenant, fkey, kept, record.plan, facts)

        # Not looked for first: one store read fewer for every turn that learns a fact.
        write = PendingWrite(
            lambda: self.conversations.unless_erased(record, fkey, written, look_first=False)
        )
        return kept, len(new_to(messages[:-1], fresh)), write

    async def _renew(
        self,
        record: ConversationRecord,
        fkey: str,
        fresh: list[Fact],
        renewed: list[Fact],
        verified: list[Fact],
    ) -> None:
        """The new facts added and the renewed (or verified) ones marked on a fresh read
        of the facts document: a fact the app confirmed, scoped or deleted since this
        request read it stays as the app left it."""
        await self.conversations.add_facts(
            record.tenant, fkey, fresh, record.plan, renewed, verified
        )

    async def forget_edited(
        self, record: ConversationRecord, messages: list[Any], facts: list[Fact], fkey: str | None
    ) -> list[Fact]:
        """The app edited (perhaps redacted) a message the summary was made from: the
        summary is made again from the messages as they are now, and a fact this
        conversation heard whose value no longer appears in them goes too."""
        # What this conversation held (its summary, its stored turns), not what it holds
        # now: only facts that came from the removed text go, not the customer's others.
        # One line, as a fact's value is (gateway.context.people): a value said over two
        # lines is found in them.
        held = one_line(
            "\n".join(
                [record.summary, *(message_text(m) for m in [*record.opening, *record.recent])]
            )
        )
        record.remember(Memory(cursor=0))
        return await self._forget_unsaid(record, held, messages, facts, fkey, heard_only=False)

    async def forget_unsent(
        self, record: ConversationRecord, messages: list[Any], facts: list[Fact], fkey: str | None
    ) -> list[Fact]:
        """The app edited or deleted the customer's message the last answered turn ended
        on (a UI's "edit message": "ORD-99999" resent as "ORD-12345"): a fact this
        conversation heard in it whose value no longer appears in the history goes."""
        gone = unsent_last(record, messages)
        if not gone:
            return facts
        return await self._forget_unsaid(record, gone, messages, facts, fkey, heard_only=True)

    async def _forget_unsaid(
        self,
        record: ConversationRecord,
        held: str,
        messages: list[Any],
        facts: list[Fact],
        fkey: str | None,
        *,
        heard_only: bool,
    ) -> list[Fact]:
        """`facts` without those extracted (of this conversation's, `heard_only`) whose
        value `held` states and the messages no longer do; the document written so."""
        # as facts are read (plain): a value cut from the plain text is found in it
        held = plain(held)
        text = one_line(plain("\n".join(message_text(m) for m in messages if isinstance(m, dict))))
        here = {f.id for f in heard_here(facts, record.started, record.id)} if heard_only else None
        kept = [
            f
            for f in facts
            if not (
                f.extracted
                and (here is None or f.id in here)
                and (v := one_line(f.value))
                and v in held
                and v not in text
            )
        ]
        if fkey is not None and len(kept) < len(facts):
            await self.conversations.save_facts(record.tenant, fkey, kept, record.plan, facts)
        return kept


def unsent_last(record: ConversationRecord, messages: list[Any]) -> str:
    """The text (one line) of the customer's message the last answered turn ended on,
    when this request has an edit's shape: the same opening and turns up to that
    message's place, and there another customer message, its last ("edit message" in a
    chat UI); "" otherwise (the same message, a next turn, or another history: an app
    that sends its opening and a last exchange drops earlier messages as a rule)."""
    if not record.recent or record.last_reply_at <= 0 or role(record.recent[-1]) != "user":
        return ""
    transcript = transcript_of(messages)
    place = record.recent_at + len(record.recent) - 1
    if len(transcript) != place + 1 or role(transcript[place]) != "user":
        return ""
    if transcript[place] == record.recent[-1]:
        return ""
    same = transcript[: len(record.opening)] == record.opening
    if not same or transcript[record.recent_at : place] != record.recent[:-1]:
        return ""
    return one_line(message_text(record.recent[-1]))


def new_to(earlier: list[Any], fresh: list[Fact]) -> list[Fact]:
    """Of the facts a turn added, those none of the customer's last LOOKBACK messages
    before it states: learned. A value said before and since pushed out of its kind's
    bound (a sixth order number, then the first again) comes back as a fresh fact, but
    tells nothing new: counted as learning, a customer going round several values would
    reset the loop count on every turn and never be escalated. The last few messages
    are where a loop goes round; reading every earlier one (~90 µs over 60 turns of a
    kilobyte) on each turn that names something new would cost more than it tells."""
    if not fresh:
        return fresh
    said: list[str] = []
    for message in reversed(earlier):
        if role(message) == "user":
            said.append(one_line(message_text(message)))  # as a fact's value is
            if len(said) == LOOKBACK:
                break
    return [f for f in fresh if not (f.value and any(f.value in text for text in said))]


class PendingWrite:
    """A turn's facts write, made ready by the build and begun once (`begin`)."""

    def __init__(self, make: Callable[[], Awaitable[None]]) -> None:
        self._make = make
        self._running: asyncio.Future[None] | None = None

    def begin(self) -> asyncio.Future[None]:
        """The write, begun now unless it was already; a failure is logged as it fails."""
        if self._running is None:
            self._running = asyncio.ensure_future(self._make())
            self._running.add_done_callback(_log_failed_write)
        return self._running


async def settled(write: PendingWrite | None) -> None:
    """A facts write is begun if it was not, and done; a failed one was logged."""
    if write is not None:
        with contextlib.suppress(StoreUnavailable):
            await write.begin()


def _log_failed_write(write: asyncio.Future[None]) -> None:
    if not write.cancelled() and (exc := write.exception()) is not None:
        message = exc.message if isinstance(exc, StoreUnavailable) else repr(exc)
        warn_throttled(log, "facts of the turn not saved: %s", message)
