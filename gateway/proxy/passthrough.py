"""The other /v1/* routes: forwarded as sent (plus an output ceiling the client did not
name, see gateway.proxy.passthrough_cost), authenticated, guarded by a worst-case reservation
like chat, and booked from the usage the upstream reports (or an estimate); an image or
audio call the upstream reports no usage for is booked too, unpriced (or, for speech, at
the characters it sent): every call forwarded is booked once.

Only stateless routes pass. Every tenant shares the gateway's provider key, so a route
that reads provider-side state (files, batches, stored completions, assistants, a stored
response by id, fine-tuning jobs) would show one tenant another's data: those get 404.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import httpx
import orjson
from starlette.requests import Request
from starlette.types import ASGIApp

from gateway import offload
from gateway.errors import InvalidRequest, NotFound
from gateway.ledger.usage import TokenUsage, web_searches_made
from gateway.proxy import request_log
from gateway.proxy.http_responses import RawResponse
from gateway.proxy.identity import Caller, authenticate, identify
from gateway.proxy.passthrough_cost import FREE_ROUTES, PassCall, read_call
from gateway.proxy.reply_text import reply_text
from gateway.proxy.request_body import json_object_or_none, still_there
from gateway.proxy.streaming import StreamRelay, UsageTap, is_event_stream
from gateway.proxy.upstream import degraded_headers, response_headers
from gateway.proxy.upstream_errors import WITHHELD, scrub
from gateway.runtime import Gateway
from gateway.spend.hold import Hold, Reservation
from gateway.spend.pricing import held_tier, tier_of
from gateway.spend.rate_guard import UNLIMITED, RateTicket

# (method, path under /v1) of the stateless routes; a trailing "/*" allows one more segment.
ALLOWED = frozenset(
    {
        ("GET", "/models"),
        ("GET", "/models/*"),
        ("POST", "/embeddings"),
        ("POST", "/completions"),
        ("POST", "/moderations"),
        ("POST", "/responses"),
        ("POST", "/audio/speech"),
        ("POST", "/audio/transcriptions"),
        ("POST", "/audio/translations"),
        ("POST", "/images/generations"),
        ("POST", "/images/edits"),
        ("POST", "/images/variations"),
    }
)
# Dot segments, encoded slashes and backslashes, doubled slashes; an encoded `%` (a
# second layer of encoding that a server behind the upstream might decode), NUL, `;`
# path parameters, an encoded `?` or `#`. No route or model id needs any of them.
_SUSPECT = re.compile(r"(^|/)(\.|%2e){1,2}(/|$)|%2f|%5c|%25|%00|%3b|%3f|%23|\\|//|;", re.I)


def check_route(method: str, raw_path: str) -> None:
    """Refuse paths that could climb out of /v1 and routes that expose shared state."""
    if _SUSPECT.search(raw_path):
        raise InvalidRequest("The request path is not a plain /v1 path.", code="invalid_path")
    tail = raw_path.removeprefix("/v1")
    parent = tail.rsplit("/", 1)[0] + "/*"
    allowed = "GET" if method == "HEAD" else method  # HEAD: a GET without its body
    if (allowed, tail) not in ALLOWED and (allowed, parent) not in ALLOWED:
        raise NotFound(
            f"{method} /v1{tail} is not proxied: the gateway forwards only stateless routes, "
            "because provider-side objects would be shared by every tenant.",
            code="route_not_proxied",
        )


def _route(path: str) -> str:
    return path.removeprefix("/v1/").split("/", 1)[0][:40] or "v1"


def _usage_of(obj: Any) -> tuple[Any, str | None, Any]:
    """A reply's usage, the model it names and the service tier that served it."""
    if not isinstance(obj, dict):
        return None, None, None
    usage = obj.get("usage")
    if usage is None and isinstance(obj.get("response"), dict):  # Responses API events
        obj = obj["response"]
        usage = obj.get("usage")
    model = obj.get("model")
    return usage, model if isinstance(model, str) else None, obj.get("service_tier")


@dataclass(slots=True)
class _Booking:
    """What books a pass-through call once the upstream has answered."""

    gw: Gateway
    caller: Caller
    call: PassCall
    spend: Reservation
    held_input: int  # the input held for it (PassCall.held_input)
    tier: str  # the service tier it was held at (gateway.spend.pricing.held_tier)
    hold: Hold | None = None
    rate: RateTicket = UNLIMITED  # its rate-limit headers, and where its output settles
    answering: bool = False  # the upstream began a successful answer
    # The reply as if the client's call had been forwarded unsalted (cache_scope.py).
    given_back: Callable[[bytes], bytes] | None = None

    async def book(
        self,
        reported: Any,
        model: str | None,
        text: Callable[[], str],
        searches: int | None = None,
        served_tier: Any = None,
    ) -> None:
        """Reported usage, else (for a call whose input was counted) an estimate, else
        (an image or audio call) what the gateway knows it billed: a speech call's
        characters, or nothing it can price (booked unpriced); and the web `searches`
        the answer shows (None: not seen, so the most it may make); priced at the service
        tier the answer says served it (else the one held)."""
        gw, call = self.gw, self.call
        model = model or self.spend.model  # the model asked for, or degraded to
        bound = call.bound(gw.tokens.factor(model), self.held_input)
        usage = gw.accountant.usage(model, reported, None, bound=bound)
        if usage is None and call.estimated:
            usage = gw.accountant.usage(model, None, call.raw_input, text)
        if usage is None and not call.free:
            usage = self._unreported()
        if usage is None:
            return  # nothing billed: leaving `held()` releases the reservation
        await self._book(model, usage, searches, tier_of(served_tier))

    def _unreported(self) -> TokenUsage:
        """An image or audio call whose use the upstream did not report (a reply without
        usage, a stream closed before its usage came): a speech call is billed the
        characters it sent; anything else is booked unpriced, never as free."""
        if self.call.characters:
            return TokenUsage(characters=self.call.characters, estimated=True)
        return TokenUsage(estimated=True, unmetered=True)

    async def book_failed(self) -> None:
        """A call that failed after the upstream was reached: an estimate of its input;
        once the upstream began answering (its reply too large to read, or cut off), every
        reply to its ceiling, which the provider may have billed."""
        model = self.spend.model
        bound = self.call.bound(self.gw.tokens.factor(model), self.held_input)
        if not self.answering or bound is None:  # an image or audio call: `_unreported`
            await self.book(None, None, str)
            return
        # a call sent with no output ceiling has none to bill: its default is the estimate
        bound = replace(bound, output=self.call.held_output)
        await self._book(model, self.gw.accountant.unread(model, self.call.raw_input, bound), None)

    async def _book(
        self, model: str, usage: TokenUsage, searches: int | None, tier: str | None = None
    ) -> None:
        gw, call = self.gw, self.call
        if call.web_searches:
            made = call.web_searches if searches is None else searches
            usage = replace(usage, web_searches=made)
        record = await gw.accountant.book(
            self.caller,
            model,
            usage,
            call.route,
            budgets=self.spend.budgets,
            reservation=self.spend.id,
            fallback_model=self.spend.priced_as,
            tier=tier or self.tier,
            held_tier=self.tier,
            at=self.spend.at,
            record_id=self.hold.call if self.hold is not None else None,
        )
        request_log.note_usage(model, usage, record.cost_units)
        if self.hold is not None:
            self.hold.settled()
        await gw.rates.settle(self.rate, usage.output)


async def _reserve(
    gw: Gateway, caller: Caller, call: PassCall, held_input: int, tier: str
) -> Reservation:
    model = call.model or "unknown"
    if call.free:
        return gw.guard.unheld(caller, model)
    return await gw.guard.reserve(
        caller,
        model,
        held_input,
        call.held_output,
        bounded=call.bounded,
        images=call.images,
        audio_input=call.audio,
        web_searches=call.web_searches,
        tier=tier,
        degradable=call.route in DEGRADABLE,
    )


# Routes whose prompts open with the tenant's salt (gateway.proxy.cache_scope).
SALTED = frozenset({"completions", "responses"})
# Routes whose call the ceiling's `degrade_to` model may answer instead (an embedding's
# vectors belong to the model that made them: refused at the ceiling, never degraded).
DEGRADABLE = frozenset({"completions", "responses"})


def forwarded_body(call: PassCall, spend: Reservation) -> bytes:
    """The client's body, with the model the spend guard degraded the call to."""
    if not spend.degraded_from:
        return call.body
    obj = orjson.loads(call.body)
    obj["model"] = spend.model
    return orjson.dumps(obj)


async def passthrough(request: Request) -> ASGIApp:
    gw: Gateway = request.app.state.gateway
    caller = identify(request.headers, await authenticate(request.headers, gw.registry.find))
    request_log.note(tenant=caller.tenant.name, key_id=caller.tenant.key_id)
    check_route(request.method, request.scope.get("raw_path", b"").decode("latin-1").split("?")[0])
    route = _route(request.url.path)
    await gw.refuse_early(caller, spends=route not in FREE_ROUTES)
    body = await gw.read_body(request, caller.tenant.name)
    defaults = gw.settings.spend.file
    scope = gw.cache_scopes.of(caller.tenant.name)
    call = await offload.sized(  # megabytes of prompt are counted off the event loop
        len(body),
        read_call,
        route,
        body,
        gw.tokens,
        defaults.default_max_output_tokens,
        defaults.default_max_tool_calls,
        gw.settings.config.limits.max_body_containers,
        gw.guard.guards(caller),
        content_type=request.headers.get("content-type", ""),
        scope=scope,
    )
    request_log.note(model=call.model)
    asked = call.model or "unknown"
    held = call.held_input(gw.tokens.factor(asked), gw.context_window(asked))
    tier = held_tier(call.tier, gw.settings.config.upstream.default_service_tier)
    spend = await _reserve(gw, caller, call, held, tier)
    request_log.note(degraded_to=spend.model if spend.degraded_from else None)
    booking = _Booking(gw, caller, call, spend, held, tier)
    if scope is not None and call.route in SALTED:  # what the reply echoes, as sent
        booking.given_back = scope.replier(call.cache_key)
    # On an error after the upstream was reached the call may be billed: book an estimate
    # (an image or audio call, what the gateway knows of it: `_Booking._unreported`).
    estimate = None if call.free else booking.book_failed
    # Its worst case, journaled once forwarded: a process killed meanwhile leaves it booked at this.
    journal = None
    if call.estimated:
        journal = {
            "tenant": caller.tenant.name,
            "plan": caller.tenant.plan,
            "customer": caller.customer,
            "conversation": caller.conversation,
            "route": call.route,
            "input": held,
            "output": call.held_output,
            "web_searches": call.web_searches,
            "tier": tier,
        }
    async with gw.guard.held(spend, estimate, journal) as booking.hold:
        # Counted once the spend guard took the call: one it refuses uses no request.
        booking.rate = await gw.rates.admit(gw.settings.rate_limits, caller.tenant, call.raw_input)
        await still_there(request)  # it may have waited: billed for nobody if forwarded
        booking.hold.forwarded()  # journaled in flight until booked
        response = await gw.upstream.send(
            request.method,
            gw.upstream.url(request.url.path, request.scope["query_string"]),
            gw.upstream.headers(request.headers.raw, caller.tenant.name),
            forwarded_body(call, spend),
        )
        booking.answering = response.is_success
        if is_event_stream(response.headers.get("content-type", "")):
            return _stream(booking, response)
        if not response.is_success:
            booking.hold.book_estimate = None  # an error answer is not billed: release
        content = await gw.upstream.read(response)
        if call.route == "models":
            content = owners_withheld(content)
        if booking.given_back is not None:
            content = booking.given_back(content)
        if response.is_success:
            obj = _json_object(content)
            reported, model, tier = _usage_of(obj)
            searches = web_searches_made(obj)
            await booking.book(reported, model, lambda: reply_text(obj), searches, tier)
        headers = [
            *response_headers(response.headers),
            *degraded_headers(spend),
            *booking.rate.headers,
        ]
        return RawResponse(response.status_code, headers, content)


def _stream(booking: _Booking, response: httpx.Response) -> StreamRelay:
    async def book(tap: UsageTap) -> None:
        if response.is_success:
            await booking.book(
                tap.usage, tap.model, tap.streamed_text, tap.web_searches, tap.service_tier
            )

    on_done = booking.hold.end_with_stream(book) if booking.hold is not None else book

    return StreamRelay(
        response.status_code,
        [
            *response_headers(response.headers),
            *degraded_headers(booking.spend),
            *booking.rate.headers,
        ],
        booking.gw.upstream.iter_bytes(response),
        response.aclose,
        UsageTap(
            hide_usage=booking.call.hide_usage,
            hold_on_finish=booking.call.replies == 1,
            max_event_bytes=booking.gw.upstream.max_reply_bytes,
            rewrite=booking.given_back,
        ),
        on_done,
    )


def _json_object(content: bytes) -> Any:
    """The reply as JSON when it may say what was used or generated (a file's bytes, a
    model list, need no parse)."""
    if not any(key in content for key in (b'"usage"', b'"choices"', b'"output"')):
        return None
    return json_object_or_none(content)


def owners_withheld(content: bytes) -> bytes:
    """A model list (or one model) as a tenant may see it: an `owned_by` that names the
    provider's account (`org-...`, a fine-tuned model's owner) withheld, as the account's
    headers and errors withhold it. (The shared account's fine-tuned models are listed to
    every tenant: there is one provider key.)"""
    if b'"owned_by"' not in content:
        return content
    doc = json_object_or_none(content)
    listed = doc.get("data") if doc is not None else None
    models = listed if isinstance(listed, list) else [doc]
    changed = False
    for model in models:
        if not isinstance(model, dict):
            continue
        owner = model.get("owned_by")
        if isinstance(owner, str) and scrub(owner, ()) != owner:
            model["owned_by"] = WITHHELD
            changed = True
    return orjson.dumps(doc) if changed else content
