"""What image and audio calls bill beside text tokens, as genai-prices prices it: an
image model's input image tokens (gpt-image-1: $10 per million against $5 for text), the
seconds of audio a transcription model bills by duration (whisper-1: $0.36 an hour), the
characters a speech model reads aloud (tts-1: $15 per million, tts-1-hd $30). Pure
functions over a genai-prices model price; `gateway.spend.pricing.Pricer` prices with
them. A model whose price lacks the rate a call bills (the config table has none, nor
genai-prices a per-character rate for gpt-4o-mini-tts) leaves the call unpriced, never at
$0 or at the text rate alone.
"""

from __future__ import annotations

from typing import Any

from gateway.ledger.usage import TokenUsage

# The genai-prices rate each kind of use needs (any one of them).
_RATES = {
    "audio_seconds": ("audio_hours", "input_audio_hours"),
    "characters": ("input_mchars",),
}


def billed_by_units(usage: TokenUsage) -> bool:
    """Whether `usage` bills seconds or characters, which only a genai-prices rate for
    them prices (a table price has none)."""
    return bool(usage.audio_seconds or usage.characters)


def has_media_rates(model_price: Any, usage: TokenUsage) -> bool:
    """Whether `model_price` has a rate for the seconds and characters `usage` bills."""
    return all(
        any(getattr(model_price, rate, None) is not None for rate in rates)
        for kind, rates in _RATES.items()
        if getattr(usage, kind)
    )


def media_fields(usage: TokenUsage) -> dict[str, int]:
    """genai-prices `Usage` fields for the image tokens, seconds and characters of
    `usage` (none for a call that bills none)."""
    fields: dict[str, int] = {}
    if usage.input_image:  # no cached image tokens are reported: none are taken as such
        fields |= {"input_image_tokens": usage.input_image, "cache_image_read_tokens": 0}
    if usage.audio_seconds:  # genai-prices wants the whole beside the input part
        fields |= {"audio_seconds": usage.audio_seconds, "input_audio_seconds": usage.audio_seconds}
    if usage.characters:
        fields["input_characters"] = usage.characters
    return fields
