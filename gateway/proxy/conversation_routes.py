"""The tenant's own view and controls of conversations and customers (tenant key):

GET    /v1/conversations/{id}          class, turns, window tokens, summary, cursor, escalation
PUT    /v1/conversations/{id}/state    operational state for the coming turns
POST   /v1/conversations/{id}/close    close it: its episode summary is made now
GET    /v1/customers/{id}/facts        the customer's durable facts
PUT    /v1/customers/{id}/facts        add or replace facts (by id), up to the limits
DELETE /v1/customers/{id}/facts        forget them all, or one with ?id=
DELETE /v1/customers/{id}              erase everything held about the customer
GET    /v1/customers/{id}/export       everything held about the customer
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from starlette.requests import Request

from gateway.context import customers
from gateway.context.conversation_record import ConversationRecord, is_anonymous
from gateway.context.fact_docs import customer_facts_key, fact_to_json
from gateway.context.types import LATEST_TIME, Fact
from gateway.errors import InvalidRequest, NotFound
from gateway.loops.state import LoopState, progressed
from gateway.proxy.http_responses import RawResponse, json_response
from gateway.proxy.identity import MAX_HEADER_VALUE, Caller, authenticate, identify, path_id
from gateway.proxy.request_body import json_object
from gateway.runtime import Gateway
from gateway.spend.money import usd_text

MAX_FACT_CHARS = 2000


async def _caller(request: Request) -> tuple[Gateway, Caller]:
    gw: Gateway = request.app.state.gateway
    return gw, identify(request.headers, await authenticate(request.headers, gw.registry.find))


async def _json_body(request: Request, gw: Gateway, caller: Caller, limit: int) -> dict[str, Any]:
    raw = await gw.read_body(request, caller.tenant.name, limit)
    return json_object(raw, gw.settings.config.limits.max_body_containers)


def _conversation(request: Request) -> str:
    """The path's conversation id, read as the customer's is (identity.path_id): one
    over the length of an id is refused, as the header naming it would be."""
    conversation = path_id(str(request.path_params["conversation"]), "conversation")
    if conversation is None:
        raise InvalidRequest("The conversation id is empty.", param="conversation")
    return conversation


def _shown(record: ConversationRecord) -> dict[str, Any]:
    """The record as the tenant sees it, its costs also in USD as every other route
    shows money (decimal strings); the integer units stay for existing readers."""
    doc = record.public()
    doc["cost_usd"] = usd_text(record.cost_units)
    first = record.first_turn_cost_units
    doc["first_turn_cost_usd"] = None if first is None else usd_text(first)
    return doc


async def _record(gw: Gateway, caller: Caller, conversation: str) -> ConversationRecord:
    record = await gw.windows.conversations.load(caller.tenant.name, conversation)
    if record is None:
        raise NotFound(
            f"No conversation {conversation!r} for this tenant.", code="conversation_not_found"
        )
    return record


async def _addressable(gw: Gateway, caller: Caller, conversation: str) -> ConversationRecord:
    """A conversation the app may steer. One known only by its fingerprint may be any of
    the end users who opened the same way: state set on it would reach all of them."""
    record = await _record(gw, caller, conversation)
    if is_anonymous(record):
        raise InvalidRequest(
            f"Conversation {conversation!r} was recognised by its opening messages, not "
            "named: it may stand for several end users, so it takes no state or events. "
            "Send X-Conversation-Id (or X-Customer-Id) with its requests.",
            code="conversation_not_addressable",
        )
    return record


async def get_conversation(request: Request) -> RawResponse:
    gw, caller = await _caller(request)
    record = await _record(gw, caller, _conversation(request))
    return json_response(orjson.dumps(_shown(record)))


async def put_state(request: Request) -> RawResponse:
    gw, caller = await _caller(request)
    conversation = _conversation(request)
    body = await _json_body(request, gw, caller, 64 * 1024)
    state = body.get("state")
    if state is not None and not isinstance(state, str | dict):
        raise InvalidRequest("'state' must be a string, an object or null.", param="state")
    record = await _addressable(gw, caller, conversation)
    record.operational_state = orjson.dumps(state).decode() if isinstance(state, dict) else state
    await gw.windows.conversations.save(record)
    return json_response(orjson.dumps(_shown(record)))


async def post_event(request: Request) -> RawResponse:
    """POST /v1/conversations/{id}/events {"type": "progress" | "resolved"}: the app
    says the conversation moved on, which resets its loop and turn-ceiling clocks (and
    drops the action of a loop noticed at the end of the last turn)."""
    gw, caller = await _caller(request)
    conversation = _conversation(request)
    body = await _json_body(request, gw, caller, 64 * 1024)
    kind = body.get("type")
    if kind not in ("progress", "resolved"):
        raise InvalidRequest("'type' must be 'progress' or 'resolved'.", param="type")
    record = await _addressable(gw, caller, conversation)
    record.loop_state = progressed(LoopState.from_json(record.loop_state), record.turns).to_json()
    record.escalation_pending = None  # a loop noticed is past: its action is not applied
    record.last_event = kind
    record.events += 1
    await gw.windows.conversations.save(record)
    return json_response(orjson.dumps(_shown(record)))


async def close_conversation(request: Request) -> RawResponse:
    gw, caller = await _caller(request)
    record = await _record(gw, caller, _conversation(request))
    record.closed = True
    await gw.windows.conversations.save(record)
    episode = await gw.windows.episodes.closed(
        caller, record, record.model or "default", gw.turn_clock()
    )
    # The app holds every scope (it reads the customer's facts): the model's card if any.
    card = episode.model_summary or episode.summary
    return json_response(orjson.dumps({**_shown(record), "episode_summary": card}))


def _fact_id(given: Any, customer: str, text: str) -> str:
    """The fact's id as the app gave it (a string or an integer), else a digest of the
    customer and the text."""
    if given is None:
        return hashlib.blake2b(f"{customer}:{text}".encode(), digest_size=8).hexdigest()
    if isinstance(given, bool) or not isinstance(given, str | int):
        given = ""
    if not str(given).strip() or len(str(given)) > MAX_HEADER_VALUE:
        raise InvalidRequest(
            f"A fact's 'id' is a string (1-{MAX_HEADER_VALUE} characters) or an integer.",
            param="id",
        )
    return str(given)


def _fact(raw: Any, customer: str, now: float) -> Fact:
    if not isinstance(raw, dict):
        raise InvalidRequest("Each fact must be an object.", param="facts")
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_FACT_CHARS:
        raise InvalidRequest(f"A fact needs 'text' (1-{MAX_FACT_CHARS} characters).", param="text")
    tags = raw.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidRequest("'tags' must be a list of strings.", param="tags")
    confirmed = raw.get("confirmed", False)
    confirmed_at = raw.get("confirmed_at")
    if not isinstance(confirmed, bool) or not (
        confirmed_at is None
        or (isinstance(confirmed_at, int | float) and 0 <= confirmed_at <= LATEST_TIME)
    ):
        raise InvalidRequest(
            "'confirmed' is a boolean, 'confirmed_at' a unix time.", param="confirmed"
        )
    value = raw.get("value", "")
    if not isinstance(value, str) or len(value) > MAX_FACT_CHARS:
        raise InvalidRequest(
            f"'value' is what the fact states, a string of at most {MAX_FACT_CHARS} characters.",
            param="value",
        )
    unverified = raw.get("stated_unverified", False)
    if not isinstance(unverified, bool):
        raise InvalidRequest("'stated_unverified' is a boolean.", param="stated_unverified")
    fid = _fact_id(raw.get("id"), customer, text)
    scope, channel = raw.get("scope", "basic"), raw.get("source_channel", "api")
    for name, given in (("scope", scope), ("source_channel", channel)):
        if not isinstance(given, str):
            raise InvalidRequest(f"'{name}' is a string.", param=name)
    return Fact(
        id=fid,
        text=text.strip(),
        tags=tuple(t.lower() for t in tags),
        scope=scope,
        source_channel=channel,
        confirmed=confirmed,
        # never in the future: a fact confirmed "later" would be progress on every turn
        confirmed_at=(
            min(confirmed_at, now) if confirmed_at is not None else (now if confirmed else None)
        ),
        created_at=now,
        value=value.strip(),
        # an app putting back what it read keeps the mark (gateway.context.unverified)
        stated_unverified=unverified,
    )


async def put_facts(request: Request) -> RawResponse:
    gw, caller = await _caller(request)
    customer = _customer(request)
    body = await _json_body(request, gw, caller, 1024 * 1024)
    raw_facts = body.get("facts")
    if not isinstance(raw_facts, list):
        raise InvalidRequest("'facts' must be a list of fact objects.", param="facts")
    now = gw.turn_clock()
    new = [_fact(f, customer, now) for f in raw_facts]
    tenant, key = caller.tenant, customer_facts_key(customer)
    facts = await gw.windows.conversations.put_app_facts(tenant.name, key, new, tenant.plan)
    return json_response(orjson.dumps({"facts": [fact_to_json(f) for f in facts]}))


async def get_facts(request: Request) -> RawResponse:
    gw, caller = await _caller(request)
    # The customer's key, as PUT and DELETE use: the raw id would reach any document of
    # the facts collection ("customer:x", "conversation:y").
    key = customer_facts_key(_customer(request))
    facts = await gw.windows.conversations.facts(caller.tenant.name, key)
    return json_response(orjson.dumps({"facts": [fact_to_json(f) for f in facts]}))


async def delete_facts(request: Request) -> RawResponse:
    gw, caller = await _caller(request)
    key, store = customer_facts_key(_customer(request)), gw.windows.conversations
    one = request.query_params.get("id")
    if one is None:
        deleted = await store.delete_facts(caller.tenant.name, key, caller.tenant.plan)
    else:
        facts = await store.facts(caller.tenant.name, key)
        kept = [f for f in facts if f.id != one]
        deleted = len(facts) - len(kept)
        await store.save_facts(caller.tenant.name, key, kept, caller.tenant.plan, facts)
    return json_response(orjson.dumps({"deleted": deleted}))


def _customer(request: Request) -> str:
    """The path's customer id, as the header's is kept (identity.path_id: the path is
    UTF-8 already, so the same id the header named, byte for byte)."""
    customer = path_id(str(request.path_params["customer"]), "customer")
    if customer is None:
        raise InvalidRequest("The customer id is empty.", param="customer")
    return customer


async def erase_customer(request: Request) -> RawResponse:
    """Privacy erasure (gateway.context.customers): facts, episodes and conversations
    deleted on the tenant's store, ledger rows and spend counters pseudonymized."""
    gw, caller = await _caller(request)
    erased = await customers.erase(
        gw.store, gw.windows.conversations, caller.tenant.name, _customer(request)
    )
    gw.guard.forget_spent()  # their spend moved to the pseudonym: room again
    return json_response(orjson.dumps(erased))


async def export_customer(request: Request) -> RawResponse:
    gw, caller = await _caller(request)
    found = await customers.export(
        gw.store, gw.windows.conversations, caller.tenant.name, _customer(request)
    )
    return json_response(orjson.dumps(found))
