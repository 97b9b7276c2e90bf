"""What a reply generated, as text, to estimate its output tokens when the upstream
reported no usage: the same reading for a JSON reply and a stream's events, on chat
completions, legacy completions and the Responses API. Everything the provider bills as
output counts (the answer, a refusal, reasoning shown, tool and function call
arguments, an audio reply's transcript); the audio itself (base64) does not. And what
of a chat reply the customer was shown (`shown_answer`), or whether a 2xx one is an
error (`error_in_reply`), read as leniently as the SDK reads it (`lenient_object`). Pure."""

from __future__ import annotations

import json
from typing import Any

# A Responses output item's own text fields, by what the item is: a function or custom
# tool's call writes its arguments or input; a reasoning item its summary and content.
_ITEM_FIELDS = ("arguments", "input", "name", "code", "text", "refusal")


def generated_delta(kind: Any) -> bool:
    """A Responses stream event carrying generated output in its `delta`: text, a
    refusal, call arguments, reasoning and its summary, an audio transcript. Not the
    audio itself (base64, billed as audio)."""
    return isinstance(kind, str) and kind.endswith(".delta") and kind != "response.audio.delta"


def message_texts(message: Any) -> list[str]:
    """A chat message's (or a stream chunk's delta's) generated text: content,
    reasoning, a refusal, tool calls' and a legacy function call's name and arguments,
    an audio reply's transcript."""
    if not isinstance(message, dict):
        return []
    keys = ("content", "reasoning_content", "refusal")
    texts = [v for k in keys if isinstance(v := message.get(k), str)]
    calls = message.get("tool_calls")
    functions = (
        [c.get("function") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    )
    for fn in [*functions, message.get("function_call")]:
        if isinstance(fn, dict):
            texts += [v for k in ("name", "arguments") if isinstance(v := fn.get(k), str)]
    audio = message.get("audio")
    if isinstance(audio, dict) and isinstance(audio.get("transcript"), str):
        texts.append(audio["transcript"])
    return texts


def reply_text(obj: Any) -> str:
    """A JSON reply's generated text: chat `choices[].message`, legacy completions
    `choices[].text`, Responses `output[]` items (their text parts, refusals, call
    arguments and inputs, reasoning summaries)."""
    if not isinstance(obj, dict):
        return ""
    parts: list[str] = []
    for choice in obj.get("choices") or ():
        if isinstance(choice, dict):
            parts += [choice["text"]] if isinstance(choice.get("text"), str) else []
            parts += message_texts(choice.get("message"))
    for item in obj.get("output") or ():
        if isinstance(item, dict):
            parts += _item_texts(item)
    return "".join(parts)


def _item_texts(item: dict[str, Any]) -> list[str]:
    texts = [v for k in _ITEM_FIELDS if isinstance(v := item.get(k), str)]
    for key in ("content", "summary"):
        for part in item.get(key) or () if isinstance(item.get(key), list) else ():
            if isinstance(part, dict):
                texts += [v for k in ("text", "refusal") if isinstance(v := part.get(k), str)]
    return texts


def shown_answer(obj: dict[str, Any]) -> str:
    """The text the customer was shown of a chat completion: the one choice's content;
    "" for several choices (which one the app showed is not known) or a call of the
    app's tools."""
    choices = obj.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return ""
    message = choices[0].get("message")
    if not isinstance(message, dict) or message.get("tool_calls"):
        return ""
    content = message.get("content")
    return content if isinstance(content, str) else ""


def error_in_reply(obj: dict[str, Any]) -> bool:
    """A 2xx chat reply that is an error (OpenRouter answers so when the provider failed
    after the answer began): an `error` object and no choices."""
    return isinstance(obj.get("error"), dict) and not obj.get("choices")


def lenient_object(body: bytes) -> dict[str, Any] | None:
    """A 2xx body orjson refused, read as the SDK's parser reads it: a UTF-8 byte-order
    mark before it, NaN or Infinity in it (a self-hosted server's logprobs). None when it
    is no JSON object even so (cut off, malformed)."""
    try:
        obj = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None
