"""Privacy erasure and export of one customer, through a running gateway with the openai
SDK, on each store backend; the raw stores are then searched byte by byte."""

from __future__ import annotations

import subprocess
import time
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from gateway.context.conversation_record import conversation_fingerprint
from tests.inprocess import InProcessGateway, running
from tests.ledger_db import EVERY_BACKEND, LEDGER_SEP, backend_url
from tests.servers import GatewayProc, redis_client

ERASED = "cust-erase-7731"
KEPT = "cust-keep-4402"
# What the erased customer said and what the app stored about them: none of it may be
# left anywhere afterwards.
SECRETS = [
    ERASED.encode(),
    b"Quintela",
    b"98765-4321",
    b"987654321",
    b"marta.quintela",
    b"VIP-GOLD-889",
]
SPEND = """
plans:
  basic: {monthly_usd: 50, customer_daily_usd: 2, action: block}
  pro: {monthly_usd: 500, customer_daily_usd: 5, customer_monthly_usd: 50, action: block}
"""


def _talk(gw: GatewayProc, customer: str, conversation: str, lines: list[str]) -> None:
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0)
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
        messages.append({"role": "assistant", "content": reply.choices[0].message.content})


def _auth(gw: GatewayProc) -> dict[str, str]:
    return {"Authorization": f"Bearer {gw.keys['acme']}"}


@pytest.fixture(params=EVERY_BACKEND)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every backend, and Redis with the PostgreSQL ledger beside it."""
    return backend_url(request, tmp_path)


def _raw_bytes(gw: GatewayProc, store_url: str) -> bytes:
    """Every byte the backend holds: the SQLite files, or every Redis key and value, and
    with the PostgreSQL ledger, a dump of its database's data (pg_dump)."""
    if LEDGER_SEP in store_url:
        hot, ledger = store_url.split(LEDGER_SEP)
        dump = subprocess.run(
            ["pg_dump", "--data-only", ledger], check=True, capture_output=True, timeout=60
        ).stdout
        return _raw_bytes(gw, hot) + dump
    if store_url.startswith("sqlite"):
        return b"".join(p.read_bytes() for p in gw.root.glob("gateway.db*"))
    client = redis_client(store_url)
    out: list[object] = []
    for key in client.scan_iter(count=1000):
        out.append(key)
        kind = client.type(key)
        if kind == b"hash":
            out += [b for pair in client.hgetall(key).items() for b in pair]
        elif kind == b"list":
            out += client.lrange(key, 0, -1)
        elif kind == b"set":
            out += client.smembers(key)
        elif kind == b"zset":
            out += client.zrange(key, 0, -1)
        elif kind == b"string":
            out.append(client.get(key))
    client.close()
    return b"\n".join(x if isinstance(x, bytes) else str(x).encode() for x in out)


def _ledger(gw: GatewayProc) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = gw.admin("/admin/ledger", tenant="acme").json()["records"]
    return records


def test_erasure_leaves_nothing_of_the_customer(gateway: GatewayProc, store_url: str) -> None:
    (gateway.root / "policies" / "spend.yaml").write_text(SPEND)
    gateway.restart()
    _talk(
        gateway,
        ERASED,
        "conv-e1",
        [
            "Hi, I'm Marta Quintela, my order ORD-55120 has not arrived.",
            "You can call me on +55 11 98765-4321 or write to marta.quintela@example.com",
        ],
    )
    closed = httpx.post(f"{gateway.v1}/conversations/conv-e1/close", headers=_auth(gateway))
    assert closed.status_code == 200
    _talk(gateway, ERASED, "conv-e2", ["Marta Quintela again: any news on ORD-55120?"])
    _talk(gateway, KEPT, "conv-k1", ["Hello, Joaquim Pereira here, joaquim.p@example.com"])
    put = httpx.put(
        f"{gateway.v1}/customers/{ERASED}/facts",
        json={
            "facts": [{"id": "tier", "text": "Loyalty tier VIP-GOLD-889", "value": "VIP-GOLD-889"}]
        },
        headers=_auth(gateway),
    )
    assert put.status_code == 200, put.text

    exported = httpx.get(f"{gateway.v1}/customers/{ERASED}/export", headers=_auth(gateway))
    assert exported.status_code == 200
    found = exported.json()
    assert {c["id"] for c in found["conversations"]} == {"conv-e1", "conv-e2"}
    assert any(f["value"] == "VIP-GOLD-889" for f in found["facts"])
    assert len(found["ledger"]) == 3 and {r["customer"] for r in found["ledger"]} == {ERASED}
    assert len(found["episodes"]) == 2
    before = {r["id"]: r["cost_usd"] for r in _ledger(gateway)}
    assert all(secret in _raw_bytes(gateway, store_url) for secret in SECRETS[:2])

    erased = httpx.delete(f"{gateway.v1}/customers/{ERASED}", headers=_auth(gateway))
    assert erased.status_code == 200, erased.text
    report = erased.json()
    assert report["found"] and report["conversations"] == 2 and report["documents_deleted"] >= 4
    assert report["ledger_rows_pseudonymized"] == 3
    # A PostgreSQL ledger's VACUUM frees the old row versions without zeroing them.
    assert report["scrubbed"] is (LEDGER_SEP not in store_url)
    assert report["budgets_pseudonymized"] >= 1  # the customer's daily and monthly counters
    alias = report["pseudonym"]

    raw = _raw_bytes(gateway, store_url)
    assert [s for s in SECRETS if s in raw] == []
    assert KEPT.encode() in raw and b"Joaquim" in raw  # the search does find what is there
    after = {r["id"]: r for r in _ledger(gateway)}
    assert {i: r["cost_usd"] for i, r in after.items()} == before  # costs stay booked
    assert sorted(r["customer"] for r in after.values()).count(alias) == 3
    assert sum(Decimal(r["cost_usd"]) for r in after.values() if r["customer"] == alias) > 0
    gone = httpx.get(f"{gateway.v1}/conversations/conv-e1", headers=_auth(gateway))
    assert gone.status_code == 404
    empty = httpx.get(f"{gateway.v1}/customers/{ERASED}/export", headers=_auth(gateway)).json()
    assert empty["facts"] == [] and empty["conversations"] == [] and empty["ledger"] == []
    # The customer may come back: a new conversation starts from nothing.
    _talk(gateway, ERASED, "conv-e3", ["Hello again."])
    facts = httpx.get(f"{gateway.v1}/customers/{ERASED}/facts", headers=_auth(gateway)).json()
    assert all(f.get("value") != "VIP-GOLD-889" for f in facts["facts"])


def test_erasure_is_scoped_to_the_tenant(gateway: GatewayProc) -> None:
    _talk(gateway, ERASED, "conv-t1", ["I'm Marta Quintela, order ORD-1 please."])
    other = {"Authorization": f"Bearer {gateway.keys['globex']}"}
    erased = httpx.delete(f"{gateway.v1}/customers/{ERASED}", headers=other)
    assert erased.status_code == 200 and not erased.json()["found"]
    kept = httpx.get(f"{gateway.v1}/customers/{ERASED}/export", headers=_auth(gateway)).json()
    assert [c["id"] for c in kept["conversations"]] == ["conv-t1"]
    anonymous = httpx.delete(f"{gateway.v1}/customers/{ERASED}")
    assert anonymous.status_code == 401


def test_a_customer_named_on_a_later_turn_is_erased_too(
    gateway: GatewayProc, store_url: str
) -> None:
    """The app sends the customer id only from the second turn on; the id holds a "/" and
    an accent, sent as UTF-8 in the header and percent-encoded in the path."""
    customer = "loja/José-77"
    client = openai.OpenAI(base_url=gateway.v1, api_key=gateway.keys["acme"], max_retries=0)
    messages: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "Hi, Marta Quintela here, marta.quintela@example.com"}
    ]
    conv = {"X-Conversation-Id": "conv-late"}
    client.chat.completions.create(model="gpt-4o-mini", messages=messages, extra_headers=conv)
    messages += [
        {"role": "assistant", "content": "Hello Marta."},
        {"role": "user", "content": "My phone is +55 11 98765-4321."},
    ]
    # The SDK only sends ASCII header values: this turn goes as raw UTF-8 bytes.
    named = httpx.post(
        f"{gateway.v1}/chat/completions",
        json={"model": "gpt-4o-mini", "messages": messages},
        headers=[
            (b"Authorization", f"Bearer {gateway.keys['acme']}".encode()),
            (b"X-Conversation-Id", b"conv-late"),
            (b"X-Customer-Id", customer.encode()),
        ],
    )
    assert named.status_code == 200, named.text
    path = f"{gateway.v1}/customers/{quote(customer, safe='')}"
    found = httpx.get(f"{path}/export", headers=_auth(gateway)).json()
    assert [c["id"] for c in found["conversations"]] == ["conv-late"]
    assert found["conversations"][0]["customer"] == customer
    report = httpx.delete(path, headers=_auth(gateway)).json()
    assert report["found"] and report["conversations"] == 1
    gone = httpx.get(f"{gateway.v1}/conversations/conv-late", headers=_auth(gateway))
    assert gone.status_code == 404
    raw = _raw_bytes(gateway, store_url)
    assert [s for s in (b"Quintela", b"marta.quintela", b"98765") if s in raw] == []


def test_a_conversation_whose_first_turn_failed_is_still_erased(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """A conversation is claimed for its customer before its first turn is forwarded;
    that turn failed (503 upstream), its retry was answered, and the conversation never
    reached the customer's index: the export left it out and the erasure kept it, with
    the customer's words."""
    gw = sqlite_app_gateway
    client = gw.openai().with_options(max_retries=0)
    headers = {"X-Customer-Id": "ines", "X-Conversation-Id": "c-old"}
    ask: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Hi, my order 4417?"}]
    client.chat.completions.create(model="gpt-4o-mini", messages=ask, extra_headers=headers)
    headers["X-Conversation-Id"] = "c-new"
    first: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "Ines Rook here, ines.rook@example.org, a refund please"}
    ]
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=first,
            extra_headers={**headers, "x-simulator-status": "503"},
        )
    client.chat.completions.create(model="gpt-4o-mini", messages=first, extra_headers=headers)
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    found = gw.http.get(f"{gw.v1}/customers/ines/export", headers=auth).json()
    assert sorted(c["id"] for c in found["conversations"]) == ["c-new", "c-old"]
    erased = gw.http.delete(f"{gw.v1}/customers/ines", headers=auth).json()
    assert erased["conversations"] == 2
    assert gw.http.get(f"{gw.v1}/conversations/c-new", headers=auth).status_code == 404


def _opened(opening: str) -> list[ChatCompletionMessageParam]:
    return [
        {"role": "system", "content": "You are the support agent of an online store."},
        {"role": "user", "content": opening},
    ]


def test_the_ledger_keeps_no_conversation_id_made_from_the_erased_customer_id(
    tmp_path: Path, store_url: str
) -> None:
    """The app sends no X-Conversation-Id: the gateway names the conversation by a digest
    of the tenant, the customer id and its opening (`fp-...`). After the erasure the
    ledger rows had a pseudonym but kept that id, which anyone who can guess the opening
    recomputes for each candidate customer id: the pseudonym was re-identified."""
    openings = ["Hi", "Hello, about my order"]
    for gw in running(tmp_path, store_url):
        for customer, said in [(ERASED, openings), (KEPT, openings[:1])]:
            for opening in said:  # a conversation of two turns
                messages = _opened(opening)
                for _ in range(2):
                    reply = gw.openai().chat.completions.create(
                        model="gpt-4o-mini",
                        messages=messages,
                        extra_headers={"X-Customer-Id": customer},
                    )
                    answer = reply.choices[0].message.content
                    messages.append({"role": "assistant", "content": answer})
                    messages.append({"role": "user", "content": "Where is it?"})
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        deadline = time.monotonic() + 30  # with PostgreSQL, bookings land in batches
        while True:
            theirs = gw.http.get(f"{gw.v1}/customers/{ERASED}/export", headers=auth).json()
            if len(theirs["ledger"]) == 4 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        made = {conversation_fingerprint("acme", ERASED, _opened(o)) for o in openings}
        before = {r["id"]: r["conversation"] for r in theirs["ledger"]}
        assert len(before) == 4 and set(before.values()) == made  # ids anyone can recompute
        report = gw.http.delete(f"{gw.v1}/customers/{ERASED}", headers=auth).json()
        assert report["ledger_rows_pseudonymized"] == 4
        rows = gw.admin("/admin/ledger", tenant="acme").json()["records"]
        after = {r["id"]: r["conversation"] for r in rows if r["customer"] == report["pseudonym"]}
        assert after.keys() == before.keys()
        assert made & {r["conversation"] for r in rows} == set()
        assert all(c.startswith("fp-erased-") for c in after.values())
        # a new id per conversation: its rows stay together, apart from the other's
        pairs = {(before[i], after[i]) for i in after}
        assert len(pairs) == len({new for _, new in pairs}) == 2
        kept = [r["conversation"] for r in rows if r["customer"] == KEPT]
        assert kept == [conversation_fingerprint("acme", KEPT, _opened("Hi"))] * 2
