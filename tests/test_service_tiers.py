"""A service tier is booked and held at its own rates (genai-prices' `service_tier`
variants): priority at ~1.7-2x the standard rates, flex at half. It was booked at the
standard rates whatever the tier, understating a priority call."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import openai
import pytest
from genai_prices import Usage, calc_price

from tests.test_red_team_billing import SHORT, _gateway, ledger


def _priced(record: dict[str, Any], tier: str | None) -> Decimal:
    """The record's tokens at genai-prices' rates for `tier`, read straight from it."""
    usage = Usage(
        input_tokens=record["fresh_input_tokens"] + record["cached_input_tokens"],
        cache_read_tokens=record["cached_input_tokens"],
        output_tokens=record["output_tokens"],
    )
    context = {"service_tier": tier} if tier else None
    calc = calc_price(usage, record["model"], provider_id="openai", price_context=context)
    return Decimal(calc.total_price)


def _booked(record: dict[str, Any]) -> Decimal:
    return Decimal(record["cost_usd"])


@pytest.mark.parametrize(
    ("model", "tier", "served", "priced_as"),
    [
        ("gpt-4o-mini", "priority", None, "priority"),
        ("o3", "priority", None, "priority"),
        ("gpt-5-mini", "flex", None, "flex"),
        ("gpt-4o-mini", "auto", None, None),
        # asked for priority, the provider served it at the default tier: billed at that
        ("gpt-4o-mini", "priority", "default", None),
    ],
)
def test_a_call_is_booked_at_the_rates_of_the_tier_that_served_it(
    tmp_path: Path, model: str, tier: Any, served: str | None, priced_as: str | None
) -> None:
    gw = _gateway(tmp_path)
    headers = {"x-simulator-service-tier": served} if served else {}
    try:
        client = gw.openai()
        short: Any = SHORT
        reply = client.chat.completions.create(
            model=model, messages=short, service_tier=tier, extra_headers=headers
        )
        assert reply.service_tier == (served or ("default" if tier == "auto" else tier))
        stream = client.chat.completions.create(
            model=model, messages=short, service_tier=tier, stream=True, extra_headers=headers
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        response = client.responses.create(
            model=model, input="hi", service_tier=tier, extra_headers=headers
        )
        assert response.output_text
        records = ledger(gw)
    finally:
        gw.stop()
    assert [r["route"] for r in records] == ["chat", "chat", "responses"]
    for record in records:
        assert record["output_tokens"] > 0 and not record["estimated"]
        assert _booked(record) == _priced(record, priced_as)
        if priced_as is not None:
            standard = _priced(record, None)
            assert _booked(record) != standard  # the tier's own rates, not the standard
            assert (_booked(record) > standard) == (priced_as == "priority")


def test_a_priority_call_is_held_at_priority_rates_under_a_ceiling(tmp_path: Path) -> None:
    """The window's output reserve (800 tokens) caps the call: on gpt-4o-mini its worst
    case is ~$0.00048 at the standard rates and ~$0.0008 at priority's, so a $0.0006
    ceiling admits the one and refuses the other. (A priority call was refused under any
    ceiling without `unpriced: allow`: its rates were not known.)"""
    gw = _gateway(tmp_path, spend={"tenants": {"acme": {"monthly_usd": "0.0006"}}})
    try:
        client = gw.openai()
        short: Any = SHORT
        with pytest.raises(openai.RateLimitError) as info:
            client.chat.completions.create(
                model="gpt-4o-mini", messages=short, max_tokens=100_000, service_tier="priority"
            )
        assert info.value.code == "insufficient_quota"
        client.chat.completions.create(
            model="gpt-4o-mini", messages=short, max_tokens=100_000, service_tier="default"
        )
        client.chat.completions.create(
            model="gpt-4o-mini", messages=short, max_tokens=300, service_tier="priority"
        )
        records = ledger(gw)
    finally:
        gw.stop()
    assert len(records) == 2
    assert _booked(records[0]) == _priced(records[0], None)
    assert _booked(records[1]) == _priced(records[1], "priority")


def test_a_dearer_tier_without_rates_is_unpriced_never_booked_at_the_standard_rates(
    tmp_path: Path,
) -> None:
    """gpt-5-nano has no priority rates in genai-prices: under a ceiling such a call needs
    `unpriced: allow`, and it is booked as unpriced (its tokens, no cost), not at the
    standard rates, which would understate it."""
    ceiling = {"monthly_usd": "5"}
    short: Any = SHORT
    gw = _gateway(tmp_path, spend={"tenants": {"acme": ceiling}})
    try:
        with pytest.raises(openai.BadRequestError) as info:
            gw.openai().chat.completions.create(
                model="gpt-5-nano",
                messages=short,
                service_tier="priority",
            )
        assert info.value.code == "model_not_priced"
    finally:
        gw.stop()
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    gw = _gateway(allowed, spend={"tenants": {"acme": {**ceiling, "unpriced": "allow"}}})
    try:
        gw.openai().chat.completions.create(
            model="gpt-5-nano",
            messages=short,
            service_tier="priority",
        )
        [record] = ledger(gw)
        [acme] = [t for t in gw.admin("/admin/spend").json()["tenants"] if t["tenant"] == "acme"]
    finally:
        gw.stop()
    assert record["cost_usd"] is None and record["output_tokens"] > 0
    assert acme["unpriced_requests"] == 1


def test_a_dearer_tier_served_than_held_is_booked_at_its_rates_and_can_be_held_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A call that names no tier is served at the tier the provider account is set to,
    which can be priority: it is booked at what it cost (with a warning naming
    `upstream.default_service_tier`), and with that setting it is held at those rates, so
    a call whose priority worst case does not fit the ceiling is refused."""
    ceiling = {"tenants": {"acme": {"monthly_usd": "0.0006"}}}
    priority = {"x-simulator-service-tier": "priority"}
    gw = _gateway(tmp_path, spend=ceiling)
    try:
        short: Any = SHORT
        gw.openai().chat.completions.create(
            model="gpt-4o-mini", messages=short, max_tokens=800, extra_headers=priority
        )
        [record] = ledger(gw)
    finally:
        gw.stop()
    assert _booked(record) == _priced(record, "priority") > _priced(record, None)
    assert "upstream.default_service_tier" in caplog.text
    account = tmp_path / "account"
    account.mkdir()
    gw = _gateway(account, spend=ceiling, upstream={"default_service_tier": "priority"})
    try:
        with pytest.raises(openai.RateLimitError):  # 800 tokens at priority: ~$0.0008
            gw.openai().chat.completions.create(
                model="gpt-4o-mini", messages=short, max_tokens=800, extra_headers=priority
            )
        with pytest.raises(openai.RateLimitError):
            gw.openai().responses.create(
                model="gpt-4o-mini", input="hi", max_output_tokens=800, extra_headers=priority
            )
        gw.openai().chat.completions.create(
            model="gpt-4o-mini", messages=short, max_tokens=300, extra_headers=priority
        )
        [record] = ledger(gw)
    finally:
        gw.stop()
    assert _booked(record) == _priced(record, "priority")


def test_a_tier_the_reply_names_without_rates_is_booked_at_the_held_tiers(
    tmp_path: Path,
) -> None:
    """A reply naming a tier nobody has rates for ("on_demand", as some OpenAI-compatible
    providers answer) made the call unpriced, so free under a ceiling. It is booked at
    the rates it was held at."""
    gw = _gateway(tmp_path, spend={"tenants": {"acme": {"monthly_usd": "5"}}})
    odd = {"x-simulator-service-tier": "on_demand"}
    try:
        short: Any = SHORT
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=short, extra_headers=odd)
        gw.openai().responses.create(model="gpt-4o-mini", input="hi", extra_headers=odd)
        records = ledger(gw)
    finally:
        gw.stop()
    assert len(records) == 2
    for record in records:
        assert record["cost_usd"] is not None
        assert _booked(record) == _priced(record, None)


def test_a_price_from_the_config_table_has_no_dearer_tier(tmp_path: Path) -> None:
    """config.yaml `prices` holds one rate per model: a priority call on such a model was
    held and booked at it. It is unpriced now, as on a genai-prices model without tier
    rates: refused under a ceiling that does not allow unpriced calls."""
    gw = _gateway(tmp_path, spend={"tenants": {"acme": {"monthly_usd": "5"}}})
    try:
        short: Any = SHORT
        with pytest.raises(openai.BadRequestError) as info:
            gw.openai().chat.completions.create(
                model="local-llama", messages=short, service_tier="priority"
            )
        assert info.value.code == "model_not_priced"
        gw.openai().chat.completions.create(
            model="local-llama", messages=short, service_tier="flex"
        )
        [record] = ledger(gw)
    finally:
        gw.stop()
    assert record["cost_usd"] is not None  # flex bills at most the table's rate
