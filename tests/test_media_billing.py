"""Image and audio calls are booked, each once, as the model they name and at what they
bill: through the openai SDK against the gateway in this process and its simulated
upstream (gateway.dev.simulator_media), on SQLite. A red-team read found form uploads
(image edits and variations, transcriptions, translations) booked as model `unknown`
and unpriced, and calls whose reply carries no token usage (speech, whisper-1's
duration, dall-e) or a stream closed before its usage not booked at all: under
`unpriced: allow` none of them counted against a ceiling."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from genai_prices import Usage, calc_price

from gateway.config import SIMULATOR
from gateway.dev.simulator_media import AUDIO_BYTES_PER_SECOND, IMAGE_INPUT_TOKENS
from gateway.proxy.multipart_field import Ambiguous, boundary_of, form_field
from tests.inprocess import InProcessGateway, SimulatorLog

PNG = ("cat.png", b"\x89PNG\r\n\x1a\n" + b"\0" * 2_000, "image/png")
MINUTE_OF_AUDIO = ("call.mp3", b"ID3" + b"\0" * (60 * AUDIO_BYTES_PER_SECOND - 3), "audio/mpeg")
ALLOW = {"monthly_usd": "0.04", "action": "block", "unpriced": "allow"}


def _gateway(root: Path, acme: dict[str, Any] | None = None) -> InProcessGateway:
    (root / "policies").mkdir(exist_ok=True)
    if acme is not None:
        spend = {"tenants": {"acme": acme}}
        (root / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
    gw = InProcessGateway(root, SIMULATOR, f"sqlite:///{root / 'gateway.db'}")
    gw.start()
    return gw


@pytest.fixture
def gw(tmp_path: Path) -> Iterator[InProcessGateway]:
    """No spend ceiling."""
    gw = _gateway(tmp_path)
    yield gw
    gw.stop()


@pytest.fixture
def allowing(tmp_path: Path) -> Iterator[InProcessGateway]:
    """acme under a $0.04 ceiling that admits what it cannot hold (`unpriced: allow`)."""
    gw = _gateway(tmp_path, ALLOW)
    yield gw
    gw.stop()


def ledger(gw: InProcessGateway) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = gw.admin("/admin/ledger").json()["records"]
    return records


def spend_row(gw: InProcessGateway) -> dict[str, Any]:
    rows = gw.admin("/admin/spend").json()["tenants"]
    return next(r for r in rows if r["tenant"] == "acme")


def price(model: str, **usage: int) -> Decimal:
    """genai-prices' price of `usage` (its own keys), the rates the gateway books at."""
    total = calc_price(Usage(**usage), model, provider_id="openai").total_price
    return Decimal(total).quantize(Decimal("1e-10"))


def test_an_image_edit_is_booked_as_its_model_with_its_images_at_their_rate(
    allowing: InProcessGateway,
) -> None:
    """An edit is a form upload: its model was booked `unknown`, unpriced, so under
    `unpriced: allow` edits never counted against the ceiling while the same model's
    JSON `generate` did. Its input image tokens are billed at gpt-image-1's image rate
    ($10 per million, text $5)."""
    client = allowing.openai()
    reply = client.images.edit(model="gpt-image-1", image=[PNG, PNG], prompt="a hat")
    assert reply.usage is not None
    assert reply.usage.input_tokens_details.image_tokens == 2 * IMAGE_INPUT_TOKENS
    [row] = ledger(allowing)
    assert (row["model"], row["route"]) == ("gpt-image-1", "images")
    text = reply.usage.input_tokens_details.text_tokens
    expected = price(
        "gpt-image-1",
        input_tokens=reply.usage.input_tokens,
        input_image_tokens=2 * IMAGE_INPUT_TOKENS,
        cache_read_tokens=0,
        cache_image_read_tokens=0,
        output_tokens=reply.usage.output_tokens,
    )
    assert Decimal(row["cost_usd"]) == expected
    at_text_rate = price("gpt-image-1", input_tokens=text + 2 * IMAGE_INPUT_TOKENS)
    assert expected > at_text_rate + price("gpt-image-1", output_tokens=reply.usage.output_tokens)
    # $0.05 spent (admitted though it cannot be held): the ceiling of $0.04 refuses more
    assert expected > Decimal("0.04")
    with pytest.raises(openai.RateLimitError):
        client.images.edit(model="gpt-image-1", image=PNG, prompt="a hat")
    with pytest.raises(openai.RateLimitError):
        client.images.generate(model="gpt-image-1", prompt="a hat")
    assert spend_row(allowing)["unpriced_requests"] == 0


def test_a_transcription_is_booked_as_its_model_with_its_audio_at_the_audio_rate(
    allowing: InProcessGateway,
) -> None:
    """`{"type": "tokens", ..., "input_token_details": {"audio_tokens"}}`: was booked
    as model `unknown` at no price; its audio tokens are dearer than text ($6 against
    $2.50 a million on gpt-4o-transcribe)."""
    client = allowing.openai()
    reply = client.audio.transcriptions.create(model="gpt-4o-transcribe", file=MINUTE_OF_AUDIO)
    assert reply.usage is not None and reply.usage.type == "tokens"
    [row] = ledger(allowing)
    assert row["model"] == "gpt-4o-transcribe"
    assert row["fresh_input_tokens"] == reply.usage.input_tokens
    details = reply.usage.input_token_details
    assert details is not None and details.audio_tokens
    audio = details.audio_tokens
    expected = price(
        "gpt-4o-transcribe",
        input_tokens=reply.usage.input_tokens,
        input_audio_tokens=audio,
        output_tokens=reply.usage.output_tokens,
    )
    assert Decimal(row["cost_usd"]) == expected


def test_whisper_is_booked_by_the_seconds_it_heard(gw: InProcessGateway) -> None:
    """whisper-1 reports `{"type": "duration", "seconds"}`: no tokens, so the call left no
    row and no request at all. It is billed $0.006 a minute."""
    client = gw.openai()
    reply = client.audio.transcriptions.create(model="whisper-1", file=MINUTE_OF_AUDIO)
    assert reply.usage is not None and reply.usage.type == "duration"
    assert reply.usage.seconds == 60
    [row] = ledger(gw)
    assert row["model"] == "whisper-1"
    assert Decimal(row["cost_usd"]) == Decimal("0.006")
    assert spend_row(gw)["requests"] == 1


def test_speech_is_booked_by_the_characters_it_read(gw: InProcessGateway) -> None:
    """A speech reply is audio, with no usage: tts-1 and tts-1-hd calls were not booked.
    They bill per character of `input` ($15 and $30 a million)."""
    client = gw.openai()
    text = "Your order shipped this morning and arrives on Friday. " * 10
    for model in ("tts-1", "tts-1-hd"):
        audio = client.audio.speech.create(model=model, voice="alloy", input=text)
        assert audio.content.startswith(b"ID3")
    rows = sorted(ledger(gw), key=lambda r: str(r["model"]))
    assert [(r["model"], r["route"]) for r in rows] == [("tts-1", "audio"), ("tts-1-hd", "audio")]
    assert [Decimal(r["cost_usd"]) for r in rows] == [
        price("tts-1", input_characters=len(text)),
        price("tts-1-hd", input_characters=len(text)),
    ]
    assert spend_row(gw)["requests"] == 2


def test_streamed_speech_is_booked_from_its_usage(gw: InProcessGateway) -> None:
    """gpt-4o-mini-tts streams `speech.audio.*` events, the last with token usage."""
    client = gw.openai()
    with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts", voice="alloy", input="Thank you for waiting.", stream_format="sse"
    ) as reply:
        events = [json.loads(line[5:]) for line in reply.iter_lines() if line.startswith("data:")]
    usage = events[-1]["usage"]
    [row] = ledger(gw)
    assert (row["model"], row["output_tokens"]) == ("gpt-4o-mini-tts", usage["output_tokens"])
    expected = price(
        "gpt-4o-mini-tts", input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"]
    )
    assert Decimal(row["cost_usd"]) == expected


def test_a_call_whose_reply_says_nothing_of_its_use_is_booked_unpriced(
    gw: InProcessGateway,
) -> None:
    """dall-e images, a translation, a transcription asked for as plain text, speech on a
    model with no per-character rate: each is booked once, counted as a request and as
    unpriced (never as $0), as the model it named."""
    client = gw.openai()
    client.images.generate(model="dall-e-3", prompt="a lighthouse")
    client.images.edit(model="dall-e-2", image=PNG, prompt="at night")
    with pytest.warns(DeprecationWarning):  # by the SDK; OpenAI still serves the route
        client.audio.translations.create(model="whisper-1", file=MINUTE_OF_AUDIO)
    text = client.audio.transcriptions.create(
        model="whisper-1", file=MINUTE_OF_AUDIO, response_format="text"
    )
    assert isinstance(text, str) and text
    client.audio.speech.create(model="gpt-4o-mini-tts", voice="alloy", input="Hello.")
    rows = ledger(gw)
    assert sorted(r["model"] for r in rows) == [
        "dall-e-2",
        "dall-e-3",
        "gpt-4o-mini-tts",
        "whisper-1",
        "whisper-1",
    ]
    assert all(r["cost_usd"] is None for r in rows)
    row = spend_row(gw)
    assert (row["requests"], row["unpriced_requests"]) == (5, 5)


def test_an_image_stream_closed_early_is_booked(gw: InProcessGateway) -> None:
    """The client closes the stream after the first partial image, before the event with
    the usage: the call (which the provider bills) left no row. It is booked unpriced."""
    log = SimulatorLog(gw)
    client = gw.openai()
    stream = client.images.generate(
        model="gpt-image-1",
        prompt="a lighthouse",
        stream=True,
        partial_images=2,
        extra_headers={"x-simulator-chunk-delay-ms": "300"},
    )
    first = next(iter(stream))
    assert first.type == "image_generation.partial_image"
    stream.close()
    assert len(log.since()) == 1
    [row] = ledger(gw)
    assert (row["model"], row["cost_usd"]) == ("gpt-image-1", None)
    assert spend_row(gw)["unpriced_requests"] == 1


def test_an_image_stream_read_to_its_end_is_booked_from_its_usage(gw: InProcessGateway) -> None:
    client = gw.openai()
    events = list(
        client.images.generate(model="gpt-image-1", prompt="a cat", stream=True, partial_images=1)
    )
    done = events[-1]
    assert done.type == "image_generation.completed"
    [row] = ledger(gw)
    assert row["model"] == "gpt-image-1"
    assert row["output_tokens"] == done.usage.output_tokens
    assert row["cost_usd"] is not None


def test_under_unpriced_block_image_and_audio_uploads_are_refused_before_forwarding(
    tmp_path: Path,
) -> None:
    """Their cost cannot be read from the body: under a ceiling that blocks what it
    cannot hold they are refused (400 model_not_priced) and never reach the upstream."""
    gw = _gateway(tmp_path, {"monthly_usd": "5", "action": "block"})
    try:
        log = SimulatorLog(gw)
        client = gw.openai()
        calls: list[Callable[[], object]] = [
            lambda: client.images.edit(model="gpt-image-1", image=PNG, prompt="a hat"),
            lambda: client.audio.transcriptions.create(model="whisper-1", file=MINUTE_OF_AUDIO),
            lambda: client.audio.speech.create(model="tts-1", voice="alloy", input="Hello."),
        ]
        for call in calls:
            with pytest.raises(openai.BadRequestError) as info:
                call()
            assert info.value.code == "model_not_priced"
        assert log.since() == []
        assert ledger(gw) == []
    finally:
        gw.stop()


def _form(model_parts: list[bytes]) -> tuple[bytes, str]:
    boundary = "b0undary"
    parts = [
        b'--b0undary\r\nContent-Disposition: form-data; name="model"\r\n\r\n' + m + b"\r\n"
        for m in model_parts
    ]
    parts.append(
        b'--b0undary\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\n'
        b"Content-Type: audio/mpeg\r\n\r\n" + MINUTE_OF_AUDIO[1] + b"\r\n"
    )
    return b"".join(parts) + b"--b0undary--\r\n", f"multipart/form-data; boundary={boundary}"


def test_a_form_naming_its_model_twice_is_refused(gw: InProcessGateway) -> None:
    """The upstream might read the other one than the gateway held and booked."""
    log = SimulatorLog(gw)
    body, content_type = _form([b"whisper-1", b"gpt-4o-transcribe"])
    headers = {"Authorization": f"Bearer {gw.keys['acme']}", "Content-Type": content_type}
    reply = gw.http.post("/v1/audio/transcriptions", content=body, headers=headers)
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "model"
    assert log.since() == []


def test_a_form_with_its_model_after_the_file_is_read(gw: InProcessGateway) -> None:
    body, content_type = _form([])
    body = body.replace(
        b"--b0undary--",
        b'--b0undary\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n'
        b"--b0undary--",
    )
    headers = {"Authorization": f"Bearer {gw.keys['acme']}", "Content-Type": content_type}
    reply = gw.http.post("/v1/audio/transcriptions", content=body, headers=headers)
    assert reply.status_code == 200, reply.text
    [row] = ledger(gw)
    assert (row["model"], Decimal(row["cost_usd"])) == ("whisper-1", Decimal("0.006"))


def test_the_form_reader_reads_the_field_alone() -> None:
    """Quoted boundaries, a file part of the same name, a value cut off or too long."""
    body = (
        b'--x y\r\nContent-Disposition: form-data; name="model"; filename="m.txt"\r\n\r\n'
        b"not-a-model\r\n"
        b'--x y\r\ncontent-disposition: form-data; name="prompt"\r\n\r\nmodel\r\n'
        b'--x y\r\nContent-Disposition: form-data; name="model"\r\n\r\ngpt-image-1\r\n--x y--\r\n'
    )
    boundary = boundary_of('multipart/form-data; boundary="x y"')
    assert boundary == b"x y"
    assert form_field(body, boundary, "model") == "gpt-image-1"
    assert form_field(body, boundary, "size") is None
    with pytest.raises(Ambiguous):
        form_field(body, boundary, "model", most=4)
    with pytest.raises(Ambiguous):  # no delimiter after it: where its value ends is unknown
        form_field(body.removesuffix(b"\r\n--x y--\r\n"), boundary, "model")
    assert boundary_of("application/json") is None
