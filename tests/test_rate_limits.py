"""Rate limits (issue 13 part 3): requests and tokens per window, per tenant and per key,
from policies/limits.yaml. Over a limit the client gets OpenAI's 429
`rate_limit_exceeded` with `Retry-After` and the `x-ratelimit-*` headers; the call is
neither forwarded nor booked. Counted atomically in the store: in process on SQLite,
and across two gateway processes on SQLite, Redis and a Redis Cluster."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Iterator
from itertools import cycle
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from starlette.testclient import TestClient

from gateway.config import SIMULATOR, Tenant, load_settings
from gateway.errors import ConfigError
from gateway.proxy.app import create_app
from gateway.spend.ceilings import SpendFile, SpendRules
from gateway.spend.rate_limits import (
    Counter,
    RateLimitsFile,
    RateRules,
    Window,
    duration,
    verdict,
    wait_ms,
)
from gateway.store.base import RateUse
from gateway.tenancy.keys import key_hash
from tests.inprocess import ENV, InProcessGateway, SimulatorLog, start_inprocess
from tests.servers import REPO, GatewayProc, start_gateway, write_config

ASK: list[Any] = [{"role": "user", "content": "Where is my parcel?"}]
MODEL = "gpt-4o-mini"


def write_limits(root: Path, **limits: Any) -> None:
    """policies/limits.yaml for a gateway about to start in `root` (acme is on pro)."""
    policies = root / "policies"
    policies.mkdir(parents=True, exist_ok=True)
    (policies / "limits.yaml").write_text(yaml.safe_dump(limits))


def ask(client: openai.OpenAI, messages: list[Any] = ASK) -> Any:
    return client.chat.completions.with_raw_response.create(model=MODEL, messages=messages)


@pytest.fixture
def limited(tmp_path: Path) -> Iterator[InProcessGateway]:
    """In process on SQLite: acme (plan pro) 100 requests a minute."""
    write_limits(tmp_path, plans={"pro": {"rpm": 100}})
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}")
    yield gw
    gw.stop()


# -- the arithmetic (pure) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0ms"),
        (120, "120ms"),
        (1000, "1s"),
        (1500, "1.5s"),
        (60_000, "1m0s"),
        (61_250, "1m1.25s"),
    ],
)
def test_reset_durations_read_as_openai_writes_them(ms: int, text: str) -> None:
    assert duration(ms) == text


W = Window(1000)  # 1 s buckets: 60 of them and the current one count


@pytest.mark.parametrize(
    ("buckets", "limit", "wanted", "now_ms", "wait"),
    [
        ([], 10, 1, 100_500, 0),  # nothing counted: fits now
        ([(100, 10)], 10, 1, 100_500, 161_000 - 100_500),  # bucket 100 leaves at 161 s
        ([(90, 4), (100, 6)], 10, 1, 100_500, 151_000 - 100_500),  # the older one suffices
        ([(90, 4), (100, 6)], 10, 5, 100_500, 161_000 - 100_500),  # both must leave
        ([(30, 50)], 10, 1, 100_500, 0),  # out of the window already
        ([], 10, 11, 100_500, None),  # larger than the limit: never
    ],
)
def test_wait_until_a_call_fits(
    buckets: list[tuple[int, int]], limit: int, wanted: int, now_ms: int, wait: int | None
) -> None:
    assert wait_ms(buckets, limit, wanted, now_ms, W) == wait


def test_a_refusal_names_the_counter_and_the_seconds_until_it_fits() -> None:
    counters = [Counter("tenant", "requests", 3), Counter("key", "tokens", 100, "k1")]
    use = RateUse(False, 100_500, 100, (((99, 2), (100, 1)), ((100, 40),)))
    found = verdict(counters, 10, use, W)
    assert not found.admitted and found.blocked == counters[0]
    assert found.retry_after_s == 60  # bucket 99 leaves at 160 s: in 59.5 s, rounded up
    headers = dict(found.headers)
    assert headers[b"x-ratelimit-limit-requests"] == b"3"
    assert headers[b"x-ratelimit-remaining-requests"] == b"0"
    assert headers[b"x-ratelimit-remaining-tokens"] == b"60"
    assert headers[b"x-ratelimit-reset-tokens"] == b"1m0.5s"


def test_limits_merge_plan_tenant_and_key() -> None:
    rules = RateRules(
        RateLimitsFile.model_validate(
            {
                "plans": {"pro": {"rpm": 100, "tpm": 1000, "key_rpm": 10}},
                "tenants": {"acme": {"tpm": 5000}},
            }
        )
    )
    found = {(c.scope, c.kind): c.limit for c in rules.counters("acme", "pro", "k1")}
    assert found == {
        ("tenant", "requests"): 100,
        ("tenant", "tokens"): 5000,
        ("key", "requests"): 10,
    }
    own = {(c.scope, c.kind): c.limit for c in rules.counters("acme", "pro", "k1", 3, 7)}
    assert own[("key", "requests")] == 3 and own[("key", "tokens")] == 7
    assert rules.counters("globex", "basic", "k2") == ()  # absent: unlimited


def test_a_tenant_set_to_null_is_unlimited_whatever_its_plan() -> None:
    """limits.yaml and spend.yaml say "absent means unlimited" and a tenant's entry
    overrides its plan's: a VIP on a capped plan given `rpm: null` / `monthly_usd: null`
    stayed capped (a null was read as not said)."""
    rules = RateRules(
        RateLimitsFile.model_validate(
            {"plans": {"basic": {"rpm": 10, "tpm": 900}}, "tenants": {"vip": {"rpm": None}}}
        )
    )
    found = {(c.scope, c.kind): c.limit for c in rules.counters("vip", "basic", "k1")}
    assert found == {("tenant", "tokens"): 900}  # its plan's tpm still holds
    spend = SpendRules(
        SpendFile.model_validate(
            {
                "plans": {"basic": {"monthly_usd": 50, "daily_usd": 5}},
                "tenants": {"vip": {"monthly_usd": None}},
            }
        )
    )
    guarded = spend.policy("vip", "basic", None, 1_790_000_000.0).guarded
    assert [b.period for b in guarded] == ["day"]


def test_a_tenants_null_lifts_only_limits_never_the_models_its_plan_names() -> None:
    """A null for `price_as` or `degrade_to` took the plan's model away from the plan's
    `unpriced: price_as` / `action: degrade`: every call a 500 (the merged ceiling failed
    its own check on the request path), or degrade to no model. Those are the plan's."""
    spend = SpendRules(
        SpendFile.model_validate(
            {
                "plans": {
                    "basic": {"monthly_usd": 50, "unpriced": "price_as", "price_as": "gpt-4o"},
                    "pro": {"monthly_usd": 90, "action": "degrade", "degrade_to": "gpt-4o-mini"},
                },
                "tenants": {"vip": {"price_as": None, "degrade_to": None}},
            }
        )
    )
    assert spend.policy("vip", "basic", None, 1_790_000_000.0).ceiling.price_as == "gpt-4o"
    assert spend.policy("vip", "pro", None, 1_790_000_000.0).ceiling.degrade_to == "gpt-4o-mini"


def test_the_shipped_schema_is_the_model() -> None:
    schema = json.loads((REPO / "policies" / "schema" / "limits.schema.json").read_text())
    assert schema == RateLimitsFile.model_json_schema(by_alias=True)


def test_an_unknown_plan_or_key_in_limits_yaml_is_refused(tmp_path: Path) -> None:
    config = write_config(tmp_path, SIMULATOR, "sqlite:///gateway.db")
    write_limits(tmp_path, plans={"platinum": {"rpm": 5}, "pro": {"rpn": 5}})
    with pytest.raises(ConfigError) as refused:
        load_settings(config, {**os.environ, **ENV})
    keys = {(Path(f).name, k) for f, k, _ in refused.value.problems}
    assert ("limits.yaml", "plans.pro.rpn") in keys  # a typo is an unknown key
    write_limits(tmp_path, plans={"platinum": {"rpm": 5}})
    with pytest.raises(ConfigError) as refused:
        load_settings(config, {**os.environ, **ENV})
    assert [(Path(f).name, k) for f, k, _ in refused.value.problems] == [
        ("limits.yaml", "plans.platinum")
    ]


# -- one gateway, in process ------------------------------------------------------------


def test_the_101st_request_in_the_minute_gets_429_with_retry_after(
    limited: InProcessGateway,
) -> None:
    log = SimulatorLog(limited)
    client = limited.openai()
    for n in range(100):
        reply = ask(client)
        assert reply.headers["x-ratelimit-limit-requests"] == "100"
        assert reply.headers["x-ratelimit-remaining-requests"] == str(99 - n)
    with pytest.raises(openai.RateLimitError) as refused:
        ask(client)
    error = refused.value
    assert error.code == "rate_limit_exceeded" and error.type == "requests"
    retry_after = int(error.response.headers["retry-after"])
    assert 1 <= retry_after <= 61
    assert error.response.headers["x-ratelimit-remaining-requests"] == "0"
    assert "x-should-retry" not in error.response.headers  # a retry later can pass
    assert len(log.since()) == 100  # the 101st never reached the upstream
    spend = {r["tenant"]: r for r in limited.admin("/admin/spend").json()["tenants"]}
    assert spend["acme"]["requests"] == 100  # nor was it booked
    # another tenant (basic: no limits in this file) is not held back, nor told of limits
    other = ask(limited.openai("globex"))
    assert "x-ratelimit-limit-requests" not in other.headers


def test_a_call_whose_input_passes_the_tpm_is_refused_for_good(tmp_path: Path) -> None:
    write_limits(tmp_path, plans={"pro": {"tpm": 2000}})
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}")
    try:
        log = SimulatorLog(gw)
        client = gw.openai()
        first = ask(client)
        left_first = int(first.headers["x-ratelimit-remaining-tokens"])
        input_tokens = 2000 - left_first
        output = first.parse().usage.completion_tokens
        # the first call's output was settled into the window: the second sees it
        second = ask(client)
        left = int(second.headers["x-ratelimit-remaining-tokens"])
        assert left == left_first - output - input_tokens
        huge: list[Any] = [{"role": "user", "content": "parcel " * 3000}]
        with pytest.raises(openai.RateLimitError) as refused:
            ask(client, huge)
        error = refused.value
        assert error.type == "tokens" and error.code == "rate_limit_exceeded"
        assert error.response.headers["x-should-retry"] == "false"  # no wait helps
        assert "retry-after" not in error.response.headers
        assert len(log.since()) == 2
    finally:
        gw.stop()


def test_a_keys_own_limit_holds_that_key_while_another_key_passes(tmp_path: Path) -> None:
    """Two keys of acme: one with its own rpm_limit of 2, one under the plan's key_rpm."""
    write_limits(tmp_path, plans={"pro": {"rpm": 100, "key_rpm": 50}})
    config = write_config(tmp_path, SIMULATOR, f"sqlite:///{tmp_path / 'gateway.db'}")
    settings = load_settings(config, {**os.environ, **ENV})
    keys = {
        "tight": Tenant("acme", "pro", "key-tight", rpm_limit=2),
        "loose": Tenant("acme", "pro", "key-loose"),
    }
    settings = dataclasses.replace(
        settings, tenants_by_hash={key_hash(f"gk-{k}"): t for k, t in keys.items()}
    )
    with TestClient(create_app(settings)) as http:

        def client(name: str) -> openai.OpenAI:
            return openai.OpenAI(
                base_url="http://testserver/v1",
                api_key=f"gk-{name}",
                max_retries=0,
                http_client=http,
            )

        tight, loose = client("tight"), client("loose")
        assert ask(tight).headers["x-ratelimit-remaining-requests"] == "1"
        ask(tight)
        with pytest.raises(openai.RateLimitError) as refused:
            ask(tight)
        assert "this key" in refused.value.message
        reply = ask(loose)  # the same tenant's other key still passes
        assert reply.headers["x-ratelimit-limit-requests"] == "50"
        assert reply.headers["x-ratelimit-remaining-requests"] == "49"


def test_the_window_moves_on_and_the_sdk_waits_for_retry_after(tmp_path: Path) -> None:
    """A one-second window: refused, the call passes once Retry-After has passed. The
    openai SDK with max_retries=0 raises RateLimitError at once; with its default (two
    retries) it waits Retry-After (it honours up to 120 s) and retries, and the call
    passes. Retry-After promises the next call, not two: the second of the first pair
    may still be in the window when the first has left it."""
    write_limits(tmp_path, window_s=1, plans={"pro": {"rpm": 2}})
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}")
    try:
        client = gw.openai()
        ask(client)
        ask(client)
        with pytest.raises(openai.RateLimitError) as refused:
            ask(client)
        retry_after = int(refused.value.response.headers["retry-after"])
        assert 1 <= retry_after <= 2
        time.sleep(retry_after)
        ask(client)  # the window moved on
        time.sleep(1.2)  # a window and a bucket: every call so far has left it
        ask(client)
        ask(client)  # full again, with two calls a moment old
        log = SimulatorLog(gw)
        patient = openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], http_client=gw.http)
        reply = patient.chat.completions.with_raw_response.create(model=MODEL, messages=ASK)
        assert reply.retries_taken >= 1  # refused first, then waited and passed
        assert len(log.since()) == 1  # the refused tries never reached the upstream
    finally:
        gw.stop()


# -- two gateway processes on one store --------------------------------------------------


@pytest.fixture
def replicas(tmp_path: Path, simulator_url: str, store_url: str) -> Iterator[list[GatewayProc]]:
    """Two gateway processes sharing the store (a SQLite file, a Redis, a Redis Cluster),
    acme limited to 100 requests a minute."""
    started: list[GatewayProc] = []
    try:
        for name in ("a", "b"):
            write_limits(tmp_path / name, plans={"pro": {"rpm": 100}})
            started.append(start_gateway(tmp_path / name, simulator_url, store_url))
        yield started
    finally:
        for gw in started:
            gw.stop()


def test_the_101st_request_across_two_replicas_gets_429(replicas: list[GatewayProc]) -> None:
    clients = [
        openai.OpenAI(base_url=gw.v1, api_key=gw.keys["acme"], max_retries=0, timeout=30)
        for gw in replicas
    ]
    turns = cycle(clients)
    for _ in range(100):
        ask(next(turns))
    for client in clients:  # refused on both: they share one window
        with pytest.raises(openai.RateLimitError) as refused:
            ask(client)
        assert int(refused.value.response.headers["retry-after"]) >= 1
        assert refused.value.code == "rate_limit_exceeded"
    spend = {r["tenant"]: r for r in replicas[0].admin("/admin/spend").json()["tenants"]}
    assert spend["acme"]["requests"] == 100


def test_streams_and_pass_through_routes_count_and_carry_the_headers(
    limited: InProcessGateway,
) -> None:
    client = limited.openai()
    with client.chat.completions.with_streaming_response.create(
        model=MODEL, messages=ASK, stream=True
    ) as stream:
        assert stream.headers["x-ratelimit-remaining-requests"] == "99"
        assert list(stream.iter_lines())
    embedded = client.embeddings.with_raw_response.create(
        model="text-embedding-3-small", input="hi"
    )
    assert embedded.headers["x-ratelimit-remaining-requests"] == "98"


def test_a_call_over_the_limit_is_refused_before_any_work_is_done_for_it(
    tmp_path: Path,
) -> None:
    """The turn's window is built (and may be summarized, upstream) before its input is
    counted: a call that cannot pass anyway is refused before that, leaving no trace."""
    write_limits(tmp_path, plans={"pro": {"rpm": 1}})
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}")
    try:
        client = gw.openai()
        ask(client)  # the one request of the minute
        pad = "I waited at home all week and nobody came, nobody answers the phone. " * 8
        long: list[Any] = [
            {"role": "user" if n % 2 == 0 else "assistant", "content": f"turn {n}: {pad}"}
            for n in range(119)
        ]
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(
                model=MODEL, messages=long, extra_headers={"X-Conversation-Id": "refused"}
            )
        auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
        answer = gw.http.get("/v1/conversations/refused", headers=auth)
        assert answer.status_code == 404, answer.text  # no window built, nothing saved
    finally:
        gw.stop()


def test_a_call_the_spend_guard_refuses_uses_no_request_of_the_limit(tmp_path: Path) -> None:
    """A call refused 400 `model_not_priced` (a tenant under a ceiling naming a model
    with no price: it cannot be held against the ceiling) was counted against the rpm
    first: a tenant's typo in a model name used up its minute."""
    write_limits(tmp_path, plans={"pro": {"rpm": 100}})
    spend = {"tenants": {"acme": {"monthly_usd": "5"}}}
    (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path / 'gateway.db'}")
    try:
        client = gw.openai()
        for _ in range(3):
            with pytest.raises(openai.BadRequestError) as refused:
                client.chat.completions.create(model="my-own-llama-9", messages=ASK)
            assert refused.value.code == "model_not_priced"
            with pytest.raises(openai.BadRequestError) as refused:
                client.completions.create(model="my-own-llama-9", prompt="Where is my parcel?")
            assert refused.value.code == "model_not_priced"
        reply = ask(client)
        assert reply.headers["x-ratelimit-remaining-requests"] == "99"
        sent = client.completions.with_raw_response.create(model=MODEL, prompt="Where is it?")
        assert sent.headers["x-ratelimit-remaining-requests"] == "98"
    finally:
        gw.stop()
