"""Tenants isolated in the process's memory (red-team read 21): what the gateway keeps
in memory to stay fast (token counts by content, the token factor per model) must not
let what one tenant sends change what another is answered or billed."""

from __future__ import annotations

import base64
import random
import time
from typing import Any

import openai
import orjson
import pytest

from tests.inprocess import InProcessGateway

# Digits then spaces: dense where the counter reads first, sparse after. 89,451 tokens
# (cl100k), within gpt-4o-mini's 128,000; past local-llama's 32,000 the first half's
# count is extrapolated to the whole: ~175,000.
_DIGITS = random.Random(7).choices("0123456789", k=262_144)
UNEVEN = "".join(_DIGITS) + " " * 262_144


def _ask(gw: InProcessGateway, tenant: str, model: str, text: str) -> Any:
    return gw.openai(tenant).chat.completions.create(
        model=model, messages=[{"role": "user", "content": text}], max_tokens=5
    )


def test_a_count_estimated_for_a_small_window_does_not_refuse_another_tenant(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """A message counted past a small model's window is estimated (the rest extrapolated
    from what was read): the estimate was remembered by the message's content alone, and
    another tenant sending the same text to a model of a larger window (the same
    encoding) got it: 400 context_length_exceeded for a message that fits."""
    gw = sqlite_app_gateway
    with pytest.raises(openai.BadRequestError):
        _ask(gw, "acme", "local-llama", UNEVEN)  # past its 32,000 tokens: refused
    reply = _ask(gw, "globex", "gpt-4o-mini", UNEVEN)
    assert reply.usage is not None and reply.usage.prompt_tokens < 100_000


def _image_call(gw: InProcessGateway) -> None:
    """A low-detail picture, reported as OpenAI bills it on gpt-4o-mini (2,833 tokens an
    image, which the window counts as 85)."""
    image: Any = {
        "type": "image_url",
        "image_url": {"url": "https://x.test/cat.png", "detail": "low"},
    }
    text: Any = {"type": "text", "text": "what is this"}
    usage = {"prompt_tokens": 30 + 2833, "total_tokens": 30 + 2833 + 5}
    gw.openai("acme").chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": [text, image]}],
        max_tokens=5,
        extra_headers={"X-Simulator-Usage": orjson.dumps(usage).decode()},
    )


def _unreported_call(gw: InProcessGateway, tag: str, model: str = "gpt-4o-mini") -> int:
    """A call of globex's whose reply carries no usage: booked at its estimated input."""
    gw.openai("globex").chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": f"where is my order, it was due monday {tag}"}],
        max_tokens=5,
        extra_headers={"X-Simulator-Drop-Usage": "1"},
    )
    period = time.strftime("%Y-%m", time.gmtime())
    rows = gw.admin("/admin/ledger", period=period, tenant="globex").json()["records"]
    newest = max(rows, key=lambda r: r["ts"])
    assert newest["estimated"] is True
    return int(newest["fresh_input_tokens"])


def test_one_tenants_pictures_do_not_raise_another_tenants_estimated_bill(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """The token factor (a model's provider count over the gateway's) is every tenant's.
    An image is counted 85 tokens and billed up to thousands: learned from image calls,
    acme's pictures moved the factor to 2 and globex's next call booked without a
    reported usage was billed twice its input (31 tokens, then 62)."""
    gw = sqlite_app_gateway
    before = _unreported_call(gw, "a")
    for _ in range(12):
        _image_call(gw)
    assert _unreported_call(gw, "b") == before


def _recording_call(gw: InProcessGateway) -> None:
    """One second of a 320 kbit/s MP3 (40 KB), counted as 40 s (its size as though it
    were 8 kbit/s: 400 tokens) and reported as OpenAI bills it (10 tokens a second)."""
    mp3 = base64.b64encode(random.Random(3).randbytes(40_000)).decode()
    part: Any = {"type": "input_audio", "input_audio": {"data": mp3, "format": "mp3"}}
    text: Any = {"type": "text", "text": "what did I say"}
    usage = {
        "prompt_tokens": 30,
        "completion_tokens": 5,
        "prompt_tokens_details": {"audio_tokens": 10},
    }
    gw.openai("acme").chat.completions.create(
        model="gpt-audio",
        messages=[{"role": "user", "content": [text, part]}],
        max_tokens=5,
        extra_headers={"X-Simulator-Usage": orjson.dumps(usage).decode()},
    )


def test_one_tenants_recordings_do_not_lower_another_tenants_counts(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """Audio not in WAV is counted from its size, at least its length: acme's MP3s moved
    gpt-audio's factor to 0.5, and globex's call booked without a reported usage was
    billed half its input (31 tokens, then 16), its window counted at half its size."""
    gw = sqlite_app_gateway
    before = _unreported_call(gw, "a", "gpt-audio")
    for _ in range(12):
        _recording_call(gw)
    assert _unreported_call(gw, "b", "gpt-audio") == before
