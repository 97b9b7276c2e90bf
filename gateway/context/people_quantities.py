"""Where a turn states money and dates: the spans the people extractor reads as amounts,
promises, dates and deadlines, and a correction's restated value. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gateway.context.people_numbers import number_tokens
from gateway.context.people_patterns import (
    AMOUNT,
    DATE,
    MONEY_AFTER,
    MONEY_CUE,
    MONTH_AHEAD,
    PRICED,
    SLANG_MONEY,
    SPOKEN_CENTS,
    WEEKDAY_NUMBER,
    WEIGHED,
)
from gateway.context.people_text import SpanMatch, first_matches, next_word
from gateway.context.people_words import (
    AFTER_DAY,
    AFTER_PRICE,
    CENTS_JOINERS,
    NOT_CENTS_AFTER,
    NOT_WEEKDAY,
    TIME_WORDS,
    UNITS,
)


def amount_spans(folded: str, english: bool, money: bool = False) -> Iterator[tuple[int, int]]:
    """Where the turn states an amount; a spelled one from its first number word, a bare
    number right after a word for paying (PRICED). `money`: the text is known to speak of
    money (a bare "159 e 99" needs no money word)."""
    for m in first_matches(AMOUNT, folded):
        start = m.start()
        if _bare_cents(folded, m, money) or _slang_unspoken(folded, m, money):
            continue
        end = m.end()
        if not any(c.isdigit() for c in m.group(0) or ""):
            tokens = number_tokens(folded, start, end, english)
            start = tokens[0][0] if tokens else end
            end += _spoken_cents(folded, end, english)
        yield start, end
    for m in first_matches(PRICED, folded):
        # no currency said: the number ends its clause or a small word follows ("paguei
        # 350 na entrega"); not a count of things ("paid 40 invoices", "custou 300 horas")
        # nor a year
        number = m.group(1) or ""
        word = next_word(folded, m.end(1))
        if (word and word not in AFTER_PRICE) or (len(number) == 4 and number[:2] in ("19", "20")):
            continue
        yield m.start(1), m.end(1)


def _spoken_cents(folded: str, end: int, english: bool) -> int:
    """How far the cents said after a sum in words reach past its currency word: "e
    quarenta e sete" ends the amount, "e cinco centavos" too; not "e dois dias" (a count
    of something else), "and one of our team", nor a hundred or more."""
    m = SPOKEN_CENTS.search(folded[end : end + 80])
    if m is None:
        return 0
    cents = [t[3] for t in number_tokens(folded, end + m.start(1), end + m.end(1), english)]
    if not cents or sum(cents) >= 100 or len(cents) > 2:
        return 0
    # without the word for cents, two digits of them ("e quarenta e sete"): "and one of
    # our team", "e um cupom", "y una disculpa" say something else
    if m.group(2) is None and (sum(cents) < 10 or next_word(folded, end + m.end()) in UNITS):
        return 0
    return m.end()


def _money_spoken(folded: str, m: SpanMatch, money: bool) -> bool:
    """`money`, or a word of money just before the match, or where it was paid just after
    it ("deu 185 e 39 no total", "saiu 29 conto no cartão")."""
    before = MONEY_CUE.search(folded[max(0, m.start() - 60) : m.start()]) is not None
    return money or before or MONEY_AFTER.search(folded[m.end() : m.end() + 40]) is not None


def _slang_unspoken(folded: str, m: SpanMatch, money: bool) -> bool:
    """Money's slang words name things too ("2 paus de selfie", "dos pavos" for
    Christmas, "2 pratas" won, "3 contos do Machado", "quid codes"): an amount only where
    money is spoken of just before. Pounds and libras weigh too: money only where money
    is spoken of in their own sentence and nothing there is weighed ("charged me for a
    50 pounds box but it only weighs 20 pounds", "o pacote pesa 5 libras")."""
    words = (m.group(0) or "").lower().split()
    if not words or words[-1] not in SLANG_MONEY:
        return False
    if words[-1] in _WEIGHS:
        begin = max((folded.rfind(c, 0, m.start()) for c in ".;!?\n"), default=-1) + 1
        ends = [i for c in ".;!?\n" if (i := folded.find(c, m.end())) >= 0]
        sentence = folded[begin : min(ends, default=len(folded))]
        spoken = money or MONEY_CUE.search(folded[begin : m.start()]) is not None
        return not spoken or WEIGHED.search(sentence) is not None
    return not _money_spoken(folded, m, money)


_WEIGHS = frozenset({"pounds", "libras"})


def _bare_cents(folded: str, m: SpanMatch, money: bool) -> bool:
    """A "10 e 15" that is no amount: no money spoken of just before it, a unit after it
    ("entre 10 e 15 dias"), days or items before it ("no dia 10 e 15 de março", "items 3
    and 12") or a month after it."""
    words = (m.group(0) or "").split()
    split = len(words) == 3 and words[1].lower() in CENTS_JOINERS
    if not (split and words[0].isdigit() and words[2].isdigit()):
        return False
    spoken = _money_spoken(folded, m, money)
    before = folded[max(0, m.start() - 24) : m.start()].lower().split()
    return (
        not spoken
        or next_word(folded, m.end()) in UNITS
        or (bool(before) and before[-1] in NOT_CENTS_AFTER)
        or MONTH_AHEAD.search(folded[m.end() : m.end() + 24]) is not None
    )


_ORDINAL_ARTICLES = frozenset({"a", "o", "as", "os"})
_BEFORE_A_DAY = frozenset({"ate", "para", "pra", "desde", "antes", "depois", "entre", "por", "de"})


def weekday_day(folded: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of a date match holding a weekday and a number: the whole match when the
    number is its day of the month; else the weekday alone, or None (no date): "Saturday
    10 am", "Monday 9:30", "Tuesday 3 times", "El viernes 3 cajas" name an hour or a
    count; in "a segunda dia 20" (the second instalment) only "dia 20" is a date. A bare
    number ("el viernes 27") is a day only where the clause ends or a small word follows."""
    found = WEEKDAY_NUMBER.search(folded, start, end)
    if found is None:
        return start, end
    number = found.group(3) or ""
    word = next_word(folded, found.end())
    marked = bool(found.group(2)) or not number.isdigit() or found.end() < end
    time = folded[found.end() : found.end() + 1] in (":", "h") or word in TIME_WORDS
    counted = word in UNITS or (not marked and bool(word) and word not in AFTER_DAY)
    before = folded[max(0, found.start() - 12) : found.start()].split()
    name = (found.group(1) or "").lower()
    bare = " " not in name and "-" not in name
    ordinal = bool(before) and before[-1].lower() in _ORDINAL_ARTICLES
    if ordinal and len(before) > 1 and before[-2].lower() in _BEFORE_A_DAY:
        ordinal = False  # "até a sexta, dia 27": a weekday after all
    if bare and ordinal:  # "a segunda dia 20": the second one
        return (found.start(2), end) if found.group(2) and not (time or counted) else None
    if not (time or counted):
        return start, end
    alone = DATE.search(folded[start : found.end(1)])
    return (start, found.end(1)) if alone and alone.end() == found.end(1) - start else None


def date_spans(folded: str) -> Iterator[tuple[int, int]]:
    """Where the turn states a date: not "24/7", "segunda vez" or "31/31", and without
    the "na", "no", "on" before it (a "dia" stays, the words as said: "dia 16 de
    outubro"; gateway.context.people's ids read it as "16 de outubro", one date); a
    weekday's number only when it is a day (`weekday_day`)."""
    for m in first_matches(DATE, folded):
        span = weekday_day(folded, m.start(), m.end())
        if span is None:
            continue
        begin, end = span
        while end > begin and not folded[end - 1].isalnum():
            end -= 1  # "the 26th of last month." ends at its word (the pattern reads one more)
        value = folded[begin:end].lower()
        after = folded[end : end + 20].split()
        if value == "24/7" or (after and after[0].lower() in NOT_WEEKDAY):
            continue
        if "/" in value and not _day_month(value.split()[-1].split("/")):
            continue
        lead = value.split(" ", 1)[0] if " " in value else ""
        dropped = lead in ("na", "no", "on")
        yield begin + (len(lead) + 1 if dropped else 0), _coming_or_not(folded, begin, end)


# "que vem" / "que viene" after a weekday names the next one ("sexta que vem pela manhã",
# "... que vem pra trocar") unless a verb of its own follows it: then it is a relative
# clause, "disse na segunda que vem buscar" (on Monday, that he comes to fetch it),
# "el lunes que viene a buscarlo", "... que vem amanhã".
_COMING = ("que vem", "que viene")
_INFINITIVE = re.compile(r"(?:a\s+)?[a-z]{2,}(?:ar|er|ir)(?:l[oa]s?|me|te|se)?\b")
_WHEN_IT_COMES = frozenset(["amanha", "manana", "hoje", "hoy", "aqui", "aca", "ai", "ahi"])
_NOT_VERBS = frozenset(["super", "melhor", "qualquer", "lugar", "mulher", "cualquier"])


def _coming_or_not(folded: str, begin: int, end: int) -> int:
    """The date's end, "que vem" left out when a verb of its own follows it."""
    value = folded[begin:end].lower()
    said = next((c for c in _COMING if value.endswith(c)), None)
    if said is None:
        return end
    after = folded[end : end + 40]
    if "\n" in after[: len(after) - len(after.lstrip())]:
        return end  # the line ends with it
    rest = after.lstrip().lower()
    word = rest.split(maxsplit=1)[0] if rest else ""
    if (_INFINITIVE.match(rest) and word not in _NOT_VERBS) or word in _WHEN_IT_COMES:
        return begin + len(value[: -len(said)].rstrip())
    return end


def _day_month(parts: list[str]) -> bool:
    first, second = int(parts[0]), int(parts[1])
    return 1 <= min(first, second) <= 12 and max(first, second) <= 31 and min(first, second) > 0
