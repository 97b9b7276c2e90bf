"""What a seventh red-team read of the spend guard found: calls the provider bills for
more than the guard held, so that one call passed its tenant's ceiling. Each through the
openai SDK against the gateway in this process and its simulated upstream (SQLite and
real Redis); the simulator's `x-simulator-usage` stands in for what the provider reports.

- A chat `prediction` (Predicted Outputs): the predicted tokens a reply does not use are
  billed as output past `max_tokens`. It was held at `max_tokens` alone and any output
  count believed: one call booked $0.60 under a $0.01 ceiling.
- Web search results are billed as input the body does not show (a Responses
  `web_search` tool, chat `web_search_options`). They were held at the counted input
  alone and any input count believed: one call booked $0.25 under a $0.05 ceiling. A
  file's input, held at the context window, was believed at any count too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from openai.types.chat import ChatCompletionMessageParam

from gateway.config import SIMULATOR
from tests.inprocess import InProcessGateway

ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Rewrite it, please."}]
WINDOW = 128_000  # gpt-4o-mini's context window
PREDICTED = "lorem ipsum dolor " * 20_000  # 60,002 tokens on gpt-4o
SHORT_PREDICTION = "lorem ipsum dolor " * 300  # 902 tokens on gpt-4o-mini


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    return f"sqlite:///{tmp_path / 'gateway.db'}"


@pytest.fixture
def under(tmp_path: Path, store: str) -> Iterator[Any]:
    """Start the gateway with acme under a monthly ceiling (USD); globex has none."""
    started: list[InProcessGateway] = []

    def start(ceiling: str) -> InProcessGateway:
        spend = {"tenants": {"acme": {"monthly_usd": ceiling}}}
        (tmp_path / "policies").mkdir(exist_ok=True)
        (tmp_path / "policies" / "spend.yaml").write_text(yaml.safe_dump(spend))
        gw = InProcessGateway(tmp_path, SIMULATOR, store)
        gw.start()
        started.append(gw)
        return gw

    yield start
    for gw in started:
        gw.stop()


def ledger(gw: InProcessGateway, tenant: str = "acme") -> list[dict[str, Any]]:
    records = gw.admin("/admin/ledger").json()["records"]
    return [r for r in records if r["tenant"] == tenant]


def spent(gw: InProcessGateway) -> Decimal:
    rows = gw.admin("/admin/budgets", tenant="acme").json()["budgets"]
    [row] = [r for r in rows if r["ceiling_usd"] is not None]
    return Decimal(row["spent_usd"])


def rejected(output: int, predicted: int) -> str:
    """A chat usage report: `output` tokens billed, `predicted` of them rejected."""
    details = {"rejected_prediction_tokens": predicted, "accepted_prediction_tokens": 0}
    return json.dumps({"completion_tokens": output, "completion_tokens_details": details})


@pytest.mark.parametrize("shape", ["text", "parts"])
def test_a_prediction_is_held_as_output_past_max_tokens(under: Any, shape: str) -> None:
    """The red-team call: max_tokens 10 and a 60,002-token prediction, all of it
    rejected and billed ($0.60 on gpt-4o). Held at max_tokens plus the prediction, it
    does not fit a $0.01 ceiling: refused, nothing booked. Without a ceiling it passes,
    and what it reports is booked."""
    gw = under("0.01")
    content: Any = PREDICTED if shape == "text" else [{"type": "text", "text": PREDICTED}]
    call: dict[str, Any] = {
        "model": "gpt-4o",
        "messages": ASK,
        "max_tokens": 10,
        "prediction": {"type": "content", "content": content},
        "extra_headers": {"x-simulator-usage": rejected(60_010, 60_000)},
    }
    with pytest.raises(openai.RateLimitError) as info:
        gw.openai("acme").chat.completions.create(**call)
    assert info.value.code == "insufficient_quota"
    assert ledger(gw) == [] and spent(gw) == 0
    gw.openai("globex").chat.completions.create(**call)
    [record] = ledger(gw, "globex")
    assert record["output_tokens"] == 60_010 and record["estimated"] is False


def test_a_prediction_is_believed_up_to_its_own_tokens(under: Any) -> None:
    """A 902-token prediction fits a $0.01 ceiling on gpt-4o-mini. A reply that rejects
    500 of its tokens is booked as reported; one that says it rejected 60,000 (more than
    the prediction holds) is not believed: an estimate is booked, within the ceiling."""
    gw = under("0.01")
    client = gw.openai("acme")
    prediction: Any = {"type": "content", "content": SHORT_PREDICTION}
    for usage, stream in ((rejected(550, 500), False), (rejected(60_010, 60_000), True)):
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=ASK,
            max_tokens=50,
            prediction=prediction,
            stream=stream,
            extra_headers={"x-simulator-usage": usage},
        )
        if stream:
            assert list(reply)
    honest, lied = ledger(gw)
    assert (honest["output_tokens"], honest["estimated"]) == (550, False)
    assert lied["estimated"] is True and lied["output_tokens"] <= 50 + 902
    assert spent(gw) <= Decimal("0.01")


def search_usage(route: str, input_tokens: int) -> dict[str, str]:
    usage: dict[str, Any]
    if route == "chat":
        usage = {"prompt_tokens": input_tokens, "completion_tokens": 20}
    else:
        usage = {
            "input_tokens": input_tokens,
            "output_tokens": 20,
            "input_tokens_details": {"cached_tokens": 0},
        }
    return {"x-simulator-usage": json.dumps(usage)}


def searched(client: openai.OpenAI, route: str, model: str, input_tokens: int) -> None:
    """One web search, reported as `input_tokens` of input (its results included)."""
    headers = search_usage(route, input_tokens)
    if route == "chat":
        client.chat.completions.create(
            model=model,
            messages=ASK,
            max_tokens=50,
            web_search_options={},
            extra_headers=headers,
        )
    else:
        client.responses.create(
            model=model,
            input="Latest news on the euro rate, search thoroughly.",
            tools=[{"type": "web_search"}],
            max_output_tokens=50,
            max_tool_calls=1,
            extra_headers=headers,
        )


@pytest.mark.parametrize("route", ["responses", "chat"])
def test_a_search_whose_results_may_pass_the_ceiling_is_refused(under: Any, route: str) -> None:
    """The red-team call: one search on gpt-4.1 reported 120,000 input tokens ($0.24),
    held at the counted input and one search fee. Its results may fill the model's
    context window (1,000,000 tokens on gpt-4.1, 128,000 on gpt-4o-mini) for the round
    after the search: over a $0.02 ceiling, refused. Without a ceiling it passes, booked
    as reported."""
    gw = under("0.02")
    model = "gpt-4.1" if route == "responses" else "gpt-4o-mini"
    with pytest.raises(openai.RateLimitError) as info:
        searched(gw.openai("acme"), route, model, 120_000)
    assert info.value.code == "insufficient_quota"
    assert ledger(gw) == [] and spent(gw) == 0
    searched(gw.openai("globex"), route, model, 120_000)
    [record] = ledger(gw, "globex")
    assert record["fresh_input_tokens"] == 120_000 and record["estimated"] is False


@pytest.mark.parametrize("route", ["responses", "chat"])
def test_search_results_are_believed_up_to_what_was_held(under: Any, route: str) -> None:
    """On gpt-4o-mini one search is held at its counted input plus a 128,000-token
    window for the round that reads the results, and fits a $0.10 ceiling. 100,000
    input tokens are booked as reported; 1,000,000 (more than two passes can read) are
    not believed: booked at most what was held, and the tenant stays under its ceiling."""
    gw = under("0.10")
    client = gw.openai("acme")
    searched(client, route, "gpt-4o-mini", 100_000)
    searched(client, route, "gpt-4o-mini", 1_000_000)
    honest, lied = ledger(gw)
    assert (honest["fresh_input_tokens"], honest["estimated"]) == (100_000, False)
    assert lied["estimated"] is True and lied["fresh_input_tokens"] <= WINDOW + 100
    if route == "responses":  # cut to what was held (chat books its own count)
        assert lied["fresh_input_tokens"] > WINDOW
    assert spent(gw) <= Decimal("0.10")


def test_a_search_is_held_for_every_round_it_may_make(under: Any) -> None:
    """Without `max_tool_calls` the gateway allows 10 searches, each of whose results
    may fill a 128,000-token window: held at 10 windows and 10 fees ($0.30 on
    gpt-4o-mini), that call does not fit $0.15 (held at the fees alone, it did); one
    search does."""
    gw = under("0.15")
    client = gw.openai("acme")
    with pytest.raises(openai.RateLimitError):
        client.responses.create(
            model="gpt-4o-mini",
            input="What is new?",
            tools=[{"type": "web_search"}],
            max_output_tokens=50,
        )
    searched(client, "responses", "gpt-4o-mini", 1_000)
    [record] = ledger(gw)
    assert Decimal(record["cost_usd"]) <= Decimal("0.15")


def test_a_files_input_is_believed_up_to_the_window(under: Any) -> None:
    """A PDF is held at the model's context window; a report of 1,000,000 input tokens
    (more than the window) was booked as reported, past the ceiling. It is not believed:
    an estimate is booked. A report within the window is booked as reported."""
    gw = under("0.10")
    pdf = {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:..."}}
    text = {"type": "text", "text": "What does this say?"}
    messages: Any = [{"role": "user", "content": [text, pdf]}]
    for prompt in (100_000, 1_000_000):
        gw.openai("acme").chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,
            max_tokens=50,
            extra_headers=search_usage("chat", prompt),
        )
    honest, lied = ledger(gw)
    assert (honest["fresh_input_tokens"], honest["estimated"]) == (100_000, False)
    assert lied["estimated"] is True and lied["fresh_input_tokens"] <= WINDOW
    assert spent(gw) <= Decimal("0.10")
    # The file's pages are not in the count: its report teaches the token factor nothing
    # (it was learned as 2, the most, doubling every later hold and estimate).
    assert gw.gateway.tokens.factor("gpt-4o-mini") == 1.0


def test_a_function_tool_adds_no_input_to_believe(under: Any) -> None:
    """A Responses call with a function tool: its input is all in the body, held as
    counted; any input count was believed (1,000,000 tokens: $0.15, past a $0.10
    ceiling). It is bounded like a call without tools: cut, booked within the ceiling."""
    gw = under("0.10")
    gw.openai("acme").responses.create(
        model="gpt-4o-mini",
        input="What is the weather?",
        tools=[{"type": "function", "name": "weather", "parameters": {"type": "object"}}],
        max_output_tokens=50,
        extra_headers=search_usage("responses", 1_000_000),
    )
    [record] = ledger(gw)
    assert record["estimated"] is True and record["fresh_input_tokens"] < 5_000
    assert spent(gw) <= Decimal("0.10")


def test_a_tool_of_an_unknown_type_is_not_held_as_its_body(under: Any) -> None:
    """A server-side tool the gateway does not know may bill anything: under a ceiling
    only `unpriced: allow` admits it; without one it passes."""
    gw = under("5")
    tools: Any = [{"type": "web_fetch_2031"}]
    with pytest.raises(openai.BadRequestError) as info:
        gw.openai("acme").responses.create(model="gpt-4o-mini", input="hi", tools=tools)
    assert info.value.code == "model_not_priced"
    gw.openai("globex").responses.create(model="gpt-4o-mini", input="hi", tools=tools)
    assert ledger(gw) == [] and len(ledger(gw, "globex")) == 1
