"""A customer's facts document is bounded (a red-team read, 2026-12-07): `PUT .../facts`
took up to 1 MB a call with no cap on the facts a customer holds, and every turn of that
customer decoded and ranked all of them on the event loop. After 60 PUTs (24,000 facts,
54 MB) each turn took seconds, and so did every other tenant's request meanwhile.

Through the official openai SDK against the gateway in this process and its simulated
upstream, on SQLite and on Redis: a PUT past `limits.max_customer_facts` or `_bytes` is
refused whole; a customer at the limit chats as before; a document stored past the limit
before it existed is read within it on a turn (the newest facts, the scoped ones first),
and loses nothing. Then the rule itself, as a table."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest

from gateway.context.fact_docs import customer_facts_key
from gateway.context.facts_limit import FactsLimit, stored_bytes, within_limit
from gateway.context.types import Fact
from tests.inprocess import InProcessGateway, SimulatorLog

LIMITS = {"max_customer_facts": 4, "max_customer_facts_bytes": 4096}
AT_LIMIT: list[dict[str, Any]] = [
    {"id": f"pref-{n}", "text": f"Prefers delivery slot {n}", "tags": ["delivery"]}
    for n in range(4)
]


@pytest.fixture(params=["sqlite", "redis"])
def gw(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[InProcessGateway]:
    """The gateway in this process, its facts limit lowered to 4 facts and 4 KB."""
    if request.param == "sqlite":
        store = f"sqlite:///{tmp_path / 'gateway.db'}"
    else:
        store = str(request.getfixturevalue("redis_url"))
    gw = InProcessGateway(tmp_path, "simulator", store, limits=LIMITS)
    gw.start()
    yield gw
    gw.stop()


def _put(gw: InProcessGateway, customer: str, facts: list[dict[str, Any]]) -> Any:
    return gw.openai().put(f"/customers/{customer}/facts", cast_to=object, body={"facts": facts})


def _stored(gw: InProcessGateway, customer: str) -> dict[str, str]:
    got: Any = gw.openai().get(f"/customers/{customer}/facts", cast_to=object)
    return {f["id"]: f["text"] for f in got["facts"]}


def _refused(gw: InProcessGateway, customer: str, facts: list[dict[str, Any]]) -> Any:
    with pytest.raises(openai.BadRequestError) as info:
        _put(gw, customer, facts)
    error = info.value.body
    assert isinstance(error, dict)
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "customer_facts_limit"
    assert error["param"] == "facts"
    return error["message"]


def _chat(gw: InProcessGateway, customer: str, text: str, **headers: str) -> str:
    """One turn of the customer through the SDK; the messages the upstream received."""
    log = SimulatorLog(gw)
    reply = gw.openai().chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": text}],
        extra_headers={
            "X-Customer-Id": customer,
            "X-Conversation-Id": f"{customer}-chat-{len(log.all())}",
            "X-Simulator-Log-Messages": "1",
            **headers,
        },
    )
    assert reply.choices[0].message.content
    [entry] = log.since()
    return "\n".join(str(m.get("content")) for m in entry["messages"])


def test_a_put_past_the_facts_limit_is_refused_whole_and_changes_nothing(
    gw: InProcessGateway,
) -> None:
    assert len(_put(gw, "ana", AT_LIMIT[:3])["facts"]) == 3
    before = _stored(gw, "ana")
    # One fact replaced (fits), two added (pass the count): neither is written.
    message = _refused(
        gw,
        "ana",
        [
            {"id": "pref-0", "text": "Prefers the morning slot"},
            {"id": "new-1", "text": "Gift wrap every order"},
            {"id": "new-2", "text": "Leave parcels with the neighbour"},
        ],
    )
    assert "limits.max_customer_facts (4)" in message
    assert "5 facts" in message
    assert _stored(gw, "ana") == before
    # Within the count, but past the bytes: the document as stored would take over 4 KB.
    big = [{"id": "big", "text": "x" * 2000, "value": "y" * 2000}]
    message = _refused(gw, "ana", big)
    assert "limits.max_customer_facts_bytes (4096)" in message
    assert _stored(gw, "ana") == before
    # Replacing facts in place is no growth: a document at the limit still takes it.
    assert len(_put(gw, "ana", AT_LIMIT)["facts"]) == 4
    assert _put(gw, "ana", [{"id": "pref-1", "text": "Prefers slot one, after 6pm"}])
    assert _stored(gw, "ana")["pref-1"] == "Prefers slot one, after 6pm"


def test_puts_at_once_cannot_pass_the_limit_together(gw: InProcessGateway) -> None:
    """Each PUT read the document, checked the limit and wrote: 12 PUTs at once, each of
    two facts of its own and within the limit alone, all read an empty document and all
    wrote, so the customer held 24 of the app's facts past a limit of 4 (and, at the
    default limits, concurrent PUTs could again grow a document turns read whole)."""
    client = gw.openai()

    def put(n: int) -> str:
        facts = [{"id": f"p{n}-{k}", "text": f"Preference {n}.{k}"} for k in range(2)]
        try:
            client.put("/customers/cid/facts", cast_to=object, body={"facts": facts})
        except openai.BadRequestError as refused:
            assert isinstance(refused.body, dict)
            assert refused.body["code"] == "customer_facts_limit"
            return "refused"
        return "written"

    with ThreadPoolExecutor(12) as pool:
        outcomes = list(pool.map(put, range(12)))
    stored = _stored(gw, "cid")
    assert len(stored) <= 4, len(stored)
    assert outcomes.count("written") == len(stored) // 2  # every answer said what happened
    assert _put(gw, "cid", [])  # and the document is still the app's to edit


def test_a_customer_at_the_limit_chats_and_facts_heard_in_turns_do_not_count(
    gw: InProcessGateway,
) -> None:
    _put(gw, "bea", AT_LIMIT)
    sent = _chat(gw, "bea", "Hi, my order ORD-55120 has not arrived. Email me at bea@example.com")
    for fact in AT_LIMIT:
        assert fact["text"] in sent
    held = _stored(gw, "bea")
    assert len(held) > 4  # the app's four and what the turn heard
    # Heard in a turn, bounded by kind: the app's own four are still within the limit.
    assert _put(gw, "bea", [{"id": "pref-2", "text": "Prefers slot two"}])
    _refused(gw, "bea", [{"id": "one-more", "text": "Fragile items inside"}])


def test_by_default_a_customer_holds_500_of_the_apps_facts(tmp_path: Path) -> None:
    gw = InProcessGateway(tmp_path, "simulator", f"sqlite:///{tmp_path / 'gateway.db'}")
    gw.start()
    try:
        many = [{"id": f"n{n}", "text": f"Note {n}"} for n in range(500)]
        assert len(_put(gw, "eva", many)["facts"]) == 500
        message = _refused(gw, "eva", [{"id": "n500", "text": "Note 500"}])
        assert "limits.max_customer_facts (500)" in message
    finally:
        gw.stop()


def _legacy(n: int, **fields: Any) -> Fact:
    """A fact the app put before the limit existed (dated in the order it was put)."""
    return Fact(
        id=f"old-{n:02d}",
        text=f"Legacy note {n:02d} code LGC-{n:04d}",
        tags=("note",),
        source_channel="api",
        created_at=1_700_000_000.0 + n,
        **fields,
    )


def test_a_document_stored_past_the_limit_is_read_within_it_and_keeps_every_fact(
    gw: InProcessGateway,
) -> None:
    """Forty facts, written to the store directly as a version without the limit kept
    them: a turn reads the limit's worth (the scoped one first, then the newest), so the
    upstream gets those and none of the older ones; the turn's own write (a fact it heard)
    leaves the rest stored; the app still sees and deletes every fact."""
    scoped = _legacy(0, scope="verified", value="PIN 48213")
    facts = [scoped, *(_legacy(n) for n in range(1, 40))]

    async def store_legacy() -> None:
        key = customer_facts_key("cris")
        await gw.gateway.windows.conversations.save_facts("acme", key, facts)

    gw.http.portal.call(store_legacy)  # type: ignore[union-attr]
    sent = _chat(
        gw,
        "cris",
        "Where is my order ORD-77001? My email is cris@example.com",
        **{"X-Customer-Scopes": "basic,verified"},
    )
    newest = [f.text for f in facts[-3:]]
    for text in [scoped.text, *newest]:
        assert text in sent
    for fact in facts[1:-3]:
        assert fact.text not in sent, fact.text
    held = _stored(gw, "cris")
    assert {f.id for f in facts} < set(held)  # all forty, and what the turn heard
    # Past the limit, the document takes no PUT until it is trimmed.
    _refused(gw, "cris", [{"id": "old-39", "text": "Legacy note 39, amended"}])
    assert held == _stored(gw, "cris")
    app = gw.openai()
    for fact in facts[:37]:
        app.delete(f"/customers/cris/facts?id={fact.id}", cast_to=object)
    assert _put(gw, "cris", [{"id": "old-39", "text": "Legacy note 39, amended"}])


# -- the rule: what a turn reads of a document ----------------------------------------


def _raw(n: int, *, extracted: bool = False, scope: str = "basic", size: int = 0) -> Any:
    return {
        "id": f"f{n}",
        "text": "t" * size,
        "scope": scope,
        "extracted": extracted,
        "created_at": float(n),
    }


SMALL = FactsLimit(facts=3, bytes=10_000)


@pytest.mark.parametrize(
    ("facts", "limit", "kept"),
    [
        ([_raw(n) for n in range(3)], SMALL, [0, 1, 2]),  # within: whole
        ([_raw(n) for n in range(6)], SMALL, [3, 4, 5]),  # the newest
        (
            [_raw(0, scope="verified"), *(_raw(n) for n in range(1, 6))],
            SMALL,
            [0, 4, 5],  # what a card must withhold first
        ),
        (
            [*(_raw(n) for n in range(5)), *(_raw(n, extracted=True) for n in range(5, 8))],
            SMALL,
            [2, 3, 4, 5, 6, 7],  # heard in turns: bounded apart
        ),
        (
            [_raw(n, size=300) for n in range(3)],
            FactsLimit(facts=3, bytes=2 * stored_bytes(_raw(0, size=300))),
            [1, 2],  # the bytes: the newest that fit
        ),
    ],
    ids=["within", "newest", "scoped-first", "heard-apart", "bytes"],
)
def test_a_turn_reads_the_newest_facts_within_the_limit(
    facts: list[dict[str, Any]], limit: FactsLimit, kept: list[int]
) -> None:
    assert [f["created_at"] for f in within_limit(facts, limit)] == [float(n) for n in kept]


def test_the_store_reads_a_big_document_within_the_limit_for_a_turn_and_whole_for_the_app(
    tmp_path: Path,
) -> None:
    """The same bound through ConversationStore on a document of many facts (the size
    that is decoded in a worker thread), and the whole of it for the app."""
    from gateway.context.conversations import ConversationStore
    from gateway.store import open_store

    async def scenario() -> tuple[list[Fact], list[Fact]]:
        store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
        try:
            facts = ConversationStore(store, facts_limit=SMALL)
            key = customer_facts_key("dan")
            await facts.save_facts("acme", key, [_legacy(n) for n in range(40)])
            return await facts.facts_for_turn("acme", key), await facts.facts("acme", key)
        finally:
            await store.close()

    turn, whole = asyncio.run(scenario())
    assert [f.id for f in turn] == ["old-37", "old-38", "old-39"]
    assert len(whole) == 40


def test_a_put_that_read_before_a_delete_cannot_pass_the_limit(gw: InProcessGateway) -> None:
    """A whole DELETE removed the facts document, its version back to 0: a PUT that read
    the document before it (at version 2, the limit nearly full) could then write once
    other PUTs brought the version back to 2, its limit check made on what it read (a
    review, by reading). The DELETE keeps the version now: the stale PUT reads again."""
    client = gw.openai()
    _put(gw, "abc", AT_LIMIT[:2])
    _put(gw, "abc", AT_LIMIT[2:3])  # version 2, three facts
    store = gw.gateway.windows.conversations
    key = customer_facts_key("abc")

    async def version() -> int:
        doc = await store._store.get_doc("facts", "acme", key)
        return int((doc or {}).get("version") or 0)

    async def stale_swap() -> bool:  # a PUT's write at the version it read before
        return await store._store.swap_doc("facts", "acme", key, {"f:x": {}}, [], None, 2)

    portal = gw.http.portal  # the app's own event loop, where the store lives
    assert portal is not None and portal.call(version) == 2
    got: Any = client.delete("/customers/abc/facts", cast_to=object)
    assert got == {"deleted": 3} and _stored(gw, "abc") == {}
    _put(gw, "abc", AT_LIMIT[:2])  # two PUTs since: a deleted document would be at 2 again
    _put(gw, "abc", AT_LIMIT[2:4])
    assert portal.call(stale_swap) is False  # the document moved on: read again
    assert set(_stored(gw, "abc")) == {f["id"] for f in AT_LIMIT}
