"""What a pass-through call may cost at most, read from its body before it is forwarded.

Token-billed routes (embeddings, completions, responses) count their input the way chat
does and take their output ceiling from the body; where the client named none, the
route's default (`default_max_output_tokens` in spend.yaml) is held, and under a ceiling
added to the forwarded body, so the reservation is a true worst case rather than a guess
(with no ceiling to guard the call goes as the client wrote it, and the default is only
its estimate); a Responses call that may search the web gets `max_tool_calls` the same
way (`default_max_tool_calls`), which bounds its searches (gateway.spend.tool_fees), and
each search may bring the model's context window in again as input
(gateway.spend.files); its `input_audio` items are held as chat's input audio parts
are (the most they may bill, at the model's input audio rate: gateway.media_parts).
Free routes (models,
moderations) hold nothing; the rest (audio, images, and Responses tools billed by what
the model does with them) are billed per image, second or character and cannot be
bounded from tokens: read for their model (a form upload's `model` field,
gateway.proxy.multipart_field) and, for speech, the characters it sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson

from gateway.errors import InvalidRequest
from gateway.json_tree import objects_under, type_of
from gateway.ledger.tokens import TokenCounter
from gateway.ledger.usage import MAX_TOKENS, UsageBound
from gateway.media_parts import AUDIO_PART, audio_worst
from gateway.proxy.cache_scope import TenantScope
from gateway.proxy.multipart_field import Ambiguous, boundary_of, form_field
from gateway.proxy.provider_refs import check_responses
from gateway.proxy.request_body import (
    MAX_MODEL_CHARS,
    ask_stream_usage,
    check_containers,
    choices_field,
    json_object,
    json_object_or_none,
    model_of,
    positive_int,
)
from gateway.spend.files import has_files, worst_input
from gateway.spend.guard import corrected
from gateway.spend.images import beyond_count, images_anywhere
from gateway.spend.pricing import tier_of
from gateway.spend.tool_fees import may_search, unbounded_tools

FREE_ROUTES = frozenset({"models", "moderations"})
TOKEN_ROUTES = frozenset({"embeddings", "completions", "responses"})
_OUTPUT_KEY = {"completions": "max_tokens", "responses": "max_output_tokens"}


@dataclass(frozen=True)
class PassCall:
    route: str
    model: str | None
    body: bytes  # what to forward: the client's, plus an output ceiling it did not name
    raw_input: int = 0  # raw token count of everything billed as input
    max_output: int = 0  # per reply
    replies: int = 1
    bounded: bool = True  # False: the cost cannot be read from the body (images, audio)
    free: bool = False
    hide_usage: bool = False  # the gateway asked for the stream's usage, not the client
    images: tuple[tuple[Any, int], ...] = ()  # input images (gateway.spend.images)
    web_searches: int = 0  # the most it may make (gateway.spend.tool_fees)
    files: bool = False  # carries a file: held at the model's context window
    tier: str | None = None  # the service tier it asks for: held at its rates
    # False: the body names no output ceiling and none was added (no spend ceiling
    # guards the call): `max_output` is the route's default, an estimate, not a bound.
    ceiling_sent: bool = True
    characters: int = 0  # the text a speech call reads aloud (billed per character)
    audio: int = 0  # the most its input audio may bill, in audio tokens (held besides)
    cache_key: Any = None  # the client's prompt_cache_key, as it sent it

    @property
    def held_output(self) -> int:
        """Every reply's output ceiling."""
        return self.max_output * max(self.replies, 1)

    def held_input(self, factor: float, context_window: int) -> int:
        """The input the spend guard holds: as counted (with the model's token `factor`),
        and where files or searches add input the body does not show, what they may add
        on a model of `context_window` (gateway.spend.files); its input audio's worst
        case besides."""
        counted = corrected(self.raw_input, factor) + self.audio
        return worst_input(counted, self.files, context_window, self.web_searches)

    def bound(self, factor: float, held_input: int) -> UsageBound | None:
        """The most the upstream can bill a token-billed call: its replies' ceilings, and
        its input as counted (with the model's token `factor`) and its audio's worst
        case, or where files or searches add to it the input held for it
        (`held_input()`), each with its images' worst case. A report past it is not
        believed."""
        if not self.estimated:
            return None
        output = self.held_output if self.ceiling_sent else MAX_TOKENS
        images = beyond_count(self.model or "", self.images)
        if self.files or self.web_searches:
            return UsageBound(output, held_input + images, input_held=True, uncounted=True)
        inputs = corrected(self.raw_input, factor) + self.audio + images
        return UsageBound(output, inputs, uncounted=bool(self.images or self.audio))

    @property
    def estimated(self) -> bool:
        """Whether the gateway counted this call's input (and can book an estimate)."""
        return self.route in TOKEN_ROUTES


def read_call(
    route: str,
    body: bytes,
    tokens: TokenCounter,
    defaults: Mapping[str, int],
    max_tool_calls: int,
    most_containers: int,
    bound: bool = True,
    content_type: str = "",
    scope: TenantScope | None = None,
) -> PassCall:
    """`bound`: a ceiling guards the call, so the ceilings it holds are written into the
    body where the client wrote none. `content_type`: the body's, which says whether it
    is a form upload (an image edit, a transcription). `scope`: the tenant's prompt-cache
    scope, whose salt opens a completion's or a Response's prompt (counted with it)."""
    if route not in TOKEN_ROUTES:  # read for its model; JSON of too many arrays refused
        boundary = boundary_of(content_type)
        obj = None
        if boundary is not None:  # an upload: its `model` field alone is read
            model = _form_model(body, boundary)
        else:
            check_containers(body, most_containers)
            obj = json_object_or_none(body)
            model = model_of(obj)
        if route in FREE_ROUTES:
            return PassCall(route, model, body, free=True)
        return PassCall(route, model, body, bounded=False, characters=_characters(route, obj))
    obj = json_object(body, most_containers)  # its depth checked: it is written again
    model = model_of(obj)
    if model is None:
        raise InvalidRequest("'model' is required and must be a string.", param="model")
    if route == "embeddings":
        return PassCall(route, model, body, _prompt_tokens(tokens, model, obj.get("input"))[0])
    obj = dict(obj)
    client_key = obj.get("prompt_cache_key")
    if scope is not None and route == "responses":
        scope.responses(obj)
    elif scope is not None:
        scope.completions(obj, tokens.encoding(model).encode_ordinary)
    key = _OUTPUT_KEY[route]
    ceiling = positive_int(obj.get(key))
    if ceiling is None:
        ceiling = defaults.get(route, 1)
        if bound:
            obj[key] = ceiling
    call = (
        _responses(tokens, model, obj, ceiling, max_tool_calls, bound)
        if route == "responses"
        else _completions(tokens, model, obj, ceiling)
    )
    # a null, a string or a float is no ceiling the gateway can hold the provider to
    return replace(call, ceiling_sent=positive_int(obj.get(key)) is not None, cache_key=client_key)


def _form_model(body: bytes, boundary: bytes) -> str | None:
    """A form upload's `model` field; refused when it is there twice or cannot be read
    (the upstream might read another model than the one held and booked)."""
    try:
        model = form_field(body, boundary, "model", most=4 * MAX_MODEL_CHARS)
    except Ambiguous as exc:
        raise InvalidRequest(
            "The form's 'model' field must be given once, as text.",
            param="model",
            code="invalid_model",
        ) from exc
    return model_of({"model": model})


def _characters(route: str, obj: Mapping[str, Any] | None) -> int:
    """The characters a speech call reads aloud, its `input` (the one audio route with
    a JSON body, `/v1/audio/speech`; the others are form uploads)."""
    text = obj.get("input") if route == "audio" and obj is not None else None
    return len(text) if isinstance(text, str) else 0


def _responses(
    tokens: TokenCounter,
    model: str,
    obj: dict[str, Any],
    ceiling: int,
    max_tool_calls: int,
    bound: bool,
) -> PassCall:
    check_responses(obj)
    items, tools = obj.get("input"), obj.get("tools")
    searches = 0
    if may_search(tools):  # every built-in tool call may be a search
        searches = positive_int(obj.get("max_tool_calls")) or max_tool_calls
        if bound:
            obj["max_tool_calls"] = searches
    return PassCall(
        "responses",
        model,
        orjson.dumps(obj),
        _responses_input(tokens, model, obj),
        ceiling,
        bounded=not unbounded_tools(tools),
        images=images_anywhere(items),
        web_searches=searches,
        files=has_files(items),
        tier=tier_of(obj.get("service_tier")),
        audio=_audio_worst(items),
    )


def _audio_worst(items: Any) -> int:
    """The most the `input_audio` items at any depth under a Responses `input` may bill,
    in audio tokens, as chat's parts (gateway.media_parts.audio_worst: the SDK's shape,
    `{"type": "input_audio", "input_audio": {"data", "format"}}`, or its earlier one with
    `data` beside `type`); at least 1 where there is one, so the spend guard asks for
    the model's input audio rate whatever its data."""
    parts = [_nested(node) for node in objects_under(items) if type_of(node) == AUDIO_PART]
    return max(audio_worst([{"content": parts}]), 1) if parts else 0


def _nested(part: dict[str, Any]) -> dict[str, Any]:
    if isinstance(part.get(AUDIO_PART), Mapping):
        return part
    return {"type": AUDIO_PART, AUDIO_PART: {"data": part.get("data")}}


def _completions(tokens: TokenCounter, model: str, obj: dict[str, Any], ceiling: int) -> PassCall:
    raw, prompts = _prompt_tokens(tokens, model, obj.get("prompt"))
    if isinstance(obj.get("suffix"), str):
        raw += tokens.count_text(model, obj["suffix"])
    # Every prompt gets `best_of` completions generated (and billed), at least `n`.
    per_prompt = max(choices_field(obj, "n") or 1, choices_field(obj, "best_of") or 1)
    hide = obj.get("stream") is True and ask_stream_usage(obj)
    return PassCall(
        "completions",
        model,
        orjson.dumps(obj),
        raw,
        ceiling,
        prompts * per_prompt,
        hide_usage=hide,
        tier=tier_of(obj.get("service_tier")),
    )


def _responses_input(tokens: TokenCounter, model: str, obj: Mapping[str, Any]) -> int:
    items = obj.get("input")
    if isinstance(items, str):
        raw = tokens.count_text(model, items)
    elif isinstance(items, list):
        raw = tokens.raw_message_tokens(model, items)
    else:
        raw = 0
    if isinstance(obj.get("instructions"), str):
        raw += tokens.count_text(model, obj["instructions"])
    return raw + _json_tokens(tokens, model, [obj.get(k) for k in ("tools", "text", "tool_choice")])


def _prompt_tokens(tokens: TokenCounter, model: str, prompt: Any) -> tuple[int, int]:
    """(tokens, prompts) of a completions `prompt` or an embeddings `input`: a string, a
    list of strings, a list of token ids, or a list of token-id lists."""
    if isinstance(prompt, str):
        return tokens.count_text(model, prompt), 1
    if not isinstance(prompt, list) or not prompt:
        return _json_tokens(tokens, model, [prompt]), 1
    if all(isinstance(t, int) for t in prompt):
        return len(prompt), 1
    total = 0
    for item in prompt:
        if isinstance(item, str):
            total += tokens.count_text(model, item)
        elif isinstance(item, list):
            total += len(item)
        else:
            total += _json_tokens(tokens, model, [item])
    return total, len(prompt)


def _json_tokens(tokens: TokenCounter, model: str, values: list[Any]) -> int:
    present = [v for v in values if v is not None]
    return tokens.count_text(model, orjson.dumps(present).decode()) if present else 0
