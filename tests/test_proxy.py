"""The gateway, driven with the official openai SDK, against the simulated upstream: in this
process (tests/inprocess.py), and as a server process for the async SDK over a socket."""

from __future__ import annotations

import asyncio
import hashlib
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.expected import per_tenant
from tests.inprocess import InProcessGateway, SimulatorLog, start_inprocess
from tests.servers import PROVIDER_KEY, GatewayProc

SHORT: list[ChatCompletionMessageParam] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Where is my order?"},
]


def client(gw: GatewayProc | InProcessGateway, tenant: str = "acme") -> openai.OpenAI:
    return openai.OpenAI(
        base_url=gw.v1,
        api_key=gw.keys[tenant],
        max_retries=0,
        default_headers={"X-Simulator-Test-Tenant": tenant},
        http_client=gw.http if isinstance(gw, InProcessGateway) else None,
    )


def aclient(gw: GatewayProc, tenant: str = "acme") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=gw.v1,
        api_key=gw.keys[tenant],
        max_retries=0,
        default_headers={"X-Simulator-Test-Tenant": tenant},
    )


def test_json_and_stream_through_sync_and_async_sdk(gateway: GatewayProc) -> None:
    sync = client(gateway)
    done = sync.chat.completions.create(model="gpt-4o-mini", messages=SHORT)
    assert done.choices[0].message.content
    assert done.usage is not None and done.usage.prompt_tokens > 0

    text = "".join(
        c.choices[0].delta.content or ""
        for c in sync.chat.completions.create(model="gpt-4o-mini", messages=SHORT, stream=True)
        if c.choices
    )
    assert text == done.choices[0].message.content

    async def run_async() -> tuple[str, str]:
        async with aclient(gateway) as ac:
            one = await ac.chat.completions.create(model="gpt-4o-mini", messages=SHORT)
            parts: list[str] = []
            async for chunk in await ac.chat.completions.create(
                model="gpt-4o-mini", messages=SHORT, stream=True
            ):
                parts.extend(c.delta.content or "" for c in chunk.choices)
            return one.choices[0].message.content or "", "".join(parts)

    json_text, streamed = asyncio.run(run_async())
    assert json_text == streamed == text
    spend = gateway.admin("/admin/spend").json()["tenants"]
    assert {r["tenant"]: r["requests"] for r in spend} == {"acme": 4, "globex": 0}


def _sse_events(
    http: httpx.Client | httpx2.Client, url: str, key: str, body: dict[str, Any]
) -> list[bytes]:
    with http.stream(
        "POST", f"{url}/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}
    ) as response:
        assert response.status_code == 200
        raw = response.read()
    # Response ids carry the simulator's request counter: the only field allowed to differ.
    return [re.sub(rb'"id":"chatcmpl-sim\d+"', b'"id":"X"', e) for e in raw.split(b"\n\n") if e]


@pytest.mark.parametrize("include_usage", [False, True])
def test_stream_chunks_equal_the_upstreams(
    sqlite_app_gateway: InProcessGateway, include_usage: bool
) -> None:
    gw = sqlite_app_gateway
    body: dict[str, Any] = {"model": "gpt-4o-mini", "messages": SHORT, "stream": True}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    scope = gw.gateway.cache_scopes.of("acme")  # the prompt as the gateway sends it
    assert scope is not None
    with httpx.Client() as http:
        direct = _sse_events(
            http, gw.upstream_url, "direct", {**body, "messages": scope.chat(SHORT)}
        )
    through = _sse_events(gw.http, gw.v1, gw.keys["acme"], body)
    assert through == direct
    assert any(b'"usage":{' in e for e in direct) is include_usage
    assert all(b'"usage"' not in e for e in through) is not include_usage
    ledger = gw.admin("/admin/ledger").json()["records"]
    assert len(ledger) == 1 and not ledger[0]["estimated"] and ledger[0]["output_tokens"] > 0


def _mixed_traffic(gw: InProcessGateway) -> None:
    long_history: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": "You are a support agent. " * 300}
    ]
    for tenant in ("acme", "globex"):
        c = client(gw, tenant)
        for turn in range(6):  # one conversation long enough for prefix-cache hits
            long_history.append({"role": "user", "content": f"{tenant} turn {turn}: status?"})
            reply = c.chat.completions.create(model="gpt-4o-mini", messages=long_history)
            long_history.append({"role": "assistant", "content": reply.choices[0].message.content})
        for model in ("gpt-4o", "deepseek-chat", "claude-3-5-haiku", "local-llama"):
            c.chat.completions.create(model=model, messages=SHORT)
            for chunk in c.chat.completions.create(model=model, messages=SHORT, stream=True):
                assert chunk.choices  # no usage-only chunk leaks to a client that did not ask
            list(
                c.chat.completions.create(
                    model=model, messages=SHORT, stream=True, stream_options={"include_usage": True}
                )
            )
        c.embeddings.create(model="text-embedding-3-small", input=["refund policy", "order"])
        long_history = long_history[:1]


def _metric(text: str, name: str, **labels: str) -> float:
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith(name + "{"):
            got = ",".join(sorted(line[len(name) + 1 : line.index("}")].split(",")))
            if got == want:
                return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name}{{{want}}} not in /metrics")


def test_spend_and_metrics_equal_the_upstreams_usage(
    app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    gateway = app_gateway
    _mixed_traffic(gateway)
    billed = per_tenant(app_log.since())
    assert sum(t["cached"] for t in billed.values()) > 0, "the workload must exercise caching"
    spend = {r["tenant"]: r for r in gateway.admin("/admin/spend").json()["tenants"]}
    metrics = gateway.admin("/metrics").text
    for tenant, want in billed.items():
        row = spend[tenant]
        assert row["requests"] == want["requests"]
        assert row["fresh_input_tokens"] == want["fresh"]
        assert row["cached_input_tokens"] == want["cached"]
        assert row["output_tokens"] == want["output"]
        assert Decimal(row["cost_usd"]) == want["cost"]
        assert row["estimated_requests"] == 0
        assert row["unpriced_requests"] == want["unpriced"] == 0  # embeddings priced too
        plan = row["plan"]
        for kind, key in (
            ("fresh_input", "fresh"),
            ("cached_input", "cached"),
            ("output", "output"),
        ):
            assert (
                _metric(metrics, "gateway_tenant_tokens_total", tenant=tenant, plan=plan, kind=kind)
                == want[key]
            )
        assert _metric(
            metrics, "gateway_tenant_cost_usd_total", tenant=tenant, plan=plan
        ) == pytest.approx(float(want["cost"]), abs=1e-9)
    csv_text = gateway.admin("/admin/spend", format="csv").text
    assert csv_text.splitlines()[0].startswith("tenant,plan,requests,fresh_input_tokens")
    assert len(csv_text.splitlines()) == 3


def test_app_headers_and_tenant_key_never_reach_the_upstream(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    sqlite_gateway, upstream_log = sqlite_app_gateway, app_log
    app_headers = {
        "X-Conversation-Id": "conv-1",
        "X-Customer-Id": "cust-9",
        "X-Channel": "webchat",
        "X-Customer-Scopes": "orders",
        "X-Conversation-Class": "support",
        "X-Subject-Tags": "refund",
        "X-Operational-State": '{"ticket": 1}',
        "Connection": "keep-alive",
    }
    client(sqlite_gateway).chat.completions.create(
        model="gpt-4o-mini", messages=SHORT, extra_headers=app_headers
    )
    (seen,) = upstream_log.since()
    provider = hashlib.sha256(f"Bearer {PROVIDER_KEY}".encode()).hexdigest()
    assert seen["headers"]["authorization"] == provider
    assert not {h.lower() for h in app_headers} & set(seen["headers"]) - {"connection"}
    (record,) = sqlite_gateway.admin("/admin/ledger").json()["records"]
    assert (record["customer"], record["conversation"]) == ("cust-9", "conv-1")


def test_other_v1_routes_pass_through_and_book_usage(sqlite_app_gateway: InProcessGateway) -> None:
    sqlite_gateway = sqlite_app_gateway
    c = client(sqlite_gateway)
    assert {m.id for m in c.models.list()} >= {"gpt-4o-mini", "deepseek-chat"}
    raw = sqlite_gateway.http.get(
        f"{sqlite_gateway.v1}/models",
        headers={"Authorization": f"Bearer {sqlite_gateway.keys['acme']}"},
    )
    assert raw.headers["content-type"] == "application/json"
    emb = c.embeddings.create(model="text-embedding-3-small", input="hello there")
    assert len(emb.data) == 1
    (record,) = sqlite_gateway.admin("/admin/ledger").json()["records"]
    assert record["route"] == "embeddings"
    assert record["fresh_input_tokens"] == emb.usage.prompt_tokens


def test_httpx_transport_option(tmp_path: Path) -> None:
    gw = start_inprocess(
        tmp_path, f"sqlite:///{tmp_path / 'g.db'}", upstream={"transport": "httpx"}
    )
    try:
        c = client(gw)
        done = c.chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        streamed = "".join(
            ch.delta.content or ""
            for chunk in c.chat.completions.create(model="gpt-4o-mini", messages=SHORT, stream=True)
            for ch in chunk.choices
        )
        assert streamed == done.choices[0].message.content
        assert len(gw.admin("/admin/ledger").json()["records"]) == 2
    finally:
        gw.stop()
