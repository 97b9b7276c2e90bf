"""Input audio and files in a chat call, in the tokens the provider bills for them: their
JSON (megabytes of base64) says nothing of that. Pure.

An `input_audio` part (base64 `data` and its `format`) is billed as audio tokens by its
length: OpenAI counts 1 token per 100 ms of a user's audio and 1 per 50 ms of an
assistant's (Realtime API guide, "Managing costs"; chat's audio models are the same
models). The window counts a part at 10 a second of its length: a PCM WAV's from its
header, any other format's from its size at the lowest bitrate chat's formats carry
(MP3's 8 kbit/s; PCM WAV carries 8,000 bytes a second or more), so long rather than
short. The spend guard holds it at its worst case (`audio_worst`): that length, or a
WAV's every byte after its header as samples, at 20 tokens a second.

A `file` part (a PDF as `file_data`) is billed as the text the provider extracts and an
image of every page (OpenAI's file inputs guide). OpenAI gives no figure a page;
Anthropic's PDF guide gives 1,500 to 3,000 tokens a page, and the window counts 3,000 for
every page object the file shows (`/Type /Page`), or where its pages are hidden in
compressed object streams, its every 4 bytes as a token (as though it were all text).
An estimate, not a bound: the spend guard holds a call with a file at the model's whole
context window (gateway.spend.files).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Mapping
from typing import Any

from gateway.json_tree import type_of

AUDIO_PART = "input_audio"
AUDIO_TOKENS_PER_S = 10  # a user's audio: 1 token per 100 ms
MOST_AUDIO_TOKENS_PER_S = 20  # an assistant's: 1 per 50 ms, the most audio is billed
LOWEST_BYTES_PER_S = 1_000  # 8 kbit/s
PAGE_TOKENS = 3_000
FILE_BYTES_PER_TOKEN = 4
_WAV_HEADER_CHARS = 4_096  # of base64: the chunks before a WAV's samples
_PCM_TAGS = frozenset({1, 3, 0xFFFE})  # integer, float, extensible
_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")


def audio_worst(messages: Any) -> int:
    """The most the `input_audio` parts of chat `messages` may be billed, in audio
    tokens (one pass, every call: only list contents are looked at, and of a part only
    the size of its data and a WAV's header)."""
    total = 0
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if type(message) is dict else None
        if type(content) is list:
            for part in content:
                if type(part) is dict and type_of(part) == AUDIO_PART:
                    total += math.ceil(_seconds(_audio_data(part))[1] * MOST_AUDIO_TOKENS_PER_S)
    return total


def audio_tokens(part: Mapping[str, Any]) -> int:
    """What the window counts an `input_audio` part as: 10 tokens a second of it."""
    return math.ceil(_seconds(_audio_data(part))[0] * AUDIO_TOKENS_PER_S)


def _seconds(data: str) -> tuple[float, float]:
    """How long base64 audio `data` is, about and at most: a PCM WAV's samples at the
    rate its header gives (at most: every byte after its `data` chunk's start, whatever
    size that chunk says); any other audio its size at the lowest bitrate."""
    size = _decoded_size(data)
    wav = _wav_samples(data)
    if wav is None:
        return size / LOWEST_BYTES_PER_S, size / LOWEST_BYTES_PER_S
    per_second, start, declared = wav
    sent = max(size - start, 0)
    return min(declared, sent) / per_second, sent / per_second


def file_tokens(part: Mapping[str, Any]) -> int:
    """What the window counts a `file` part given as `file_data` as (see above)."""
    inner = part.get("file")
    data = inner.get("file_data") if isinstance(inner, Mapping) else None
    if not isinstance(data, str):
        return 0
    raw = _decoded(data.partition("base64,")[2] or data)
    pages = len(_PAGE.findall(raw))
    return pages * PAGE_TOKENS if pages else math.ceil(len(raw) / FILE_BYTES_PER_TOKEN)


def _audio_data(part: Mapping[str, Any]) -> str:
    inner = part.get(AUDIO_PART)
    data = inner.get("data") if isinstance(inner, Mapping) else None
    return data if isinstance(data, str) else ""


def _decoded_size(data: str) -> int:
    """The bytes base64 `data` decodes to (about: what is not base64 counts as it)."""
    return len(data) * 3 // 4


def _decoded(data: str) -> bytes:
    try:
        return base64.b64decode(data)
    except (binascii.Error, ValueError):
        return b""


def _wav_samples(data: str) -> tuple[int, int, int] | None:
    """A PCM WAV's bytes a second (from its sample rate, channels and sample size, which a
    decoder reads, not the header's own byte rate field), where its samples start and
    the size its `data` chunk says; None when `data` is no such WAV or the header says
    what no recording is (past 192 kHz, 8 channels or 32-bit samples)."""
    head = _decoded(data[:_WAV_HEADER_CHARS])
    if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return None
    at, per_second = 12, 0
    while at + 8 <= len(head):
        kind, size = head[at : at + 4], struct.unpack_from("<I", head, at + 4)[0]
        if kind == b"fmt " and at + 24 <= len(head):
            tag, channels, rate = struct.unpack_from("<HHI", head, at + 8)
            bits = struct.unpack_from("<H", head, at + 22)[0]
            plain = tag in _PCM_TAGS and 0 < channels <= 8 and 0 < rate <= 192_000
            per_second = rate * channels * bits // 8 if plain and 0 < bits <= 32 else 0
        elif kind == b"data":
            return (per_second, at + 8, size) if per_second > 0 else None
        at += 8 + size + (size & 1)
    return None
