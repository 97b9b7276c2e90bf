"""Values of planted facts for the customer-service workload: a canonical value per fact
(what an evaluator compares against) and the many surface forms a person uses for it,
per language and channel (`R$ 149,90`, `149 e 90`, `cento e quarenta e nove reais`).

Plain functions over a `random.Random` the caller owns; nothing here reads a clock."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

FIRST = {
    "pt": [
        "Ana",
        "João",
        "Maria",
        "Pedro",
        "Juliana",
        "Carlos",
        "Fernanda",
        "Rafael",
        "Beatriz",
        "Lucas",
        "Camila",
        "Thiago",
        "Larissa",
        "Marcos",
        "Patrícia",
        "Diego",
    ],
    "en": [
        "Emily",
        "James",
        "Olivia",
        "Michael",
        "Sarah",
        "David",
        "Jessica",
        "Daniel",
        "Ashley",
        "Ryan",
        "Megan",
        "Kevin",
        "Lauren",
        "Brian",
        "Rachel",
        "Tyler",
    ],
    "es": [
        "Lucía",
        "Javier",
        "Sofía",
        "Alejandro",
        "Valentina",
        "Miguel",
        "Camila",
        "Andrés",
        "Isabel",
        "Diego",
        "Carmen",
        "Pablo",
        "Paula",
        "Sergio",
        "Elena",
    ],
}
LAST = {
    "pt": [
        "Souza",
        "Silva",
        "Oliveira",
        "Santos",
        "Pereira",
        "Costa",
        "Rodrigues",
        "Almeida",
        "Nascimento",
        "Lima",
        "Araújo",
        "Ferreira",
        "Carvalho",
        "Gomes",
    ],
    "en": [
        "Smith",
        "Johnson",
        "Williams",
        "Brown",
        "Miller",
        "Davis",
        "Wilson",
        "Anderson",
        "Taylor",
        "Thomas",
        "Moore",
        "Jackson",
        "Martin",
        "Clarke",
    ],
    "es": [
        "García",
        "Martínez",
        "López",
        "Sánchez",
        "Pérez",
        "Gómez",
        "Fernández",
        "Díaz",
        "Moreno",
        "Ruiz",
        "Álvarez",
        "Romero",
        "Navarro",
        "Torres",
    ],
}
CITIES = {
    "pt": [
        "São Paulo",
        "Recife",
        "Belo Horizonte",
        "Curitiba",
        "Porto Alegre",
        "Salvador",
        "Fortaleza",
        "Campinas",
        "Florianópolis",
        "Goiânia",
        "Niterói",
        "Lisboa",
        "Porto",
    ],
    "en": [
        "Austin",
        "Chicago",
        "Denver",
        "Seattle",
        "Boston",
        "Atlanta",
        "Phoenix",
        "Portland",
        "Manchester",
        "Leeds",
        "Dublin",
        "Toronto",
        "San Diego",
    ],
    "es": [
        "Madrid",
        "Sevilla",
        "Valencia",
        "Bilbao",
        "Zaragoza",
        "Málaga",
        "Guadalajara",
        "Monterrey",
        "Bogotá",
        "Medellín",
        "Lima",
        "Santiago",
        "Buenos Aires",
    ],
}
STREETS = {
    "pt": [
        "Rua das Flores",
        "Avenida Paulista",
        "Rua Augusta",
        "Rua da Consolação",
        "Avenida Brasil",
        "Rua XV de Novembro",
        "Travessa do Comércio",
        "Rua Sete de Setembro",
    ],
    "en": [
        "Maple Street",
        "Oak Avenue",
        "Park Road",
        "Elm Street",
        "High Street",
        "Sunset Boulevard",
        "Cedar Lane",
        "Mill Road",
    ],
    "es": [
        "Calle Mayor",
        "Avenida de la Constitución",
        "Calle del Sol",
        "Paseo de Gracia",
        "Calle Real",
        "Avenida Insurgentes",
        "Calle Alcalá",
        "Calle San Martín",
    ],
}
UNITS = {
    "pt": ["apto {n}", "ap {n}", "casa 2", "bloco B apto {n}"],
    "en": ["Apt {n}", "Unit {n}", "Suite {n}"],
    "es": ["piso {f}, puerta B", "{f}º A", "depto {n}"],
}
MAIL_HOSTS = [
    "gmail.com",
    "hotmail.com",
    "outlook.com",
    "yahoo.com",
    "icloud.com",
    "uol.com.br",
    "proton.me",
]
CURRENCY = {"pt": "BRL", "en": "USD", "es": "EUR"}
MONTHS = {
    "pt": [
        "janeiro",
        "fevereiro",
        "março",
        "abril",
        "maio",
        "junho",
        "julho",
        "agosto",
        "setembro",
        "outubro",
        "novembro",
        "dezembro",
    ],
    "en": [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ],
    "es": [
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ],
}
_LOW = {
    "pt": [
        "zero",
        "um",
        "dois",
        "três",
        "quatro",
        "cinco",
        "seis",
        "sete",
        "oito",
        "nove",
        "dez",
        "onze",
        "doze",
        "treze",
        "catorze",
        "quinze",
        "dezesseis",
        "dezessete",
        "dezoito",
        "dezenove",
    ],
    "en": [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ],
    "es": [
        "cero",
        "uno",
        "dos",
        "tres",
        "cuatro",
        "cinco",
        "seis",
        "siete",
        "ocho",
        "nueve",
        "diez",
        "once",
        "doce",
        "trece",
        "catorce",
        "quince",
        "dieciséis",
        "diecisiete",
        "dieciocho",
        "diecinueve",
    ],
}
_TENS = {
    "pt": ["vinte", "trinta", "quarenta", "cinquenta", "sessenta", "setenta", "oitenta", "noventa"],
    "en": ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"],
    "es": [
        "veinte",
        "treinta",
        "cuarenta",
        "cincuenta",
        "sesenta",
        "setenta",
        "ochenta",
        "noventa",
    ],
}
_HUNDREDS = {
    "pt": [
        "cento",
        "duzentos",
        "trezentos",
        "quatrocentos",
        "quinhentos",
        "seiscentos",
        "setecentos",
        "oitocentos",
        "novecentos",
    ],
    "es": [
        "ciento",
        "doscientos",
        "trescientos",
        "cuatrocientos",
        "quinientos",
        "seiscientos",
        "setecientos",
        "ochocientos",
        "novecientos",
    ],
}
_ES_VEINTI = [
    "veinte",
    "veintiuno",
    "veintidós",
    "veintitrés",
    "veinticuatro",
    "veinticinco",
    "veintiséis",
    "veintisiete",
    "veintiocho",
    "veintinueve",
]


def number_words(n: int, lang: str) -> str:
    """0..999999 in words, as a speech recognizer that spells numbers writes them."""
    if n >= 1000:
        head = {"pt": "mil", "en": "thousand", "es": "mil"}[lang]
        thousands = n // 1000
        words = (
            head if lang != "en" and thousands == 1 else f"{number_words(thousands, lang)} {head}"
        )
        rest = n % 1000
        if not rest:
            return words
        joiner = " e " if lang == "pt" and (rest < 100 or rest % 100 == 0) else " "
        return words + joiner + number_words(rest, lang)
    if n >= 100:
        return _hundreds_words(n, lang)
    if n < 20 or (lang == "es" and n < 30):
        return _LOW[lang][n] if n < 20 else _ES_VEINTI[n - 20]
    tens, unit = _TENS[lang][n // 10 - 2], n % 10
    if not unit:
        return tens
    joiner = {"pt": " e ", "en": "-", "es": " y "}[lang]
    return tens + joiner + _LOW[lang][unit]


def _hundreds_words(n: int, lang: str) -> str:
    rest = n % 100
    if lang == "en":
        head = f"{_LOW['en'][n // 100]} hundred"
        return head if not rest else f"{head} {number_words(rest, lang)}"
    if n == 100:
        return "cem" if lang == "pt" else "cien"
    head = _HUNDREDS[lang][n // 100 - 1]
    if not rest:
        return head
    return head + (" e " if lang == "pt" else " ") + number_words(rest, lang)


def spoken_digits(digits: str, lang: str) -> str:
    return " ".join(_LOW[lang][int(d)] for d in digits if d.isdigit())


@dataclass(frozen=True)
class Value:
    """A fact's canonical value and one way a person said it."""

    canonical: str
    surface: str


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
            else [f"{whole} e {cents}"]
        )
    if lang == "en":
        dec = f"{whole}.{cents:02d}"
        forms = [f"${dec}", f"{dec} dollars", f"USD {dec}", f"${dec}"]
        return forms + ([f"${whole}", f"{whole} bucks"] if not cents else [])
    dec = f"{whole},{cents:02d}"
    forms = [f"{dec} €", f"{dec} euros", f"€{dec}", f"{dec}€"]
    return forms + (
        [f"{whole} euros", f"{whole} pavos"] if not cents else [f"{whole} euros con {cents}"]
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
            "es": f"el {number_words(day.day, lang)} de {month}",
        }[lang]
        return Value(canonical, said)
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
            f"el {day.day}/{day.month}",
            f"{dd}/{mm}/{day.year}",
        ],
    }[lang]
    return Value(canonical, rng.choice(forms))


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
