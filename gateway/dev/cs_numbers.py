"""Numbers as people say them, per language (pt, en, es): "cento e quarenta e nove",
"one four nine". Phone transcripts spell out numbers this way."""

from __future__ import annotations

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
