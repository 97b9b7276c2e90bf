"""The chain's exit triggers: the I/O shell around `gateway.loops.detector`.

A loop (`loop.consecutive` loop turns among the last `loop.within`) escalates as soon
as its last turn is answered: it is recorded, counted and sent to the webhook then, and
its action applies to the next turn answered (a customer who gives up after re-asking
twice is still counted). At the start of a turn, a pending loop, or a turn ceiling
passed without progress, escalates, and the class's action applies: `signal` (response header
`X-Gateway-Escalation`, a metric, the state in GET /v1/conversations/{id}), `instruct`
(signal, and tell the model to offer a human), `handoff` (signal, and answer with the
class's handoff message without calling the model, booked at zero cost). A tenant's
webhook gets a JSON event, POSTed off the request path and retried with backoff,
signed when $GATEWAY_WEBHOOK_SECRET is set: `X-Gateway-Signature: t=<unix time>,
v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the secret>` (Stripe's scheme: the
receiver recomputes it, compares in constant time and refuses an old `t`).
After the reply, the turn is folded into the conversation's loop state.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import hmac
import logging
import os
import time
from typing import Any

import httpx
import orjson

from gateway.context.conversation_record import ConversationRecord
from gateway.context.policy import Policies
from gateway.context.types import WindowPolicy
from gateway.loops.detector import LoopSettings, decide, noticed, observe_turn
from gateway.loops.state import LoopState, escalated, learned
from gateway.messages import message_text
from gateway.ops.metrics import GatewayMetrics
from gateway.proxy.http_responses import RawResponse
from gateway.proxy.made_up_replies import completion_body, stream_events

log = logging.getLogger("gateway.loops.escalation")
INSTRUCTION = (
    "Note from the gateway: this conversation {why}. Do not repeat earlier answers. Offer "
    "the customer a handoff to a human agent and ask whether they want it."
)
WHY = {
    "loop": "is going in circles: the customer asks the same thing and gets the same answer",
    "turn_ceiling": "has gone on for many turns without progress",
}
_RETRIES = (0.5, 2.0, 8.0)
SECRET_ENV = "GATEWAY_WEBHOOK_SECRET"
# A loop noticed at the end of a turn is acted on at the next turn if it comes within
# this long; after a longer pause the customer is back about something else (the refund
# came, a new order) and the detector reads the new turn afresh.
PENDING_FOR_S = 3600.0
SIGNATURE_HEADER = "x-gateway-signature"


def signature(secret: str, body: bytes, timestamp: int) -> str:
    """The `X-Gateway-Signature` value of `body` sent at `timestamp` (unix seconds)."""
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


class Escalations:
    def __init__(self, policies: Policies, metrics: GatewayMetrics) -> None:
        self._policies = policies
        self._metrics = metrics
        self._client: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._secret = os.environ.get(SECRET_ENV) or None
        if policies.file.webhooks and self._secret is None:
            log.warning("escalation webhooks are sent unsigned: %s is not set", SECRET_ENV)

    def with_policies(self, policies: Policies) -> Escalations:
        """These escalations under reloaded policies (calls in flight keep the old
        object); both share the webhook client and the deliveries in flight."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=5.0)
        other = copy.copy(self)
        other._policies = policies
        return other

    def _settings(self, record: ConversationRecord) -> LoopSettings:
        return self._policies.loop(record.plan, record.conversation_class or "default")

    def check(
        self, record: ConversationRecord, policy: WindowPolicy, now: float, retry: bool = False
    ) -> str | None:
        """Start of a turn: does this turn escalate? A loop noticed at the end of the last
        turn does, unless this turn comes more than PENDING_FOR_S after it (its action is
        dropped then); else the stored counters decide. Changes nothing else: `commit`
        records it, once the turn is answered (a turn that fails is retried and escalates
        then). A client's `retry` of the last answered turn escalates as that turn did:
        its answer reached nobody when the client gave up waiting for it."""
        if retry and record.escalation and record.escalated_turn == record.turns > 0:
            return record.escalation
        if record.escalation_pending and now - record.last_seen > PENDING_FOR_S:
            record.escalation_pending = None
        if record.escalation_pending:
            return record.escalation_pending
        decision = decide(
            LoopState.counters(record.loop_state),
            record.turns + 1,
            policy.turn_ceiling,
            policy.progress_window,
            self._settings(record),
        )
        return decision.escalation

    def commit(self, record: ConversationRecord, reason: str, retry: bool = False) -> None:
        """The escalated turn was answered: record it (streak and progress clock start
        again), count it and tell the tenant's webhook; a loop noticed at the end of the
        last turn was recorded then, and its action is now applied. A retry's was
        recorded with the turn it repeats."""
        if retry and record.escalated_turn == record.turns:
            return
        record.escalated_turn = record.turns + 1
        if record.escalation_pending == reason:
            record.escalation_pending = None
            return
        self._record(record, reason, record.turns + 1)

    def _record(self, record: ConversationRecord, reason: str, turn: int) -> None:
        record.loop_state = escalated(LoopState.from_json(record.loop_state), turn).to_json()
        record.escalation = reason
        record.escalations += 1
        self._metrics.escalations.labels(record.conversation_class or "default", reason).inc()
        self._notify(record, reason, turn)

    def observe(
        self, record: ConversationRecord, messages: list[Any], reply: str, progress: bool
    ) -> None:
        """End of a turn: fold the customer's message and the reply into the loop state;
        a loop it completes is recorded now, its action pending for the next turn."""
        state = LoopState.from_json(record.loop_state)
        user = next(
            (
                message_text(m)
                for m in reversed(messages)
                if isinstance(m, dict) and m.get("role") == "user"
            ),
            "",
        )
        settings = self._settings(record)
        state, _ = observe_turn(state, user, reply, settings)
        if progress:
            state = learned(state, record.turns + 1)
        record.loop_state = state.to_json()
        if noticed(state, settings) and not record.escalation_pending:
            self._record(record, "loop", record.turns + 1)
            record.escalation_pending = "loop"

    def instruction(self, reason: str) -> dict[str, str]:
        return {"role": "system", "content": INSTRUCTION.format(why=WHY[reason])}

    def _notify(self, record: ConversationRecord, reason: str, turn: int) -> None:
        url = self._policies.file.webhooks.get(record.tenant)
        if not url:
            return
        # Two turns of one conversation finishing one loop at once (two replicas) each
        # send it: the same id, for the receiver to drop the second. A session that
        # takes over the record's id later (an anonymous app's next user, keyed by the
        # same opening; a customer's next session) counts its turns from 1 again: its
        # start tells its escalations from the earlier session's.
        key = f"{record.tenant}\0{record.id}\0{record.started!r}\0{reason}\0{turn}".encode()
        event = {
            "id": hashlib.blake2b(key, digest_size=12).hexdigest(),
            "type": "escalation",
            "reason": reason,
            "tenant": record.tenant,
            "conversation": record.id,
            "customer": record.customer,
            "class": record.conversation_class,
            "turn": turn,
            "ts": time.time(),
        }
        task = asyncio.get_running_loop().create_task(self._post(url, event))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, url: str, event: dict[str, Any]) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=5.0)
        body = orjson.dumps(event)
        for attempt, pause in enumerate((*_RETRIES, None)):
            headers = {"content-type": "application/json"}
            if self._secret is not None:  # signed anew per attempt: a fresh timestamp
                headers[SIGNATURE_HEADER] = signature(self._secret, body, int(time.time()))
            try:
                response = await self._client.post(url, content=body, headers=headers)
                if response.is_success:
                    return
                log.warning("escalation webhook answered %s", response.status_code)
            except httpx.HTTPError as exc:
                log.warning("escalation webhook failed (%s)", type(exc).__name__)
            if pause is None:
                log.error("escalation webhook gave up after %d attempts", attempt + 1)
                return
            await asyncio.sleep(pause)

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._client is not None:
            await self._client.aclose()


def handoff_response(
    model: str, text: str, stream: bool, include_usage: bool, headers: list[tuple[bytes, bytes]]
) -> RawResponse:
    """The class's handoff message as an ordinary chat completion, JSON or streamed."""
    cid = f"chatcmpl-handoff-{int(time.time() * 1000)}"
    created = int(time.time())
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    if not stream:
        body = orjson.dumps(completion_body(cid, model, created, text, usage))
        return RawResponse(200, [(b"content-type", b"application/json"), *headers], body)
    events = stream_events(cid, model, created, [text], usage=usage if include_usage else None)
    return RawResponse(200, [(b"content-type", b"text/event-stream"), *headers], b"".join(events))
