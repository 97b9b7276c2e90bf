"""A chat turn as the request chain carries it: what the build is asked (`TurnRequest`),
what it made (`Turn`), and token counts as the window engine sees them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gateway.context.conversation_record import ConversationRecord
from gateway.context.engine import Window
from gateway.context.turn_facts import PendingWrite
from gateway.context.types import WindowPolicy
from gateway.ledger.tokens import TokenCounter
from gateway.proxy.identity import Caller


class EngineTokens:
    """The engine's view of token counts: cached per message, in the model's tokens."""

    def __init__(self, counter: TokenCounter, model: str) -> None:
        self._counter = counter
        self._model = model
        self._factor = counter.factor(model)
        # Within one request the engine asks about the same message objects several
        # times: remember them by identity (the objects live as long as this request).
        self._seen: dict[int, tuple[Any, int]] = {}

    def message(self, message: Any) -> int:
        hit = self._seen.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        count = round(self._counter.message_tokens(self._model, message) * self._factor)
        self._seen[id(message)] = (message, count)
        return count

    def prime(self, messages: list[Any], ceiling: int) -> None:
        """Count `messages` now (a big request's in a worker thread: tiktoken lets go of
        the GIL) and remember them for this request: the counter's cache holds 100,000
        counts, so a request of more messages would be counted again on the event loop.
        Past `ceiling` (the model's context window) a message's count is estimated."""
        for message in messages:
            count = self._counter.message_tokens(self._model, message, ceiling)
            self._seen[id(message)] = (message, round(count * self._factor))

    def text(self, text: str) -> int:
        return round(self._counter.text_tokens(self._model, text) * self._factor)


@dataclass(frozen=True)
class TurnRequest:
    """What the chain knows of a chat request when it builds the window."""

    caller: Caller
    model: str
    messages: list[Any]
    client_max_tokens: int | None
    operational_state: str | None
    now: float
    # The client says this is a retry of a request it sent before (the OpenAI SDKs'
    # `x-stainless-retry-count`, 1 or more): the same history is then the same turn.
    retried: bool = False


@dataclass
class Turn:
    record: ConversationRecord
    window: Window
    policy: WindowPolicy
    evicted_now: int
    quota_hit: bool
    to_index: bool  # list it in its customer's index: it is new, or its customer was named
    facts_learned: int = 0
    escalation: str | None = None
    # The last answered request sent again (a retry): not a new turn for the turn count,
    # the loop detector or an escalation.
    retry: bool = False
    # When this attempt began, and whether the client marked it a retry: its save does
    # not replace the answer of a later attempt, and a retry of an attempt still in
    # flight is the same turn (record_merge).
    started: float = 0.0
    retried: bool = False
    # The write of the facts the newest message stated, made ready by the build: begun
    # once the call is taken (WindowBuilder.begin), it runs while the call is forwarded,
    # and is done before any of the answer is relayed.
    facts_write: PendingWrite | None = field(default=None, compare=False)
    # Its own entry in the customer's episode index, when another conversation made its
    # card before this turn: marked stale once this turn is saved (made anew by the
    # next conversation that begins, or whose cache went cold).
    own_card: dict[str, Any] | None = field(default=None, compare=False)
    # The conversation id as the client's header sent it (its bytes: latin-1 or UTF-8),
    # echoed in `x-gateway-conversation-id` so the app finds its own id there.
    sent_id: bytes | None = None
