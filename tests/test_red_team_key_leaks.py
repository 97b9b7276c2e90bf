"""What a red-team read found of the provider key reaching a tenant (2026-12, twenty-third
session), each reproduced through the openai SDK against the gateway in this process in
front of a loopback upstream that answers raw bytes: an error event in a chat stream, a
2xx `{"error": ...}` and a failed Responses stream on pass-through routes relayed byte
for byte, a fragment of the key let through by the scrubber, and the provider's
organization id in the model list."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from gateway.errors import UpstreamReplyTooLarge
from gateway.proxy.streaming import UsageTap
from gateway.proxy.upstream_errors import (
    StreamScrub,
    scrubbed_error,
    scrubbed_reply,
    withheld_anywhere,
)
from tests import inprocess
from tests.inprocess import InProcessGateway
from tests.test_red_team_upstream import (
    SHORT,
    RawUpstream,
    gateway_on,
    http,
    json_reply,
    sse_events,
    upstream_fixture,  # noqa: F401  (the fixture `upstream`)
)

# The provider key, as a real one reads: no word in it, so any run of it is a leak.
KEY = "sk-PROVIDERSECRETCANARY0123456789abcdef"


def leaks(text: str) -> list[str]:
    """Every run of 8 characters of the provider key in `text` (any case)."""
    folded = text.lower()
    return [KEY[i : i + 8] for i in range(len(KEY) - 7) if KEY[i : i + 8].lower() in folded]


@pytest.fixture(name="gw")
def gw_fixture(
    tmp_path: Path, upstream: RawUpstream, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InProcessGateway]:
    monkeypatch.setitem(inprocess.ENV, "TEST_PROVIDER_KEY", KEY)
    gw = gateway_on(tmp_path, upstream)
    yield gw
    gw.stop()


def chunk(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
    }


def sse(*events: Any) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


# What an upstream's error says of its key, as providers and proxies have said it.
ERRORS = {
    "whole key": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"},
    "24 characters of it": {"message": "Key PROVIDERSECRETCANARY01 (first 24 chars) is invalid"},
    "its last 22": {"message": "key ending CANARY0123456789abcdef was revoked"},
    "code and param": {"message": "bad key", "code": KEY[3:25], "param": KEY[-22:]},
    "openrouter metadata": {
        "message": "Upstream returned error",
        "code": 401,
        "metadata": {"raw": f'{{"error": "invalid key {KEY}"}}', "provider_name": "OpenAI"},
    },
}


# -- 1: an error event in a chat stream -------------------------------------------------


@pytest.mark.parametrize("error", ERRORS.values(), ids=ERRORS.keys())
def test_an_error_event_in_a_chat_stream_is_scrubbed(
    gw: InProcessGateway, upstream: RawUpstream, error: dict[str, Any]
) -> None:
    """An error sent as a 401 came back scrubbed; the same error sent mid-stream as an
    event (OpenRouter, LiteLLM) was relayed byte for byte, the provider key in it."""
    body = sse(chunk("Hel"), {"error": error}) + b"data: [DONE]\n\n"
    upstream.script = lambda h, b: http(200, body, b"text/event-stream")
    stream = gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT, stream=True)
    with pytest.raises(openai.APIError) as info:
        for _ in stream:
            pass
    assert leaks(info.value.message) == []
    assert leaks(json.dumps(info.value.body)) == []
    raw = gw.http.post(
        "/v1/chat/completions",
        json={"model": "gpt-4o-mini", "messages": SHORT, "stream": True},
        headers={"Authorization": f"Bearer {gw.keys['acme']}"},
    )
    assert leaks(raw.text) == []
    assert raw.text.startswith(sse(chunk("Hel")).decode())  # the events before, as they came
    assert raw.text.endswith("\n\ndata: [DONE]\n\n")


class TricklingUpstream(RawUpstream):
    """Writes its answer a few bytes at a time: an event arrives in many chunks."""

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = [ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")]
            await reader.readexactly(int(length[0].split(b":")[1]) if length else 0)
            answer = self.script({}, None)
            for at in range(0, len(answer), 9):
                writer.write(answer[at : at + 9])
                await writer.drain()
                await asyncio.sleep(0.002)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


def test_an_error_event_split_across_chunks_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(inprocess.ENV, "TEST_PROVIDER_KEY", KEY)
    body = sse(chunk("Hel"), {"error": ERRORS["whole key"]}) + b"data: [DONE]\n\n"
    with TricklingUpstream() as upstream:
        upstream.script = lambda h, b: http(200, body, b"text/event-stream")
        gw = gateway_on(tmp_path, upstream)
        try:
            raw = gw.http.post(
                "/v1/chat/completions",
                json={"model": "gpt-4o-mini", "messages": SHORT, "stream": True},
                headers={"Authorization": f"Bearer {gw.keys['acme']}"},
            )
        finally:
            gw.stop()
    assert leaks(raw.text) == []
    assert "Incorrect API key provided: [withheld]" in raw.text


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64, 10_000])
def test_a_stream_is_scrubbed_whatever_its_chunks(size: int) -> None:
    """Every way of cutting a stream into chunks gives the same bytes: a normal event as
    it came, an error event scrubbed, a key split across chunks withheld."""
    normal = sse_events("gpt-4o-mini")
    failing = sse(chunk("a"), {"error": ERRORS["whole key"]}, chunk(KEY)) + b"data: [DONE]\n\n"
    for stream in (normal, failing, failing.replace(b"\n", b"\r\n")):
        scrub = StreamScrub((KEY,), (KEY,), 1 << 20)
        out = [scrub.feed(stream[at : at + size]) for at in range(0, len(stream), size)]
        relayed = b"".join(out) + scrub.finish()
        if stream is normal:
            assert relayed == normal
        else:
            assert leaks(relayed.decode()) == []
            assert relayed.count(b"[withheld]") == 2


def test_a_responses_stream_without_an_error_is_relayed_as_it_came() -> None:
    """Every Responses event carries `"error": null`: relayed unread, byte for byte."""
    event = {"type": "response.created", "response": {"id": "r", "error": None, "usage": None}}
    stream = b"event: response.created\ndata: " + json.dumps(event).encode() + b"\n\n"
    scrub = StreamScrub((KEY,), (KEY,), 1 << 20)
    assert scrub.feed(stream) == stream


# -- 2: pass-through routes ---------------------------------------------------------------


def test_a_2xx_error_on_embeddings_is_scrubbed(gw: InProcessGateway, upstream: RawUpstream) -> None:
    upstream.script = lambda h, b: json_reply({"error": ERRORS["whole key"]})
    reply = gw.openai().embeddings.with_raw_response.create(
        model="text-embedding-3-small", input="hello"
    )
    assert leaks(reply.http_response.text) == []
    assert "[withheld]" in reply.http_response.text


@pytest.mark.parametrize("error", ERRORS.values(), ids=ERRORS.keys())
def test_a_2xx_error_on_responses_is_scrubbed(
    gw: InProcessGateway, upstream: RawUpstream, error: dict[str, Any]
) -> None:
    upstream.script = lambda h, b: json_reply({"error": error})
    reply = gw.openai().responses.with_raw_response.create(model="gpt-4o-mini", input="hello")
    assert leaks(reply.http_response.text) == []


def _failed_stream() -> bytes:
    failed = {
        "type": "response.failed",
        "response": {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "status": "failed",
            "model": "gpt-4o-mini",
            "output": [],
            "error": {"code": "server_error", "message": f"upstream rejected key {KEY}"},
            "usage": None,
        },
        "sequence_number": 1,
    }
    return b"event: response.failed\ndata: " + json.dumps(failed).encode() + b"\n\n"


def _error_event() -> bytes:
    error = {
        "type": "error",
        "code": KEY[3:25],
        "message": "Key PROVIDERSECRETCANARY01 (first 24 chars) is invalid",
        "param": None,
        "sequence_number": 2,
    }
    return b"event: error\ndata: " + json.dumps(error).encode() + b"\n\n"


def test_a_failed_responses_stream_is_scrubbed(gw: InProcessGateway, upstream: RawUpstream) -> None:
    upstream.script = lambda h, b: http(200, _failed_stream(), b"text/event-stream")
    events = list(gw.openai().responses.create(model="gpt-4o-mini", input="hello", stream=True))
    assert events[0].type == "response.failed"
    error = events[0].response.error
    assert error is not None and error.code == "server_error"
    assert error.message == "upstream rejected key [withheld]"


def test_an_error_event_of_a_responses_stream_is_scrubbed(
    gw: InProcessGateway, upstream: RawUpstream
) -> None:
    upstream.script = lambda h, b: http(200, _error_event(), b"text/event-stream")
    [event] = list(gw.openai().responses.create(model="gpt-4o-mini", input="hello", stream=True))
    assert event.type == "error"
    assert event.message == "Key [withheld] (first 24 chars) is invalid"
    assert event.code is None  # a run of the key: dropped
    assert event.sequence_number == 2
    raw = gw.http.post(
        "/v1/responses",
        json={"model": "gpt-4o-mini", "input": "hello", "stream": True},
        headers={"Authorization": f"Bearer {gw.keys['acme']}"},
    )
    assert leaks(raw.text) == []
    assert raw.text.startswith("event: error\ndata: ")


# -- 3: fragments of the key --------------------------------------------------------------


@pytest.mark.parametrize("error", ERRORS.values(), ids=ERRORS.keys())
def test_an_error_answer_gives_no_run_of_the_key_away(
    gw: InProcessGateway, upstream: RawUpstream, error: dict[str, Any]
) -> None:
    """`Key PROVIDERSECRETCANARY01 (first 24 chars) is invalid` passed, as did a `code`
    or `param` holding part of the key: only the whole key and 32 characters were caught."""
    upstream.script = lambda h, b: json_reply({"error": error}, status=401, reason=b"No")
    with pytest.raises(openai.AuthenticationError) as info:
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT)
    assert leaks(info.value.response.text) == []


SCRUBBED = [
    ("Key PROVIDERSECRETCANARY01 (first 24 chars) is invalid", "Key [withheld] (first 24 chars)"),
    ("key providersecretcanary was revoked", "key [withheld] was revoked"),
    ("key ...6789abcdef is bad", "key ...[withheld] is bad"),
    ("The Provider is down for secrets", "The Provider is down for secrets"),
    ("short CANARY0 run", "short CANARY0 run"),
]


@pytest.mark.parametrize(("message", "shown"), SCRUBBED)
def test_a_run_of_8_characters_of_the_key_is_withheld(message: str, shown: str) -> None:
    body = scrubbed_error(401, json.dumps({"error": {"message": message}}).encode(), (KEY,))
    assert json.loads(body)["error"]["message"].startswith(shown)


def test_a_reply_without_an_error_or_the_key_is_relayed_as_it_came() -> None:
    body = b'{"object": "list", "data": [{"embedding": [0.1, 0.2]}], "error": null}'
    assert scrubbed_reply(body, (KEY,), (KEY,)) == body


# -- 4: the provider's organization in the model list ----------------------------------


def test_the_model_list_withholds_the_providers_organization(
    gw: InProcessGateway, upstream: RawUpstream
) -> None:
    tuned = "ft:gpt-4o-mini-2024-07-18:operator-inc:refunds:AbC123"
    models: list[dict[str, Any]] = [
        {"id": "gpt-4o-mini", "object": "model", "created": 1, "owned_by": "system"},
        {
            "id": tuned,
            "object": "model",
            "created": 2,
            "owned_by": "org-CANARYORGID123",
        },
    ]
    upstream.script = lambda h, b: json_reply({"object": "list", "data": models})
    listed = gw.openai().models.list().data
    assert [m.owned_by for m in listed] == ["system", "[withheld]"]
    upstream.script = lambda h, b: json_reply(models[1])
    assert gw.openai().models.retrieve(tuned).owned_by == "[withheld]"


# -- red-team read 24: what the scrubber took that was no error, and what it let through ----

# A JSON schema with a property named "error": a Responses reply echoes it in its tools
# and its text.format, in its body and in its response.created/completed events.
SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "error": {
            "type": ["string", "null"],
            "description": "why the lookup failed",
            "enum": ["not_found", "timeout", None],
        },
    },
    "required": ["answer", "error"],
    "additionalProperties": False,
}


def _response(status: str = "completed", error: Any = None) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "model": "gpt-4o-mini",
        "error": error,
        "incomplete_details": None,
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": '{"answer": "ok", "error": null}'}],
            }
        ],
        "text": {"format": {"type": "json_schema", "name": "lookup", "schema": SCHEMA}},
        "tools": [{"type": "function", "name": "lookup", "strict": True, "parameters": SCHEMA}],
        "usage": {"input_tokens": 5, "output_tokens": 5, "total_tokens": 10},
    }


def _responses_event(kind: str, response: dict[str, Any], seq: int) -> bytes:
    event = {"type": kind, "response": response, "sequence_number": seq}
    return b"event: " + kind.encode() + b"\ndata: " + json.dumps(event).encode() + b"\n\n"


def test_a_json_schema_echoed_in_a_responses_reply_comes_back_as_it_came(
    gw: InProcessGateway, upstream: RawUpstream
) -> None:
    """Every dict under an "error" key anywhere in a reply was cut to message/type/code/
    param: the schema's `error` property came back as `{"type": null}`. Only the error
    objects where the API puts one are scrubbed; a failed reply's still is."""
    body = json.dumps(_response()).encode()
    upstream.script = lambda h, b: http(200, body, b"application/json")
    headers = {"Authorization": f"Bearer {gw.keys['acme']}"}
    reply = gw.http.post(
        "/v1/responses", json={"model": "gpt-4o-mini", "input": "hi"}, headers=headers
    )
    assert reply.status_code == 200
    assert reply.content == body
    stream = _responses_event("response.created", _response("in_progress"), 0) + _responses_event(
        "response.completed", _response(), 1
    )
    upstream.script = lambda h, b: http(200, stream, b"text/event-stream")
    raw = gw.http.post(
        "/v1/responses",
        json={"model": "gpt-4o-mini", "input": "hi", "stream": True},
        headers=headers,
    )
    assert raw.content == stream
    failed = _response("failed", {"code": "server_error", "message": f"bad key {KEY}"})
    upstream.script = lambda h, b: http(
        200, _responses_event("response.failed", failed, 1), b"text/event-stream"
    )
    [event] = list(gw.openai().responses.create(model="gpt-4o-mini", input="hi", stream=True))
    assert event.type == "response.failed"
    assert event.response.error is not None
    assert event.response.error.message == "bad key [withheld]"
    assert event.response.text is not None and event.response.text.format.schema_ == SCHEMA  # type: ignore[union-attr]


def test_a_base_url_user_name_is_withheld_only_in_error_objects(
    tmp_path: Path, upstream: RawUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A base_url's user name (`assistant`) and short password were replaced wherever
    they stood: every reply's `"role": "assistant"` came back `"role": "[withheld]"`.
    Only the provider key (and a secret too long to be a word) is withheld anywhere."""
    monkeypatch.setitem(inprocess.ENV, "TEST_PROVIDER_KEY", KEY)
    url = upstream.url.replace("://", "://assistant:hunter2pass@") + "/v1"
    gw = InProcessGateway(tmp_path, url, f"sqlite:///{tmp_path / 'gateway.db'}")
    gw.start()
    try:
        answer = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "hunter2pass is weak"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
        }
        upstream.script = lambda h, b: json_reply(answer)
        reply = gw.openai().chat.completions.create(model="gpt-4o-mini", messages=SHORT)
        assert reply.choices[0].message.role == "assistant"
        assert reply.choices[0].message.content == "hunter2pass is weak"
        body = sse(chunk("Hel"), {"error": {"message": "user assistant:hunter2pass refused"}})
        upstream.script = lambda h, b: http(200, body, b"text/event-stream")
        raw = gw.http.post(
            "/v1/chat/completions",
            json={"model": "gpt-4o-mini", "messages": SHORT, "stream": True},
            headers={"Authorization": f"Bearer {gw.keys['acme']}"},
        )
        assert "hunter2pass" not in raw.text
        assert "user [withheld]:[withheld] refused" in raw.text
    finally:
        gw.stop()
    assert withheld_anywhere(KEY, "hunter2pass", None) == (KEY,)
    assert withheld_anywhere("short", "Zq8XyW3vTn7Lk2Mp9Rb4") == ("Zq8XyW3vTn7Lk2Mp9Rb4",)


def _escaped(text: str) -> bytes:
    """`text` as a JSON string's body with every letter of it a `\\u00XX` escape."""
    return "".join(f"\\u{ord(c):04x}" if c.isalpha() else c for c in text).encode()


def _decoded_leaks(raw: str) -> list[str]:
    """The runs of the key in what a client reads of `raw` (a body or a stream)."""
    datas = [line[6:] for line in raw.splitlines() if line.startswith("data: {")] or [raw]
    return leaks(json.dumps([json.loads(data) for data in datas]))


def test_a_key_in_json_escapes_is_withheld(gw: InProcessGateway, upstream: RawUpstream) -> None:
    """The key was searched for only as bytes: written in JSON escapes in a sibling of
    an error event's error, or in a 2xx body with no "error", it went through."""
    headers = {"Authorization": f"Bearer {gw.keys['acme']}"}
    payload = {"model": "gpt-4o-mini", "messages": SHORT, "stream": True}
    sibling = b'data: {"error": {"message": "failed"}, "detail": "auth ' + _escaped(KEY) + b'"}'
    stream = sse(chunk("Hel")) + sibling + b"\n\n"
    upstream.script = lambda h, b: http(200, stream, b"text/event-stream")
    raw = gw.http.post("/v1/chat/completions", json=payload, headers=headers)
    assert _decoded_leaks(raw.text) == []
    answer = json.dumps({**chunk("x"), "object": "chat.completion", "system_fingerprint": "@"})
    body = answer.encode().replace(b'"@"', b'"' + _escaped(KEY) + b'"')
    upstream.script = lambda h, b: http(200, body, b"application/json")
    reply = gw.http.post("/v1/chat/completions", json={**payload, "stream": False}, headers=headers)
    assert _decoded_leaks(reply.text) == []


def test_an_error_event_of_text_gives_no_run_of_the_key_away(
    gw: InProcessGateway, upstream: RawUpstream
) -> None:
    """An `event: error` whose data is text (no JSON, no `"error"`) kept a 9-character
    run of the key: only parsed error objects were searched for runs."""
    text = b"event: error\ndata: Incorrect API key provided: sk-***" + KEY[-9:].encode()
    upstream.script = lambda h, b: http(200, text + b"\n\n", b"text/event-stream")
    raw = gw.http.post(
        "/v1/responses",
        json={"model": "gpt-4o-mini", "input": "hi", "stream": True},
        headers={"Authorization": f"Bearer {gw.keys['acme']}"},
    )
    assert leaks(raw.text) == []
    assert raw.text.startswith("event: error\ndata: Incorrect API key provided: ")


@pytest.mark.parametrize("size", [1, 7, 16, 100])
def test_a_key_at_an_overflowing_events_cut_is_withheld(size: int) -> None:
    """An event past the largest size goes on in pieces, the key withheld in each: a key
    across the cut went out in two, and whole again when the upstream then closed and
    the relay sent the unfinished event."""
    most = 4096
    for pad in range(most - 120, most + 20):
        event = b'data: {"error": {"message": "' + b"x" * pad + b" key " + KEY.encode() + b' bad"}}'
        scrub = StreamScrub((KEY,), (KEY,), most)
        pieces = [scrub.feed(event[at : at + size]) for at in range(0, len(event), size)]
        pieces.append(scrub.finish())
        assert KEY.encode() not in b"".join(pieces), pad
        tap = UsageTap(hide_usage=False, max_event_bytes=most)
        try:
            relayed = b"".join(tap.feed(piece) for piece in pieces) + tap.finish()
        except UpstreamReplyTooLarge:  # the relay cuts an event past its largest size
            continue
        assert KEY.encode() not in relayed, pad
