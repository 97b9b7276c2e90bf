"""Prices from genai-prices and from the config table; Decimal, never a silent $0."""

from __future__ import annotations

import asyncio
import contextlib
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from genai_prices import Usage, calc_price, data_snapshot
from hypothesis import given
from hypothesis import strategies as st

from gateway.config import SIMULATOR
from gateway.ledger.tokens import MAX_FACTORS, TokenCounter
from gateway.ledger.usage import TokenUsage
from gateway.ops.cli import cli_logic
from gateway.spend.files import worst_input
from gateway.spend.images import beyond_count, image_cost, images_anywhere, images_in
from gateway.spend.money import from_units, to_units
from gateway.spend.pricing import PriceEntry, Pricer
from gateway.spend.tool_fees import chat_searches, may_search, unbounded_tools
from tests.inprocess import InProcessGateway
from tests.servers import write_config

USAGE = TokenUsage(fresh_input=1000, cached_input=1000, output=100)


def test_genai_prices_splits_fresh_and_cached() -> None:
    cost = Pricer({}).cost("gpt-4o-mini", USAGE)
    # $0.15 / MTok fresh, $0.075 / MTok cached, $0.60 / MTok output
    assert cost == Decimal("0.00015") + Decimal("0.000075") + Decimal("0.00006")


def test_the_table_prices_self_hosted_models_and_wins() -> None:
    table = {
        "local-llama": PriceEntry(
            input_per_mtok=Decimal("0.05"),
            output_per_mtok=Decimal("0.1"),
            cached_input_per_mtok=Decimal("0.01"),
        )
    }
    assert Pricer(table).cost("local-llama", USAGE) == Decimal("0.00007")


def test_unknown_model_is_unpriced_not_free() -> None:
    assert Pricer({}).cost("my-private-model-x", USAGE) is None


def test_provider_hint_prices_models_only_that_provider_names() -> None:
    """A provider named or found by its URL prices from its own list (and genai-prices'
    guess by name); Groq does not serve OpenAI's embeddings."""
    usage = TokenUsage(fresh_input=1000)
    for pricer in (
        Pricer({}, provider_id="openai"),
        Pricer({}, provider_api_url="https://api.openai.com/v1"),
    ):
        assert pricer.provider_known
        assert pricer.cost("text-embedding-3-small", usage) == Decimal("0.00002")
    groq = Pricer({}, provider_id="groq")
    assert groq.provider_known and groq.cost("text-embedding-3-small", usage) is None


def test_a_model_only_its_maker_lists_is_priced_when_the_provider_is_not_known() -> None:
    """With no provider named and a URL genai-prices does not know (a proxy, the
    simulator), genai-prices found a chat model by its maker's name pattern (gpt-*) but
    an embedding by none: text-embedding-3-small was booked unpriced (and refused under
    a ceiling without an `unpriced` choice). A model only its maker lists is priced at
    the maker's price now; an open model a host lists (Cerebras's llama-3.3-70b) is not,
    as hosts price them their own ways."""
    usage = TokenUsage(fresh_input=1000)
    for pricer in (
        Pricer({}),
        Pricer({}, provider_api_url="http://10.0.0.7:4000/v1"),
        Pricer({}, provider_id="no-such-provider"),
    ):
        assert not pricer.provider_known
        assert pricer.cost("text-embedding-3-small", usage) == Decimal("0.00002")
        assert pricer.cost("text-embedding-3-large", usage) == Decimal("0.00013")
        assert pricer.cost("gpt-4o-mini", usage) == Decimal("0.00015")  # as before
        assert pricer.cost("llama-3.3-70b", usage) is None
        assert pricer.cost("my-private-model-x", usage) is None


def test_units_round_trip_exactly() -> None:
    for value in ("0", "0.0000000001", "12.3456789012", "0.000075"):
        assert from_units(to_units(Decimal(value))) == Decimal(value)


@given(
    st.integers(0, 10**7),
    st.integers(0, 10**7),
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.sampled_from(
        ["gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "deepseek-chat", "gpt-5-mini", "claude-3-5-haiku"]
    ),
)
def test_the_fast_path_prices_exactly_like_genai_prices(
    fresh: int, cached: int, write: int, output: int, model: str
) -> None:
    usage = TokenUsage(fresh_input=fresh, cached_input=cached, cache_write=write, output=output)
    expected = calc_price(
        Usage(
            input_tokens=fresh + cached + write,
            cache_read_tokens=cached,
            cache_write_tokens=write,
            output_tokens=output,
        ),
        model,
    ).total_price.quantize(Decimal("1e-10"))
    assert Pricer({}).cost(model, usage) == expected


def test_audio_tokens_are_priced_at_the_audio_rate() -> None:
    """gpt-audio: $10 / MTok text output, $64 / MTok audio output, $32 audio input."""
    usage = TokenUsage(fresh_input=120, output=1000, input_audio=80, output_audio=790)
    pricer = Pricer({}, provider_id="openai")
    text = (40 * Decimal("2.5") + 80 * Decimal(32) + 210 * Decimal(10)) / 10**6
    assert pricer.cost("gpt-audio", usage) == text + 790 * Decimal(64) / 10**6
    assert not pricer.lacks_rate("gpt-audio", audio_output=True)
    # no audio rate known for it: audio output could not be held at its price
    assert pricer.lacks_rate("gpt-4o-audio-preview", audio_output=True)
    assert not pricer.lacks_rate("gpt-4o-audio-preview", audio_output=False)


def test_web_searches_are_priced_per_call_and_found() -> None:
    pricer = Pricer({}, provider_id="openai")
    assert pricer.cost("gpt-4o", TokenUsage(web_searches=3)) == Decimal("0.03")  # $10 / 1,000
    assert pricer.lacks_rate("gpt-4o-search-preview", audio_output=False, web_searches=True)
    assert chat_searches("gpt-4o-mini-search-preview-2025-03-11", {}) == 1
    assert chat_searches("openai/gpt-5-search-api", {}) == 1
    assert chat_searches("gpt-4o-mini", {}) == 0
    assert chat_searches("gpt-4o-mini", {"web_search_options": {}}) == 1
    tools = [{"type": "function", "name": "f"}, {"type": "web_search_preview_2025_03_11"}]
    assert may_search(tools) and not unbounded_tools(tools)
    assert unbounded_tools([{"type": "code_interpreter", "container": {"type": "auto"}}])
    assert not may_search("web_search") and not unbounded_tools(None)
    assert unbounded_tools([{"type": "web_fetch"}])  # a type not known may bill anything
    client = [{"type": t} for t in ("custom", "computer_use_preview", "local_shell")]
    assert not unbounded_tools(client)


def test_a_window_is_held_for_a_file_and_for_every_search() -> None:
    assert worst_input(500, False, 128_000) == 500
    assert worst_input(500, True, 128_000) == 128_000
    assert worst_input(500, False, 128_000, 3) == 500 + 3 * 128_000
    assert worst_input(500, True, 128_000, 1) == 2 * 128_000
    entry = PriceEntry(input_per_mtok=Decimal(1), output_per_mtok=Decimal(1))
    pricer = Pricer({"local-llama": entry})
    assert pricer.context_window("gpt-4.1") == 1_000_000
    assert pricer.context_window("local-llama") is None
    assert pricer.context_window("no-such-model") is None


@pytest.mark.parametrize(
    ("model", "detail", "most"),
    [
        ("gpt-4o-mini-2024-07-18", "high", 2833 + 8 * 5667),
        ("gpt-4o-mini", "low", 2833),
        ("gpt-4o-2024-08-06", "auto", 85 + 8 * 170),
        ("gpt-4o", None, 85 + 8 * 170),  # no detail: auto, which may choose high
        ("openai/gpt-4.1-mini", "low", round(1536 * 1.62)),  # patches: detail aside
        ("o3", "high", 75 + 8 * 150),
        ("some-new-model", "low", 2833),  # unknown: the dearest known
        ("some-new-model", "high", 2833 + 8 * 5667),
    ],
)
def test_an_image_is_held_at_the_most_its_model_bills(model: str, detail: Any, most: int) -> None:
    assert image_cost(model, detail) == most


def test_the_images_of_chat_and_responses_inputs_are_found() -> None:
    chat = [
        {"role": "system", "content": "x"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]},
    ]
    responses = [
        {"role": "user", "content": [{"type": "input_image", "image_url": "u", "detail": "low"}]},
        {"type": "input_image", "image_url": "u"},
        {  # an image a tool returned, and a computer's screenshot
            "type": "function_call_output",
            "output": [{"type": "input_image", "image_url": "u", "detail": "high"}],
        },
        {"type": "computer_call_output", "output": {"type": "computer_screenshot"}},
    ]
    assert images_in(chat) == ((None, 85),)  # the window counted it as 85 tokens
    assert sorted(map(str, images_anywhere(responses))) == sorted(
        map(str, [("low", 0), (None, 0), ("high", 0), (None, 0)])
    )
    assert beyond_count("gpt-4o-mini", images_in(chat)) == 2833 + 8 * 5667 - 85


def test_model_names_from_clients_do_not_grow_the_process_without_bound() -> None:
    """Every model name a client sent stayed in memory for the life of the process:
    genai-prices' lookup caches kept each one asked about (a tenant sending 50,000
    random names, each refused 400 model_not_priced, grew a worker by ~12 MB), and the
    token counter kept a factor for every name an upstream answered for."""
    snapshot = data_snapshot.get_snapshot()
    pricer = Pricer({})
    names = [f"my-model-{n}" for n in range(10_200)]
    for name in names:
        assert not pricer.knows(name) and pricer.context_window(name) is None
    held = sum(len(getattr(snapshot, c)) for c in ("_provider_cache", "_provider_misses"))
    assert held <= 2_000, held  # forgotten with the pricer's own caches, past 10,000
    assert pricer.knows("gpt-4o-mini")  # and known models still priced
    counter = TokenCounter()
    for name in names[:3000]:
        counter.learn(name, 100, 130)
    counter.learn("gpt-4o-mini", 100, 120)
    assert len(counter._factor) <= MAX_FACTORS
    assert counter.factor("gpt-4o-mini") == pytest.approx(1.2)


# DeepSeek bills deepseek-chat at half price off-peak (16:30-00:30 UTC, genai-prices'
# time-of-day price); gemini-3.6-flash doubles on 2027-01-01; gpt-4o-mini has priority
# rates from 2026-10-12 (before it, priority bills a rate nobody here knows).
PEAK = datetime(2026, 12, 7, 2, tzinfo=UTC)
OFF_PEAK = datetime(2026, 12, 7, 18, tzinfo=UTC)
CALL = TokenUsage(fresh_input=2000, cached_input=300, output=500)


def _genai_cost(model: str, provider: str, when: datetime, tier: str | None = None) -> Decimal:
    usage = Usage(input_tokens=2300, cache_read_tokens=300, output_tokens=500)
    context = {"service_tier": tier} if tier else None
    price = calc_price(
        usage, model, provider_id=provider, genai_request_timestamp=when, price_context=context
    )
    return price.total_price.quantize(Decimal("1e-10"))


def test_a_price_is_read_at_the_call_s_time_not_frozen_at_its_first_lookup() -> None:
    """A pricer lives as long as the process: it priced a model at its first lookup's
    price for ever, so a day's deepseek-chat calls all went at the peak price or all at
    the off-peak one (2x apart), and a dated price change never reached a running
    gateway. Each call is priced at its own time (`at`: the booking's, the hold's)."""
    pricer = Pricer({}, provider_id="deepseek")
    edges = [datetime(2026, 12, d, h, 30, tzinfo=UTC) for d, h in ((7, 16), (8, 0))]
    moments = [PEAK, OFF_PEAK, PEAK, OFF_PEAK + timedelta(hours=7)]
    for edge in edges:  # the last instant of one price, then the first of the next
        moments += [edge - timedelta(microseconds=1), edge, edge - timedelta(microseconds=1)]
    for when in moments:
        assert pricer.cost("deepseek-chat", CALL, at=when) == _genai_cost(
            "deepseek-chat", "deepseek", when
        )
    off_peak = pricer.cost("deepseek-chat", CALL, at=OFF_PEAK.timestamp())
    assert off_peak is not None
    assert pricer.cost("deepseek-chat", CALL, at=PEAK.timestamp()) == 2 * off_peak

    google = Pricer({}, provider_id="google")
    eve, new_year = datetime(2026, 12, 31, 23, tzinfo=UTC), datetime(2027, 1, 1, 1, tzinfo=UTC)
    assert google.cost("gemini-3.6-flash", CALL, at=eve) == _genai_cost(
        "gemini-3.6-flash", "google", eve
    )
    assert google.cost("gemini-3.6-flash", CALL, at=new_year) == _genai_cost(
        "gemini-3.6-flash", "google", new_year
    )
    assert google.cost("gemini-3.6-flash", CALL, at=new_year) != google.cost(
        "gemini-3.6-flash", CALL, at=eve
    )


def test_a_service_tier_s_rates_are_read_at_the_call_s_time() -> None:
    """gpt-4o-mini's priority rates start on 2026-10-12: before, a priority call cannot
    be held (its rate is unknown: unpriced, never the standard price); after, it is
    priced at them. Both in one pricer, in either order."""
    pricer = Pricer({}, provider_id="openai")
    before, after = datetime(2026, 10, 1, tzinfo=UTC), datetime(2026, 10, 20, tzinfo=UTC)
    for _ in range(2):
        assert pricer.cost("gpt-4o-mini", CALL, "priority", at=after) == _genai_cost(
            "gpt-4o-mini", "openai", after, "priority"
        )
        assert not pricer.lacks_rate("gpt-4o-mini", audio_output=False, tier="priority", at=after)
        assert pricer.cost("gpt-4o-mini", CALL, "priority", at=before) is None
        assert pricer.lacks_rate("gpt-4o-mini", audio_output=False, tier="priority", at=before)


LONG_LIVED = Pricer({})


@given(
    st.datetimes(datetime(2026, 9, 1), datetime(2027, 3, 1), timezones=st.just(UTC)),
    st.sampled_from([("deepseek-chat", "deepseek"), ("gemini-3.6-flash", "google")]),
)
def test_one_pricer_prices_any_moment_as_genai_prices_does(
    when: datetime, model: tuple[str, str]
) -> None:
    """One pricer asked about moments in any order (its cached spans of time between
    price changes never stretch past one) prices each as genai-prices does."""
    name, provider = model
    assert LONG_LIVED.cost(name, CALL, at=when) == _genai_cost(name, provider, when)
    assert LONG_LIVED.cost(name, CALL, at=when.timestamp()) == _genai_cost(name, provider, when)


def test_an_embedding_through_an_upstream_of_unknown_provider_is_booked_and_held(
    tmp_path: Path,
) -> None:
    """The openai SDK through the gateway and its simulated upstream (a loopback URL,
    no provider named): the embedding is held under the tenant's ceiling, booked at
    OpenAI's price, and not counted unpriced."""
    (tmp_path / "policies").mkdir()
    spend = {"plans": {"pro": {"monthly_usd": "5"}}}  # no `unpriced` choice: block
    (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    gw = InProcessGateway(tmp_path, SIMULATOR, f"sqlite:///{tmp_path / 'gateway.db'}")
    gw.start()
    try:
        reply = gw.openai("acme").embeddings.create(
            model="text-embedding-3-small", input=["refund policy", "order status"]
        )
        [record] = gw.admin("/admin/ledger").json()["records"]
        [row] = [r for r in gw.admin("/admin/spend").json()["tenants"] if r["tenant"] == "acme"]
    finally:
        gw.stop()
    expected = reply.usage.prompt_tokens * Decimal("0.02") / 1_000_000
    assert Decimal(record["cost_usd"]) == expected > 0
    assert row["unpriced_requests"] == 0 and Decimal(row["cost_usd"]) == expected


@pytest.mark.parametrize(
    ("upstream", "warned"),
    [
        ({"base_url": "http://10.0.0.7:4000/v1"}, "genai-prices knows no provider at"),
        ({"base_url": "http://10.0.0.7:4000/v1", "provider": "opneai"}, "'opneai' is no"),
        ({"base_url": "http://10.0.0.7:4000/v1", "provider": "openai"}, None),
        ({"base_url": "https://api.openai.com/v1"}, None),
        ({"base_url": SIMULATOR}, None),
    ],
)
def test_check_config_warns_when_the_upstream_s_provider_is_not_known(
    tmp_path: Path, upstream: dict[str, str], warned: str | None
) -> None:
    config = write_config(tmp_path, SIMULATOR, "sqlite:///g.db", upstream=upstream)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert cli_logic(["check-config", "--config", str(config)]) == 0
    text = err.getvalue()
    if warned is None:
        assert "upstream.provider" not in text, text
    else:
        assert warned in text and "set upstream.provider" in text, text


def test_a_call_booked_after_a_restart_is_priced_as_it_was_when_it_was_made(
    tmp_path: Path,
) -> None:
    """A call a killed process left journaled is booked when the next one starts: its row
    is dated when it was made, and its price is read then too (it was read at the replay's
    time: deepseek-chat made at its peak and replayed off-peak went at half price)."""
    from prometheus_client import CollectorRegistry

    from gateway.ledger.accounting import Accountant
    from gateway.ledger.booking import Bookkeeper
    from gateway.ops.metrics import GatewayMetrics
    from gateway.store import open_store

    metrics = GatewayMetrics(CollectorRegistry())
    store = open_store(f"sqlite:///{tmp_path / 'g.db'}")
    keeper = Bookkeeper(store, metrics, tmp_path / "spill.jsonl", max_pending=10)
    pricer = Pricer({}, provider_id="deepseek")
    accountant = Accountant(TokenCounter(), pricer, keeper, metrics, clock=OFF_PEAK.timestamp)
    entry = {
        "begun": "call-1",
        "at": PEAK.timestamp(),
        "tenant": "acme",
        "model": "deepseek-chat",
        "input": CALL.fresh_input,
        "output": CALL.output,
    }
    record = accountant.left_behind(entry)
    assert record is not None and record.ts == PEAK.timestamp()
    whole = TokenUsage(fresh_input=CALL.fresh_input, output=CALL.output, estimated=True)
    then = pricer.cost("deepseek-chat", whole, at=PEAK)
    assert then is not None and then != pricer.cost("deepseek-chat", whole, at=OFF_PEAK)
    assert record.cost_units == to_units(then)
    asyncio.run(store.close())
