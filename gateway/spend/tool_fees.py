"""What a call's built-in tools may be billed beyond its tokens. Pure.

Web search is billed per call (genai-prices' `web_searches_kcount`, USD per 1,000), and
its results are billed as input the body does not show (gateway.spend.files holds each
search at the model's context window). A chat search model (`gpt-4o-search-preview`,
`gpt-5-search-api`, ...) searches on every call, and each call counts as one search. A
Responses call with a `web_search` tool may search many times: its `max_tool_calls`
bounds every built-in tool call, so that is the most it may search (the gateway adds one
where the client set none). Image generation (per image, by size and quality) and code
interpreter (per container session) are billed by what the model does, which the body
does not bound; so is a remote MCP server's tool, each of whose rounds bills the growing
context again as input, and a tool type the gateway does not know: such a call is
unbounded, and under a ceiling only `unpriced: allow` admits it. A tool the client runs
(a function, ...) adds no input of its own: its results come back in the next request's
body, counted there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gateway.json_tree import type_of

_SEARCH = ("web_search",)  # web_search, web_search_preview and their dated versions
_UNBOUNDED = ("image_generation", "code_interpreter", "mcp")
# Tools the client runs: the model's call of one ends the response.
_CLIENT = ("function", "custom", "computer_use", "local_shell", "shell", "apply_patch")


def chat_searches(model: str, body: Mapping[str, Any]) -> int:
    """The web searches a chat call makes (and is billed for): one for a search model."""
    name = model.lower().rsplit("/", 1)[-1]
    searches = "-search-" in name or name.endswith("-search") or "web_search_options" in body
    return 1 if searches else 0


def _tool_types(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        return []
    kinds = (type_of(t) for t in tools if isinstance(t, Mapping))
    return [k for k in kinds if k is not None]


def may_search(tools: Any) -> bool:
    """Whether a Responses call's `tools` let the model search the web."""
    return any(k.startswith(_SEARCH) for k in _tool_types(tools))


def unbounded_tools(tools: Any) -> bool:
    """Whether a Responses call's `tools` are billed by what the model does with them
    (or are of a type the gateway does not know, which may be)."""
    return any(
        k.startswith(_UNBOUNDED) or not k.startswith((*_SEARCH, *_CLIENT))
        for k in _tool_types(tools)
    )
