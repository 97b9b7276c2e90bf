"""Usage normalization: one table of provider shapes."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gateway.config import SIMULATOR
from gateway.ledger.usage import Malformed, TokenUsage, normalize, web_searches_made
from gateway.spend.pricing import Pricer
from tests.inprocess import InProcessGateway

CASES = [
    (
        "openai with cache hit",
        {
            "prompt_tokens": 2000,
            "completion_tokens": 50,
            "prompt_tokens_details": {"cached_tokens": 1536},
            "completion_tokens_details": {"reasoning_tokens": 20},
        },
        TokenUsage(fresh_input=464, cached_input=1536, output=50, reasoning=20),
    ),
    (
        "vllm omits the cached field when zero",
        {"prompt_tokens": 300, "completion_tokens": 7, "total_tokens": 307},
        TokenUsage(fresh_input=300, output=7),
    ),
    (
        "openai details null",
        {"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": None},
        TokenUsage(fresh_input=10, output=1),
    ),
    (
        "openai-compatible with cache writes inside prompt_tokens",
        {
            "prompt_tokens": 1000,
            "completion_tokens": 5,
            "prompt_tokens_details": {"cached_tokens": 200, "cache_write_tokens": 300},
        },
        TokenUsage(fresh_input=500, cached_input=200, cache_write=300, output=5),
    ),
    (
        "anthropic: input excludes cache read and creation",
        {
            "input_tokens": 40,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 200,
            "output_tokens": 9,
        },
        TokenUsage(fresh_input=40, cached_input=1000, cache_write=200, output=9),
    ),
    (
        "deepseek hit/miss",
        {
            "prompt_tokens": 900,
            "completion_tokens": 30,
            "prompt_cache_hit_tokens": 640,
            "prompt_cache_miss_tokens": 260,
        },
        TokenUsage(fresh_input=260, cached_input=640, output=30),
    ),
    (
        "openai responses api",
        {
            "input_tokens": 500,
            "output_tokens": 20,
            "input_tokens_details": {"cached_tokens": 384},
            "output_tokens_details": {"reasoning_tokens": 4},
        },
        TokenUsage(fresh_input=116, cached_input=384, output=20, reasoning=4),
    ),
    (
        "openai audio in and out: part of the totals, billed at their own rate",
        {
            "prompt_tokens": 120,
            "completion_tokens": 1000,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 80},
            "completion_tokens_details": {"audio_tokens": 790, "text_tokens": 210},
        },
        TokenUsage(fresh_input=120, output=1000, input_audio=80, output_audio=790),
    ),
    (
        "audio above its total is capped",
        {
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "prompt_tokens_details": {"audio_tokens": 99},
            "completion_tokens_details": {"audio_tokens": 99},
        },
        TokenUsage(fresh_input=10, output=5, input_audio=10, output_audio=5),
    ),
    ("embeddings", {"prompt_tokens": 8, "total_tokens": 8}, TokenUsage(fresh_input=8)),
    (
        "transcription billed by tokens: its audio at the audio rate",
        {
            "type": "tokens",
            "input_tokens": 50_000,
            "input_token_details": {"text_tokens": 20, "audio_tokens": 49_980},
            "output_tokens": 3_000,
            "total_tokens": 53_000,
        },
        TokenUsage(fresh_input=50_000, output=3_000, input_audio=49_980),
    ),
    (
        "transcription billed by duration (whisper-1)",
        {"type": "duration", "seconds": 3600},
        TokenUsage(audio_seconds=3600),
    ),
    (
        "a part of a second is billed whole",
        {"type": "duration", "seconds": 2.2},
        TokenUsage(audio_seconds=3),
    ),
    (
        "images: input image tokens at the image rate",
        {
            "input_tokens": 820,
            "input_tokens_details": {"text_tokens": 44, "image_tokens": 776},
            "output_tokens": 1056,
            "total_tokens": 1876,
        },
        TokenUsage(fresh_input=820, output=1056, input_image=776),
    ),
    (
        "cached larger than prompt is capped",
        {
            "prompt_tokens": 10,
            "completion_tokens": 0,
            "prompt_tokens_details": {"cached_tokens": 99},
        },
        TokenUsage(cached_input=10),
    ),
    (
        "reasoning above the output is capped (chat)",
        {
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "completion_tokens_details": {"reasoning_tokens": 9000},
        },
        TokenUsage(fresh_input=10, output=5, reasoning=5),
    ),
    (
        "reasoning above the output is capped (responses)",
        {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 9000},
        },
        TokenUsage(fresh_input=10, output=5, reasoning=5),
    ),
    (
        "reasoning above the output is capped (deepseek)",
        {
            "prompt_cache_hit_tokens": 0,
            "prompt_cache_miss_tokens": 10,
            "completion_tokens": 5,
            "completion_tokens_details": {"reasoning_tokens": 9000},
        },
        TokenUsage(fresh_input=10, output=5, reasoning=5),
    ),
]


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_shapes(raw: dict[str, Any], expected: TokenUsage) -> None:
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        {"prompt_tokens": "12", "completion_tokens": 3},
        {"prompt_tokens": 12, "completion_tokens": True},
        {"prompt_tokens": 12, "prompt_tokens_details": {"cached_tokens": -5}},
        {"prompt_tokens": None, "completion_tokens": None},
        {"input_tokens": 1.5, "output_tokens": 2},
        {"input_tokens": None, "output_tokens": 7},
        {"type": "duration", "seconds": -3},
        {"type": "duration", "seconds": None},
        {"type": "duration", "seconds": float("nan")},
        {"type": "tokens", "input_tokens": "50"},
    ],
)
def test_counts_that_are_not_counts_are_malformed(raw: dict[str, Any]) -> None:
    """Booked as they were read (0), a hostile or broken report made a real call free:
    the report is refused, and the gateway's estimate books the call instead."""
    with pytest.raises(Malformed):
        normalize(raw)


def test_integral_floats_and_optional_nulls_are_counts() -> None:
    raw = {"prompt_tokens": 12.0, "completion_tokens": 3, "prompt_tokens_details": None}
    assert normalize(raw) == TokenUsage(fresh_input=12, output=3)
    details = {"prompt_tokens": 12, "prompt_tokens_details": {"cached_tokens": None}}
    assert normalize(details) == TokenUsage(fresh_input=12)


@pytest.mark.parametrize("raw", [None, [], "usage", {}, {"total_tokens": 5}])
def test_no_usage(raw: object) -> None:
    assert normalize(raw) is None


def test_web_searches_are_counted_from_a_responses_answer() -> None:
    search = {"type": "web_search_call", "status": "completed"}
    message = {"type": "message", "content": []}
    assert web_searches_made({"output": [search, message, search]}) == 2
    assert web_searches_made({"output": [message]}) == 0
    assert web_searches_made({"output": None}) is None  # not seen: not known
    assert web_searches_made(None) is None


@pytest.mark.parametrize(
    ("model", "usage", "expected"),
    [
        ("whisper-1", TokenUsage(audio_seconds=3600), "0.36"),
        ("tts-1", TokenUsage(characters=1_000), "0.015"),
        ("tts-1-hd", TokenUsage(characters=1_000), "0.03"),
        # 1M image tokens at $10 and 1M text at $5, against $10 for all at the text rate
        ("gpt-image-1", TokenUsage(fresh_input=2_000_000, input_image=1_000_000), "15"),
        ("gpt-4o-mini-tts", TokenUsage(characters=1_000), None),  # billed by tokens
        ("dall-e-3", TokenUsage(characters=1_000), None),
    ],
)
def test_audio_seconds_characters_and_image_tokens_are_priced_at_their_rates(
    model: str, usage: TokenUsage, expected: str | None
) -> None:
    cost = Pricer({}, "openai").cost(model, usage)
    assert cost == (None if expected is None else Decimal(expected))


def test_a_call_whose_use_was_not_reported_bills_something() -> None:
    """Booked unpriced, never as $0 (gateway.ledger.accounting)."""
    assert TokenUsage(unmetered=True).billed
    assert TokenUsage(audio_seconds=1).billed
    assert not TokenUsage().billed


def test_reasoning_past_the_output_is_not_booked(tmp_path: Path) -> None:
    """An upstream reporting 9,000 reasoning tokens in a 5-token output had 9,000 booked
    (the spend report's and the metrics' reasoning_tokens): reasoning is part of the
    output, so it is cut to it; the output, which is billed, is booked as reported."""
    gw = InProcessGateway(tmp_path, SIMULATOR, f"sqlite:///{tmp_path / 'gateway.db'}")
    gw.start()
    try:
        forced = {"completion_tokens": 5, "completion_tokens_details": {"reasoning_tokens": 9000}}
        gw.openai().chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"x-simulator-usage": json.dumps(forced)},
        )
        [record] = gw.admin("/admin/ledger").json()["records"]
        [row] = [r for r in gw.admin("/admin/spend").json()["tenants"] if r["tenant"] == "acme"]
    finally:
        gw.stop()
    assert (record["output_tokens"], record["reasoning_tokens"]) == (5, 5)
    assert record["estimated"] is False
    assert (row["output_tokens"], row["reasoning_tokens"]) == (5, 5)
