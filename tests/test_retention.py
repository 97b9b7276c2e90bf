"""State with a bounded footprint (policies/retention.yaml): documents expire, a
customer's episode index keeps their newest conversations, a turn writes what it
changed, and a SQLite file of an earlier version keeps its documents."""

from __future__ import annotations

import asyncio
import contextlib
import io
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

import orjson
import redis
from openai.types.chat import ChatCompletionMessageParam

from gateway.context import customers
from gateway.context.conversation_record import ConversationRecord
from gateway.context.conversations import CONVERSATION, ConversationStore
from gateway.context.retention import Retention, RetentionFile
from gateway.ops.cli import cli_logic
from gateway.store import open_store
from gateway.store.redis import doc_key
from tests.inprocess import InProcessGateway, running
from tests.servers import redis_client, start_redis, stop, write_config

DAY = 86_400


def test_documents_expire_and_a_patch_keeps_the_other_fields(store_url: str) -> None:
    async def scenario() -> None:
        store = open_store(store_url)
        try:
            await store.put_doc("conversation", "acme", "c/1", {"a": 1, "b": [1, 2], "c": "x"}, 0.4)
            await store.patch_doc("conversation", "acme", "c/1", {"a": 2}, ["b"], 0.4)
            assert await store.get_doc("conversation", "acme", "c/1") == {"a": 2, "c": "x"}
            # the same key of another tenant, or another kind, is another document
            assert await store.get_doc("conversation", "acme:c", "1") is None
            assert await store.get_doc("facts", "acme", "c/1") is None
            await store.put_doc("facts", "acme", "customer:k", {"facts": [1]})  # never expires
            await asyncio.sleep(0.6)
            assert await store.get_doc("conversation", "acme", "c/1") is None
            assert await store.get_docs(
                "acme", [("conversation", "c/1"), ("facts", "customer:k")]
            ) == [
                None,
                {"facts": [1]},
            ]
            # a patch of an expired document starts it afresh: nothing old comes back
            await store.patch_doc("conversation", "acme", "c/1", {"d": 4}, (), 60)
            assert await store.get_doc("conversation", "acme", "c/1") == {"d": 4}
            assert [d["d"] for d in await store.list_docs("conversation", "acme", "c/")] == [4]
            assert await store.delete_doc("conversation", "acme", "c/1")
            assert not await store.delete_doc("conversation", "acme", "c/1")
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_renewal_restarts_a_live_documents_expiry_and_makes_none(store_url: str) -> None:
    async def scenario() -> None:
        store = open_store(store_url)
        try:
            await store.put_doc("facts", "acme", "conversation:c1", {"f:a": {"id": "a"}}, 0.3)
            await store.put_doc("facts", "acme", "conversation:c2", {"f:b": {"id": "b"}}, 0.3)
            assert await store.renew_doc("facts", "acme", "conversation:c1", 60)
            assert not await store.renew_doc("facts", "acme", "conversation:c3", 60)  # absent
            await asyncio.sleep(0.5)
            assert await store.get_doc("facts", "acme", "conversation:c1") == {"f:a": {"id": "a"}}
            assert not await store.renew_doc("facts", "acme", "conversation:c2", 60)  # expired
            wanted = [("facts", "conversation:c2"), ("facts", "conversation:c3")]
            assert await store.get_docs("acme", wanted) == [None, None]
        finally:
            await store.close()

    asyncio.run(scenario())


def _say(gw: InProcessGateway, customer: str, conversation: str, lines: list[str]) -> None:
    client = gw.openai()
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": "You are the support agent of an online store."}
    ]
    for line in lines:
        messages.append({"role": "user", "content": line})
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,
            extra_headers={"X-Customer-Id": customer, "X-Conversation-Id": conversation},
        )
        messages.append({"role": "assistant", "content": reply.choices[0].message.content or ""})


def _status(gw: InProcessGateway, conversation: str) -> int:
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    return int(gw.http.get(f"{gw.v1}/conversations/{conversation}", headers=auth).status_code)


def test_a_customer_keeps_their_newest_conversations_and_each_document_its_expiry(
    tmp_path: Path, store_url: str
) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "retention.yaml").write_text(
        "episodes_kept: 5\nplans: {pro: {episodes_kept: 2, conversation_idle_days: 3}}\n"
    )
    for gw in running(tmp_path, store_url):
        for n in range(1, 5):
            _say(gw, "marta", f"conv-{n}", [f"Order {n}00123 has not arrived. My name is Marta."])
            time.sleep(0.01)  # registration times differ
        # acme is on plan pro: two conversations kept, the older two forgotten whole
        assert [_status(gw, f"conv-{n}") for n in range(1, 5)] == [404, 404, 200, 200]
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        export = gw.http.get(f"{gw.v1}/customers/marta/export", headers=auth).json()
        assert [e["conversation"] for e in export["episodes"]] == ["conv-3", "conv-4"]
        assert sorted(c["id"] for c in export["conversations"]) == ["conv-3", "conv-4"]
        if store_url.startswith("redis"):
            client = redis_client(store_url)
            conv = client.ttl(doc_key("conversation", "acme", "conv-4"))
            index = client.ttl(doc_key("episodes", "acme", "marta"))
            facts = client.ttl(doc_key("facts", "acme", "customer:marta"))
            client.close()
            assert 3 * DAY - 60 < conv <= 3 * DAY  # the plan's idle days
            assert 180 * DAY - 60 < index <= 180 * DAY  # the file's default
            assert facts == -1  # a customer's facts stay until deleted
            assert any(f["value"] for f in export["facts"])


def test_the_conversation_forgotten_is_the_one_idle_longest_not_the_one_begun_first(
    tmp_path: Path, store_url: str
) -> None:
    """Two kept (plan pro): a thread begun first and still going, a one-turn chat begun
    after it, then a third conversation. The thread was forgotten (its summary, counters
    and loop state) because it began first; the chat idle since is forgotten now."""
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "retention.yaml").write_text("plans: {pro: {episodes_kept: 2}}\n")
    for gw in running(tmp_path, store_url):
        thread = ["My order 400123 has not arrived. My name is Marta."]
        _say(gw, "marta", "thread", thread)
        time.sleep(0.01)
        _say(gw, "marta", "chat", ["Do you ship to Madeira?"])
        time.sleep(0.01)
        _say(gw, "marta", "thread", [*thread, "Any news on it?"])  # the thread goes on
        time.sleep(0.01)
        _say(gw, "marta", "new", ["Can I change the colour of order 400777?"])
        assert [_status(gw, c) for c in ("thread", "chat", "new")] == [200, 404, 200]


def _retention(root: Path, idle_s: float, episodes_s: float) -> None:
    """A retention of seconds (in days, as the file states it)."""
    (root / "policies").mkdir(parents=True, exist_ok=True)
    (root / "policies" / "retention.yaml").write_text(
        f"conversation_idle_days: {idle_s / DAY!r}\nepisodes_days: {episodes_s / DAY!r}\n"
    )


def _keep_talking(
    gw: InProcessGateway, headers: dict[str, str], lines: list[str], for_s: float
) -> None:
    """`lines`, then "Any news?" every 0.25 s for `for_s` seconds: one conversation kept
    active past its documents' first expiry."""
    api = gw.openai()
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": "You are the support agent of an online store."}
    ]
    end = time.monotonic() + for_s
    while lines or time.monotonic() < end:
        messages.append({"role": "user", "content": lines.pop(0) if lines else "Any news?"})
        reply = api.chat.completions.create(
            model="gpt-4o-mini", messages=messages, extra_headers=headers
        )
        messages.append({"role": "assistant", "content": reply.choices[0].message.content or ""})
        time.sleep(0.25)


def test_an_erasure_finds_a_conversation_that_outlived_its_first_index_expiry(
    tmp_path: Path, store_url: str
) -> None:
    """The customer's episode index, through which an erasure and an export find their
    conversations, lives as long as a conversation it lists: a conversation kept going
    past `episodes_days` restarts its expiry."""
    _retention(tmp_path, idle_s=1.0, episodes_s=1.5)
    for gw in running(tmp_path, store_url):
        headers = {"X-Customer-Id": "ines", "X-Conversation-Id": "thread-ines"}
        opening = ["Hi, Ines Avelar here: ines.avelar@example.com, order 4471902 is late."]
        _keep_talking(gw, headers, opening, for_s=2.0)  # past the index's first expiry
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        export = gw.http.get(f"{gw.v1}/customers/ines/export", headers=auth).json()
        assert [c["id"] for c in export["conversations"]] == ["thread-ines"]
        erased = gw.http.delete(f"{gw.v1}/customers/ines", headers=auth).json()
        assert erased["conversations"] == 1
        assert _status(gw, "thread-ines") == 404


def test_an_id_reused_after_its_record_expired_is_the_new_customers_alone(
    tmp_path: Path, store_url: str
) -> None:
    """Ana's conversation X idles out; the app reuses X for Bruno. Ana's index still
    lists X: her export held Bruno's record (his name, phone and order), and her erasure
    deleted his live conversation. Neither touches it now."""
    _retention(tmp_path, idle_s=1.0, episodes_s=60.0)
    for gw in running(tmp_path, store_url):
        _say(gw, "ana", "X", ["Hi, I'm Ana Lima, order ORD-10001 is late."])
        time.sleep(1.5)  # X's record expires
        bruno = "Hello, I'm Bruno Reis, my phone is +44 7700 900123, order ORD-20002 broke."
        _say(gw, "bruno", "X", [bruno])
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        export = gw.http.get(f"{gw.v1}/customers/ana/export", headers=auth).json()
        assert "Bruno" not in orjson.dumps(export).decode()
        assert [e["conversation"] for e in export["episodes"]] == ["X"]  # her entry stays
        erased = gw.http.delete(f"{gw.v1}/customers/ana", headers=auth).json()
        assert erased["conversations"] == 0
        assert _status(gw, "X") == 200  # Bruno's conversation goes on
        theirs = gw.http.get(f"{gw.v1}/customers/bruno/export", headers=auth).json()
        assert [c["id"] for c in theirs["conversations"]] == ["X"]


def test_an_id_reused_by_another_is_neither_exported_erased_nor_forgotten_with_hers(
    tmp_path: Path, store_url: str
) -> None:
    """Ana's X idles out; the app reuses X without a customer, and Bruno's Y: Ana's export
    held the anonymous stranger's X, her erasure deleted it, and her index, full
    (two kept), deleted Bruno's live conversation as one of hers to forget."""
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "retention.yaml").write_text(
        f"conversation_idle_days: {1.0 / DAY!r}\nepisodes_days: {60.0 / DAY!r}\n"
        "plans: {pro: {episodes_kept: 2}}\n"
    )
    for gw in running(tmp_path, store_url):
        _say(gw, "ana", "X", ["Hi, I'm Ana Lima, order ORD-10001 is late."])
        _say(gw, "ana", "Y", ["And order ORD-10002 came broken."])
        time.sleep(1.5)  # X and Y expire
        api = gw.openai()
        stranger = "Carlos here, my phone is +44 7700 900456."
        api.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": stranger}],
            extra_headers={"X-Conversation-Id": "X"},  # no customer
        )
        _say(gw, "bruno", "Y", ["Bruno Reis, order ORD-20002 is late."])
        _say(gw, "ana", "Z", ["Ana again: can I change the colour of ORD-10003?"])
        assert _status(gw, "Y") == 200  # Bruno's, not one of hers to forget
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        export = gw.http.get(f"{gw.v1}/customers/ana/export", headers=auth).json()
        assert "Carlos" not in orjson.dumps(export).decode()
        assert "Bruno" not in orjson.dumps(export).decode()
        erased = gw.http.delete(f"{gw.v1}/customers/ana", headers=auth).json()
        assert erased["conversations"] == 1  # Z
        assert [_status(gw, c) for c in ("X", "Y", "Z")] == [200, 200, 404]


def test_a_conversation_named_at_its_later_turn_stays_hers_while_its_save_is_pending(
    store_url: str,
) -> None:
    """A conversation that named no customer at first is listed at the end of the turn
    that names her, then saved. Another of hers registered between the two, with her
    index full, took it (its record still of no customer) for an id reused by a
    stranger: it was unlisted, and her erasure never found it (the second review)."""

    async def run() -> list[str]:
        store = open_store(store_url)
        conversations = ConversationStore(store, Retention(RetentionFile(episodes_kept=2)))
        now = time.time()
        for i, cid in enumerate(["A", "B"]):
            r = ConversationRecord(id=cid, tenant="acme", customer="ana", started=now - 10 + i)
            r.last_seen = now - 10 + i
            await conversations.register(r)
            await conversations.save(r)
        w = ConversationRecord(id="W", tenant="acme", started=now, last_seen=now)
        await conversations.save(w)  # its first turn: no customer
        w.customer, w.last_seen = "ana", now + 1
        await conversations.register(w)  # the turn naming her ends: listed, not saved yet
        c = ConversationRecord(id="C", tenant="acme", customer="ana", started=now + 2)
        c.last_seen = now + 2
        await conversations.register(c)  # another of hers, meanwhile
        await conversations.save(c)
        await conversations.save(w)
        docs = await customers.documents(store, conversations, "acme", "ana")
        await store.close()
        return sorted(key for kind, key in docs if kind == CONVERSATION)

    assert asyncio.run(run()) == ["C", "W"]


def test_a_conversations_own_facts_live_as_long_as_it(tmp_path: Path, store_url: str) -> None:
    """A conversation the app names without a customer keeps its facts under its own id;
    turns that learn nothing new still keep them as long as the conversation's record."""
    _retention(tmp_path, idle_s=1.0, episodes_s=1.0)
    for gw in running(tmp_path, store_url):
        opening = ["My email is bruno.maia@example.com and order 5520318 never arrived."]
        _keep_talking(gw, {"X-Conversation-Id": "chat-bruno"}, opening, for_s=1.5)
        assert _status(gw, "chat-bruno") == 200

        async def facts() -> dict[str, Any] | None:
            store = open_store(store_url)
            try:
                return await store.get_doc("facts", "acme", "conversation:chat-bruno")
            finally:
                await store.close()

        held = orjson.dumps(asyncio.run(facts()))
        assert b"bruno.maia@example.com" in held and b"5520318" in held


def test_check_config_refuses_an_episode_index_shorter_lived_than_a_conversation(
    tmp_path: Path,
) -> None:
    """Such an index would expire under a conversation it lists, hiding it from the
    customer's erasure: refused, naming the file and the plan (reload reads it so too)."""
    write_config(tmp_path, "simulator", "sqlite:///a.db")
    path = tmp_path / "policies" / "retention.yaml"
    path.write_text("episodes_days: 60\nplans: {basic: {conversation_idle_days: 90}}\n")
    out = io.StringIO()
    config = ["check-config", "--config", str(tmp_path / "config.yaml")]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        assert cli_logic(config) != 0
    assert "retention.yaml" in out.getvalue() and "plans.basic: episodes_days" in out.getvalue()
    path.write_text("episodes_days: 60\nplans: {basic: {conversation_idle_days: 60}}\n")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli_logic(config) == 0


def _net_in(client: redis.Redis) -> int:
    return int(client.info("stats")["total_net_input_bytes"])


def test_a_turn_writes_what_it_changed_not_the_whole_conversation(tmp_path: Path) -> None:
    """Bytes Redis receives for one turn (every command of the gateway: reads, the
    conversation's changed fields, the booking), early in a conversation and late in
    it, against the size of the stored record (bounded by the window's quota). On a
    Redis server of its own: its byte counter is the server's."""
    server, redis_url = start_redis(tmp_path)
    client = redis.Redis.from_url(redis_url)
    for gw in running(tmp_path, redis_url):
        api = gw.openai()
        messages: list[Any] = [{"role": "system", "content": "You are the support agent."}]
        sent: dict[int, int] = {}
        for turn in range(1, 37):
            line = f"Turn {turn}: the parcel with tracking code BR{turn:06d} " + "is late. " * 100
            messages.append({"role": "user", "content": line})
            before = _net_in(client)
            reply = api.chat.completions.create(
                model="gpt-4o-mini", messages=messages, extra_headers={"X-Conversation-Id": "grow"}
            )
            sent[turn] = _net_in(client) - before
            messages.append(
                {"role": "assistant", "content": reply.choices[0].message.content or ""}
            )
        stored = client.hgetall(doc_key("conversation", "acme", "grow"))
        size = sum(len(k) + len(v) for k, v in stored.items())
        early = statistics.median(sent[t] for t in range(3, 9))
        late = statistics.median(sent[t] for t in range(25, 37))
        assert late < size, (size, late)  # a turn writes less than the record (with its booking)...
        assert late < 1.3 * early, (early, late)  # ...and no more as the conversation grows
    client.close()
    stop(server)


def test_a_sqlite_file_of_an_earlier_version_keeps_its_documents(tmp_path: Path) -> None:
    path = tmp_path / "gateway.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE docs (kind TEXT, tenant TEXT, key TEXT, body BLOB, "
        "PRIMARY KEY (kind, tenant, key))"
    )
    rows = [
        (
            "conversation",
            "acme",
            "c1",
            {
                "id": "c1",
                "tenant": "acme",
                "turns": 3,
                "recent": [{"role": "user", "content": "hi"}],
            },
        ),
        ("facts", "acme", "customer:m", {"facts": [{"id": "f1"}]}),
        (
            "episodes",
            "acme",
            "m/c0",
            {"conversation": "c0", "summary": "old", "summarized_at": 5.0},
        ),
        ("episodes", "acme", "m/c1", {"conversation": "c1", "summary": None, "summarized_at": 0.0}),
    ]
    conn.executemany(
        "INSERT INTO docs VALUES (?, ?, ?, ?)",
        [(k, t, key, orjson.dumps(d)) for k, t, key, d in rows],
    )
    conn.commit()
    conn.close()

    async def scenario() -> None:
        store = open_store(f"sqlite:///{path}")
        try:
            conv = await store.get_doc("conversation", "acme", "c1")
            assert conv is not None and conv["turns"] == 3 and conv["recent"][0]["content"] == "hi"
            facts = await store.get_doc("facts", "acme", "customer:m")
            assert facts == {"f:f1": {"id": "f1"}}  # a field per fact now
            index = await store.get_doc("episodes", "acme", "m")
            assert index is not None and sorted(index) == ["c0", "c1"]
            assert index["c0"]["summary"] == "old" and index["c0"]["at"] == 5.0
        finally:
            await store.close()

    asyncio.run(scenario())
    tables = {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert "docs" not in tables and "doc_field" in tables
