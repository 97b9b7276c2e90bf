"""The day a date or deadline names when said (gateway.context.people_dates), and the
facts block showing it beside the words. Sentences written for these tests."""

from __future__ import annotations

import datetime as dt

import pytest

from gateway.context.people import extract_people_facts
from gateway.context.people_dates import resolve


def at(day: str) -> float:
    return dt.datetime.fromisoformat(f"{day}T15:00:00+00:00").timestamp()


@pytest.mark.parametrize(
    ("said", "on", "english", "ahead", "day"),
    [
        ("até sexta", "2026-05-04", False, True, "2026-05-08"),  # a Monday
        ("quinta-feira, dia 7", "2026-05-04", False, True, "2026-05-07"),
        ("by Friday 15 May", "2026-05-04", True, True, "2026-05-15"),
        ("amanhã", "2026-05-31", False, True, "2026-06-01"),
        ("ayer", "2026-05-01", False, False, "2026-04-30"),
        ("depois de amanhã", "2026-05-04", False, True, "2026-05-06"),
        ("dia vinte e oito do mês passado", "2026-05-04", False, False, "2026-04-28"),
        ("el 3 de junio", "2026-05-04", False, True, "2026-06-03"),
        ("June 3rd", "2026-05-04", True, False, "2026-06-03"),
        ("dia 30", "2026-05-02", False, False, "2026-04-30"),  # nearer behind than ahead
        ("dia 30", "2026-05-02", False, True, "2026-05-30"),  # a deadline lies ahead
        ("15/06", "2026-05-04", False, False, "2026-06-15"),
        ("06/15", "2026-05-04", True, False, "2026-06-15"),
        ("December 30", "2027-01-02", True, False, "2026-12-30"),  # across the year
        ("last Tuesday", "2026-05-07", True, False, "2026-05-05"),
        ("it broke on Tuesday", "2026-05-07", True, False, "2026-05-05"),
        ("2025-06-25", "2026-05-04", False, False, "2025-06-25"),
        ("comprei em 10/04/2025", "2026-05-04", False, False, "2025-04-10"),  # its year
        ("I ordered on March 5, 2024", "2026-05-04", True, False, "2024-03-05"),
        ("next Monday", "2026-05-05", True, False, "2026-05-11"),  # "next": ahead
        ("the day before yesterday", "2026-05-05", True, False, "2026-05-03"),
        ("anteontem", "2026-05-05", False, False, "2026-05-03"),
    ],
)
def test_the_day_said(said: str, on: str, english: bool, ahead: bool, day: str) -> None:
    assert resolve(said, at(on), english, ahead) == day


@pytest.mark.parametrize(
    "said",
    ["em até 5 dias úteis", "within two business days", "next week", "Easter", "dia 31/31"],
)
def test_words_that_name_no_one_day(said: str) -> None:
    assert resolve(said, at("2026-05-04"), "the" in said, True) is None


def test_a_fact_shows_the_day_beside_the_words() -> None:
    """Read days later, "até sexta" still says which Friday."""
    said = [
        {"role": "assistant", "content": "O reembolso cai até sexta-feira, pode ficar tranquila."}
    ]
    facts = extract_people_facts(said, "webchat", at("2026-05-04"))
    deadline = next(f for f in facts if f.tags[0] == "deadline")
    assert deadline.value in deadline.text
    assert "(2026-05-08)" in deadline.text


def test_turns_read_as_they_fold_get_a_day_only_when_the_month_is_named() -> None:
    """A fold is read turns (or days) after it was said: "até sexta" and "até o dia 2" get
    no day there; "até 2 de junho" does, the nearest such day (not forced ahead of the
    fold: said on May 30, folded on June 3, it is June 2)."""
    said = [
        {"role": "assistant", "content": "O reembolso cai até sexta-feira."},
        {"role": "assistant", "content": "A troca chega até o dia 2."},
        {"role": "assistant", "content": "O técnico vai até 2 de junho."},
    ]
    facts = extract_people_facts(said, "webchat", at("2026-06-03"), said_now=False)
    texts = sorted(f.text for f in facts if f.tags[0] == "deadline")
    assert any("junho" in t and "(2026-06-02)" in t for t in texts), texts
    assert not any("sexta" in t and "(20" in t for t in texts), texts
    assert not any("dia 2" in t and "(20" in t for t in texts), texts


def test_a_relative_day_is_read_only_at_hours_whose_date_is_the_customers() -> None:
    """At 01:00 UTC it is still yesterday in São Paulo and in California: "ontem" is kept
    as said, with no day; at 15:00 UTC it gets one."""
    night = dt.datetime.fromisoformat("2026-03-10T01:00:00+00:00").timestamp()
    assert resolve("ontem", night, False, False) is None
    assert resolve("ontem", at("2026-03-10"), False, False) == "2026-03-09"
    assert resolve("dia 20 de março", night, False, True) == "2026-03-20"
