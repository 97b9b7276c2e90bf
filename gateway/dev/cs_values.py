"""Values of planted facts for the customer-service workload: a canonical value per fact
(what an evaluator compares against) and the many surface forms a person uses for it,
per language and channel (`R$ 149,90`, `149 e 90`, `cento e quarenta e nove reais`).

Plain functions over a `random.Random` the caller owns; nothing here reads a clock."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from gateway.dev.cs_numbers import number_words, spoken_digits
from gateway.dev.cs_places import (
    CITIES,
    CURRENCY,
    FIRST,
    LAST,
    MAIL_HOSTS,
    MONTHS,
    STREETS,
    UNITS,
)


@dataclass(frozen=True)
class Value:
    """A fact's canonical value and one way a person said it; `lead`: the word said
    before it that is not the value ("el" in "lo compré el 25/1")."""

    canonical: str
    surface: str
    lead: str = ""


def person_name(rng: random.Random, lang: str) -> tuple[str, str]:
    return rng.choice(FIRST[lang]), rng.choice(LAST[lang])


def name_value(rng: random.Random, first: str, last: str) -> Value:
    full = rng.random() < 0.5
    said = f"{first} {last}" if full else first
    return Value(said, said)


def city_value(rng: random.Random, lang: str) -> Value:
    city = rng.choice(CITIES[lang])
    return Value(city, city)


def address_value(rng: random.Random, lang: str, spoken: bool) -> Value:
    street, number = rng.choice(STREETS[lang]), rng.randint(12, 2890)
    unit = ""
    if rng.random() < 0.5:
        unit = rng.choice(UNITS[lang]).format(n=rng.randint(11, 904), f=rng.randint(1, 9))
    canonical = f"{street}, {number}" + (f", {unit}" if unit else "")
    if spoken:
        said = f"{street} {_spoken_number(rng, number, lang)} {unit}".lower()
        return Value(canonical, _strip_marks(said).strip())
    forms = [
        canonical,
        f"{street} {number}" + (f" {unit}" if unit else ""),
        f"{_abbreviate_street(street)} {number}" + (f" {unit}" if unit else ""),
    ]
    return Value(canonical, rng.choice(forms))


def _abbreviate_street(street: str) -> str:
    for long, short in (
        ("Rua ", "R. "),
        ("Avenida ", "Av. "),
        ("Street", "St"),
        ("Avenue", "Ave"),
        ("Calle ", "C/ "),
        ("Road", "Rd"),
    ):
        street = street.replace(long, short)
    return street


def _spoken_number(rng: random.Random, n: int, lang: str) -> str:
    return number_words(n, lang) if rng.random() < 0.6 else str(n)


def _strip_marks(text: str) -> str:
    return "".join(c for c in text if c not in ".,;:!?()/-º")


def order_value(rng: random.Random, style: str, spoken: bool, lang: str) -> Value:
    digits = str(rng.randint(100000, 999999))
    canonical = style.format(d=digits)
    if spoken:
        return Value(canonical, spoken_digits(digits, lang) if rng.random() < 0.7 else digits)
    forms = [canonical, canonical, digits, f"#{digits}", canonical.lower(), f"nº {digits}"]
    return Value(canonical, rng.choice(forms if lang == "pt" else forms[:5]))


def sku_value(rng: random.Random, lang: str, spoken: bool) -> Value:
    letters = "".join(rng.choice("ABCDEFGHJKLMNPRSTVWXZ") for _ in range(2))
    digits = f"{rng.randint(10, 99)}"
    tail = f"{rng.randint(1, 99):02d}"
    canonical = f"SKU-{letters}{digits}-{tail}"
    if spoken:
        said = " ".join(letters.lower()) + " " + spoken_digits(digits + tail, lang)
        return Value(canonical, said)
    forms = [
        canonical,
        f"{letters}{digits}-{tail}",
        f"{letters.lower()}{digits}{tail}",
        f"sku {letters}{digits}-{tail}".lower(),
    ]
    return Value(canonical, rng.choice(forms))


def amount_value(rng: random.Random, lang: str, spoken: bool) -> Value:
    whole = int(rng.lognormvariate(4.5, 0.9)) + 5
    cents = rng.choice([0, 0, 90, 99, 50, rng.randint(1, 99)])
    canonical = f"{CURRENCY[lang]} {Decimal(whole) + Decimal(cents) / 100:.2f}"
    if spoken:
        return Value(canonical, _spoken_amount(whole, cents, lang))
    return Value(canonical, rng.choice(_amount_forms(whole, cents, lang)))


def _amount_forms(whole: int, cents: int, lang: str) -> list[str]:
    if lang == "pt":
        dec = f"{whole},{cents:02d}"
        forms = [f"R$ {dec}", f"R${dec}", f"{dec} reais", f"R$ {dec}"]
        return forms + (
            [f"{whole} reais", f"R$ {whole}", f"{whole} conto"]
            if not cents
            else [f"{whole} e {cents:02d}"]
        )
    if lang == "en":
        dec = f"{whole}.{cents:02d}"
        forms = [f"${dec}", f"{dec} dollars", f"USD {dec}", f"${dec}"]
        return forms + ([f"${whole}", f"{whole} bucks"] if not cents else [])
    dec = f"{whole},{cents:02d}"
    forms = [f"{dec} €", f"{dec} euros", f"€{dec}", f"{dec}€"]
    return forms + (
        [f"{whole} euros", f"{whole} pavos"] if not cents else [f"{whole} euros con {cents:02d}"]
    )


def _spoken_amount(whole: int, cents: int, lang: str) -> str:
    unit, small, joiner = {
        "pt": ("reais", "centavos", " e "),
        "en": ("dollars", "cents", " and "),
        "es": ("euros", "céntimos", " con "),
    }[lang]
    said = f"{number_words(whole, lang)} {unit}"
    return said + (f"{joiner}{number_words(cents, lang)} {small}" if cents else "")


def date_value(rng: random.Random, day: date, lang: str, spoken: bool) -> Value:
    canonical = day.isoformat()
    month = MONTHS[lang][day.month - 1]
    if spoken:
        said = {
            "pt": f"dia {number_words(day.day, lang)} de {month}",
            "en": f"{month.lower()} {number_words(day.day, lang)}",
            "es": f"{number_words(day.day, lang)} de {month}",
        }[lang]
        return Value(canonical, said, "el " if lang == "es" else "")
    dd, mm = f"{day.day:02d}", f"{day.month:02d}"
    forms = {
        "pt": [
            f"{dd}/{mm}",
            f"{dd}/{mm}/{day.year}",
            f"{day.day} de {month}",
            f"dia {day.day}/{day.month}",
        ],
        "en": [
            f"{month} {day.day}",
            f"{day.month}/{day.day}",
            f"{month[:3]} {day.day}",
            f"{day.day} {month}",
            f"{month} {day.day}, {day.year}",
        ],
        "es": [
            f"{dd}/{mm}",
            f"{day.day} de {month}",
            f"{day.day}/{day.month}",
            f"{dd}/{mm}/{day.year}",
        ],
    }[lang]
    pick = rng.randrange(len(forms))  # as rng.choice draws
    # "llega el 25/1": the article is said, and is not the date
    return Value(canonical, forms[pick], "el " if lang == "es" and pick == 2 else "")


def email_value(rng: random.Random, first: str, last: str, spoken: bool, lang: str) -> Value:
    f, la = _ascii(first).lower(), _ascii(last).lower()
    local = rng.choice(
        [
            f"{f}.{la}",
            f"{f}{la}{rng.randint(1, 99)}",
            f"{f[0]}{la}",
            f"{f}_{la}",
            f"{la}.{f}{rng.randint(70, 99)}",
        ]
    )
    canonical = f"{local}@{rng.choice(MAIL_HOSTS)}"
    if spoken:
        dot, at, under = {
            "pt": ("ponto", "arroba", "underline"),
            "en": ("dot", "at", "underscore"),
            "es": ("punto", "arroba", "guion bajo"),
        }[lang]
        said = canonical.replace(".", f" {dot} ").replace("@", f" {at} ")
        return Value(canonical, " ".join(said.replace("_", f" {under} ").split()))
    return Value(canonical, canonical if rng.random() < 0.85 else canonical.capitalize())


def _ascii(text: str) -> str:
    table = str.maketrans("áàâãéêíóôõúçñÁÉÍÓÚÇÑ", "aaaaeeioooucnAEIOUCN")
    return text.translate(table)


def phone_value(rng: random.Random, lang: str, spoken: bool) -> Value:
    if lang == "pt":
        area, a, b = (
            rng.randint(11, 99),
            f"9{rng.randint(1000, 9999)}",
            f"{rng.randint(0, 9999):04d}",
        )
        canonical = f"+55{area}{a}{b}"
        forms = [f"({area}) {a}-{b}", f"{area} {a}-{b}", f"{area}{a}{b}", f"{area} {a} {b}"]
    elif lang == "en":
        area, a, b = (
            rng.randint(201, 989),
            f"{rng.randint(200, 999)}",
            f"{rng.randint(0, 9999):04d}",
        )
        canonical = f"+1{area}{a}{b}"
        forms = [f"({area}) {a}-{b}", f"{area}-{a}-{b}", f"{area}{a}{b}", f"{area}.{a}.{b}"]
    else:
        a, b, c = f"6{rng.randint(10, 99)}", f"{rng.randint(100, 999)}", f"{rng.randint(100, 999)}"
        canonical = f"+34{a}{b}{c}"
        forms = [f"{a} {b} {c}", f"{a}{b}{c}", f"+34 {a} {b} {c}", f"{a}-{b}-{c}"]
    if spoken:
        groups = forms[-1].replace("-", " ").replace(".", " ").replace("+", "").split()
        return Value(canonical, " ".join(spoken_digits(g, lang) for g in groups))
    return Value(canonical, rng.choice(forms))


def business_days_after(start: date, days: int) -> date:
    day = start
    while days:
        day += timedelta(days=1)
        if day.weekday() < 5:
            days -= 1
    return day
