"""A call refused anyway costs next to nothing (red-team read 24: one tenant's refused
calls cost every other tenant the event loop): a tenant whose budget is spent to its
ceiling, or past its rate limit, has no window built, nothing folded or summarized and
no body parsed for its next calls; a call refused for its context length counts
against the rate limit, as it built a window."""

from __future__ import annotations

import time
from typing import Any

import openai
import pytest
import yaml

from tests.inprocess import InProcessGateway, say
from tests.servers import ADMIN_KEY, edit_policy

LONG = [
    msg
    for n in range(40)
    for msg in (
        {"role": "user", "content": f"Turn {n}: my parcel BR{n:05d} is late again. " * 12},
        {"role": "assistant", "content": f"Sorry about parcel BR{n:05d}, I am checking. " * 12},
    )
]


def _policies(gw: InProcessGateway, name: str, doc: dict[str, Any]) -> None:
    (gw.root / "policies" / name).write_text(yaml.safe_dump(doc))
    gw.restart()


def _ask(gw: InProcessGateway, conversation: str, messages: list[Any]) -> Any:
    return gw.openai().chat.completions.create(
        model="gpt-4o-mini",
        messages=[*messages, {"role": "user", "content": "Any news?"}],
        extra_headers={"X-Conversation-Id": conversation},
    )


def test_a_budget_spent_to_its_ceiling_refuses_before_building_the_window(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    gw = sqlite_app_gateway
    _ask(gw, "c-spent", [])  # spent without a ceiling
    _policies(gw, "spend.yaml", {"tenants": {"acme": {"monthly_usd": "0.0000001"}}})
    with pytest.raises(openai.RateLimitError) as first:
        _ask(gw, "c-first", [])  # the store says the budget is spent: remembered
    assert first.value.code == "insufficient_quota"
    with pytest.raises(openai.RateLimitError) as refused:
        _ask(gw, "c-long", LONG)  # 80 messages past the quota: would fold and summarize
    assert refused.value.code == "insufficient_quota"
    assert "monthly ceiling of $0.0000001 USD" in refused.value.message
    assert int(refused.value.response.headers["retry-after"]) > 0
    # nothing of it was built: no record, no summary made of its history
    auth = {"Authorization": f"Bearer {gw.keys['acme']}", "Content-Type": "application/json"}
    assert gw.http.get("/v1/conversations/c-long", headers=auth).status_code == 404
    # so is a pass-through call, before its body is read (not JSON: 429, not 400), but
    # not one that costs nothing
    embedding = gw.http.post("/v1/embeddings", content=b"{not json", headers=auth)
    assert embedding.status_code == 429, embedding.text
    assert embedding.json()["error"]["code"] == "insufficient_quota"
    assert gw.http.get("/v1/models", headers=auth).status_code == 200
    # another tenant is not refused
    gw.openai("globex").chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )
    # a ceiling raised by a reload lets the tenant through at once
    _policies(gw, "spend.yaml", {"tenants": {"acme": {"monthly_usd": "5"}}})
    _ask(gw, "c-after", [])


def test_a_rate_limited_call_is_refused_before_its_body_is_read(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    gw = sqlite_app_gateway
    _policies(gw, "limits.yaml", {"tenants": {"acme": {"rpm": 1}}})
    _ask(gw, "c-rate", [])
    # a body that is not JSON: refused 429 for the limit, not 400 for the body
    refused = gw.http.post(
        "/v1/chat/completions",
        content=b"{not json" * 1000,
        headers={"Authorization": f"Bearer {gw.keys['acme']}", "Content-Type": "application/json"},
    )
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    refused = gw.http.post(  # a pass-through route's too
        "/v1/embeddings",
        content=b"{not json",
        headers={"Authorization": f"Bearer {gw.keys['acme']}", "Content-Type": "application/json"},
    )
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"


def test_a_call_past_the_context_window_counts_against_the_rate_limit(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    gw = sqlite_app_gateway
    _policies(gw, "limits.yaml", {"tenants": {"acme": {"rpm": 2}}})
    system = {"role": "system", "content": "policy " * 140_000}  # past gpt-4o-mini's window
    for _ in range(2):
        with pytest.raises(openai.BadRequestError) as past:
            _ask(gw, "c-past", [system])
        assert past.value.code == "context_length_exceeded"
    with pytest.raises(openai.RateLimitError) as limited:  # the third is the limit's
        _ask(gw, "c-past", [system])
    assert limited.value.code == "rate_limit_exceeded"


def _spent_seen(gw: InProcessGateway, spend: dict[str, Any]) -> None:
    """acme spends, its ceiling is set under what it spent, and a call is refused by the
    store: this replica has seen the budget spent."""
    _ask(gw, "c-spend", [])
    _policies(gw, "spend.yaml", spend)
    with pytest.raises(openai.RateLimitError):
        _ask(gw, "c-seen", [])


def test_a_handoff_is_answered_under_a_budget_seen_spent(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """Refused 429 before the escalation was looked at (review of 75182df): a customer
    whose dispute escalated to a person got no handoff message."""
    gw = sqlite_app_gateway
    handoff = "A colleague will take over now."
    edit_policy(
        gw.root,
        {
            "classes.dispute.turn_ceiling": 1,
            "classes.dispute.progress_window": 1,
            "classes.dispute.escalation_action": "handoff",
            "classes.dispute.handoff_message": handoff,
        },
    )
    messages: list[Any] = []
    headers = {"X-Conversation-Id": "d1", "X-Conversation-Class": "dispute"}
    for text in ("I dispute this charge", "I still dispute it"):
        say(gw, messages, text, **headers)
    _spent_seen(gw, {"tenants": {"acme": {"monthly_usd": "0.0000001"}}})
    assert say(gw, messages, "and now?", **headers) == handoff


def test_a_budget_seen_spent_takes_a_higher_ceiling_at_once(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    """Remembered by its key alone (review of 75182df): a tenant moved to a plan of a
    higher ceiling was still refused for 30 s, the 429 naming a ceiling nowhere near
    spent; and so was a customer erased (their spend moved to a pseudonym)."""
    gw = sqlite_app_gateway
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    spend = {"plans": {"basic": {"monthly_usd": "0.0000001"}, "pro": {"monthly_usd": "50"}}}
    _policies(gw, "spend.yaml", spend)
    created = gw.http.post("/admin/tenants", json={"name": "hooli", "plan": "pro"}, headers=admin)
    assert created.status_code == 201, created.text
    key = gw.http.post("/admin/tenants/hooli/keys", json={}, headers=admin).json()["key"]
    client = openai.OpenAI(base_url=gw.v1, api_key=key, max_retries=0, http_client=gw.http)

    def ask() -> None:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
        )

    def moved(plan: str) -> None:
        patched = gw.http.patch("/admin/tenants/hooli", json={"plan": plan}, headers=admin)
        assert patched.status_code == 200, patched.text
        deadline = time.monotonic() + 10  # the registry takes the change within a second
        while gw.gateway.registry.tenant("hooli").plan != plan:  # type: ignore[union-attr]
            assert time.monotonic() < deadline
            time.sleep(0.05)

    ask()  # spends on pro
    moved("basic")
    with pytest.raises(openai.RateLimitError):
        ask()  # seen spent at basic's ceiling
    moved("pro")
    ask()  # pro's $50 is nowhere near spent


def test_an_erasure_lets_the_customer_spend_again_at_once(
    sqlite_app_gateway: InProcessGateway,
) -> None:
    gw = sqlite_app_gateway
    headers = {"X-Customer-Id": "cust-erase", "x-simulator-fill": "1"}

    def ask(conversation: str) -> None:
        gw.openai().chat.completions.create(
            model="gpt-4o-mini",
            max_tokens=800,
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={**headers, "X-Conversation-Id": conversation},
        )

    for n in range(3):  # ~$0.0005 each: the whole output written
        ask(f"c-before-{n}")
    _policies(gw, "spend.yaml", {"plans": {"pro": {"customer_daily_usd": "0.001"}}})
    with pytest.raises(openai.RateLimitError):
        ask("c-seen")  # spent past $0.001: seen spent
    auth = {"Authorization": f"Bearer {gw.keys['acme']}"}
    assert gw.http.delete("/v1/customers/cust-erase", headers=auth).status_code == 200
    ask("c-after")  # their spend is the pseudonym's now: one call fits again
