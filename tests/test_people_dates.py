"""The day a date or deadline names when said (gateway.context.people_dates), and the
facts block showing it beside the words. Sentences written for these tests."""

from __future__ import annotations

import datetime as dt

import pytest

from gateway.context.people import current_facts, extract_people_facts
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


def test_a_weekday_with_its_day_of_the_month_is_one_day_even_read_as_it_folds() -> None:
    """A weekday with its day ("sexta, dia 27") pins one day in the months around, so a
    fold read days later dates it too (the whole "sexta, dia 27" is the fact, not "sexta"
    and "dia 27"); a weekday that is not that day's within three months (a slip) names
    none."""
    said = [
        {"role": "assistant", "content": "Fica tudo pronto até sexta, dia 27, combinado?"},
        {"role": "user", "content": "O celular chegou segunda, dia 16, já com defeito."},
        {"role": "user", "content": "We go live on Monday the 16th."},
    ]
    facts = extract_people_facts(said, "webchat", at("2026-04-02"), said_now=False)
    texts = [f.text for f in facts if f.tags[0] in ("date", "deadline")]
    assert any("sexta, dia 27" in t and "(2026-03-27)" in t for t in texts), texts
    assert any("segunda, dia 16" in t and "(2026-03-16)" in t for t in texts), texts
    assert any("Monday the 16th" in t and "(2026-03-16)" in t for t in texts), texts
    assert resolve("sábado dia sete", at("2026-03-02"), False, True, False) == "2026-03-07"
    assert resolve("el viernes 27 de marzo", at("2026-04-02"), False, False) == "2026-03-27"
    assert resolve("sexta, dia 28", at("2026-03-20"), False, True, False) is None
    assert not [
        f
        for f in extract_people_facts(
            [{"role": "user", "content": "a segunda 2 vezes cobrada"}], "webchat", at("2026-03-20")
        )
        if f.tags[0] == "date"
    ]


def test_one_day_said_twice_is_one_fact() -> None:
    """The customer saying back the day the agent's deadline names adds no date, and a
    day said again in other words replaces its older wording: the dates kept leave room
    for the other days the customer named (four of a kind are kept)."""
    turns = [
        ("user", "Chegou segunda, dia 16, com a tela quebrada."),
        ("user", "Abri o chamado na terça-feira, dia 17."),
        ("assistant", "A troca sai até sexta-feira, dia 27."),
        ("user", "Ontem liguei de novo."),
        ("user", "Ok, então até sexta dia 27."),
        ("user", "Na sexta-feira, dia 20, ninguém veio."),
        ("user", "Como falei, dia 20 ninguém apareceu."),
    ]
    facts = []
    for n, (who, text) in enumerate(turns):
        facts += extract_people_facts(
            [{"role": who, "content": text}], "webchat", at("2026-03-23") + n
        )
    shown = [f.text for f in current_facts(facts) if f.tags[0] in ("date", "deadline")]
    days = [t.rsplit("(20", 1)[-1][:8] for t in shown if "(20" in t]
    assert "(2026-03-16)" in " ".join(shown), shown  # the oldest date is still kept
    assert sorted(days) == sorted(set(days)), shown  # no day twice
    assert sum("(2026-03-27)" in t for t in shown) == 1 and any("agent" in t for t in shown)


def _dated(text: str, role: str = "user", on: str = "2025-03-10", now: bool = True) -> list[str]:
    said = [{"role": role, "content": text}]
    facts = extract_people_facts(said, "webchat", at(on), said_now=now)
    return [f.text for f in facts if f.tags[0] in ("date", "deadline")]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Can the technician come Saturday 10 am?", "date: Saturday (2025-03-08)"),
        ("Monday 9:30 works for me", "date: Monday (2025-03-10)"),
        ("I called Tuesday 3 times", "date: Tuesday (2025-03-11)"),
        ("It was Monday, 2 weeks ago", "date: Monday (2025-03-10)"),
        ("El viernes 3 cajas llegaron rotas", "date: El viernes (2025-03-07)"),
    ],
)
def test_a_number_after_a_weekday_that_is_an_hour_or_a_count_is_no_day(
    text: str, kept: str
) -> None:
    """Only the weekday is a date there: the number is an hour or a count (a review found
    "Saturday 10 am" dated May 10)."""
    assert _dated(text) == [kept]


def test_an_ordinal_is_no_weekday_and_a_weekday_slip_takes_the_nearest_day() -> None:
    """ "a segunda dia 20" is the second instalment, on the 20th; "Monday the 16th" said
    when the 16th is a Sunday is the 16th, not a Monday the 16th months away; read as
    it folds, "sexta, dia 14" with a Friday the 14th in two months around and neither
    near the fold names no day; a booked day needs a word of booking ("fully booked
    for Friday the 14th" is none)."""
    assert _dated("paguei a primeira dia 5 e a segunda dia 20") == [
        "date: dia 5 (2025-03-05)",
        "date: dia 20 (2025-03-20)",
    ]
    assert [t for t in _dated("O reembolso cai até a sexta, dia 14.", "assistant", now=False)] == [
        "deadline: até a sexta, dia 14 (2025-03-14) (the agent said)"
    ]  # "a sexta" after "até" is the weekday
    assert resolve("Monday the 16th", at("2025-03-10"), True, False) == "2025-03-16"
    assert resolve("pra sexta, dia 14", at("2025-03-01"), False, True, False) is None
    assert resolve("pra sexta, dia 14", at("2025-03-12"), False, True, False) == "2025-03-14"
    for refusal in (
        "We're fully booked for Friday the 14th, sorry.",
        "Infelizmente não temos horário para sábado, dia 15.",
        "I've booked the technician for Saturday 10 am.",
    ):
        assert not [t for t in _dated(refusal, "assistant", now=False) if "deadline" in t]
    assert _dated("Your visit is scheduled for Friday the 14th.", "assistant", now=False) == [
        "deadline: scheduled for Friday the 14th (2025-03-14) (the agent said)"
    ]


def test_a_correction_naming_a_day_keeps_the_other_dates() -> None:
    """ "chegou no sábado, dia 8" corrects the day-8 date it restates; the purchase on
    the 3rd stays (the review found it dropped too)."""
    turns = [
        "Comprei dia 3 de março.",
        "Chegou dia 8 de março.",
        "Desculpa, me enganei, chegou no sábado, dia 8",
    ]
    facts = []
    for n, text in enumerate(turns):
        facts += extract_people_facts(
            [{"role": "user", "content": text}], "webchat", at("2025-03-10") + n
        )
    shown = [f.text for f in current_facts(facts) if f.tags[0] == "date"]
    assert any("(2025-03-03)" in t for t in shown), shown
    assert sum("(2025-03-08)" in t for t in shown) == 1, shown


def test_next_friday_said_on_a_friday_is_a_week_on_and_a_bare_friday_that_day() -> None:
    """ "next Friday", "sexta que vem", "el próximo viernes" said on a Friday name the
    Friday a week on; a bare "Friday" (or a deadline "até sexta") said that Friday is
    that day (a review found "next Friday" dated the day it was said)."""
    friday = at("2026-12-11")
    for said, english in (
        ("next Friday", True),
        ("the coming Friday", True),
        ("sexta que vem", False),
        ("próxima sexta", False),
        ("el próximo viernes", False),
        ("el viernes siguiente", False),
    ):
        for ahead in (False, True):
            assert resolve(said, friday, english, ahead) == "2026-12-18", (said, ahead)
    assert resolve("até sexta", friday, False, True) == "2026-12-11"
    assert resolve("this Friday", friday, True, False) == "2026-12-11"
    assert resolve("last Friday", friday, True, False) == "2026-12-04"
    assert resolve("next Monday", friday, True, False) == "2026-12-14"  # not a week more
    agent = "Your refund will be processed by next Friday."
    assert _dated(agent, "assistant", "2026-12-11") == [
        "deadline: by next Friday (2026-12-18) (the agent said)"
    ]
    assert _dated("I'm away until next Friday", on="2026-12-11") == [
        "date: next Friday (2026-12-18)"
    ]


@pytest.mark.parametrize(
    ("said", "on", "ahead", "day"),
    [
        ("on the 31st", "2026-03-01", False, "2026-01-31"),  # February has no 31st
        ("dia 31", "2027-03-01", False, "2027-01-31"),
        ("on the 31st", "2026-03-01", True, "2026-03-31"),  # a deadline lies ahead
        ("on the 31st", "2024-03-01", False, "2024-03-31"),  # a tie: the day ahead
        ("on the 31st", "2026-05-01", False, "2026-05-31"),  # nearer ahead than behind
        ("dia 30", "2026-03-01", False, "2026-03-30"),
    ],
)
def test_a_day_some_months_lack_is_the_nearest_month_that_has_it(
    said: str, on: str, ahead: bool, day: str
) -> None:
    """ "I was charged twice on the 31st" said on 1 March is 31 January, not a day ahead
    of it in March only because February has no 31st (a review found the 31st of March);
    a deadline still lies ahead."""
    assert resolve(said, at(on), not said.startswith("dia"), ahead) == day


FRIDAY = dt.datetime(2026, 12, 11, 14, tzinfo=dt.UTC).timestamp()


def _days(said: str, at: float) -> list[str]:
    """The ISO days of the dates a customer's message states, said at `at`."""
    facts = extract_people_facts([{"role": "user", "content": said}], "webchat", at)
    return [f.text.rsplit("(", 1)[-1].rstrip(")") for f in facts if f.tags[0] == "date"]


@pytest.mark.parametrize(
    ("said", "day"),
    [
        ("eu viajo e volto na sexta que vem", "2026-12-18"),
        ("vuelvo el viernes que viene", "2026-12-18"),
        ("chegou no sábado passado", "2026-12-05"),
        ("llegó el viernes pasado", "2026-12-04"),
        ("foi na sexta passada", "2026-12-04"),
        ("A entrega foi na última sexta.", "2026-12-04"),
        ("chegou no último sábado", "2026-12-05"),
        ("volto na sexta que vem e pego", "2026-12-18"),
    ],
)
def test_a_weekday_told_next_or_past_after_it_is_read_with_those_words(said: str, day: str) -> None:
    """Said on Friday 2026-12-11: "sexta que vem" was heard as "sexta", that very day;
    "sábado passado" as the next Saturday and "viernes pasado" as today."""
    assert _days(said, FRIDAY) == [day]


@pytest.mark.parametrize(
    "said",
    ["Ele disse na segunda que vem buscar o pedido.", "Me dijo el lunes que viene a buscarlo."],
)
def test_que_vem_before_a_verb_of_its_own_is_no_next_weekday(said: str) -> None:
    """ "disse na segunda que vem buscar" is what he said on Monday (that he comes): read
    as "segunda que vem", it was next Monday."""
    at = dt.datetime(2026, 12, 9, 14, tzinfo=dt.UTC).timestamp()  # a Wednesday
    facts = extract_people_facts([{"role": "user", "content": said}], "webchat", at)
    assert [f.text for f in facts if f.tags[0] == "date"] in (
        ["date: segunda (2026-12-07)"],
        ["date: lunes (2026-12-07)"],
    )


@pytest.mark.parametrize(
    "said",
    [
        "volto na sexta que vem\nobrigado",
        "volto na sexta que vem pela manhã",
        "a entrega é na sexta que vem às 10h",
        "só consigo na sexta que vem porque viajo",
        "vou buscar na sexta que vem pra trocar",
        "la entrega es el viernes que viene por la mañana",
        "chego na sexta que vem super cedo",
    ],
)
def test_a_next_weekday_followed_by_more_of_its_clause_is_still_next_week(said: str) -> None:
    """The second review: cutting "que vem" before any word made "sexta que vem pela
    manhã" (said on a Friday) that very Friday. Only a verb of its own cuts it."""
    assert _days(said, FRIDAY) == ["2026-12-18"]


def test_a_weekday_with_its_day_and_month_in_figures_is_that_day() -> None:
    """ "até quarta-feira, 06/05" is 6 May, not the next Wednesday; "na sexta 13/03/2026"
    (a working day without "-feira") the 13th, one fact; "Friday, 3/13" in English."""
    said = [
        {"role": "assistant", "content": "A vistoria é feita até quarta-feira, 06/05."},
        {"role": "user", "content": "foi na sexta 13/03/2026 e ninguém veio"},
        {"role": "user", "content": "The visit was on Friday, 3/13 and nobody came."},
    ]
    facts = extract_people_facts(said, "webchat", at("2026-03-20"), said_now=False)
    texts = [f.text for f in facts if f.tags[0] in ("date", "deadline")]
    assert any("quarta-feira, 06/05" in t and "(2026-05-06)" in t for t in texts), texts
    assert any("sexta 13/03/2026" in t and "(2026-03-13)" in t for t in texts), texts
    assert any("Friday, 3/13" in t and "(2026-03-13)" in t for t in texts), texts
    assert not any("(2026-03-20)" in t or "(2026-03-25)" in t for t in texts), texts


@pytest.mark.parametrize(
    "said",
    [
        "olha tá assim desde dia vinte e seis do mês passado mais ou menos",
        "tá assim desde dia 26 do mês passado",
        "it's been like this since the 26th of last month",
        "desde el 26 del mes pasado",
    ],
)
def test_a_day_of_last_month_is_that_day(said: str) -> None:
    """ "dia 26 do mês passado" said on 20 March is 26 February ("dia 26" alone was the 26
    of March, days ahead; in words, or in English or Spanish, it was no date at all)."""
    facts = extract_people_facts([{"role": "user", "content": said}], "webchat", at("2026-03-20"))
    texts = [f.text for f in facts if f.tags[0] == "date"]
    assert len(texts) == 1 and texts[0].endswith("(2026-02-26)"), texts
