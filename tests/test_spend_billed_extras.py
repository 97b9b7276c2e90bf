"""What a provider bills beside text tokens, held and booked under a spend ceiling: audio
output at its audio rate, web searches at their fee, tools billed by use not admitted.
Through the gateway in this process (SQLite and real Redis),
the simulated upstream reporting the usage a provider would, the openai SDK as client."""

from __future__ import annotations

import base64
import io
import json
import wave
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from genai_prices import Usage, calc_price
from openai.types.chat import ChatCompletionMessageParam

from gateway.config import SIMULATOR
from tests.inprocess import InProcessGateway

SHORT: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Where is my order?"}]
CEILING = Decimal("0.03")
# A search's results may fill the model's context window as input (128,000 tokens of
# gpt-4o-mini, $0.02): held at that, one search does not fit $0.03.
SEARCH_CEILING = Decimal("0.15")


def _started(request: pytest.FixtureRequest, tmp_path: Path, ceiling: Decimal) -> InProcessGateway:
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    if request.param == "redis":
        store = request.getfixturevalue("redis_url")
    spend = {"tenants": {"acme": {"monthly_usd": str(ceiling)}}}
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    gw = InProcessGateway(tmp_path, SIMULATOR, store)
    gw.start()
    return gw


@pytest.fixture(params=["sqlite", "redis"])
def gw(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[InProcessGateway]:
    """The gateway in this process, acme under a $0.03 monthly ceiling."""
    gw = _started(request, tmp_path, CEILING)
    yield gw
    gw.stop()


@pytest.fixture(params=["sqlite", "redis"])
def searching(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[InProcessGateway]:
    """The gateway in this process, acme under a $0.15 monthly ceiling."""
    gw = _started(request, tmp_path, SEARCH_CEILING)
    yield gw
    gw.stop()


def ledger(gw: InProcessGateway) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = gw.admin("/admin/ledger").json()["records"]
    return records


def spoken(client: openai.OpenAI, model: str, max_tokens: int, audio_tokens: int) -> None:
    """A chat call asking for a spoken reply; the upstream reports `audio_tokens` of its
    `max_tokens` output tokens as audio."""
    usage = {
        "completion_tokens": max_tokens,
        "completion_tokens_details": {"audio_tokens": audio_tokens},
    }
    client.chat.completions.create(
        model=model,
        messages=SHORT,
        max_tokens=max_tokens,
        modalities=["text", "audio"],
        audio={"voice": "alloy", "format": "wav"},
        extra_headers={"X-Simulator-Usage": json.dumps(usage)},
    )


def test_audio_output_is_held_and_booked_at_the_audio_rate(gw: InProcessGateway) -> None:
    """gpt-audio bills audio output at $64 / MTok, text at $10: 1,000 output tokens may
    cost $0.064, over a $0.03 ceiling, so that call is refused (held at the text rate it
    would have passed, and been billed past the ceiling). 300 fit, and are booked as
    billed: the audio tokens at the audio rate."""
    client = gw.openai("acme")
    with pytest.raises(openai.RateLimitError):
        spoken(client, "gpt-audio", 1000, 1000)
    spoken(client, "gpt-audio", 300, 290)
    [record] = ledger(gw)
    billed = calc_price(
        Usage(
            input_tokens=record["fresh_input_tokens"], output_tokens=300, output_audio_tokens=290
        ),
        "gpt-audio",
        provider_id="openai",
    ).total_price
    assert Decimal(record["cost_usd"]) == billed.quantize(Decimal("1e-10"))
    assert billed > Decimal(300 * 10) / 10**6  # dearer than the same tokens as text
    assert Decimal(record["cost_usd"]) <= CEILING


def test_audio_output_on_a_model_without_an_audio_rate_is_not_held(
    gw: InProcessGateway,
) -> None:
    """genai-prices knows gpt-4o-audio-preview's text rates only: its audio output could
    not be held at what it is billed, so under a ceiling it is refused like an unpriced
    model (`unpriced: allow` would admit it); its text replies still pass."""
    client = gw.openai("acme")
    with pytest.raises(openai.BadRequestError) as info:
        spoken(client, "gpt-4o-audio-preview", 100, 90)
    assert info.value.code == "model_not_priced"
    client.chat.completions.create(model="gpt-4o-audio-preview", messages=SHORT, max_tokens=50)
    assert len(ledger(gw)) == 1


def wav(seconds: int) -> str:
    """A WAV recording of silence (8 kHz, 8-bit mono), base64."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(b"\x80" * 8000 * seconds)
    return base64.b64encode(out.getvalue()).decode()


def heard(client: openai.OpenAI, model: str, seconds: int) -> None:
    """A chat call sending a recording of `seconds`; the upstream reports it as 10
    input audio tokens a second (of 100 more in all)."""
    usage = {
        "prompt_tokens": 10 * seconds + 100,
        "completion_tokens": 10,
        "prompt_tokens_details": {"audio_tokens": 10 * seconds},
    }
    part: Any = {"type": "input_audio", "input_audio": {"data": wav(seconds), "format": "wav"}}
    client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": [part]}],
        max_tokens=10,
        extra_headers={"X-Simulator-Usage": json.dumps(usage)},
    )


def test_audio_input_on_a_model_without_an_audio_rate_is_not_held(
    gw: InProcessGateway,
) -> None:
    """genai-prices has no input audio rate for gpt-4o-audio-preview (OpenAI bills it
    $40 / MTok, its text $2.50): input audio was held and booked at the text rate, 16
    times under. Under a ceiling it is refused as audio output is; gpt-audio, which has
    the rate, passes and is booked at it."""
    client = gw.openai("acme")
    with pytest.raises(openai.BadRequestError) as info:
        heard(client, "gpt-4o-audio-preview", 1)
    assert info.value.code == "model_not_priced"
    heard(client, "gpt-audio", 1)
    [record] = ledger(gw)
    assert record["model"] == "gpt-audio"
    billed = calc_price(
        Usage(input_tokens=110, input_audio_tokens=10, output_tokens=10),
        "gpt-audio",
        provider_id="openai",
    ).total_price
    assert Decimal(record["cost_usd"]) == billed.quantize(Decimal("1e-10"))


def said(client: openai.OpenAI, model: str, seconds: int) -> None:
    """A Responses call sending a recording of `seconds` (an `input_audio` content
    item); the upstream reports it as 10 input audio tokens a second (of 100 more)."""
    usage = {
        "input_tokens": 10 * seconds + 100,
        "input_tokens_details": {"cached_tokens": 0, "audio_tokens": 10 * seconds},
        "output_tokens": 10,
    }
    part: Any = {"type": "input_audio", "input_audio": {"data": wav(seconds), "format": "wav"}}
    client.responses.create(
        model=model,
        input=[{"role": "user", "content": [part]}],
        max_output_tokens=10,
        extra_headers={"X-Simulator-Usage": json.dumps(usage)},
    )


def test_responses_audio_input_on_a_model_without_an_audio_rate_is_not_held(
    gw: InProcessGateway,
) -> None:
    """As on chat: /v1/responses held and booked input audio on gpt-4o-audio-preview (no
    input audio rate in genai-prices) at the text rate. Under a ceiling it is refused
    400 model_not_priced; gpt-audio, which has the rate, passes and is booked at it;
    with no ceiling (globex) it is booked, unpriced."""
    client = gw.openai("acme")
    with pytest.raises(openai.BadRequestError) as info:
        said(client, "gpt-4o-audio-preview", 1)
    assert info.value.code == "model_not_priced"
    said(client, "gpt-audio", 1)
    said(gw.openai("globex"), "gpt-4o-audio-preview", 1)
    heard_audio, unpriced = ledger(gw)
    assert (heard_audio["model"], heard_audio["tenant"]) == ("gpt-audio", "acme")
    billed = calc_price(
        Usage(input_tokens=110, input_audio_tokens=10, output_tokens=10),
        "gpt-audio",
        provider_id="openai",
    ).total_price
    assert Decimal(heard_audio["cost_usd"]) == billed.quantize(Decimal("1e-10"))
    assert (unpriced["model"], unpriced["cost_usd"]) == ("gpt-4o-audio-preview", None)


def test_audio_input_without_a_rate_is_booked_unpriced_not_at_the_text_rate(
    tmp_path: Path,
) -> None:
    """With no ceiling, gpt-4o-audio-preview's input audio was booked at the text rate
    (100,000 audio tokens, $4.00 at OpenAI's price, booked $0.25). It is booked with its
    tokens, unpriced (counted in `unpriced_requests`), never at a price known to be low."""
    gw = InProcessGateway(tmp_path, SIMULATOR, f"sqlite:///{tmp_path / 'gateway.db'}")
    gw.start()
    try:
        heard(gw.openai("acme"), "gpt-4o-audio-preview", 2)
        [record] = ledger(gw)
    finally:
        gw.stop()
    assert (record["fresh_input_tokens"], record["estimated"]) == (120, False)
    assert record["cost_usd"] is None


def priced(record: dict[str, Any], model: str, **extra: int) -> Decimal:
    """What genai-prices bills for a ledger record's tokens plus `extra` (searches)."""
    usage = Usage(
        input_tokens=record["fresh_input_tokens"], output_tokens=record["output_tokens"], **extra
    )
    price = calc_price(usage, model, provider_id="openai").total_price
    return price.quantize(Decimal("1e-10"))


def test_a_chat_search_model_is_held_and_booked_with_its_search_fee(
    searching: InProcessGateway,
) -> None:
    """Every call of a chat search model is one web search ($10 per 1,000 on
    gpt-4o-mini-search-preview), which the usage does not report; a search model whose
    price has no search fee cannot be held under a ceiling."""
    gw = searching
    client = gw.openai("acme")
    client.chat.completions.create(
        model="gpt-4o-mini-search-preview", messages=SHORT, max_tokens=50, web_search_options={}
    )
    [record] = ledger(gw)
    cost = Decimal(record["cost_usd"])
    assert cost == priced(record, "gpt-4o-mini-search-preview", web_searches=1)
    assert cost > Decimal("0.01")
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(
            model="gpt-4o-search-preview", messages=SHORT, web_search_options={}
        )
    assert info.value.code == "model_not_priced"


def search(client: openai.OpenAI, searches: int, **extra: Any) -> None:
    """A Responses call with a web search tool; the upstream searches `searches` times
    (at most its `max_tool_calls`)."""
    response = client.responses.create(
        model="gpt-4o-mini",
        input="What is new in the news?",
        tools=[{"type": "web_search"}],
        max_output_tokens=100,
        extra_headers={"x-simulator-web-searches": str(searches)},
        **extra,
    )
    if extra.get("stream"):
        for _ in response:
            pass


def test_responses_web_searches_are_bounded_held_and_booked(searching: InProcessGateway) -> None:
    """A model may search many times: `max_tool_calls` bounds it (spend.yaml's
    `default_max_tool_calls`, 10, is added where the client sets none). At $10 per 1,000
    searches, each of whose results may fill gpt-4o-mini's 128,000-token window, 10 do
    not fit under $0.15; 2 do, and are booked as made (counted from the answer's
    `web_search_call` items, streamed or not)."""
    gw = searching
    client = gw.openai("acme")
    with pytest.raises(openai.RateLimitError):
        search(client, 1)
    search(client, 5, max_tool_calls=2)
    [record] = ledger(gw)
    assert Decimal(record["cost_usd"]) == priced(record, "gpt-4o-mini", web_searches=2)
    assert Decimal(record["cost_usd"]) <= SEARCH_CEILING
    # no ceiling for globex: its call goes as written, its searches booked as made
    other = gw.openai("globex")
    search(other, 50)
    search(other, 3, stream=True)
    first, second = (r for r in ledger(gw) if r["tenant"] == "globex")
    assert {Decimal(first["cost_usd"]), Decimal(second["cost_usd"])} == {
        priced(first, "gpt-4o-mini", web_searches=50),
        priced(second, "gpt-4o-mini", web_searches=3),
    }


def test_a_responses_call_is_bounded_only_under_a_ceiling(searching: InProcessGateway) -> None:
    """The output ceiling a Responses call names none of is added (4,096, spend.yaml's
    `default_max_output_tokens`) so a ceiling's worst case holds. Without a ceiling to
    guard, it was added all the same: a tenant with no spend.yaml got every long or
    reasoning answer cut at 4,096 tokens. Such a call goes as the client wrote it."""
    fill = {"x-simulator-fill": "1"}
    capped = searching.openai("acme").responses.create(
        model="gpt-4o-mini", input="Write it all.", extra_headers=fill
    )
    assert capped.usage is not None and capped.usage.output_tokens == 4096
    whole = searching.openai("globex").responses.create(
        model="gpt-4o-mini", input="Write it all.", extra_headers=fill
    )
    assert whole.usage is not None and whole.usage.output_tokens > 4096
    # booked as the provider reported it: 4,096 was no ceiling of this call (the review
    # found it read as one, the usage "implausible" and booked as a 4,096 estimate)
    # max_output_tokens=None: the SDK sends a null, OpenAI's "no limit" (the second
    # review: a null was taken for a ceiling sent, and the default bound it again)
    unlimited = searching.openai("globex").responses.create(
        model="gpt-4o-mini", input="Write it all.", extra_headers=fill, max_output_tokens=None
    )
    assert unlimited.usage is not None
    booked = [r for r in ledger(searching) if r["tenant"] == "globex"]
    reported = [whole.usage.output_tokens, unlimited.usage.output_tokens]
    assert sorted(r["output_tokens"] for r in booked) == sorted(reported)
    assert not any(r["estimated"] for r in booked)


def test_an_unread_reply_of_a_call_with_no_ceiling_is_booked_at_the_default(
    tmp_path: Path,
) -> None:
    """A call sent with no output ceiling whose reply could not be read (too large) is
    booked at its estimate, the route's default: it was booked at the bound read as "no
    ceiling", 100,000,000 output tokens ($60 on gpt-4o-mini; the second review)."""
    (tmp_path / "policies").mkdir()
    gw = InProcessGateway(
        tmp_path,
        SIMULATOR,
        f"sqlite:///{tmp_path / 'gateway.db'}",
        limits={"max_reply_bytes": 5000},
    )
    gw.start()
    try:
        with pytest.raises(openai.APIStatusError):
            gw.openai().responses.create(
                model="gpt-4o-mini", input="Write it all.", extra_headers={"x-simulator-fill": "1"}
            )
        [booked] = ledger(gw)
    finally:
        gw.stop()
    assert booked["estimated"] and booked["output_tokens"] == 4096


@pytest.mark.parametrize("tool", [{"type": "image_generation"}, {"type": "code_interpreter"}])
def test_responses_tools_billed_by_use_are_not_held(
    gw: InProcessGateway, tool: dict[str, Any]
) -> None:
    """Image generation (per image) and code interpreter (per container session) are
    billed by what the model does: under a ceiling only `unpriced: allow` admits them."""
    with pytest.raises(openai.BadRequestError) as info:
        gw.openai("acme").responses.create(
            model="gpt-4o-mini",
            input="Draw me a chart.",
            tools=[tool],  # type: ignore[list-item]
        )
    assert info.value.code == "model_not_priced"
    gw.openai("globex").responses.create(model="gpt-4o-mini", input="Hi", tools=[tool])  # type: ignore[list-item]
    assert [r["tenant"] for r in ledger(gw)] == ["globex"]
