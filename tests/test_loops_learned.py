"""A fact learned in a turn is progress for the turn ceiling, not the end of a loop
(gateway.loops.state.learned): a customer who adds their city, an amount or their email
to a question asked again, and gets the same answer, is still going round. (Whether
a turn goes round is the detector's to say: it reads a new email or phone the customer
adds as data given, which moves things on.)"""

from __future__ import annotations

import pytest
from openai.types.chat import ChatCompletionMessageParam

from tests.servers import GatewayProc
from tests.test_loops import LOOP_ASKS, SAME_ANSWER, SYSTEM, _turn

ADDED = {
    "city": [" I live in Boston.", " I moved to Denver.", " I'm in Austin now.", " Seattle."],
    "amount": [" I paid $49.99.", " It cost $52.10.", " The total was $61.75.", " $70.20."],
    "name": [" This is Ann Lee.", " Ann Lee here.", " My name is Ann Lee.", " Ann."],
    "date": [
        " I ordered on March 3.",
        " It was March 4 I think.",
        " Paid on March 5.",
        " Since March 6.",
    ],
}


@pytest.mark.parametrize("added", list(ADDED))
def test_a_reask_that_adds_a_new_detail_each_time_still_escalates(
    sqlite_gateway: GatewayProc, added: str
) -> None:
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": SYSTEM}]
    conv = f"learned-{added}"
    seen = [
        _turn(sqlite_gateway, messages, ask + extra, answer, conv)[1].get("x-gateway-escalation")
        for ask, extra, answer in zip(LOOP_ASKS, [""] + ADDED[added], SAME_ANSWER, strict=True)
    ]
    assert "loop" in seen, seen
