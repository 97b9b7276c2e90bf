"""The day a date or deadline names, as it was meant when said: "sexta, dia 13", "by
Tuesday, March 24", "amanhã", "ontem", "dia vinte e seis do mês passado", "10/04". A
relative date is only true on the day it is said: read days later, after the turn has
folded into a summary, "até sexta" means nothing, so a fact shows its ISO day beside the
words (gateway.context.people). Pure: the moment said (`at`, seconds since the epoch,
UTC) is passed in.

A deadline the agent gives lies ahead; a date the customer gives may lie behind ("chegou
segunda") or ahead ("viajo dia 20"): the nearest such day is taken, a day ahead on a
tie; "next"/"que vem"/"próxima" always ahead, and said on that weekday a week on ("next
Friday" on a Friday), where a bare weekday (or "até sexta") is that day. None when the
words name no one day ("Easter", "next week").

The gateway knows no customer's time zone: a relative day ("ontem", "amanhã", a bare
weekday) is read only between 08:00 and 23:00 UTC, when the date is the same from UTC-8
(the US west coast) to UTC+1 (Lisbon, Madrid), where the customers of pt, en and es
live; at other hours it is kept as said. A turn read as it folds (`relative` false), later
than it was said, gets a day only when its month is named (or its year), or its weekday
with its day ("sexta, dia 27": one day in the months around): "até o dia 2", said on the
30th and folded on the 3rd, names no day there, and the nearest day is taken (never
forced ahead of the fold).
"""

from __future__ import annotations

import datetime as dt
import functools
import re

from gateway.context.people_numbers import spelled_number
from gateway.context.people_text import FOLD, word_set

_MONTHS = {
    **dict.fromkeys(("january", "janeiro", "enero", "jan"), 1),
    **dict.fromkeys(("february", "fevereiro", "febrero", "feb", "fev"), 2),
    **dict.fromkeys(("march", "marco", "marzo", "mar"), 3),
    **dict.fromkeys(("april", "abril", "apr", "abr"), 4),
    **dict.fromkeys(("may", "maio", "mayo"), 5),
    **dict.fromkeys(("june", "junho", "junio", "jun"), 6),
    **dict.fromkeys(("july", "julho", "julio", "jul"), 7),
    **dict.fromkeys(("august", "agosto", "aug", "ago"), 8),
    **dict.fromkeys(("september", "setembro", "septiembre", "setiembre", "sept", "sep"), 9),
    **dict.fromkeys(("october", "outubro", "octubre", "oct", "out"), 10),
    **dict.fromkeys(("november", "novembro", "noviembre", "nov"), 11),
    **dict.fromkeys(("december", "dezembro", "diciembre", "dec", "dez", "dic"), 12),
}
_WEEKDAYS = {
    **dict.fromkeys(("monday", "segunda", "lunes"), 0),
    **dict.fromkeys(("tuesday", "terca", "martes"), 1),
    **dict.fromkeys(("wednesday", "quarta", "miercoles"), 2),
    **dict.fromkeys(("thursday", "quinta", "jueves"), 3),
    **dict.fromkeys(("friday", "sexta", "viernes"), 4),
    **dict.fromkeys(("saturday", "sabado"), 5),
    **dict.fromkeys(("sunday", "domingo"), 6),
}
_RELATIVE = {
    "today": 0, "hoje": 0, "hoy": 0, "tomorrow": 1, "amanha": 1, "manana": 1,
    "yesterday": -1, "ontem": -1, "ayer": -1,
}  # fmt: skip
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_SLASHED = re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?\b")
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_AHEAD = re.compile(r"\b(?:next|coming|que\s+vem|que\s+viene|proxim[oa]|siguiente)\b")
_PAST = frozenset({"last", "passada", "passado", "pasada", "pasado", "ultima", "ultimo"})
_DAY_BEFORE = re.compile(r"\b(?:anteontem|anteayer)\b|day\s+before\s+yesterday")
LOCAL_HOURS = range(8, 23)  # UTC hours whose date is the customers' own (see above)
Said = tuple[int | None, int | None, int | None]  # month, day, year
_WORD = re.compile(r"[a-z]+|\d+")
_LAST_MONTH = re.compile(r"\b(?:mes\s+passado|last\s+month|mes\s+pasado)\b")
_DAY_WORDS = re.compile(r"^(\d{1,2})(?:st|nd|rd|th|o)?$")
_AFTER_TOMORROW = re.compile(r"depois\s+de\s+amanha|day\s+after\s+tomorrow|pasado\s+manana")
# A duration names no day ("em até 5 dias úteis", "within two business days").
_UNITS = word_set(
    "day days dia dias hour hours hora horas week weeks semana semanas month months mes meses "
    "minute minutes minuto minutos year years ano anos"
)
_UNIT_LEADS = frozenset({"business", "working"})
SPOKEN_WORDS = 12  # a date said in words is short: "vinte e seis de agosto"
_FILLERS = frozenset({"de", "del", "of", "the", "dia", "el", "by", "ate", "on", "no", "na"})


def resolve(value: str, at: float, english: bool, ahead: bool, relative: bool = True) -> str | None:
    """The ISO day `value` names, said at `at`; `ahead`: a deadline, never behind.
    `relative`: `at` is when it was said (the newest message), not when it is read."""
    moment = dt.datetime.fromtimestamp(at, dt.UTC)
    local = relative and moment.hour in LOCAL_HOURS
    return _resolved(value, moment.date(), english, ahead and relative, relative, local)


@functools.lru_cache(maxsize=4096)
def _resolved(
    value: str, said: dt.date, english: bool, ahead: bool, relative: bool, local: bool
) -> str | None:
    """`resolve` on the day said; remembered: a date is read again each time its message is.
    `local`: the UTC date is the customer's too (a relative day may be read)."""
    text = value.translate(FOLD).lower()
    found = _ISO.search(text)
    if found:
        return _day(int(found[1]), int(found[2]), int(found[3]))
    words = _WORD.findall(text)
    if _duration(words, english):
        return None
    shift = _relative(text, words) if local else None
    if shift is not None:
        return (said + dt.timedelta(days=shift)).isoformat()
    told_next = _AHEAD.search(text) is not None
    ahead = ahead or told_next
    month, day, year = _month_day(text, words, english)
    weekday = next((_WEEKDAYS[w] for w in words if w in _WEEKDAYS), None)
    if day is not None:
        return _numbered(said, (month, day, year), weekday, ahead, relative, text)
    if weekday is None or not local:
        return None
    last = any(w in _PAST for w in words)
    return _weekday(said, weekday, ahead, last, told_next)


def _numbered(
    said: dt.date, told: Said, weekday: int | None, ahead: bool, relative: bool, text: str
) -> str | None:
    """A day said by its number: with its year, that day; with its weekday (no month),
    the day that is both; else the nearest such day (a fold only when the month is
    named)."""
    month, day, year = told
    if day is not None and weekday is not None and month is None and year is None:
        pinned = _weekday_numbered(said, weekday, day, ahead, relative)
        if pinned or not relative:
            return pinned
    if day is None or not (relative or month is not None):
        return None
    if year is not None and month is not None:
        return _day(year, month, day)
    return _nearest(said, month, day, ahead, _LAST_MONTH.search(text) is not None)


def _relative(text: str, words: list[str]) -> int | None:
    """Days from the day said that "amanhã", "yesterday", "pasado mañana" name."""
    if _AFTER_TOMORROW.search(text):
        return 2
    if _DAY_BEFORE.search(text):
        return -2
    return next((_RELATIVE[w] for w in words if w in _RELATIVE), None)


def _duration(words: list[str], english: bool) -> bool:
    """A number of days, hours or weeks: "5 dias úteis", "two business days"."""
    for n, word in enumerate(words):
        if word in _UNITS and n:
            before = words[n - 2] if words[n - 1] in _UNIT_LEADS and n > 1 else words[n - 1]
            if before.isdigit() or spelled_number(before, english):
                return True
    return False


def _month_day(text: str, words: list[str], english: bool) -> Said:
    """(month, day of the month, year), each None when the words do not say it."""
    slashed = _SLASHED.search(text)
    if slashed:
        first, second = int(slashed[1]), int(slashed[2])
        year = int(slashed[3]) if slashed[3] else None
        year = year + 2000 if year is not None and year < 100 else year
        # day first (pt, es, en-GB), unless that cannot be or the turn is English and
        # both could be: then month first, as in the US
        month_first = second > 12 or (english and first <= 12)
        return (first, second, year) if month_first else (second, first, year)
    written = _YEAR.search(text)
    year = int(written[1]) if written else None
    if written:
        words = [w for w in words if w != written[1]]
    month = next((_MONTHS[w] for w in words if w in _MONTHS and w != "mar"), None)
    kept = [w for w in words if w not in _MONTHS and w not in _WEEKDAYS and w not in _FILLERS]
    for w in kept:
        digits = _DAY_WORDS.match(w)
        if digits:
            return month, int(digits[1]), year
    spoken = [w for w in kept if w.isalpha()][:SPOKEN_WORDS]
    for start in range(len(spoken)):  # "vinte e seis", "twenty fifth", the longest first
        for end in range(min(len(spoken), start + 4), start, -1):
            number = spelled_number(" ".join(spoken[start:end]), english)
            if number and number.isdigit() and 1 <= int(number) <= 31:
                return month, int(number), year
    return month, None, year


WEEKDAY_MONTHS = 1  # a weekday with its day of the month is sought this many months around
FOLD_NEAR_DAYS = 10  # read as it folds, two such days: the one this near the fold, if one is


def _weekday_numbered(
    said: dt.date, weekday: int, day: int, ahead: bool, relative: bool
) -> str | None:
    """The day of the month `day` that is that weekday, in the months around `said`:
    "sexta, dia 27" pins one, so a fold (read later) dates it too. None when none is (a
    slip: "Monday the 16th" on a Sunday the 16th: the caller takes the nearest 16th), and
    for a fold when two are and neither lies within FOLD_NEAR_DAYS of it (February and
    March share their weekdays: which one was meant depends on when it was said)."""
    found: list[dt.date] = []
    for shift in range(-WEEKDAY_MONTHS, WEEKDAY_MONTHS + 1):
        iso = _day(*_month_after(said, shift), day)
        if iso and dt.date.fromisoformat(iso).weekday() == weekday:
            found.append(dt.date.fromisoformat(iso))
    best = _closest(said, found, ahead)
    if best and not relative and len(found) > 1:
        near = abs((dt.date.fromisoformat(best) - said).days) <= FOLD_NEAR_DAYS
        return best if near else None
    return best


def _closest(said: dt.date, days: list[dt.date], ahead: bool) -> str | None:
    """The day of `days` nearest `said` (ahead of it for a deadline, where one is; a day
    ahead on a tie)."""
    if ahead:
        days = [d for d in days if d >= said] or days
    if not days:
        return None
    return min(days, key=lambda d: (abs((d - said).days), d < said)).isoformat()


def _month_after(said: dt.date, shift: int) -> tuple[int, int]:
    """(year, month) `shift` months after the month of `said` (before it when negative)."""
    m = said.month + shift
    return said.year + (m - 1) // 12, (m - 1) % 12 + 1


def _day(year: int, month: int, day: int) -> str | None:
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None


# Months sought behind, at and ahead of the one said: one of any two months running has
# each day of the month (no two lack the 31st).
_MONTHS_AROUND = (range(-1, -3, -1), range(1), range(1, 3))


def _nearest(
    said: dt.date, month: int | None, day: int, ahead: bool, last_month: bool
) -> str | None:
    """The day nearest to `said` with that day (and month), ahead of it for a deadline."""
    if last_month and month is None:
        return _day(*_month_after(said, -1), day)
    if month is not None:
        found = [_day(said.year + shift, month, day) for shift in (-1, 0, 1)]
    else:  # the months around that have the day: on 1 March, the 31st is January's
        found = [_in_months(said, day, shifts) for shifts in _MONTHS_AROUND]
    return _closest(said, [dt.date.fromisoformat(iso) for iso in found if iso], ahead)


def _in_months(said: dt.date, day: int, shifts: range) -> str | None:
    """The day `day` of the first month `shifts` months from said's that has it."""
    return next((iso for shift in shifts if (iso := _day(*_month_after(said, shift), day))), None)


def _weekday(said: dt.date, weekday: int, ahead: bool, last: bool, told_next: bool) -> str:
    """The day of `weekday` nearest `said`; `told_next` ("next Friday"): never `said`."""
    forward = (weekday - said.weekday()) % 7 or (7 if told_next else 0)
    back = forward - 7 if forward else 0
    if last:
        return (said + dt.timedelta(days=back or -7)).isoformat()
    if ahead or forward <= -back:
        return (said + dt.timedelta(days=forward)).isoformat()
    return (said + dt.timedelta(days=back)).isoformat()
