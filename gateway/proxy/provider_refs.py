"""References to objects stored with the provider, refused before a body is forwarded.

Every tenant shares the gateway's provider key, so an id of a stored response, a
conversation, a file, a vector store, a container or a stored prompt names an object any
tenant's call may have made: forwarded, one tenant would read another's data (the
routes that read such objects answer 404, gateway.proxy.passthrough). What such an object
adds to a call's input cannot be counted from the body either, so the spend guard could
not bound it. A call that needs earlier turns sends them, as chat does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gateway.errors import InvalidRequest
from gateway.json_tree import objects_under, type_of

# Top-level fields of /v1/responses that name a stored object.
_RESPONSE_FIELDS = ("previous_response_id", "conversation", "prompt")
# Tools that run over stored objects (vector stores; a container given by id).
_STORED_TOOLS = frozenset({"file_search"})


def _refused(param: str, what: str) -> InvalidRequest:
    return InvalidRequest(
        f"'{param}' refers to {what} stored with the provider, where every tenant of this "
        "gateway shares one key: the gateway does not forward it. Send the content itself "
        "(earlier turns as input items, a file's text or a data URL).",
        param=param,
        code="provider_state_not_proxied",
    )


def check_chat(messages: list[Any]) -> None:
    """A chat call's messages: a content part naming a stored file (`file.file_id`); an
    assistant message's `audio`, an earlier spoken reply the provider keeps and reads in
    by its `id` as input audio (the only field of an assistant message's `audio`, the
    chat reference's "data about a previous audio response from the model")."""
    # Every call, over every message, in one pass: only a message whose content is a
    # list of parts is looked into (a parsed body's messages are dicts).
    for i, message in enumerate(messages):
        if type(message) is not dict:
            continue
        if message.get("audio") is not None:
            raise _refused(f"messages[{i}].audio", "an audio reply")
        if type(content := message.get("content")) is list:
            _no_stored_ids(content, f"messages[{i}].content")


def check_responses(body: Mapping[str, Any]) -> None:
    """A /v1/responses body: a stored response, conversation or prompt; a background
    response; a stored item (`item_reference`, an item given by `id` alone, an output
    item sent back by its `id` without what it holds, `_stored_item`); a file
    or vector store given by id anywhere in the input or the tools; a tool over vector
    stores or a container given by id."""
    for field in _RESPONSE_FIELDS:
        if body.get(field) is not None:
            raise _refused(field, "a " + field.removeprefix("previous_").replace("_id", ""))
    if body.get("background") not in (None, False):  # `"true"` or `1` may be read as true
        # answered at once, queued; generated and billed later, read by id (not proxied)
        raise InvalidRequest(
            "'background' responses are read back by id from the provider, where every "
            "tenant of this gateway shares one key, and billed after the gateway has "
            "answered, past its spend guard: not forwarded. Send the call without it.",
            param="background",
            code="provider_state_not_proxied",
        )
    for i, item in _dicts(body.get("input")):
        if _stored_item(item):
            raise _refused(f"input[{i}]", "an item")
    for i, tool in _dicts(body.get("tools")):
        if type_of(tool) in _STORED_TOOLS:
            raise _refused(f"tools[{i}]", "a vector store")
        if isinstance(tool.get("container"), str):
            raise _refused(f"tools[{i}].container", "a container")
    for field in ("input", "tools"):
        _no_stored_ids(body.get(field), field)


# What an output item sent back as input holds when it is sent whole: the fields of each
# type that carry its content (required by the Responses reference's input item
# schemas, as the openai SDK's `ResponseInputItemParam` writes them). Sent with its `id`
# and none of these, the item is read from the provider's store: an image generation
# call given by `id` alone is how the image generation tool guide edits an earlier image
# over several turns ("using image ID"), the stored image read in as input; a reasoning
# or compaction item without its `encrypted_content` is loaded by id (that field is what
# makes it usable with `store: false`); an assistant message, a tool call or a tool
# listing without its content has nothing to say but what is stored under its id.
# Items a client writes itself (a user message, a tool's output) hold their content by
# definition, and an unknown type given by id with nothing more is stored one too.
_CONTENT_FIELDS = {
    "message": ("content",),
    "reasoning": ("encrypted_content",),
    "compaction": ("encrypted_content",),
    "image_generation_call": ("result",),
    "function_call": ("arguments",),
    "custom_tool_call": ("input",),
    "web_search_call": ("action",),
    "file_search_call": ("queries", "results"),
    "computer_call": ("action",),
    "code_interpreter_call": ("code", "outputs"),
    "local_shell_call": ("action",),
    "shell_call": ("action",),
    "apply_patch_call": ("operation",),
    "mcp_list_tools": ("tools",),
    "mcp_approval_request": ("arguments",),
    "mcp_call": ("arguments", "output"),
}
# Fields that say which item it is, not what it holds.
_NAMING_FIELDS = frozenset({"type", "id", "status", "role"})


def _stored_item(item: Mapping[str, Any]) -> bool:
    """An input item that names a stored one: an `item_reference`, an item given by `id`
    alone (its `type` may be left out), a reasoning item without its encrypted content,
    or an item with an `id` and none of what its type holds (`_CONTENT_FIELDS`; for a
    type not listed, nothing beyond the fields that name it). Empty counts as missing:
    `"result": null` sends no image."""
    kind = type_of(item)
    if kind == "item_reference":
        return True
    if kind == "reasoning" and not item.get("encrypted_content"):
        return True
    if "id" not in item:
        return False
    fields = _CONTENT_FIELDS.get(kind or "") or (item.keys() - _NAMING_FIELDS)
    return not any(item.get(field) not in (None, "", [], {}) for field in fields)


# Keys that name stored files or vector stores, wherever they sit: an input item, a
# content part, a tool's output (a screenshot, an `input_file`), a tool's settings (a
# code interpreter's container files, an image mask).
_ID_KEYS = {"file_id": "a file", "file_ids": "a file", "vector_store_ids": "a vector store"}


def _no_stored_ids(value: Any, where: str) -> None:
    """Refuses any `_ID_KEYS` key with a value, at any depth under `value` (the body's
    depth and its arrays and objects are bounded when it is read:
    gateway.proxy.request_body); the path is written only for the one refused."""
    for node in objects_under(value):
        for key, what in _ID_KEYS.items():
            if node.get(key):
                raise _refused(f"{_path_to(node, value, where)}.{key}", what)


def _path_to(target: Any, value: Any, where: str) -> str:
    """Where `target`, an object under `value`, sits (`where.input[0].content[1]`)."""
    todo: list[tuple[Any, str]] = [(value, where)]
    while todo:
        node, path = todo.pop()
        if node is target:
            return path
        if isinstance(node, dict):
            todo.extend((inner, f"{path}.{key}") for key, inner in node.items())
        elif isinstance(node, list):
            todo.extend((inner, f"{path}[{i}]") for i, inner in enumerate(node))
    return where


def _dicts(items: Any) -> list[tuple[int, Mapping[str, Any]]]:
    """The objects of a list, with their places; nothing when it is not a list."""
    if not isinstance(items, list):
        return []
    return [(i, item) for i, item in enumerate(items) if isinstance(item, Mapping)]
