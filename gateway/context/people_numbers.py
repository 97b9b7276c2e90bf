"""Numbers as people say them, in Portuguese, English and Spanish: "nove um dois" is 912,
"one hundred five" 105, "double five" 55, "veintiocho" 28. Pure.

Phone transcripts spell out orders, phones and amounts; a fact's id is a hash of its
digits, so "nine one two" and "912" must come out as the same digits.
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.context.people_text import FOLD, linear, word_set

# Number words, folded (no accents), by value; "oh" is English's zero.
_NUMBER_ROWS = (
    "0 zero oh cero|1 one um uma uno una|2 two dois duas dos|3 three tres|4 four quatro "
    "cuatro|5 five cinco|6 six seis meia|7 seven sete siete|8 eight oito ocho|9 nine nove "
    "nueve|10 ten dez diez|11 eleven onze once|12 twelve doze doce|13 thirteen treze trece|"
    "14 fourteen catorze quatorze catorce|15 fifteen quinze quince|16 sixteen dezesseis "
    "dezasseis dieciseis|17 seventeen dezessete dezassete diecisiete|18 eighteen dezoito "
    "dieciocho|19 nineteen dezenove dezanove diecinueve|20 twenty vinte veinte|21 veintiuno|"
    "22 veintidos|23 veintitres|24 veinticuatro|25 veinticinco|26 veintiseis|27 veintisiete|"
    "28 veintiocho|29 veintinueve|30 thirty trinta treinta|40 forty fourty quarenta cuarenta|"
    "50 fifty cinquenta cincuenta|60 sixty sessenta sesenta|70 seventy setenta|80 eighty "
    "oitenta ochenta|90 ninety noventa|100 cem cento cien ciento|200 duzentos duzentas "
    "doscientos doscientas|300 trezentos trezentas trescientos|400 quatrocentos "
    "cuatrocientos|500 quinhentos quinientos|600 seiscentos seiscientos|700 setecentos "
    "setecientos|800 oitocentos ochocientos|900 novecentos novecientos"
)
_ORDINAL_ROWS = (
    "1 first primeiro primero|2 second|3 third|4 fourth|5 fifth|6 sixth|7 seventh|8 eighth|"
    "9 ninth|10 tenth|11 eleventh|12 twelfth|13 thirteenth|14 fourteenth|15 fifteenth|"
    "16 sixteenth|17 seventeenth|18 eighteenth|19 nineteenth|20 twentieth|30 thirtieth"
)
MULTIPLIERS = {"hundred": 100, "thousand": 1000, "mil": 1000, "million": 10**6}
MULTIPLIERS |= dict.fromkeys(("milhao", "milhoes", "millon", "millones"), 10**6)
REPEATS = {"double": 2, "triple": 3}
_ENGLISH_NUMBERS = word_set(
    "zero oh one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
    "eighty ninety hundred thousand million double triple"
)

RUN_FILLERS = word_set("uh uhm um umm hmm eh ah e y and tipo like")


def _table(rows: str) -> dict[str, int]:
    return {w: int(r.split()[0]) for r in rows.split("|") for w in r.split()[1:]}


NUMBERS = _table(_NUMBER_ROWS)
# Tens and units run together, as a transcript may write them: "fortysix", "ninetyone".
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_JOINED = {t + u: NUMBERS[t] + NUMBERS[u] for t in _TENS for u in _UNITS}
NUMBERS |= _JOINED
_ENGLISH_NUMBERS |= frozenset(_JOINED)
ORDINALS = _table(_ORDINAL_ROWS)
# A word of a folded text, for the number words among them.
TOKEN = linear(r"[A-Za-z]+")


def number_word(word: str, english: bool) -> tuple[str, int] | None:
    """(role, value) of a folded lowercase number word; None for a filler or a non-number.
    In English "um" is a hesitation and "once" a word, not Portuguese 1 or Spanish 11."""
    if english and word in ("um", "once", "uma", "una", "dos"):
        return None
    if word in MULTIPLIERS:
        return "mult", MULTIPLIERS[word]
    if word in REPEATS:
        return "repeat", REPEATS[word]
    value = NUMBERS.get(word, ORDINALS.get(word))
    if value is None or (word == "oh" and not english):
        return None
    role = "unit" if value < 10 else "tens" if value % 10 == 0 and value < 100 else "whole"
    return ("hundreds" if value >= 100 else role), value


def compose(parts: Sequence[tuple[str, int]]) -> str:
    """Digits of number words: a cardinal when a hundred or thousand is said ("cento e
    cinco" -> 105), else digit by digit as a phone number is read ("nine one twenty three"
    -> 9123)."""
    if any(role in ("mult", "hundreds") for role, _ in parts):
        total = current = 0
        for role, value in parts:
            if role == "mult" and value == 100:
                current = max(current, 1) * 100
            elif role == "mult":
                total, current = total + max(current, 1) * value, 0
            elif role != "repeat":
                current += value
        return str(total + current)
    out: list[str] = []
    tens, repeat = "", 1
    for role, value in parts:
        if role == "repeat":
            repeat = value
            continue
        if role == "unit" and tens:
            out.append(str(int(tens) + value))
        elif role == "tens":
            out.append(tens)
        else:
            out.extend([tens, str(value) * repeat])
        tens, repeat = (str(value) if role == "tens" else ""), 1
    return "".join(out) + tens


def cardinals(folded: str, english: bool) -> bool:
    """Whether each run of number words in a value reads as one number ("cento e sessenta
    e nove", "forty seven"), not as figures said in pairs ("one sixty nine ninety five",
    which is 169.95 as a price and 16995 as digits read out)."""
    run: list[tuple[str, int]] = []
    for word in [*alnum_runs(folded), ""]:
        found = number_word(word, english) if word else None
        if found:
            run.append(found)
            continue
        if word in RUN_FILLERS and word:
            continue
        roles = [role for role, _ in run]
        if run and not (
            any(r in ("mult", "hundreds") for r in roles)
            or roles in (["unit"], ["whole"], ["tens"], ["tens", "unit"])
        ):
            return False
        run = []
    return True


def number_tokens(
    folded: str, start: int, end: int, english: bool
) -> list[tuple[int, int, str, int]]:
    """(start, end, role, value) of each number word in folded[start:end]: a spelled
    value's span runs from its first number word to its last, fillers around them left
    out."""
    out = []
    for m in TOKEN.finditer(folded[start:end]):
        found = number_word((m.group(0) or "").lower(), english)
        if found is not None:
            out.append((start + m.start(), start + m.end(), *found))
    return out


def spelled_number(text: str, english: bool | None = None) -> str | None:
    """The digits that number words say, in pt, en or es: "nove um dois" -> "912",
    "one hundred five" -> "105", "double five" -> "55", "veintiocho" -> "28". None when a
    word is neither a number nor a filler between numbers ("and", "e", "uh"). English
    (where "um" is a hesitation and "oh" a zero) unless told, when any word is English."""
    folded = text.translate(FOLD).lower()
    words = [m.group(0) or "" for m in TOKEN.finditer(folded)]
    if english is None:
        english = not _ENGLISH_NUMBERS.isdisjoint(words)
    parts = [number_word(w, english) for w in words]
    if not any(parts) or any(
        p is None and w not in RUN_FILLERS for p, w in zip(parts, words, strict=True)
    ):
        return None
    return compose([p for p in parts if p is not None])


def alnum_runs(value: str) -> list[str]:
    """A short value's runs of letters and of digits (in Python: the wrapper's cost per
    regex match is more than this loop's on a value of a few words)."""
    spaced = "".join(c if c.isalnum() else " " for c in value)
    return [t for w in spaced.split() for t in _split_digits(w)]


def _split_digits(word: str) -> list[str]:
    if word.isalpha() or word.isdigit():
        return [word]
    out = [word[0]]
    for c in word[1:]:
        if c.isdigit() == out[-1][-1].isdigit():
            out[-1] += c
        else:
            out.append(c)
    return out


def number_groups(folded: str, english: bool, words: bool = False) -> list[str]:
    """A spelled value's runs of number words as digits, between its single letters
    ("l r three three" -> ["L", "R", "33"]) or, with `words`, its other words too."""
    groups: list[str] = []
    run: list[tuple[str, int]] = []
    for word in alnum_runs(folded):
        found = number_word(word, english)
        if found:
            run.append(found)
        elif word not in RUN_FILLERS and word not in ("st", "nd", "rd", "th", "o"):
            groups += [compose(run)] if run else []
            groups += [word.upper()] if len(word) == 1 else [word] if words else []
            run = []
    return groups + ([compose(run)] if run else [])


def said_digits(run: str, english: bool) -> str:
    """The digits a number says in any mix of digits and number words ("415 555 zero
    one nine nine" -> "4155550199", "quatro um cinco" -> "415", "double five" -> "55"),
    each part between commas or stops read on its own ("room one hundred, four one
    five" -> "100415", not one cardinal). Other words are passed over: `run` is meant
    to be one (gateway.context.people_patterns.MIXED_NUMBER finds them)."""
    folded = run.translate(FOLD).lower().replace(".", ",")
    return "".join(
        g for part in folded.split(",") for g in number_groups(part, english, True) if g.isdigit()
    )
