"""Hostile spend: calls shaped to cost far more than they look (n replies, large tool
definitions, an unpriced model, the pass-through routes), 200 at once against a $0.02
ceiling, on SQLite and on Redis. What the upstream billed is read from the simulator's
own log, priced by the test: the gateway must book exactly that, and never more than
the ceiling."""

from __future__ import annotations

import asyncio
import contextlib
import io
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import redis
import yaml
from genai_prices import Usage, calc_price
from openai.types.chat import ChatCompletionMessageParam

from gateway.config import SIMULATOR
from gateway.ops.cli import cli_logic
from gateway.store import open_store
from gateway.store.redis_keys import budget_keys
from tests.conftest import UpstreamLog
from tests.inprocess import running
from tests.servers import GatewayProc, free_port, start_gateway, write_config

CEILING = Decimal("0.02")
EMBEDDING_PRICE = Decimal("0.02")  # USD per MTok, set in the gateway's config below
SPEND = {
    "plans": {
        "basic": {"customer_monthly_usd": str(CEILING), "action": "block"},
        "pro": {
            "customer_monthly_usd": str(CEILING),
            "action": "block",
            "unpriced": "price_as",
            "price_as": "gpt-4o",
        },
    }
}
PRICES = {
    "text-embedding-3-small": {"input_per_mtok": str(EMBEDDING_PRICE), "output_per_mtok": "0"}
}
UNPRICED = "my-azure-gpt4o-deployment"
ASK: ChatCompletionMessageParam = {"role": "user", "content": "Where is my order?"}
FILL = {"x-simulator-fill": "1"}  # every reply uses its whole output ceiling


def _tool(n: int) -> dict[str, Any]:
    fields = {f"field_{n}_{k}": {"type": "string", "description": "word " * 60} for k in range(20)}
    schema = {"type": "object", "properties": fields}
    return {"type": "function", "function": {"name": f"tool_{n}", "parameters": schema}}


TOOLS = [_tool(n) for n in range(20)]


@pytest.fixture(scope="module", params=["sqlite", "redis"])
def hostile_gateway(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    simulator_url: str,
    redis_server: str,
) -> Iterator[GatewayProc]:
    root = tmp_path_factory.mktemp(f"hostile-{request.param}")
    store = f"sqlite:///{root / 'g.db'}"
    if request.param == "redis":
        client = redis.Redis.from_url(redis_server)
        client.flushdb()
        client.close()
        store = redis_server
    gw = start_gateway(root, simulator_url, store, prices=PRICES, policies={"spend.yaml": SPEND})
    yield gw
    gw.stop()


# --- what the upstream billed, read independently of the gateway --------------------


def billed_cost(entry: dict[str, Any], price_as: str | None = None) -> Decimal:
    usage, model = entry["usage"], price_as or entry["model"]
    if "input_tokens" in usage:  # Responses API
        cached = usage["input_tokens_details"]["cached_tokens"]
        inputs, output = usage["input_tokens"], usage["output_tokens"]
    else:
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        inputs, output = usage["prompt_tokens"], usage.get("completion_tokens", 0)
    if model == "text-embedding-3-small":
        cost: Decimal = (inputs * EMBEDDING_PRICE / Decimal(1_000_000)).quantize(Decimal("1e-10"))
        return cost
    price = calc_price(
        Usage(input_tokens=inputs, cache_read_tokens=cached, output_tokens=output), model
    )
    return price.total_price.quantize(Decimal("1e-10"))


def budget(gw: GatewayProc, tenant: str, customer: str) -> dict[str, Decimal]:
    rows = gw.admin("/admin/budgets", tenant=tenant, customer=customer).json()["budgets"]
    row = next(r for r in rows if r["scope"] == "customer" and r["period"] == "month")
    return {"spent": Decimal(row["spent_usd"]), "reserved": Decimal(row["reserved_usd"])}


# --- the 200-call races ---------------------------------------------------------------

Call = Callable[[openai.AsyncOpenAI, httpx.AsyncClient, int], Any]


async def _chat_n8(c: openai.AsyncOpenAI, h: httpx.AsyncClient, i: int) -> Any:
    return await c.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": f"tell me everything {i}"}],
        n=8,
        max_tokens=400,
        extra_headers=FILL,
    )


async def _chat_tools(c: openai.AsyncOpenAI, h: httpx.AsyncClient, i: int) -> Any:
    return await c.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": f"which tool {i}?"}],
        tools=TOOLS,  # type: ignore[arg-type]
        max_tokens=50,
    )


async def _chat_unpriced(c: openai.AsyncOpenAI, h: httpx.AsyncClient, i: int) -> Any:
    return await c.chat.completions.create(
        model=UNPRICED,
        messages=[{"role": "user", "content": f"hello {i}"}],
        max_tokens=400,
        extra_headers=FILL,
    )


async def _responses(c: openai.AsyncOpenAI, h: httpx.AsyncClient, i: int) -> Any:
    # No max_output_tokens: the gateway must bound it (the simulator fills 16k otherwise).
    body = {"model": "gpt-4o-mini", "input": f"write a long essay {i}", "stream": i % 2 == 0}
    return await _raw(h, "/responses", body)


async def _completions(c: openai.AsyncOpenAI, h: httpx.AsyncClient, i: int) -> Any:
    # n=10, streamed half the time without asking for usage.
    body = {
        "model": "gpt-3.5-turbo-instruct",
        "prompt": f"Once upon a time {i}",
        "n": 10,
        "max_tokens": 300,
        "stream": i % 2 == 0,
    }
    return await _raw(h, "/completions", body)


async def _embeddings(c: openai.AsyncOpenAI, h: httpx.AsyncClient, i: int) -> Any:
    return await c.embeddings.create(
        model="text-embedding-3-small", input=[f"document {i} " + "word " * 500] * 20
    )


async def _raw(h: httpx.AsyncClient, path: str, body: dict[str, Any]) -> Any:
    response = await h.post(path, json=body, headers=FILL)
    if response.status_code != 200:
        # The SDK types its errors on httpx2 but reads only the request, status and headers:
        # an httpx response serves.
        raise openai.APIStatusError(
            "refused",
            response=response,  # type: ignore[arg-type]
            body=response.json().get("error"),
        )
    return response


SCENARIOS: dict[str, tuple[str, Call]] = {
    "chat-n8": ("globex", _chat_n8),
    "chat-20-tools": ("globex", _chat_tools),
    "unpriced-blocked": ("globex", _chat_unpriced),
    "unpriced-price-as": ("acme", _chat_unpriced),
    "responses": ("globex", _responses),
    "completions-n10": ("globex", _completions),
    "embeddings": ("globex", _embeddings),
}


async def _race(gw: GatewayProc, tenant: str, customer: str, call: Call, n: int) -> list[str]:
    headers = {"X-Customer-Id": customer, "x-simulator-tag": customer}
    key = gw.keys[tenant]
    client = openai.AsyncOpenAI(
        base_url=gw.v1, api_key=key, max_retries=0, timeout=120, default_headers=headers
    )
    raw = httpx.AsyncClient(
        base_url=gw.v1,
        headers={**headers, "Authorization": f"Bearer {key}"},
        timeout=120,
        limits=httpx.Limits(max_connections=300),
    )

    async def one(i: int) -> str:
        try:
            await call(client, raw, i)
            return "ok"
        except openai.APIStatusError as exc:
            code = (exc.body or {}).get("code") if isinstance(exc.body, dict) else None
            return f"{exc.status_code} {code}"

    try:
        return list(await asyncio.gather(*(one(i) for i in range(n))))
    finally:
        await client.close()
        await raw.aclose()


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_200_hostile_calls_never_pass_a_002_ceiling(
    hostile_gateway: GatewayProc, upstream_log: UpstreamLog, scenario: str
) -> None:
    gw = hostile_gateway
    tenant, call = SCENARIOS[scenario]
    customer = f"{scenario}-{uuid.uuid4().hex[:8]}"
    results = asyncio.run(_race(gw, tenant, customer, call, 200))
    billed = [e for e in upstream_log.since() if e["headers"].get("x-simulator-tag") == customer]
    money = budget(gw, tenant, customer)
    assert money["spent"] <= CEILING, (scenario, money, results.count("ok"))
    assert money["reserved"] == 0  # every hold settled or released
    if scenario == "unpriced-blocked":  # nothing reaches the upstream unguarded
        assert set(results) == {"400 model_not_priced"} and not billed
        return
    # 503: this gateway's own store pool was busy (a race of 200 on a loaded machine):
    # refused, never let through unguarded
    assert set(results) <= {"ok", "429 insufficient_quota", "503 store_unavailable"}, set(results)
    assert results.count("ok") == len(billed) > 0
    assert results.count("429 insufficient_quota") > 0  # the ceiling was reached
    price_as = "gpt-4o" if scenario == "unpriced-price-as" else None
    assert money["spent"] == sum(billed_cost(e, price_as) for e in billed)  # all of it booked


# --- one call, exactly over the ceiling -----------------------------------------------


def test_a_tools_heavy_n4_call_cannot_pass_the_ceiling(
    sqlite_gateway_with: Callable[[dict[str, Any]], GatewayProc], upstream_log: UpstreamLog
) -> None:
    """Priced like the pre-fix gateway priced it (messages only, one reply) the call
    fits a ceiling; billed (tools and four replies) it does not: it must be refused."""
    gw = sqlite_gateway_with(
        {"spend.yaml": {"plans": {"basic": {"customer_monthly_usd": "0.005"}}}}
    )
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["globex"], max_retries=0)
    body: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "which tool?"}],
        "tools": TOOLS,
        "n": 4,
        "max_tokens": 800,
    }
    # The same call without a ceiling: what it is billed.
    client.chat.completions.create(**body, extra_headers=FILL | {"x-simulator-tag": "free"})
    (free,) = [e for e in upstream_log.since() if e["headers"].get("x-simulator-tag") == "free"]
    cost = billed_cost(free)
    looks_like = calc_price(Usage(input_tokens=20, output_tokens=800), "gpt-4o-mini").total_price
    assert looks_like < Decimal("0.005") < cost
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(
            **body, extra_headers=FILL | {"X-Customer-Id": "c1", "x-simulator-tag": "capped"}
        )
    assert not [e for e in upstream_log.since() if e["headers"].get("x-simulator-tag") == "capped"]
    assert budget(gw, "globex", "c1") == {"spent": 0, "reserved": 0}


def test_the_worst_case_counts_the_learned_token_factor(
    sqlite_gateway_with: Callable[[dict[str, Any]], GatewayProc], upstream_log: UpstreamLog
) -> None:
    """An upstream whose tokenizer bills twice the gateway's count: once the gateway has
    learned that, a call whose own count fits the ceiling but whose bill does not is
    refused."""
    ceiling = Decimal("0.0002")
    gw = sqlite_gateway_with(
        {"spend.yaml": {"plans": {"basic": {"customer_monthly_usd": str(ceiling)}}}}
    )
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["globex"], max_retries=0)
    twice = {"x-simulator-prompt-factor": "2"}
    text = "lorem ipsum dolor sit amet " * 220  # ~1,300 tokens: $0.0002 at gpt-4o-mini
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": text}]
    client.chat.completions.create(  # no customer, no ceiling: the gateway learns 2x
        model="gpt-4o-mini", messages=messages, max_tokens=1, extra_headers=twice
    )
    (learned,) = upstream_log.since()
    tokens = learned["usage"]["prompt_tokens"]
    own = calc_price(Usage(input_tokens=tokens // 2, output_tokens=1), "gpt-4o-mini")
    assert own.total_price * Decimal("1.06") < ceiling < billed_cost(learned)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,
            max_tokens=1,
            extra_headers=twice | {"X-Customer-Id": "c1"},
        )
    assert len(upstream_log.since()) == 1
    assert budget(gw, "globex", "c1")["spent"] == 0


# --- a ceiling near its end; a TTL shorter than a stream -------------------------------


def test_calls_are_refused_only_when_the_money_left_cannot_hold_one(
    sqlite_gateway_with: Callable[[dict[str, Any]], GatewayProc],
) -> None:
    """200 concurrent small calls whose worst case (400 output tokens) is ten times their
    cost: those that do not fit beside the calls in flight wait for them to settle, so
    refusals start only when what is spent leaves less than one worst case."""
    ceiling = Decimal("0.002")
    gw = sqlite_gateway_with(
        {"spend.yaml": {"plans": {"basic": {"customer_monthly_usd": str(ceiling)}}}}
    )

    async def small(c: openai.AsyncOpenAI, h: httpx.AsyncClient, i: int) -> Any:
        return await c.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": f"hi {i}"}], max_tokens=400
        )

    results = asyncio.run(_race(gw, "globex", "near-end", small, 200))
    money = budget(gw, "globex", "near-end")
    worst = calc_price(Usage(input_tokens=400, output_tokens=400), "gpt-4o-mini").total_price
    assert money["spent"] <= ceiling
    assert results.count("429 insufficient_quota") > 0
    assert ceiling - money["spent"] < worst, (results.count("ok"), money)


def test_a_stream_longer_than_the_reservation_ttl_keeps_its_hold(
    sqlite_gateway_with: Callable[[dict[str, Any]], GatewayProc], upstream_log: UpstreamLog
) -> None:
    """reservation_ttl_s: 1, streams of about 3 s: the streams renew their holds, so a
    call made while they run is refused, and the ceiling holds."""
    worst = calc_price(Usage(input_tokens=30, output_tokens=300), "gpt-4o-mini").total_price
    ceiling = (worst * Decimal("2.5")).quantize(Decimal("1e-8"))
    spend = {
        "plans": {"basic": {"customer_monthly_usd": str(ceiling)}},
        "reservation_ttl_s": 1,
        "hold_wait_s": 0,
    }
    gw = sqlite_gateway_with({"spend.yaml": spend})
    headers = FILL | {"X-Customer-Id": "ttl", "x-simulator-chunk-delay-ms": "12"}

    def stream() -> None:
        client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["globex"], max_retries=0)
        for _ in client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "a long story"}],
            max_tokens=300,
            stream=True,
            extra_headers=headers,
        ):
            pass

    threads = [threading.Thread(target=stream) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(2.0)  # twice the TTL: without renewal both holds have lapsed
    assert budget(gw, "globex", "ttl")["reserved"] > 0
    client = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["globex"], max_retries=0)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "me too"}],
            max_tokens=300,
            extra_headers=headers,
        )
    for t in threads:
        t.join(timeout=30)
    money = budget(gw, "globex", "ttl")
    assert money["spent"] <= ceiling and money["reserved"] == 0
    assert len(upstream_log.since()) == 2


# --- configuration --------------------------------------------------------------------


def test_check_config_warns_of_unpriced_blocking_and_a_short_ttl(tmp_path: Path) -> None:
    config = write_config(tmp_path, "http://127.0.0.1:9/v1", "sqlite:///g.db")
    spend: dict[str, Any] = {
        "plans": {"basic": {"monthly_usd": "5"}},
        "reservation_ttl_s": 30,
    }
    (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cli_logic(["check-config", "--config", str(config)]) == 0
    text = err.getvalue()
    assert "tenants globex have a spend ceiling and no `unpriced` policy" in text
    assert "reservation_ttl_s (30 s) is below upstream.timeout_s (300 s)" in text

    spend["plans"]["basic"]["price_as"] = "vllm-large"
    spend["plans"]["pro"] = {"monthly_usd": "5", "action": "degrade", "degrade_to": "vllm-small"}
    spend["tenants"] = {"initech": {"daily_usd": "1"}}
    (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    (tmp_path / "policies" / "context.yml").write_text("defaults: {}\n")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert cli_logic(["check-config", "--config", str(config)]) == 1
    text = err.getvalue()  # every problem, in one run
    assert "plans.basic.price_as: 'vllm-large' has no price itself" in text
    assert "degrade_to" not in text  # a warning (test_an_unpriced_degrade_to_is_a_warning...)
    assert "tenants.initech" not in text  # a tenant of the store may be overridden
    assert "context.yml" in text and "not a policy file" in text


def _check_config(config: Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli_logic(["check-config", "--config", str(config)])
    return code, err.getvalue()


def test_an_unpriced_degrade_to_is_a_warning_and_never_passes_the_ceiling(tmp_path: Path) -> None:
    """check-config warns of a `degrade_to` without a price and of every tenant, the
    store's too, with a ceiling and no `unpriced` choice; the gateway starts, and at the
    ceiling such a call is refused, not degraded, even under `unpriced: allow` (which
    would let the unpriced model through uncounted)."""
    store = f"sqlite:///{tmp_path / 'g.db'}"
    config = write_config(tmp_path, SIMULATOR, store)
    degrade = {"action": "degrade", "degrade_to": "vllm-small", "unpriced": "allow"}
    spend = {"plans": {"pro": {"monthly_usd": "0.000001", **degrade}, "basic": {"daily_usd": 1}}}
    (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    add = ["tenants", "add", "hooli", "--plan", "basic", "--config", str(config)]
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli_logic(add) == 0
    code, text = _check_config(config)
    assert code == 0, text
    assert "plans.pro.degrade_to: 'vllm-small' has no price" in text
    assert "tenants globex, hooli have a spend ceiling and no `unpriced` policy" in text
    for gw in running(tmp_path, store):
        with pytest.raises(openai.RateLimitError) as refused:
            gw.openai("acme").chat.completions.create(model="gpt-4o", messages=[ASK])
        assert refused.value.code == "insufficient_quota"
        assert gw.admin("/admin/ledger").json()["records"] == []  # nothing reached the upstream

    # A store that cannot be read: the check says whose ceilings it looked at.
    write_config(tmp_path, SIMULATOR, f"redis://127.0.0.1:{free_port()}/0")
    code, text = _check_config(config)
    assert code == 0 and "tenants globex have a spend ceiling" in text
    assert "the store could not be read" in text and "only the tenants of tenants.yaml" in text


def test_renewing_a_reservation_keeps_it_past_its_ttl(store_url: str) -> None:
    """The store side of renewal, on both backends: a renewed hold outlives its first
    TTL; a settled or expired one cannot be renewed back."""

    async def scenario() -> None:
        store = open_store(store_url)
        try:
            budgets = [("t|month|2099-11", 100)]
            assert await store.reserve("r1", budgets, 60, 0.6) is None
            for _ in range(4):  # 1.2 s in all: twice the TTL
                await asyncio.sleep(0.3)
                assert await store.renew("r1", ["t|month|2099-11"], 0.6)
            assert await store.reserve("r2", budgets, 60, 0.6) == "t|month|2099-11"
            await store.release("r1", ["t|month|2099-11"])
            assert not await store.renew("r1", ["t|month|2099-11"], 0.6)
            assert await store.reserve("r2", budgets, 60, 0.3) is None
            await asyncio.sleep(0.5)
            assert not await store.renew("r2", ["t|month|2099-11"], 0.6)  # lapsed
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_budget_whose_calls_all_failed_expires_like_a_booked_one(redis_url: str) -> None:
    """A customer-day whose every call failed upstream (reserved, released, never
    booked) leaves its budget in Redis for as long as a booked one stays, not for ever;
    so do the holds of a replica that died holding them. Never a hold's short TTL: the
    budget lives out its period, and a few days more (records.budget_expires)."""
    budget = f"globex|customer:c-1|day|{time.strftime('%Y-%m-%d', time.gmtime())}"

    async def scenario() -> None:
        store = open_store(redis_url)
        try:
            assert await store.reserve("failed", [(budget, 10**9)], 60, 30) is None
            await store.release("failed", [budget])
            assert await store.budgets([budget]) == {budget: (0, 0)}
            assert await store.reserve("died", [(budget, 10**9)], 60, 30) is None
        finally:
            await store.close()

    asyncio.run(scenario())
    client = redis.Redis.from_url(redis_url)
    try:
        ttls = [client.ttl(key) for key in budget_keys(budget)]
    finally:
        client.close()
    assert all(3 * 86400 < ttl <= 4 * 86400 for ttl in ttls), ttls  # -1: kept for ever
