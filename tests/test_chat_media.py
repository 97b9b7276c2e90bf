"""Audio and files in chat messages, counted as what the provider bills for them rather
than as their base64: a few seconds of audio or a small PDF fit the context window, and
under a spend ceiling audio is still held at the most it may bill. Through the openai SDK
against the gateway in this process and its simulated upstream."""

from __future__ import annotations

import base64
import io
import json
import os
import wave
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml

from gateway.config import SIMULATOR
from tests.inprocess import InProcessGateway


def wav(seconds: int, rate: int = 16_000) -> str:
    """A WAV recording of noise (16-bit mono), base64: 5 s are 208 KB (silence, all
    zeros, would be a few base64 tokens however long)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(os.urandom(2 * rate * seconds))
    return base64.b64encode(out.getvalue()).decode()


def pdf(pages: int, size: int) -> str:
    """A PDF data URL of `pages` pages, padded (as fonts and images pad one) to `size`."""
    body = b"%PDF-1.4\n1 0 obj << /Type /Pages >> endobj\n"
    body += b"".join(
        b"%d 0 obj << /Type /Page /Parent 1 0 R >> endobj\n" % (i + 2) for i in range(pages)
    )
    body += os.urandom(max(size - len(body), 0))
    return "data:application/pdf;base64," + base64.b64encode(body).decode()


def said(seconds: int) -> dict[str, Any]:
    """The usage OpenAI reports for `seconds` of a user's audio (10 tokens a second)."""
    return {
        "prompt_tokens": 10 * seconds + 20,
        "completion_tokens": 10,
        "prompt_tokens_details": {"audio_tokens": 10 * seconds},
    }


def spoken_to(
    client: openai.OpenAI, model: str, data: str, fmt: str, usage: dict[str, Any]
) -> None:
    part: Any = {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}
    client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": [{"type": "text", "text": "What did I say?"}, part]}],
        max_tokens=10,
        extra_headers={"X-Simulator-Usage": json.dumps(usage)},
    )


def ledger(gw: InProcessGateway) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = gw.admin("/admin/ledger").json()["records"]
    return records


def test_five_seconds_of_audio_fit_the_context_window(sqlite_app_gateway: InProcessGateway) -> None:
    """A 5 s WAV (208 KB of base64) was counted as its JSON and refused 400: 'The system
    message and the window's minimum history exceed the model's context window.' It is
    counted as 5 s of audio, and the 50 audio tokens reported are believed."""
    spoken_to(sqlite_app_gateway.openai(), "gpt-audio", wav(5), "wav", said(5))
    [record] = ledger(sqlite_app_gateway)
    assert (record["fresh_input_tokens"], record["estimated"]) == (70, False)


def test_a_small_pdf_fits_the_context_window(sqlite_app_gateway: InProcessGateway) -> None:
    """A 150 KB PDF of 4 pages was counted as its base64 and refused 400; it is counted as
    4 pages."""
    part: Any = {"type": "file", "file": {"filename": "order.pdf", "file_data": pdf(4, 150_000)}}
    sqlite_app_gateway.openai().chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": [{"type": "text", "text": "Summarize"}, part]}],
        max_tokens=10,
    )
    assert len(ledger(sqlite_app_gateway)) == 1


@pytest.fixture
def ceiling(tmp_path: Path) -> Iterator[InProcessGateway]:
    """The gateway in this process, acme under a $0.03 monthly ceiling."""
    (tmp_path / "policies").mkdir()
    spend = {"tenants": {"acme": {"monthly_usd": "0.03"}}}
    (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    gw = InProcessGateway(tmp_path, SIMULATOR, f"sqlite:///{tmp_path / 'gateway.db'}")
    gw.start()
    yield gw
    gw.stop()


def test_audio_is_held_at_the_most_it_may_bill(ceiling: InProcessGateway) -> None:
    """Counted small, audio is still held at its worst case at the audio rate ($32 per
    million on gpt-audio): a WAV at its length at 20 tokens a second, any other format
    at its size as though it were 8 kbit/s. 5 s of WAV pass a $0.03 ceiling and are booked
    as billed; 200 KB of MP3 (up to 200 s, 4,000 tokens, $0.128) are refused."""
    client = ceiling.openai()
    spoken_to(client, "gpt-audio", wav(5), "wav", said(5))
    with pytest.raises(openai.RateLimitError):
        spoken_to(
            client, "gpt-audio", base64.b64encode(os.urandom(200_000)).decode(), "mp3", said(10)
        )
    [record] = ledger(ceiling)
    assert record["estimated"] is False
    assert Decimal(record["cost_usd"]) < Decimal("0.03")
