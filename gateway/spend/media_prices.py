"""Prices of what image and audio calls bill beside text tokens: an image model's input
image tokens (gpt-image-1: $10 per million against $5 for text), the seconds of audio a
transcription model bills by duration (whisper-1: $0.36 an hour), the characters a
speech model reads aloud (tts-1: $15 per million, tts-1-hd $30). genai-prices has these
rates; a model whose price lacks the one a call bills (the config table has none, nor
genai-prices a per-character rate for gpt-4o-mini-tts) leaves the call unpriced, never
at $0 or at the text rate alone.
"""

from __future__ import annotations

import logging
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from genai_prices import Usage

from gateway.ledger.usage import TokenUsage
from gateway.spend.money import COST_QUANTUM
from gateway.spend.pricing import Pricer

log = logging.getLogger("gateway.spend.media_prices")

# The genai-prices rate each kind of use needs (any one of them).
_RATES = {
    "audio_seconds": ("audio_hours", "input_audio_hours"),
    "characters": ("input_mchars",),
}


class MediaPricer(Pricer):
    """A `Pricer` that also prices image tokens, audio seconds and characters."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lacking: set[str] = set()

    def cost(self, model: str, usage: TokenUsage, tier: str | None = None) -> Decimal | None:
        by_tokens = not (usage.audio_seconds or usage.characters)
        if not usage.media or (by_tokens and model in self._table):
            return super().cost(model, usage, tier)  # a table's images: its input rate
        model_price = None if model in self._table else self._tier_price(model, tier)
        if model_price is None or not _has_rates(model_price, usage):
            if model_price is None and model not in self._table:
                self._unpriced(model, None)  # no price at all
            elif model not in self._lacking:  # one warning a priced model
                self._lacking.add(model)
                log.warning(
                    "model %r has no rate for the audio seconds or characters its call "
                    "billed: booked unpriced",
                    model,
                )
            return None
        total = model_price.calc_price(_media_usage(usage))["total_price"]
        return Decimal(total).quantize(COST_QUANTUM, rounding=ROUND_HALF_EVEN)


def _has_rates(model_price: Any, usage: TokenUsage) -> bool:
    return all(
        any(getattr(model_price, rate, None) is not None for rate in rates)
        for kind, rates in _RATES.items()
        if getattr(usage, kind)
    )


def _media_usage(usage: TokenUsage) -> Usage:
    values = {
        "input_tokens": usage.input_total,
        "cache_read_tokens": usage.cached_input,
        "cache_write_tokens": usage.cache_write,
        "output_tokens": usage.output,
        "input_audio_tokens": usage.input_audio,
        "output_audio_tokens": usage.output_audio,
        "web_searches": usage.web_searches,
        "input_characters": usage.characters,
    }
    if usage.input_image:  # no cached image tokens are reported: none are taken as such
        values |= {"input_image_tokens": usage.input_image, "cache_image_read_tokens": 0}
    if usage.audio_seconds:  # genai-prices wants the whole beside the input part
        values |= {"audio_seconds": usage.audio_seconds, "input_audio_seconds": usage.audio_seconds}
    return Usage(**{k: v for k, v in values.items() if v or k == "cache_image_read_tokens"})
