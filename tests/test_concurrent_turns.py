"""No lost updates to a conversation (issue 15): two turns of one conversation at once,
each through its own gateway replica (two processes on one store), and app events
posted while turns are in flight. The stored record is read back afterwards."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from gateway.context.anchors import span_anchor
from gateway.loops.state import WINDOW, LoopState
from gateway.store import open_store
from tests.servers import GatewayProc, start_gateway

ROUNDS = 100
PAD = "I waited all week at home and nobody answers the phone at the depot, it is tiring."


@pytest.fixture
def replicas(tmp_path: Path, simulator_url: str, store_url: str) -> Any:
    first = start_gateway(tmp_path / "a", simulator_url, store_url)
    second = start_gateway(tmp_path / "b", simulator_url, store_url)
    yield first, second
    first.stop()
    second.stop()


def _ask(gw: GatewayProc, history: list[Any], text: str, conv: str) -> str:
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0, timeout=30)
    reply = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[*history, {"role": "user", "content": text}],
        extra_headers={"X-Conversation-Id": conv, "X-Customer-Id": f"cust-{conv}"},
    )
    return reply.choices[0].message.content or ""


def _stored(store_url: str, conv: str) -> dict[str, Any]:
    async def read() -> dict[str, Any] | None:
        store = open_store(store_url)
        try:
            return await store.get_doc("conversation", "acme", conv)
        finally:
            await store.close()

    doc = asyncio.run(read())
    assert doc is not None
    return doc


def _facts(gw: GatewayProc, customer: str) -> str:
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    return httpx.get(f"{gw.v1}/customers/{customer}/facts", headers=auth).text


def test_two_turns_at_once_lose_nothing(replicas: Any, store_url: str) -> None:
    one, two = replicas
    history: list[Any] = [{"role": "system", "content": "You are the support agent."}]
    pool = ThreadPoolExecutor(2)
    for r in range(1, ROUNDS + 1):
        a = f"Round {r}: my parcel BR{r:05d}1 is late, the courier never came. {PAD}"
        b = f"Round {r}: also the invoice INV-{r:05d}2 is wrong, please fix it. {PAD}"
        reply_a = pool.submit(_ask, one, history, a, "race")
        reply_b = pool.submit(_ask, two, history, b, "race")
        answer, _ = reply_a.result(), reply_b.result()
        history += [{"role": "user", "content": a}, {"role": "assistant", "content": answer}]
        if r <= 3:  # the loop detector's window got both turns of every round so far
            window = LoopState.from_json(_stored(store_url, "race")["loop_state"]).turns
            assert len(window) == min(2 * r, WINDOW), (r, len(window))
        if r % 10 == 0:  # the facts each turn heard are both kept
            facts = _facts(one, "cust-race")
            values = [f.get("value") for f in httpx.Response(200, content=facts).json()["facts"]]
            assert f"BR{r:05d}1" in facts and f"INV-{r:05d}2" in facts, (r, values[-6:])
    doc = _stored(store_url, "race")
    assert doc["turns"] == 2 * ROUNDS  # no turn's counters lost
    assert doc["version"] >= 2 * ROUNDS
    summary = doc["summary"]
    assert doc["cursor"] > 0 and summary  # the conversation was compacted
    # every folded round appears in the summary at most once: one summary per span
    folded = [r for r in range(1, ROUNDS + 1) if f"Round {r}:" in summary]
    assert all(summary.count(f"Round {r}: my parcel") <= 1 for r in folded)
    # ... and the summary stands for exactly one contiguous span of the app's history:
    # from the opening turn to the cursor, each message once (its anchor hashes every
    # message of the span), none skipped; everything after the cursor is still sent
    transcript = history[1:]
    assert doc["anchor"] == span_anchor(transcript, 1, doc["cursor"])
    assert doc["cursor"] < len(transcript)
    pool.shutdown()


def test_events_posted_while_turns_run_are_all_kept(replicas: Any, store_url: str) -> None:
    one, two = replicas
    auth = {"Authorization": f"Bearer {one.keys['acme']}"}
    history: list[Any] = [{"role": "system", "content": "You are the support agent."}]
    _ask(one, history, "Hello, my order has not arrived.", "evented")
    stop = threading.Event()
    turns = 0

    def talk() -> None:
        nonlocal turns
        while not stop.is_set():
            _ask(two, history, f"Any news on my order? ({turns})", "evented")
            turns += 1

    thread = threading.Thread(target=talk)
    thread.start()
    try:
        for n in range(ROUNDS):
            # every tenth event waits for one more turn, so turns run between the events
            # on any host speed (a count of turns in a fixed time failed on a slow host)
            deadline = time.monotonic() + 30
            while turns < n // 10 + 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            kind = "progress" if n % 2 else "resolved"
            posted = httpx.post(
                f"{one.v1}/conversations/evented/events", json={"type": kind}, headers=auth
            )
            assert posted.status_code == 200, posted.text
    finally:
        stop.set()
        thread.join()
    doc = _stored(store_url, "evented")
    assert doc["events"] == ROUNDS
    assert doc["turns"] == turns + 1
    assert turns >= ROUNDS // 10  # turns did run meanwhile


def test_a_save_after_the_record_vanished_writes_it_whole(store_url: str) -> None:
    """Expired or forgotten while a turn ran: the turn's save writes the record whole
    again (from version 0), never a merge into nothing. Erased: it writes nothing."""
    from gateway.context.conversation_record import ConversationRecord
    from gateway.context.conversations import ConversationStore

    async def scenario() -> None:
        store = open_store(store_url)
        try:
            conversations = ConversationStore(store)
            await conversations.save(ConversationRecord(id="v", tenant="acme", turns=3))
            record = await conversations.load("acme", "v")
            assert record is not None and record.version == 1
            await store.delete_doc("conversation", "acme", "v")
            record.turns += 1
            await conversations.save(record)
            again = await conversations.load("acme", "v")
            assert again is not None and (again.turns, again.id, again.version) == (4, "v", 1)
            # the customer erased while a turn of theirs ran: that turn does not bring
            # the record back (the erasure is remembered by a digest, not the id)
            mine = ConversationRecord(id="e", tenant="acme", customer="cust-e", turns=1)
            await conversations.save(mine)
            await conversations.mark_erased("acme", "cust-e", 0.0)
            await store.delete_doc("conversation", "acme", "e")
            mine.turns += 1
            await conversations.save(mine)
            assert await conversations.load("acme", "e") is None
            other = ConversationRecord(id="o", tenant="acme", customer="cust-o", turns=1)
            await conversations.save(other)
            await store.delete_doc("conversation", "acme", "o")
            other.turns += 1
            await conversations.save(other)  # not erased: written back
            assert await conversations.load("acme", "o") is not None
        finally:
            await store.close()

    asyncio.run(scenario())


def test_merge_keeps_a_summary_the_other_writer_did_not_touch_and_a_reset() -> None:
    import orjson

    from gateway.context.record_merge import merge

    base = {"summary": "LONG SUMMARY", "cursor": 6, "anchor": "a", "facts_until": 1.0, "turns": 5}
    raw = {k: orjson.dumps(v) for k, v in base.items()}
    theirs = {**base, "turns": 6}
    shorter = {**base, "summary": "SHORT", "summary_recompressions": 1}
    merged = merge(raw, shorter, theirs)
    assert merged["summary"] == "SHORT" and merged["turns"] == 6
    reset = {**base, "summary": "", "cursor": 0, "anchor": ""}
    moved = {**theirs, "summary": "THEIR FOLD", "cursor": 8}
    assert merge(raw, reset, moved)["summary"] == ""  # an edit's reset wins
    further = {**base, "summary": "MINE", "cursor": 7}
    assert merge(raw, further, moved)["summary"] == "THEIR FOLD"  # theirs folded further


def test_merge_keeps_both_writers_relay_times_above_the_summary() -> None:
    """Two turns answered at once each remember when their answer was relayed: the
    merged record holds both, and none of a place the summary already holds."""
    import orjson

    from gateway.context.record_merge import merge

    relayed = {"3": [10.0, 1.0], "5": [20.0, 2.0]}
    base = {"summary": "S", "cursor": 4, "anchor": "a", "facts_until": 1.0, "turns": 3}
    base["relayed"] = relayed
    raw = {k: orjson.dumps(v) for k, v in base.items()}
    theirs = {**base, "turns": 4, "relayed": {**relayed, "7": [30.0, 3.0]}}
    mine = {**base, "turns": 4, "relayed": {**relayed, "9": [40.0, 4.0]}}
    merged = merge(raw, mine, theirs)
    assert merged["relayed"] == {"5": [20.0, 2.0], "7": [30.0, 3.0], "9": [40.0, 4.0]}
    assert merged["turns"] == 5


def test_a_late_answer_to_an_older_message_is_not_the_episodes_last_word(
    replicas: Any,
) -> None:
    """An app gave up waiting on a slow turn and went on: the newer turn is saved first,
    then the slow one's answer arrives and is merged. That answer replies to an older
    message, so the episode's card does not take it for the agent's last word."""
    one, two = replicas
    headers = {"X-Conversation-Id": "late", "X-Customer-Id": "cust-late"}
    first: list[Any] = [
        {"role": "system", "content": "You are the support agent."},
        {"role": "user", "content": "My parcel came broken, what can you do?"},
    ]
    late = "I will send you a refund of 45 euros by Friday."
    slow_headers = {"x-simulator-delay-ms": "2000", "x-simulator-reply": late}
    client = openai.OpenAI(base_url=one.v1, api_key=one.keys["acme"], max_retries=0, timeout=30)
    with ThreadPoolExecutor(1) as pool:
        slow = pool.submit(
            lambda: client.chat.completions.create(
                model="gpt-4o-mini",
                messages=first,
                extra_headers={**headers, **slow_headers},
            )
        )
        time.sleep(0.5)  # the slow turn has read the record and waits on the upstream
        newer: list[Any] = [
            *first,
            {"role": "assistant", "content": "One moment please."},
            {"role": "user", "content": "Hello? Any news on it?"},
        ]
        _ = openai.OpenAI(
            base_url=two.v1, api_key=two.keys["acme"], max_retries=0, timeout=30
        ).chat.completions.create(
            model="gpt-4o-mini",
            messages=newer,
            extra_headers={**headers, "x-simulator-reply": "Still checking with the carrier."},
        )
        assert slow.result().choices[0].message.content == late
    auth = {"Authorization": f"Bearer {one.keys['acme']}"}
    closed = httpx.post(f"{one.v1}/conversations/late/close", headers=auth, timeout=30)
    assert closed.status_code == 200, closed.text
    assert "Friday" not in closed.json()["episode_summary"]


def _first_turn(gw: GatewayProc, conv: str, customer: str, text: str) -> int:
    """A conversation's first turn for `customer`, the upstream answering after 300 ms:
    the status the app saw."""
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0, timeout=30)
    try:
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": text}],
            extra_headers={
                "X-Conversation-Id": conv,
                "X-Customer-Id": customer,
                "x-simulator-delay-ms": "300",
            },
        )
    except openai.ConflictError as exc:
        assert exc.code == "conversation_customer_mismatch"
        return 409
    return 200


@pytest.mark.parametrize("store_url", ["sqlite", "redis"], indirect=True)
def test_two_customers_starting_one_conversation_id_at_once_are_not_merged(
    replicas: tuple[GatewayProc, GatewayProc], store_url: str
) -> None:
    """Two first turns of one id for two customers at once (a kiosk's session id, two
    replicas): both passed the ownership check, and the second's save merged into the
    first's record, which then listed Bob's turns in Alice's export. One is refused now
    (409), before it is forwarded, and the record is the other customer's alone."""
    first, second = replicas
    for n in range(3):
        conv = f"kiosk-{n}"
        with ThreadPoolExecutor(2) as pool:
            alice = pool.submit(_first_turn, first, conv, "alice", "My email is a@example.org")
            bob = pool.submit(_first_turn, second, conv, "bob", "hello I need help")
            statuses = {"alice": alice.result(), "bob": bob.result()}
        assert sorted(statuses.values()) == [200, 409]
        owner = next(c for c, s in statuses.items() if s == 200)
        doc = _stored(store_url, conv)
        assert doc["customer"] == owner and doc["turns"] == 1
        auth = {"Authorization": f"Bearer {first.keys['acme']}"}
        for customer in ("alice", "bob"):
            export = httpx.get(f"{first.v1}/customers/{customer}/export", headers=auth).json()
            listed = json.dumps(export)
            assert (conv in listed) == (customer == owner)
