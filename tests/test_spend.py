"""Spend ceilings through running gateways: block, degrade, replicas racing for the last
dollar, a replica killed while holding a reservation, metrics across workers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, cast

import httpx
import httpx2
import openai
import pytest
import yaml
from genai_prices import Usage, calc_price
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionUserMessageParam

from tests.conftest import UpstreamLog
from tests.expected import split
from tests.servers import GatewayProc, start_gateway

SHORT: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Where is my order?"}]


def with_spend(gw: GatewayProc, spend: dict[str, Any]) -> GatewayProc:
    (gw.root / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    gw.restart()
    return gw


def spent(gw: GatewayProc, tenant: str) -> Decimal:
    row = next(r for r in gw.admin("/admin/spend").json()["tenants"] if r["tenant"] == tenant)
    return Decimal(row["cost_usd"])


def budgets(gw: GatewayProc, tenant: str) -> dict[str, dict[str, Any]]:
    rows = gw.admin("/admin/budgets", tenant=tenant).json()["budgets"]
    return {r["period"] + "/" + r["scope"]: r for r in rows}


def test_block_raises_the_sdks_rate_limit_error_naming_the_ceiling(
    sqlite_gateway_with: Callable[[dict[str, Any]], GatewayProc],
) -> None:
    spend = {"plans": {"basic": {"monthly_usd": "0.0003", "action": "block"}}}
    gw = sqlite_gateway_with({"spend.yaml": spend})
    sent: list[str] = []  # every request the SDK makes, its retries included
    http = httpx2.Client(event_hooks={"request": [lambda r: sent.append(str(r.url))]})
    # The SDK's default: 2 retries on a 429, unless the answer says not to.
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["globex"], http_client=http)
    with http, pytest.raises(openai.RateLimitError) as info:
        for _ in range(300):
            before = len(sent)
            client.chat.completions.create(model="gpt-4o-mini", messages=SHORT, max_tokens=30)
    assert len(sent) - before == 1  # the blocked call was not retried
    assert info.value.response.headers["x-should-retry"] == "false"
    retry_after = int(info.value.response.headers["retry-after"])  # until the month resets
    assert 0 < retry_after <= 31 * 86400
    error = cast(dict[str, Any], info.value.body)  # the SDK types the error body as object
    assert error["code"] == "insufficient_quota" and error["type"] == "insufficient_quota"
    assert "monthly ceiling of $0.0003 USD" in error["message"]
    now = time.gmtime()  # the monthly ceiling resets at the start of the next UTC month
    year, month_no = (now.tm_year + 1, 1) if now.tm_mon == 12 else (now.tm_year, now.tm_mon + 1)
    assert f"resets at {year:04d}-{month_no:02d}-01T00:00:00Z" in error["message"]
    assert 0 < spent(gw, "globex") <= Decimal("0.0003")
    month = budgets(gw, "globex")["month/tenant"]
    assert Decimal(month["reserved_usd"]) == 0 and Decimal(month["spent_usd"]) == spent(
        gw, "globex"
    )
    # another tenant is not affected
    openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0).chat.completions.create(
        model="gpt-4o-mini", messages=SHORT
    )


def test_degrade_sends_the_cheaper_model_and_prices_it(
    sqlite_gateway_with: Callable[[dict[str, Any]], GatewayProc],
) -> None:
    degrade = {"monthly_usd": "0.002", "action": "degrade", "degrade_to": "gpt-4o-mini"}
    gw = sqlite_gateway_with({"spend.yaml": {"tenants": {"acme": degrade}}})
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0)
    seen = []
    with pytest.raises(openai.RateLimitError):
        for _ in range(400):
            raw = client.chat.completions.with_raw_response.create(
                model="gpt-4o", messages=SHORT, max_tokens=30
            )
            seen.append((raw.headers.get("x-gateway-degraded"), raw.parse().model))
    assert (None, "gpt-4o") in seen and ("gpt-4o->gpt-4o-mini", "gpt-4o-mini") in seen
    first_degraded = seen.index(("gpt-4o->gpt-4o-mini", "gpt-4o-mini"))
    assert all(s[0] for s in seen[first_degraded:])  # once degraded, it stays degraded
    ledger = gw.admin("/admin/ledger").json()["records"]
    mini = [r for r in ledger if r["model"] == "gpt-4o-mini"]
    assert mini
    for r in mini:  # priced at the cheaper model
        price = calc_price(
            Usage(
                input_tokens=r["fresh_input_tokens"] + r["cached_input_tokens"],
                cache_read_tokens=r["cached_input_tokens"],
                output_tokens=r["output_tokens"],
            ),
            "gpt-4o-mini",
        )
        assert Decimal(r["cost_usd"]) == price.total_price.quantize(Decimal("1e-10"))
    assert spent(gw, "acme") <= Decimal("0.002")


async def _race(urls: list[str], key: str, calls: int) -> list[str]:
    """`calls` concurrent requests spread over the replicas: each ends in 'ok' or '429'."""
    clients = [
        openai.AsyncOpenAI(
            base_url=u,
            api_key=key,
            max_retries=0,
            timeout=60,
            default_headers={"X-Simulator-Test-Tenant": "globex"},
        )
        for u in urls
    ]

    async def one(n: int) -> str:
        try:
            await clients[n % len(clients)].chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": f"question {n}"}],
                max_tokens=30,
                extra_headers={"X-Conversation-Id": f"race-{n}"},
            )
            return "ok"
        except openai.RateLimitError:
            return "429"

    try:
        return list(await asyncio.gather(*(one(n) for n in range(calls))))
    finally:
        for c in clients:
            await c.close()


def _check_race(
    results: list[str], booked: Decimal, ceiling: Decimal, log: UpstreamLog, gw: GatewayProc
) -> None:
    assert len(results) == 200 and set(results) <= {"ok", "429"}
    assert results.count("ok") > 0 and results.count("429") > 0, results.count("ok")
    assert booked <= ceiling  # overshoot: $0
    billed = [e for e in log.since() if e["headers"].get("x-simulator-test-tenant") == "globex"]
    assert len(billed) == results.count("ok")
    row = next(r for r in gw.admin("/admin/spend").json()["tenants"] if r["tenant"] == "globex")
    fresh = sum(split(e["usage"])[0] for e in billed)
    output = sum(split(e["usage"])[2] for e in billed)
    assert (row["requests"], row["fresh_input_tokens"], row["output_tokens"]) == (
        len(billed),
        fresh,
        output,
    )


def test_three_replicas_on_one_redis_never_pass_the_ceiling(
    tmp_path: Path, simulator_url: str, redis_url: str, upstream_log: UpstreamLog
) -> None:
    ceiling = Decimal("0.002")
    spend = {"plans": {"basic": {"monthly_usd": str(ceiling), "action": "block"}}}
    replicas = []
    try:
        for n in range(3):
            policies = {"spend.yaml": spend}
            replicas.append(
                start_gateway(tmp_path / f"r{n}", simulator_url, redis_url, policies=policies)
            )
        results = asyncio.run(_race([g.v1 for g in replicas], replicas[0].keys["globex"], 200))
        _check_race(results, spent(replicas[0], "globex"), ceiling, upstream_log, replicas[0])
    finally:
        for gw in replicas:
            gw.stop()


def test_sqlite_with_two_workers_never_passes_the_ceiling_and_metrics_are_whole(
    tmp_path: Path, simulator_url: str, upstream_log: UpstreamLog
) -> None:
    ceiling = Decimal("0.002")
    spend = {"plans": {"basic": {"monthly_usd": str(ceiling), "action": "block"}}}
    store = f"sqlite:///{tmp_path / 'g.db'}"
    gw = start_gateway(tmp_path, simulator_url, store, workers=2, policies={"spend.yaml": spend})
    try:
        results = asyncio.run(_race([gw.v1], gw.keys["globex"], 200))
        booked = spent(gw, "globex")
        _check_race(results, booked, ceiling, upstream_log, gw)
        for _ in range(4):  # whichever worker answers the scrape, the totals are whole
            text = gw.admin("/metrics").text
            statuses = {
                line.split('status="')[1].split('"')[0]: float(line.split()[-1])
                for line in text.splitlines()
                if line.startswith('gateway_requests_total{route="chat"')
            }
            assert statuses.get("200", 0) == results.count("ok")
            assert statuses.get("429", 0) == results.count("429")
            series = 'gateway_conversation_cost_usd_total{plan="basic",tenant="globex"}'
            cost = next(
                float(line.split()[-1]) for line in text.splitlines() if line.startswith(series)
            )
            assert cost == pytest.approx(float(booked), abs=1e-9)
    finally:
        gw.stop()


def test_a_killed_replicas_reservation_expires(
    tmp_path: Path, simulator_url: str, redis_url: str
) -> None:
    spend = {
        "plans": {"basic": {"monthly_usd": "0.0002", "action": "block"}},
        "reservation_ttl_s": 2,
        "hold_wait_s": 0,  # refuse at once rather than wait for the dead hold to expire
    }
    a = start_gateway(tmp_path / "a", simulator_url, redis_url, policies={"spend.yaml": spend})
    b = start_gateway(tmp_path / "b", simulator_url, redis_url, policies={"spend.yaml": spend})
    try:
        slow = threading.Thread(
            target=lambda: _quietly(
                lambda: openai.OpenAI(
                    base_url=a.v1, api_key=a.keys["globex"], max_retries=0
                ).chat.completions.create(
                    model="gpt-4o-mini",
                    messages=SHORT,
                    max_tokens=200,
                    extra_headers={"x-simulator-delay-ms": "8000"},
                )
            )
        )
        stats = simulator_url.removesuffix("/v1") + "/sim/stats"
        received = httpx.get(stats).json()["delayed_received"]
        slow.start()
        deadline = time.monotonic() + 10
        while Decimal(budgets(b, "globex")["month/tenant"]["reserved_usd"]) == 0:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # Kill it only once the call is upstream: killed between its reservation and its
        # send, the simulator would never see (nor log) the call the end waits for.
        while httpx.get(stats).json()["delayed_received"] == received:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        a.stop(signal.SIGKILL)  # dies holding the reservation
        client = openai.OpenAI(base_url=b.v1, api_key=b.keys["globex"], max_retries=0)
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="gpt-4o-mini", messages=SHORT, max_tokens=200)
        time.sleep(2.2)
        client.chat.completions.create(model="gpt-4o-mini", messages=SHORT, max_tokens=200)
        slow.join(timeout=15)
        # The simulator finishes (and logs) the dead replica's call late: wait for it, so
        # no later test counts it as its own.
        log = simulator_url.removesuffix("/v1") + "/sim/usage"
        deadline = time.monotonic() + 15
        while not any(
            e["headers"].get("x-simulator-delay-ms") == "8000" for e in httpx.get(log).json()
        ):
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        a.stop()
        b.stop()


def _quietly(call: Any) -> None:
    with contextlib.suppress(openai.APIError, httpx.HTTPError):  # killed under it
        call()


def test_pass_through_routes_count_against_budgets_and_are_refused_at_the_ceiling(
    sqlite_gateway: GatewayProc,
) -> None:
    client = openai.OpenAI(
        base_url=sqlite_gateway.v1, api_key=sqlite_gateway.keys["globex"], max_retries=0
    )
    client.embeddings.create(model="text-embedding-3-small", input="counted")
    (record,) = sqlite_gateway.admin("/admin/ledger").json()["records"]
    assert record["route"] == "embeddings"
    # At a ceiling of 0 both are refused: the embedding is priced (at OpenAI's price, the
    # simulator being no provider genai-prices knows), and would be under `allow` too.
    ceiling = {"monthly_usd": "0", "action": "block", "unpriced": "allow"}
    gw = with_spend(sqlite_gateway, {"plans": {"basic": ceiling}})
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["globex"], max_retries=0)
    for call in (
        lambda: client.embeddings.create(model="text-embedding-3-small", input="refused"),
        lambda: client.chat.completions.create(model="gpt-4o-mini", messages=SHORT),
    ):
        with pytest.raises(openai.RateLimitError):
            call()
    assert len(gw.admin("/admin/ledger").json()["records"]) == 1


def _image(detail: Literal["low", "high"]) -> list[ChatCompletionMessageParam]:
    said: ChatCompletionUserMessageParam = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What does this label say?"},
            {"type": "image_url", "image_url": {"url": "https://x.test/l.png", "detail": detail}},
        ],
    }
    return [said]


def test_an_image_is_held_at_the_most_its_model_may_bill(
    sqlite_gateway_with: Callable[[dict[str, Any]], GatewayProc],
) -> None:
    """The body does not say how big an image is, and gpt-4o-mini bills a high-detail one
    up to 48,169 input tokens ($0.0072): held at that, it does not fit a $0.0005 ceiling,
    though the window counts the image as 85 tokens. A low-detail one (2,833 tokens at
    most) fits. Billed as a provider bills them, spend never passes the ceiling."""
    gw = sqlite_gateway_with({"spend.yaml": {"plans": {"basic": {"monthly_usd": "0.0005"}}}})
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["globex"], max_retries=0)

    def ask(detail: Literal["low", "high"], billed: int) -> None:
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=_image(detail),
            max_tokens=50,
            extra_headers={"X-Simulator-Usage": json.dumps({"prompt_tokens": billed})},
        )

    ask("low", 2840)
    with pytest.raises(openai.RateLimitError):
        ask("high", 8600)
    assert len(gw.admin("/admin/ledger").json()["records"]) == 1
    assert 0 < spent(gw, "globex") <= Decimal("0.0005")


def test_money_is_written_in_fixed_point(tmp_path: Path, simulator_url: str) -> None:
    """A call cheaper than a millionth of a dollar and a budget at zero read as plain
    decimals ("0.0000005000", "0.0000000000"), never "5.0E-7" or "0E-10"."""
    gw = start_gateway(
        tmp_path,
        simulator_url,
        f"sqlite:///{tmp_path / 'gateway.db'}",
        policies={"spend.yaml": {"plans": {"pro": {"customer_daily_usd": 5}}}},
        # a model cheap enough that a "Hi" (and the tenant's ~9-token prompt-cache salt)
        # costs under a millionth of a dollar
        prices={"local-nano": {"input_per_mtok": "0.01", "output_per_mtok": "0.02"}},
    )
    try:
        client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0)
        client.chat.completions.create(
            model="local-nano",
            messages=[{"role": "user", "content": "Hi"}],
            max_tokens=1,
            extra_headers={"X-Customer-Id": "tiny"},
        )
        ledger = gw.admin("/admin/ledger").json()["records"]
        spend = gw.admin("/admin/spend").json()["tenants"]
        held = gw.admin("/admin/budgets", tenant="acme", customer="tiny").json()["budgets"]
    finally:
        gw.stop()
    texts = [r["cost_usd"] for r in ledger + spend]
    texts += [b[k] for b in held for k in ("spent_usd", "reserved_usd")]
    assert texts and all("E" not in t and t.count(".") == 1 for t in texts), texts
    assert min(Decimal(t) for t in texts[: len(ledger)]) < Decimal("0.000001")
    assert "0.0000000000" in texts  # nothing held once the call settled


def test_a_call_whose_client_left_while_it_waited_for_a_hold_is_not_forwarded(
    sqlite_gateway_with: Callable[[dict[str, Any]], GatewayProc], upstream_log: UpstreamLog
) -> None:
    """Two slow calls hold all of a ceiling; a third waits for one to settle
    (`hold_wait_s`), and its client gives up meanwhile (and the SDK retries it): it was
    forwarded and booked all the same, billed for an answer nobody read. Not now."""
    spend = {"plans": {"basic": {"monthly_usd": "0.0012", "action": "block"}}, "hold_wait_s": 10}
    gw = sqlite_gateway_with({"spend.yaml": spend})
    tag = f"left-{time.monotonic_ns()}"

    def client(timeout: float) -> openai.OpenAI:
        headers = {"x-simulator-tag": tag}
        return openai.OpenAI(
            base_url=gw.v1,
            api_key=gw.keys["globex"],
            max_retries=0,
            timeout=timeout,
            default_headers=headers,
        )

    slow = [
        threading.Thread(
            target=lambda: client(30).chat.completions.create(
                model="gpt-4o-mini",
                messages=SHORT,
                extra_headers={"x-simulator-delay-ms": "3000"},
            )
        )
        for _ in range(2)
    ]
    for thread in slow:
        thread.start()
    deadline = time.monotonic() + 10
    while Decimal(budgets(gw, "globex")["month/tenant"]["reserved_usd"]) < Decimal("0.0009"):
        assert time.monotonic() < deadline, "the two slow calls never held the ceiling"
        time.sleep(0.05)
    waiting: list[ChatCompletionMessageParam] = [{"role": "user", "content": "the one that left"}]
    with pytest.raises(openai.APITimeoutError):
        client(1.0).chat.completions.create(model="gpt-4o-mini", messages=waiting)
    for thread in slow:
        thread.join(timeout=30)
    time.sleep(0.5)  # the waiting call's hold settles as the slow ones end
    forwarded = [e for e in upstream_log.since() if e["headers"].get("x-simulator-tag") == tag]
    assert len(forwarded) == 2  # the slow ones; not the one whose client left
    rows = gw.admin("/admin/ledger", tenant="globex").json()["records"]
    assert len(rows) == 2
    assert Decimal(budgets(gw, "globex")["month/tenant"]["reserved_usd"]) == 0
