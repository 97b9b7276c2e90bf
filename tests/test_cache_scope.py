"""Tenants never share the provider's prompt cache (gateway/proxy/cache_scope.py): each
tenant's prompts open with a salt of its own, so one tenant cannot learn from its
`cached_tokens` whether another sent a prompt it guesses, while its own repeats stay
cached; replies that echo the request give it back as the client sent it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from gateway.ledger.tokens import TokenCounter
from gateway.proxy.cache_scope import CacheScopes, scope_secret
from gateway.proxy.passthrough_cost import read_call
from tests.inprocess import InProcessGateway, SimulatorLog, start_inprocess
from tests.recording_upstream import Answer, Recorder, recording_upstream

# A system prompt holding a secret, long enough to be cached (1,024+ tokens).
SECRET = "You are the support bot of ACME. Internal refund override code: ZEBRA-7731. " + " ".join(
    f"policy clause {i}: refunds over ${i * 10} need approval." for i in range(150)
)


def _ask(gw: InProcessGateway, tenant: str, system: str, tag: str, **extra: Any) -> int:
    """The cached input tokens the tenant is told its call had."""
    reply = gw.openai(tenant).chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "hi " + tag}],
        max_tokens=5,
        extra_headers={"X-Simulator-Log-Messages": "1"},
        **extra,
    )
    assert reply.usage is not None and reply.usage.prompt_tokens_details is not None
    return reply.usage.prompt_tokens_details.cached_tokens or 0


def test_a_tenant_cannot_confirm_another_tenants_prompt_by_its_cached_tokens(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    gw = sqlite_app_gateway
    assert _ask(gw, "acme", SECRET, "a1") == 0
    assert _ask(gw, "acme", SECRET, "a2") >= 1024  # the tenant's own cache works
    wrong = SECRET.replace("ZEBRA-7731", "LION-0000")
    assert _ask(gw, "globex", wrong, "b1") == 0
    assert _ask(gw, "globex", SECRET, "b2") == 0  # the right guess looks like a wrong one
    assert _ask(gw, "globex", SECRET, "b3") >= 1024  # its own repeat is cached
    first = [entry["messages"][0] for entry in app_log.since()]
    acme, globex = {orjson.dumps(m) for m in first[:2]}, {orjson.dumps(m) for m in first[3:]}
    assert len(acme) == 1 and len(globex) == 1 and acme != globex  # one salt per tenant
    salt = first[0]["content"].removesuffix("\n\n" + SECRET)
    assert salt != first[0]["content"] and len(salt) < 40 and "acme" not in salt
    assert first[0]["role"] == "system" and len(app_log.since()[0]["messages"]) == 2


def test_a_prompt_cache_key_is_the_tenants_own(sqlite_app_gateway: InProcessGateway) -> None:
    """The simulator caches by `prompt_cache_key`, as OpenAI routes by it: the same key
    of two tenants is two keys upstream."""
    gw = sqlite_app_gateway
    key = {"extra_body": {"prompt_cache_key": "support-bot"}}
    assert _ask(gw, "acme", SECRET, "a1", **key) == 0
    assert _ask(gw, "acme", SECRET, "a2", **key) >= 1024
    assert _ask(gw, "globex", SECRET, "b1", **key) == 0


def test_a_window_without_a_system_message_gets_the_salt_in_its_first_message(
    sqlite_app_gateway: InProcessGateway, app_log: SimulatorLog
) -> None:
    """No system message the client did not send (o1-mini and some chat templates refuse
    one): the salt opens the first message's text, the same on every call."""
    for content in ("hi", [{"type": "text", "text": "hi"}]):
        for _ in range(2):
            sqlite_app_gateway.openai().chat.completions.create(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": content}],  # type: ignore[misc,list-item]
                extra_headers={"X-Simulator-Log-Messages": "1"},
            )
        first, second = (entry["messages"] for entry in app_log.since()[-2:])
        assert first == second and [m["role"] for m in first] == ["user"]
        if isinstance(content, str):
            salt, said = first[0]["content"].split("\n\n", 1)
            assert salt.startswith("[cache-scope ") and said == "hi"
        else:
            assert first[0]["content"][0]["text"].startswith("[cache-scope ")
            assert first[0]["content"][1:] == content


def test_with_a_shared_cache_the_prompts_go_as_written(tmp_path: Path) -> None:
    """`upstream.prompt_cache: shared` (one tenant, or a provider project per tenant)."""
    gw = start_inprocess(
        tmp_path,
        f"sqlite:///{tmp_path / 'gateway.db'}",
        upstream={"prompt_cache": "shared"},
    )
    try:
        assert _ask(gw, "acme", SECRET, "a1") == 0
        assert _ask(gw, "globex", SECRET, "b1") >= 1024
    finally:
        gw.stop()


# -- Responses and legacy completions, against a provider that echoes the request --------


def _echo(body: Any) -> Answer | None:
    """A Response as OpenAI's: its `instructions` and `prompt_cache_key` echoed."""
    if not isinstance(body, dict) or "input" not in body:
        return None
    usage = {"input_tokens": 30, "output_tokens": 2, "total_tokens": 32}
    done = {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": body["model"],
        "instructions": body.get("instructions"),
        "prompt_cache_key": body.get("prompt_cache_key"),
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello.", "annotations": []}],
            }
        ],
        "usage": usage,
    }
    if body.get("stream") is not True:
        return Answer(200, orjson.dumps(done), {"content-type": "application/json"})
    events = [
        ("response.created", {**done, "status": "in_progress", "output": [], "usage": None}),
        ("response.completed", done),
    ]
    raw = b"".join(
        b"event: "
        + kind.encode()
        + b"\ndata: "
        + orjson.dumps({"type": kind, "response": r})
        + b"\n\n"
        for kind, r in events
    )
    return Answer(200, raw, {"content-type": "text/event-stream"})


@pytest.fixture
def echoing(tmp_path: Path) -> Iterator[tuple[InProcessGateway, Recorder]]:
    with recording_upstream() as rec:
        rec.answer_for = _echo
        gw = start_inprocess(tmp_path, f"sqlite:///{tmp_path / 'g.db'}", f"{rec.url}/v1")
        try:
            yield gw, rec
        finally:
            gw.stop()


def test_a_response_opens_with_the_salt_and_echoes_what_the_client_sent(
    echoing: tuple[InProcessGateway, Recorder],
) -> None:
    gw, rec = echoing
    acme = gw.openai("acme")
    plain = acme.responses.create(model="gpt-4o-mini", input="hi")
    told = acme.responses.create(
        model="gpt-4o-mini", input="hi", instructions=SECRET, prompt_cache_key="bot"
    )
    with acme.responses.stream(
        model="gpt-4o-mini", input="hi", instructions=SECRET, prompt_cache_key="bot"
    ) as stream:
        streamed = stream.get_final_response()
    gw.openai("globex").responses.create(model="gpt-4o-mini", input="hi", instructions=SECRET)
    assert plain.instructions is None
    assert told.instructions == SECRET and told.prompt_cache_key == "bot"
    assert streamed.instructions == SECRET and streamed.prompt_cache_key == "bot"
    sent = [entry["body"] for entry in rec.seen]
    salt = sent[0]["instructions"]
    assert salt.startswith("[cache-scope ")
    assert sent[1]["instructions"] == sent[2]["instructions"] == f"{salt}\n\n{SECRET}"
    assert sent[1]["prompt_cache_key"] not in ("bot", None)
    assert not sent[3]["instructions"].startswith(salt)  # globex's own


def test_a_completion_prompt_opens_with_the_salt_and_its_echo_does_not(
    echoing: tuple[InProcessGateway, Recorder],
) -> None:
    gw, rec = echoing

    def completion(body: Any) -> Answer:
        choices = [{"index": 0, "text": body["prompt"] + " ok", "finish_reason": "stop"}]
        usage = {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}
        reply = {"id": "cmpl-1", "object": "text_completion", "choices": choices, "usage": usage}
        reply["model"] = body["model"]
        return Answer(200, orjson.dumps(reply), {"content-type": "application/json"})

    rec.answer_for = completion
    reply = gw.openai("acme").completions.create(
        model="gpt-3.5-turbo-instruct", prompt="Say hi", echo=True, max_tokens=3
    )
    assert reply.choices[0].text == "Say hi ok"
    (entry,) = rec.seen
    assert entry["body"]["prompt"].startswith("[cache-scope ")
    assert entry["body"]["prompt"].endswith("]\n\nSay hi")


def test_the_salt_is_counted_in_what_a_call_holds() -> None:
    tokens = TokenCounter()
    scope = CacheScopes(scope_secret("sk-provider", None)).of("acme")
    body = orjson.dumps({"model": "gpt-4o-mini", "prompt": [1, 2, 3], "max_tokens": 5})
    plain = read_call("completions", body, tokens, {}, 1, 100)
    salted = read_call("completions", body, tokens, {}, 1, 100, scope=scope)
    assert 6 <= salted.raw_input - plain.raw_input <= 16
    sent = orjson.loads(salted.body)["prompt"]
    assert sent[-3:] == [1, 2, 3] and tokens.encoding("gpt-4o-mini").decode(sent[:-3]).startswith(
        "[cache-scope "
    )


def test_salts_are_per_tenant_and_secret() -> None:
    one = CacheScopes(scope_secret("sk-provider", None))
    other = CacheScopes(scope_secret("sk-another-gateway", None))
    assert one.of("acme") == one.of("acme")
    assert one.of("acme") != one.of("globex")
    assert one.of("acme") != other.of("acme")  # not computable without the secret
    assert CacheScopes(None).of("acme") is None
