"""What a provider bills beside text tokens, held and booked under a spend ceiling: audio
output at its audio rate. Through the gateway in this process (SQLite and real Redis),
the simulated upstream reporting the usage a provider would, the openai SDK as client."""

from __future__ import annotations

import json
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


@pytest.fixture(params=["sqlite", "redis"])
def gw(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[InProcessGateway]:
    """The gateway in this process, acme under a $0.03 monthly ceiling."""
    store = f"sqlite:///{tmp_path / 'gateway.db'}"
    if request.param == "redis":
        store = request.getfixturevalue("redis_url")
    spend = {"tenants": {"acme": {"monthly_usd": str(CEILING)}}}
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    gw = InProcessGateway(tmp_path, SIMULATOR, store)
    gw.start()
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
