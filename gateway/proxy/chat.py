"""POST /v1/chat/completions: the request chain, top to bottom.

authenticate -> identify -> read body -> guard the store -> build the window
(classify, summarize before evict) -> forward -> relay (JSON or stream) -> account and
book -> persist the conversation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from time import perf_counter
from typing import Any

import httpx
import orjson
from starlette.requests import Request
from starlette.types import ASGIApp

from gateway import offload
from gateway.config import LimitsConfig
from gateway.context.turn import Turn, TurnRequest
from gateway.errors import InvalidRequest
from gateway.ledger.usage import TokenUsage, UsageBound
from gateway.loops.escalation import handoff_response
from gateway.ops import tracing
from gateway.proxy import request_log
from gateway.proxy.cache_scope import TenantScope
from gateway.proxy.chat_cost import chat_cost, input_tokens, prediction_tokens
from gateway.proxy.http_responses import JSON, RawResponse
from gateway.proxy.identity import Caller, authenticate, header_text, identify, sent_id
from gateway.proxy.provider_refs import check_chat
from gateway.proxy.reply_body import chained, first_bytes, rest_of_reply
from gateway.proxy.reply_text import error_in_reply, lenient_object, reply_text, shown_answer
from gateway.proxy.request_body import (
    ask_stream_usage,
    check_messages,
    choices_field,
    json_object,
    json_object_or_none,
    model_of,
    positive_int,
    retry_marked,
    still_there,
)
from gateway.proxy.streaming import StreamRelay, UsageTap, is_event_stream, reads_as_events
from gateway.proxy.upstream import (
    UpstreamReplyUnreadable,
    ceiling_key,
    degraded_headers,
    response_headers,
)
from gateway.runtime import Gateway
from gateway.spend.guard import WorstCase
from gateway.spend.hold import Hold, Reservation
from gateway.spend.pricing import held_tier, tier_of
from gateway.spend.rate_guard import UNLIMITED, RateTicket
from gateway.spend.tool_fees import chat_searches

ROUTE = "chat"
# OpenAI's own bound on `n`: more is refused before anything is held or forwarded (the
# built-in simulator would try to write each choice).
MAX_CHOICES = 128


@dataclass(slots=True)
class ChatCall:
    body: dict[str, Any]
    model: str
    messages: list[Any]
    stream: bool
    client_wants_usage: bool

    @property
    def replies(self) -> int:
        """How many choices the upstream generates (and bills): `n`."""
        return positive_int(self.body.get("n")) or 1

    @property
    def audio_output(self) -> bool:
        """Whether the reply may be audio (`modalities` with "audio", or `audio` set),
        billed at the model's audio output rate."""
        modalities = self.body.get("modalities")
        spoken = isinstance(modalities, list) and "audio" in modalities
        return spoken or self.body.get("audio") is not None

    @property
    def client_max_tokens(self) -> int | None:
        """The client's reply ceiling: the lower of `max_completion_tokens` and
        `max_tokens` when it sent both (both are sent on with the window's ceiling)."""
        values = [positive_int(self.body.get(k)) for k in ("max_completion_tokens", "max_tokens")]
        return min((v for v in values if v is not None), default=None)


def parse_chat(body: dict[str, Any]) -> ChatCall:
    model = model_of(body)
    if model is None:
        raise InvalidRequest("'model' is required and must be a string.", param="model")
    messages = body.get("messages")
    if "messages" not in body:
        raise InvalidRequest("'messages' is required.", param="messages")
    if not isinstance(messages, list):
        raise InvalidRequest("'messages' must be a list of message objects.", param="messages")
    check_messages(messages)
    check_chat(messages)
    choices_field(body, "n", MAX_CHOICES)
    stream = body.get("stream") is True
    options = body.get("stream_options")
    wants_usage = isinstance(options, dict) and options.get("include_usage") is True
    return ChatCall(body, model, messages, stream, wants_usage)


def _read_chat(raw: bytes, limits: LimitsConfig) -> ChatCall:
    return parse_chat(json_object(raw, limits.max_body_containers))


def upstream_payload(
    call: ChatCall, turn: Turn, model: str, scope: TenantScope | None = None
) -> bytes:
    """The client's body with the budgeted window, the reply ceiling, the model the spend
    guard allows, the tenant's `prompt_cache_key` (`scope`) and, for a stream, a request
    for the usage chunk."""
    body = dict(call.body)
    body["model"] = model
    body["messages"] = turn.window.messages
    if scope is not None:
        scope.cache_key(body)
    keys: list[str] = [k for k in ("max_tokens", "max_completion_tokens") if k in body]
    if not keys:
        keys = [ceiling_key(model)]
    for key in keys:
        body[key] = turn.window.report.max_tokens
    if call.stream:
        ask_stream_usage(body)
    return orjson.dumps(body)


def window_headers(turn: Turn, spend: Reservation | None) -> list[tuple[bytes, bytes]]:
    extra = degraded_headers(spend)
    if turn.escalation:
        extra.append((b"x-gateway-escalation", turn.escalation.encode()))
    report = turn.window.report
    if report.capped_from is not None:
        capped = f"{report.capped_from}->{report.max_tokens}"
        extra.append((b"x-gateway-max-tokens-capped", capped.encode()))
    return [
        *extra,
        (b"x-gateway-conversation-id", turn.sent_id or turn.record.id.encode()),
        (b"x-gateway-class", (turn.record.conversation_class or "").encode()),
        (b"x-gateway-window-tokens", str(turn.window.report.history_tokens).encode()),
        (b"x-gateway-evicted-turns", str(turn.window.report.evicted_messages).encode()),
    ]


async def chat_completions(request: Request) -> ASGIApp:
    gw: Gateway = request.app.state.gateway
    started = perf_counter()
    caller = identify(request.headers, await authenticate(request.headers, gw.registry.find))
    request_log.note(tenant=caller.tenant.name, key_id=caller.tenant.key_id)
    # A handoff is answered at no cost: where a class may hand off, no spent budget refuses.
    await gw.refuse_early(caller, spends=not gw.settings.policies.hands_off(caller.tenant.plan))
    raw = await gw.read_body(request, caller.tenant.name)
    # parsed, and walked by parse_chat's checks, off the loop when big
    call = await offload.sized(len(raw), _read_chat, raw, gw.settings.config.limits)
    with tracing.span("window.build"):
        turn = await gw.windows.build(
            TurnRequest(
                caller,
                call.model,
                call.messages,
                call.client_max_tokens,
                header_text(request.headers, "x-operational-state"),
                gw.turn_clock(),
                retried=retry_marked(request.headers.get("x-stainless-retry-count")),
            )
        )
    if caller.conversation:  # the record's id: echoed as the client's header sent it
        turn.sent_id = sent_id(request.headers, "x-conversation-id")
    turn.escalation = gw.escalations.check(turn.record, turn.policy, gw.turn_clock(), turn.retry)
    request_log.note(
        model=call.model,
        conversation_class=turn.record.conversation_class,
        window_tokens=turn.window.report.history_tokens,
        escalation=turn.escalation,
    )
    if turn.escalation and turn.policy.escalation_action == "handoff":
        return await _handoff(gw, caller, call, turn)
    if turn.escalation and turn.policy.escalation_action == "instruct":
        turn.window.messages.append(gw.escalations.instruction(turn.escalation))
    # Opened with the tenant's salt before anything is counted: held, bounded and
    # rate-limited as sent. (The window's own context check ran without its few tokens.)
    if (scope := gw.cache_scopes.of(caller.tenant.name)) is not None:
        turn.window.messages = scope.chat(turn.window.messages)
    if turn.window.report.exceeds_context:
        await _refuse_past_context(gw, caller)
    input_estimate = await input_tokens(gw.tokens, call.model, turn.window.messages, call.body)
    factor = gw.tokens.factor(call.model)
    # Each reply may write its ceiling and be billed every predicted token it rejects.
    per_reply = turn.window.report.max_tokens + await prediction_tokens(
        gw.tokens, call.model, call.body, factor
    )
    worst = WorstCase.of(input_estimate, factor, per_reply, call.replies)
    window = gw.context_window(call.model)
    cost = chat_cost(call.body, call.model, turn.window.messages, worst, window)
    tier = held_tier(
        call.body.get("service_tier"), gw.settings.config.upstream.default_service_tier
    )
    with tracing.span("spend.guard"):
        spend = await gw.guard.reserve(
            caller,
            call.model,
            cost.held_input,
            worst.output_tokens,
            images=cost.images,
            audio_output=call.audio_output,
            audio_input=cost.audio,
            web_searches=cost.searches,
            tier=tier,
        )
    request_log.note(degraded_to=spend.model if spend.degraded_from else None)
    bound = cost.bound((call.model, spend.model))
    ctx = _Context(gw, caller, call, turn, spend, input_estimate, bound, tier)
    # On an error after the upstream was reached the call may be billed: book an estimate
    # (every reply's ceiling once it began answering: gateway.ledger.accounting.unread).
    # Its worst case, journaled once forwarded: a process killed meanwhile leaves it booked at this.
    journal = {
        "tenant": caller.tenant.name,
        "plan": caller.tenant.plan,
        "customer": caller.customer,
        "conversation": turn.record.id,
        "route": ROUTE,
        "input": cost.held_input,
        "output": worst.output_tokens,
        "web_searches": cost.searches,
        "tier": tier,
    }
    async with gw.guard.held(spend, lambda: _settle(ctx, spend.model, None), journal) as ctx.hold:
        # Counted once the spend guard took the call: one it refuses uses no request.
        ctx.rate = await gw.rates.admit(gw.settings.rate_limits, caller.tenant, input_estimate)
        await still_there(request)  # it may have waited: billed for nobody if forwarded
        ctx.hold.forwarded()  # journaled in flight until booked
        gw.windows.begin(turn)  # the newest message's facts: taken, so written meanwhile
        response = await gw.upstream.send(
            "POST",
            gw.upstream.url(request.url.path, request.scope["query_string"]),
            gw.upstream.headers(request.headers.raw, caller.tenant.name),
            upstream_payload(call, turn, spend.model, scope),
        )
        ctx.answering = response.is_success
        await gw.windows.written(turn)  # the newest message's facts, before any answer
        before_upstream = perf_counter() - started
        if not (call.stream and response.is_success):
            return await _json(ctx, response, before_upstream)
        chunks = gw.upstream.iter_bytes(response)
        if is_event_stream(response.headers.get("content-type", "")):
            return _stream(ctx, response, before_upstream, chunks)
        # Labelled otherwise (`text/plain`, `application/x-ndjson`, none): its first bytes
        # say whether it is a stream. (A reply the gateway cannot decode raises here, as
        # its reading would: 502, booked at every reply's ceiling.)
        start = await first_bytes(chunks)
        if reads_as_events(start):
            return _stream(ctx, response, before_upstream, chained(start, chunks), True)
        body = await rest_of_reply(gw.upstream.max_reply_bytes, response, start, chunks)
        return await _json(ctx, response, before_upstream, body)


async def _refuse_past_context(gw: Gateway, caller: Caller) -> None:
    """400 `context_length_exceeded`, counted as a request first: it built its window,
    so a rate limit bounds such calls as it does others."""
    await gw.rates.admit(gw.settings.rate_limits, caller.tenant, 0)
    raise InvalidRequest(
        "The system message and the window's minimum history exceed the model's context window.",
        param="messages",
        code="context_length_exceeded",
    )


@dataclass(slots=True)
class _Context:
    """Everything a relay needs to book the call once the upstream has answered."""

    gw: Gateway
    caller: Caller
    call: ChatCall
    turn: Turn
    spend: Reservation
    input_estimate: int  # raw count of everything sent: messages, tools, schemas
    bound: UsageBound | None  # the most the upstream can bill for it
    tier: str  # the service tier it was held at (gateway.spend.pricing.held_tier)
    hold: Hold | None = None
    answering: bool = False  # the upstream began a successful answer
    rate: RateTicket = UNLIMITED  # its rate-limit headers, and where its output settles


async def _handoff(gw: Gateway, caller: Caller, call: ChatCall, turn: Turn) -> RawResponse:
    """The class's handoff message instead of the model: booked at zero cost."""
    await gw.accountant.book(
        caller, call.model, TokenUsage(), "handoff", conversation=turn.record.id
    )
    if turn.escalation:
        gw.escalations.commit(turn.record, turn.escalation, turn.retry)
    await gw.windows.finish(turn, call.messages, 0, gw.turn_clock(), turn.policy.handoff_message)
    return handoff_response(
        call.model,
        turn.policy.handoff_message,
        call.stream,
        call.client_wants_usage,
        window_headers(turn, None),
    )


async def _settle(
    ctx: _Context,
    model: str,
    reported: Any,
    output_text: Callable[[], str] | None = None,
    answer: Callable[[], str] | None = None,
    served_tier: Any = None,
    answered: bool = True,
) -> None:
    """Book the call (settling its reservation), then record the turn. `output_text`:
    everything the model wrote (for estimates); `answer`: what the customer was shown,
    read by the loop detector and kept for the episode card; `served_tier`: the service
    tier the reply says served it (priced at its rates; else the tier it was held at);
    `answered`: the reply reached the client whole (False for a stream the upstream broke
    off or the client left). Only an answered turn applies an escalation (commit) and is
    read by the loop detector; a call that failed after reaching the upstream
    (`output_text` None) is never one."""
    gw, call = ctx.gw, ctx.call
    # Token counts learn and estimate under the requested model; prices use the served one.
    usage: TokenUsage | None
    if output_text is None and ctx.answering and ctx.bound is not None:
        # it began answering, but its reply was never read (too large, cut off)
        usage = gw.accountant.unread(call.model, ctx.input_estimate, ctx.bound)
    else:
        usage = gw.accountant.usage(
            call.model, reported, ctx.input_estimate, output_text, ctx.bound
        )
    if usage is not None and (searches := chat_searches(ctx.spend.model, call.body)):
        usage = replace(usage, web_searches=searches)  # the usage does not report it
    cost = None
    if usage is not None:
        with tracing.span("booking"):
            record = await gw.accountant.book(
                ctx.caller,
                model,
                usage,
                ROUTE,
                conversation=ctx.turn.record.id,
                budgets=ctx.spend.budgets,
                reservation=ctx.spend.id,
                fallback_model=ctx.spend.priced_as,
                tier=tier_of(served_tier) or ctx.tier,
                held_tier=ctx.tier,
                record_id=ctx.hold.call if ctx.hold is not None else None,
                at=ctx.spend.at,
            )
        request_log.note_usage(model, usage, record.cost_units)
        if ctx.hold is not None:
            ctx.hold.settled()
        cost = record.cost_units
        await gw.rates.settle(ctx.rate, usage.output)
        gw.metrics.observe_turn(ctx.turn.record, cost, usage.input_total, ctx.turn.quota_hit)
    shown = answer() if answer is not None else ""
    if answered and output_text is not None:
        if ctx.turn.escalation:
            gw.escalations.commit(ctx.turn.record, ctx.turn.escalation, ctx.turn.retry)
        if not ctx.turn.retry:  # a retry is the turn the detector has read already
            progress = ctx.turn.facts_learned > 0
            # What the customer was shown: not the reasoning nor a call's arguments; ""
            # for a call of the app's tools or several choices (never a repeat).
            gw.escalations.observe(ctx.turn.record, call.messages, shown, progress)
    await gw.windows.finish(ctx.turn, call.messages, cost, gw.turn_clock(), shown)


async def _json(
    ctx: _Context, response: httpx.Response, before_upstream: float, body: bytes | None = None
) -> RawResponse:
    """A whole reply: `body` when read already, else read here."""
    gw = ctx.gw
    if ctx.hold is not None and not response.is_success:
        ctx.hold.book_estimate = None  # an error answer is not billed: release
    if body is None:
        body = await gw.upstream.read(response)
    after = perf_counter()
    if response.is_success:
        obj = json_object_or_none(body) or lenient_object(body)
        if obj is None or error_in_reply(obj):
            return await _unread(ctx, response, body, obj is None)
        model = obj.get("model") if isinstance(obj.get("model"), str) else ctx.spend.model
        await _settle(
            ctx,
            model or ctx.spend.model,
            obj.get("usage"),
            lambda: reply_text(obj),
            lambda: shown_answer(obj),
            obj.get("service_tier"),
        )
    gw.metrics.overhead.labels(ROUTE, "false").observe(before_upstream + perf_counter() - after)
    headers = [
        *response_headers(response.headers),
        *window_headers(ctx.turn, ctx.spend),
        *ctx.rate.headers,
    ]
    return RawResponse(response.status_code, headers, body)


async def _unread(
    ctx: _Context, response: httpx.Response, body: bytes, broken: bool
) -> RawResponse:
    """A 2xx reply the gateway cannot relay as one: a body that is not a JSON object (cut
    off mid-body: a connection closed early, a Content-Length short of the bytes), or
    an error object. The upstream began answering and may have billed every reply to
    its ceiling, as a reply it could not read is booked; the client gets a 502 in
    OpenAI's shape (the provider's error, scrubbed as an error answer is), and
    `x-should-retry: false`: a retry would be billed again."""
    await _settle(ctx, ctx.spend.model, None)  # unread: every reply's ceiling, estimated
    upstream = ctx.gw.upstream
    error = UpstreamReplyUnreadable(
        f"upstream {upstream.display} answered {response.status_code} with a body that is "
        "not a whole JSON object (cut off or malformed)."
    )
    # An error object: the provider's, scrubbed as an upstream error answer is (the key
    # and anything key-like withheld).
    content = error.body() if broken else upstream.scrubbed(502, body)
    headers = [*error.headers(), JSON, *window_headers(ctx.turn, ctx.spend), *ctx.rate.headers]
    return RawResponse(error.status, headers, content)


def _stream(
    ctx: _Context,
    response: httpx.Response,
    before_upstream: float,
    chunks: AsyncIterator[bytes],
    relabel: bool = False,
) -> StreamRelay:
    """Relays `chunks`, the reply's body; `relabel`: an event stream the upstream labelled
    otherwise, sent to the client as `text/event-stream`."""
    gw = ctx.gw
    headers = response_headers(response.headers)
    if relabel:
        headers = [(k, v) for k, v in headers if k.lower() != b"content-type"]
        headers.append((b"content-type", b"text/event-stream; charset=utf-8"))
    gw.metrics.overhead.labels(ROUTE, "true").observe(before_upstream)

    async def book(tap: UsageTap) -> None:
        await _settle(
            ctx,
            tap.model or ctx.spend.model,
            tap.usage,
            tap.streamed_text,
            tap.answer_text,
            tap.service_tier,
            answered=tap.whole,  # a broken or abandoned stream answered nothing
        )

    on_done = ctx.hold.end_with_stream(book) if ctx.hold is not None else book

    return StreamRelay(
        response.status_code,
        [*headers, *window_headers(ctx.turn, ctx.spend), *ctx.rate.headers],
        chunks,
        response.aclose,
        UsageTap(
            hide_usage=not ctx.call.client_wants_usage,
            hold_on_finish=ctx.call.body.get("n") in (None, 1),
            max_event_bytes=gw.upstream.max_reply_bytes,
        ),
        on_done,
    )
