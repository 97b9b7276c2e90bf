"""Usage, normalized: one small function per provider shape.

Providers disagree on whether "input" includes cached tokens. Everything here ends in
the same split: fresh input, cached input, cache-write input, output (reasoning is part
of output and reported beside it), and whether the figures were reported or estimated.
A part reported larger than its whole (cached past the prompt, reasoning or audio past
the output) is cut to the whole: the whole is what is billed.
Audio tokens are part of input and output too, reported beside them because they are
billed at their own (dearer) rate; so are an image model's input image tokens. Web
searches are billed per call; a transcription model may bill the seconds of audio it
heard, a speech model the characters it read, not tokens.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class TokenUsage:
    fresh_input: int = 0
    cached_input: int = 0
    cache_write: int = 0
    output: int = 0
    reasoning: int = 0
    estimated: bool = False
    input_audio: int = 0  # of fresh_input
    output_audio: int = 0  # of output
    web_searches: int = 0  # built-in web search calls, billed per 1,000
    input_image: int = 0  # of fresh_input: an image model's input image tokens
    audio_seconds: int = 0  # audio heard (a transcription billed by duration)
    characters: int = 0  # text read aloud (a speech model billed per character)
    # The upstream said nothing the call can be priced by (an image or audio reply
    # without usage, a stream cut before its usage): booked unpriced, never as $0.
    unmetered: bool = False

    @property
    def billed(self) -> bool:
        """Whether the call bills anything at all (tokens, searches, seconds,
        characters, or what was not metered)."""
        counts = (self.input_total, self.output, self.reasoning, self.web_searches)
        return bool(any(counts) or self.media or self.unmetered)

    @property
    def media(self) -> bool:
        """Whether it bills what a token price alone does not price."""
        return bool(self.input_image or self.audio_seconds or self.characters)

    @property
    def input_total(self) -> int:
        return self.fresh_input + self.cached_input + self.cache_write


# No call uses anywhere near this many tokens of one kind (the largest context windows
# hold a few million). A report above it is corrupt: booked as is, it would overflow the
# stores' 64-bit counters (and bill a tenant for a fortune).
MAX_TOKENS = 100_000_000
_FIELDS = (
    "fresh_input",
    "cached_input",
    "cache_write",
    "output",
    "reasoning",
    "input_audio",
    "output_audio",
    "web_searches",
    "input_image",
    "audio_seconds",
    "characters",
)


@dataclass(frozen=True, slots=True)
class UsageBound:
    """The most a call can have used, read from what it asked for: every reply's output
    ceiling (`max_tokens` times `n`, which the provider enforces, plus a prediction's
    tokens per reply) and its worst-case input: counted from the body, or (`input_held`)
    the input the spend guard held for a call whose files or searches add input the
    body does not show (the model's context window per round), already the most the
    provider can bill, so a report past it is not believed, with no slack. `uncounted`:
    its input holds what the gateway's count does not measure (images, counted 85
    tokens each and billed up to thousands; audio, counted from its size as though it
    were 8 kbit/s; files; searches), so its report teaches the model's token factor
    nothing: the factor is every tenant's, and one tenant's pictures or recordings
    would otherwise move the count of every other's text."""

    output: int
    input: int | None = None
    input_held: bool = False
    uncounted: bool = False


# Tokenizers and hidden framing differ: a reported input within twice the gateway's own
# worst case (plus this) is taken as reported.
INPUT_SLACK_TOKENS = 2048
OUTPUT_SLACK_TOKENS = 64  # a provider's stop handling may pass the ceiling by a few


def implausible(usage: TokenUsage, bound: UsageBound | None = None) -> str | None:
    """Why a reported usage cannot be right, or None when it can."""
    for name in _FIELDS:
        value = getattr(usage, name)
        if value > MAX_TOKENS:
            return f"{name} {value} over {MAX_TOKENS}"
    if bound is None:
        return None
    if usage.output > bound.output + OUTPUT_SLACK_TOKENS:
        return f"output {usage.output} over the call's ceiling of {bound.output}"
    if bound.input is None:
        return None
    limit = bound.input if bound.input_held else 2 * bound.input + INPUT_SLACK_TOKENS
    if usage.input_total > limit:
        held = f"the {limit} held for the call"
        worst = f"twice the call's worst case of {bound.input}"
        return f"input {usage.input_total} over {held if bound.input_held else worst}"
    return None


def clamped(usage: TokenUsage, bound: UsageBound | None = None) -> TokenUsage:
    """Every count cut to `MAX_TOKENS` and to `bound` (an input past it is booked as its
    bound's input, fresh), flagged estimated: what is booked for an implausible report
    when the gateway has no count of its own."""
    cut = {name: min(getattr(usage, name), MAX_TOKENS) for name in _FIELDS}
    if bound is not None:
        cut["output"] = min(cut["output"], bound.output)
        cut["reasoning"] = min(cut["reasoning"], cut["output"])
        cut["output_audio"] = min(cut["output_audio"], cut["output"])
        if bound.input is not None and usage.input_total > bound.input:
            cut |= {"fresh_input": bound.input, "cached_input": 0, "cache_write": 0}
            cut["input_audio"] = min(cut["input_audio"], bound.input)
            cut["input_image"] = min(cut["input_image"], bound.input)
    return TokenUsage(**cut, estimated=True)


class Malformed(ValueError):
    """A usage count that is not a count (negative, a string, null where it is the
    call's main count): the report is not used; the gateway's own estimate books the
    call, as when there is no report."""


def _int(value: Any, *, required: bool = False) -> int:
    """A count: a non-negative int (an integral float is one); absent is 0, and so is
    null unless `required`. Anything else makes the report `Malformed` (bool is an int
    subclass; a provider sending `true` for a count is not a count)."""
    if value is None and not required:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise Malformed(f"usage count {value!r} is not a count")


def _details(raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = raw.get(key)
    return value if isinstance(value, Mapping) else {}


def from_openai(raw: Mapping[str, Any]) -> TokenUsage:
    """`prompt_tokens` includes cached (and cache-write) tokens; vLLM omits zero fields."""
    prompt = _int(raw.get("prompt_tokens"), required=True)
    details = _details(raw, "prompt_tokens_details")
    cached = min(_int(details.get("cached_tokens")), prompt)
    write = _int(details.get("cache_write_tokens") or raw.get("cache_write_tokens"))
    write = min(write, prompt - cached)
    output = _int(raw.get("completion_tokens"))
    out_details = _details(raw, "completion_tokens_details")
    return TokenUsage(
        fresh_input=prompt - cached - write,
        cached_input=cached,
        cache_write=write,
        output=output,
        reasoning=min(_int(out_details.get("reasoning_tokens")), output),
        input_audio=min(_int(details.get("audio_tokens")), prompt - cached - write),
        output_audio=min(_int(out_details.get("audio_tokens")), output),
    )


def from_openai_responses(raw: Mapping[str, Any]) -> TokenUsage:
    """Responses API: `input_tokens` includes `input_tokens_details.cached_tokens`."""
    total = _int(raw.get("input_tokens"), required=True)
    details = _details(raw, "input_tokens_details")
    cached = min(_int(details.get("cached_tokens")), total)
    output = _int(raw.get("output_tokens"))
    out_details = _details(raw, "output_tokens_details")
    return TokenUsage(
        fresh_input=total - cached,
        cached_input=cached,
        output=output,
        reasoning=min(_int(out_details.get("reasoning_tokens")), output),
        input_audio=min(_int(details.get("audio_tokens")), total - cached),
        output_audio=min(_int(out_details.get("audio_tokens")), output),
    )


def from_anthropic(raw: Mapping[str, Any]) -> TokenUsage:
    """`input_tokens` excludes cache reads and cache creation."""
    return TokenUsage(
        fresh_input=_int(raw.get("input_tokens"), required="input_tokens" in raw),
        cached_input=_int(raw.get("cache_read_input_tokens")),
        cache_write=_int(raw.get("cache_creation_input_tokens")),
        output=_int(raw.get("output_tokens")),
    )


def from_deepseek(raw: Mapping[str, Any]) -> TokenUsage:
    """`prompt_cache_hit_tokens` + `prompt_cache_miss_tokens` = `prompt_tokens`."""
    hit = _int(raw.get("prompt_cache_hit_tokens"))
    miss = raw.get("prompt_cache_miss_tokens")
    fresh = _int(miss) if miss is not None else max(_int(raw.get("prompt_tokens")) - hit, 0)
    output = _int(raw.get("completion_tokens"))
    reasoning = _int(_details(raw, "completion_tokens_details").get("reasoning_tokens"))
    return TokenUsage(
        fresh_input=fresh, cached_input=hit, output=output, reasoning=min(reasoning, output)
    )


def from_openai_transcription(raw: Mapping[str, Any]) -> TokenUsage:
    """`/v1/audio/transcriptions`: `{"type": "tokens", "input_tokens", "output_tokens",
    "input_token_details": {"audio_tokens", "text_tokens"}}` (gpt-4o-transcribe: the
    audio billed at its audio rate), or `{"type": "duration", "seconds"}` (whisper-1,
    billed per second: a fraction of a second counts whole, never understated)."""
    if raw.get("type") == "duration":
        seconds = raw.get("seconds")
        if isinstance(seconds, float) and math.isfinite(seconds) and seconds >= 0:
            seconds = math.ceil(seconds)
        return TokenUsage(audio_seconds=_int(seconds, required=True))
    total = _int(raw.get("input_tokens"), required=True)
    details = _details(raw, "input_token_details") or _details(raw, "input_tokens_details")
    return TokenUsage(
        fresh_input=total,
        output=_int(raw.get("output_tokens")),
        input_audio=min(_int(details.get("audio_tokens")), total),
    )


def from_openai_images(raw: Mapping[str, Any]) -> TokenUsage:
    """`/v1/images/*` (gpt-image-1): `input_tokens` includes
    `input_tokens_details.image_tokens`, billed at the model's dearer image rate."""
    usage = from_openai_responses(raw)
    images = _int(_details(raw, "input_tokens_details").get("image_tokens"))
    return replace(usage, input_image=min(images, usage.fresh_input))


# Each shape by its distinctive fields, in the order they are tried.
_SHAPES: tuple[tuple[Callable[[Mapping[str, Any]], bool], Callable[..., TokenUsage]], ...] = (
    (lambda raw: raw.get("type") in ("tokens", "duration"), from_openai_transcription),
    (
        lambda raw: "prompt_cache_hit_tokens" in raw or "prompt_cache_miss_tokens" in raw,
        from_deepseek,
    ),
    (lambda raw: "prompt_tokens" in raw, from_openai),
    (lambda raw: "image_tokens" in _details(raw, "input_tokens_details"), from_openai_images),
    (lambda raw: "input_tokens_details" in raw, from_openai_responses),
    (lambda raw: "input_tokens" in raw or "output_tokens" in raw, from_anthropic),
)


def normalize(raw: Any) -> TokenUsage | None:
    """Pick the shape by its distinctive fields; None when there is no usable usage.
    Raises `Malformed` when a count in it is not a count."""
    if not isinstance(raw, Mapping):
        return None
    for matches, read in _SHAPES:
        if matches(raw):
            return read(raw)
    return None


def web_searches_made(response: Any) -> int | None:
    """The web searches a Responses API answer shows it made (its `web_search_call`
    output items, each billed as one); None when `response` shows no output at all."""
    output = response.get("output") if isinstance(response, Mapping) else None
    if not isinstance(output, list):
        return None
    return sum(1 for i in output if isinstance(i, Mapping) and i.get("type") == "web_search_call")
