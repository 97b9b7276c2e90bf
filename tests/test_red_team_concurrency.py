"""What a customer's erasure and a client's retry leave when they meet requests still in
flight (red-team round 11), through a running gateway with the openai SDK: a close, a
first turn or calls held against a ceiling in flight at the erasure, a first turn that
failed, and an abandoned try that ends after its retry."""

from __future__ import annotations

import asyncio
import random
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.inprocess import InProcessGateway
from tests.servers import GatewayProc, start_gateway

MODEL = "gpt-4o-mini"
CEILING = Decimal("0.003")  # the customer's day


@pytest.fixture
def served(tmp_path: Path, simulator_url: str, store_url: str) -> Any:
    gw = start_gateway(
        tmp_path,
        simulator_url,
        store_url,
        policies={
            "spend.yaml": {"plans": {"pro": {"customer_daily_usd": 0.003, "action": "block"}}}
        },
    )
    yield gw
    gw.stop()


def _auth(gw: GatewayProc | InProcessGateway) -> dict[str, str]:
    return {"Authorization": f"Bearer {gw.keys['acme']}"}


def _client(gw: GatewayProc, timeout: float = 30) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0, timeout=timeout
    )


def _held(gw: GatewayProc, customer: str) -> dict[str, Any]:
    """Everything the export returns of the customer but their (pseudonymized) ledger."""
    found = httpx.get(f"{gw.v1}/customers/{customer}/export", headers=_auth(gw), timeout=30)
    return {k: v for k, v in found.json().items() if k in ("facts", "episodes", "conversations")}


@pytest.mark.parametrize("store_url", ["sqlite", "redis"], indirect=True)
def test_a_close_racing_the_erasure_does_not_bring_the_card_back(served: GatewayProc) -> None:
    """The close read the record before the erasure and wrote the episode card after it:
    the card (name, phone, order) came back in a new index kept for 180 days."""
    rng = random.Random(11)

    async def one(client: openai.AsyncOpenAI, http: httpx.AsyncClient, n: int) -> str:
        customer, conversation = f"joana-{n}", f"call-{n}"
        headers = {"X-Customer-Id": customer, "X-Conversation-Id": conversation}
        said: list[ChatCompletionMessageParam] = [
            {"role": "user", "content": f"Joana Pereira, +55 21 99876-{1000 + n}, ORD-77{n:04d}"}
        ]
        reply = await client.chat.completions.create(
            model=MODEL, messages=said, extra_headers=headers
        )
        said += [
            {"role": "assistant", "content": reply.choices[0].message.content or ""},
            {"role": "user", "content": "I want a refund of R$ 380,00 to my card please"},
        ]
        await client.chat.completions.create(model=MODEL, messages=said, extra_headers=headers)

        async def later(call: Any) -> httpx.Response:
            await asyncio.sleep(rng.uniform(0, 0.02))
            response: httpx.Response = await call
            return response

        closed, erased = await asyncio.gather(
            later(http.post(f"{served.v1}/conversations/{conversation}/close")),
            later(http.delete(f"{served.v1}/customers/{customer}")),
        )
        assert erased.status_code == 200 and closed.status_code in (200, 404)
        return customer

    async def run() -> list[str]:
        http = httpx.AsyncClient(headers=_auth(served), timeout=30)
        async with http, _client(served) as client:
            return await asyncio.gather(*(one(client, http, n) for n in range(20)))

    for customer in asyncio.run(run()):
        assert _held(served, customer) == {"facts": [], "episodes": [], "conversations": []}


@pytest.mark.parametrize("store_url", ["sqlite", "redis"], indirect=True)
def test_a_first_turn_in_flight_at_the_erasure_is_erased_with_it(served: GatewayProc) -> None:
    """The first turn claimed its record before forwarding but listed it only at its end:
    the erasure did not find it (`conversations: 0`) and the turn saved it afterwards."""
    headers = {"X-Customer-Id": "maria", "X-Conversation-Id": "first-in-flight"}
    ask: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "Maria Silva, maria.silva@example.com, order ORD-482135"}
    ]

    async def run() -> dict[str, Any]:
        async with _client(served) as client:
            turn = asyncio.create_task(
                client.chat.completions.create(
                    model=MODEL,
                    messages=ask,
                    extra_headers={**headers, "x-simulator-delay-ms": "2500"},
                )
            )
            await asyncio.sleep(1.0)  # the turn waits on the upstream
            async with httpx.AsyncClient(headers=_auth(served), timeout=30) as http:
                erased: dict[str, Any] = (await http.delete(f"{served.v1}/customers/maria")).json()
            await turn
        return erased

    erased = asyncio.run(run())
    assert erased["conversations"] == 1
    gone = httpx.get(f"{served.v1}/conversations/first-in-flight", headers=_auth(served))
    assert gone.status_code == 404
    assert _held(served, "maria") == {"facts": [], "episodes": [], "conversations": []}


def test_a_first_turn_that_failed_is_found_by_the_erasure(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """A first turn the upstream refused left its claimed record (the customer's id,
    turns 0) that no erasure or export found until it expired."""
    gw = sqlite_app_gateway
    headers = {"X-Customer-Id": "ana", "X-Conversation-Id": "refused", "x-simulator-status": "500"}
    with pytest.raises(openai.InternalServerError):
        gw.openai().chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "Ana Rocha, ana.rocha@example.org"}],
            extra_headers=headers,
        )
    found = gw.http.get(f"{gw.v1}/customers/ana/export", headers=_auth(gw)).json()
    assert [c["id"] for c in found["conversations"]] == ["refused"]
    erased = gw.http.delete(f"{gw.v1}/customers/ana", headers=_auth(gw)).json()
    assert erased["conversations"] == 1
    assert gw.http.get(f"{gw.v1}/conversations/refused", headers=_auth(gw)).status_code == 404


@pytest.mark.parametrize("store_url", ["sqlite", "redis"], indirect=True)
def test_an_abandoned_try_ending_after_its_retry_is_neither_a_turn_nor_the_card(
    served: GatewayProc,
) -> None:
    """The client timed out and retried at once; the first try's answer, which the
    customer never saw, ended last and became the record's last answer and the card's
    promise, and the two tries counted as two turns."""
    headers = {"X-Customer-Id": "rui", "X-Conversation-Id": "retried"}
    ask: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "My order ORD-555123 arrived broken, I want my money back."}
    ]
    unseen = "I have approved a full refund of 999 reais, it will arrive by Friday."
    seen = "Unfortunately the refund was denied, the warranty does not cover this damage."

    async def run() -> None:
        async with _client(served, timeout=1.0) as impatient, _client(served) as client:
            with pytest.raises(openai.APITimeoutError):
                await impatient.chat.completions.create(
                    model=MODEL,
                    messages=ask,
                    extra_headers={
                        **headers,
                        "x-simulator-delay-ms": "2500",
                        "x-simulator-reply": unseen,
                    },
                )
            retry = await client.chat.completions.create(
                model=MODEL,
                messages=ask,
                extra_headers={
                    **headers,
                    "x-stainless-retry-count": "1",
                    "x-simulator-reply": seen,
                },
            )
        assert retry.choices[0].message.content == seen

    asyncio.run(run())
    _until_booked(served, "retried", 2)  # the abandoned try has ended at the gateway
    record = httpx.get(f"{served.v1}/conversations/retried", headers=_auth(served)).json()
    assert record["turns"] == 1
    closed = httpx.post(f"{served.v1}/conversations/retried/close", headers=_auth(served))
    card = closed.json()["episode_summary"]
    assert "denied" in card and "999" not in card and "Friday" not in card


def _until_booked(gw: GatewayProc, conversation: str, calls: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        rows = gw.admin("/admin/ledger", tenant="acme").json()["records"]
        if sum(r["conversation"] == conversation for r in rows) >= calls:
            time.sleep(0.5)  # booked, then saved
            return
        time.sleep(0.1)
    raise AssertionError(f"{conversation}: {calls} calls never booked")


@pytest.mark.parametrize("store_url", ["sqlite", "redis"], indirect=True)
def test_an_erasure_with_calls_in_flight_keeps_the_customer_within_the_ceiling(
    served: GatewayProc,
) -> None:
    """The erasure moved the reservations of calls in flight to the pseudonym, but those
    calls booked onto the id: a burst right after the erasure was admitted against an
    empty budget, and the id's day passed its ceiling."""

    async def call(client: openai.AsyncOpenAI, n: int, delay_ms: int) -> int:
        try:
            await client.chat.completions.create(
                model=MODEL,
                max_tokens=300,
                messages=[{"role": "user", "content": f"hi {n}"}],
                extra_headers={
                    "X-Customer-Id": "eve",
                    "X-Conversation-Id": f"eve-{n}",
                    "x-simulator-delay-ms": str(delay_ms),
                    "x-simulator-fill": "1",
                },
            )
        except openai.RateLimitError:
            return 429
        return 200

    async def run() -> None:
        async with _client(served) as client:
            slow = [asyncio.create_task(call(client, n, 3000)) for n in range(15)]
            await asyncio.sleep(1.0)  # held against the customer's day, awaiting the upstream
            async with httpx.AsyncClient(headers=_auth(served), timeout=30) as http:
                assert (await http.delete(f"{served.v1}/customers/eve")).status_code == 200
            await asyncio.gather(*(call(client, 100 + n, 0) for n in range(30)))
            assert set(await asyncio.gather(*slow)) == {200}

    asyncio.run(run())
    rows = served.admin("/admin/budgets", tenant="acme", customer="eve").json()["budgets"]
    day = next(r for r in rows if r["scope"] == "customer" and r["period"] == "day")
    assert Decimal(day["spent_usd"]) <= CEILING and Decimal(day["reserved_usd"]) == 0
