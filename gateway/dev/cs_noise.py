"""How a channel bends text: typos, dropped accents and punctuation, chat abbreviations,
and the speech-recognition noise of phone transcripts (lower case, no punctuation,
hesitations, repeated and misheard words). Applied to the words around a fact's value,
never to the value itself, so each fact's surface form stays findable in its turn."""

from __future__ import annotations

import random
import re

PUNCTUATION = re.compile(r"[.,;:!?¿¡\"()]")
_ACCENTS = str.maketrans("áàâãéêíóôõúçÁÀÂÃÉÊÍÓÔÕÚÇñ", "aaaaeeioooucAAAAEEIOOOUCn")
_NEIGHBOURS = dict(zip("qwertyuiopasdfghjklzxcvbnm", "wqrtyuiopoadfghjklkxcvbnmn", strict=True))
ABBREVIATIONS: dict[str, dict[str, str]] = {
    "pt": {
        "você": "vc",
        "vocês": "vcs",
        "porque": "pq",
        "também": "tb",
        "que": "q",
        "beleza": "blz",
        "não": "n",
        "está": "tá",
        "para": "pra",
        "obrigado": "obg",
    },
    "en": {
        "you": "u",
        "please": "pls",
        "thanks": "thx",
        "are": "r",
        "your": "ur",
        "because": "bc",
        "okay": "ok",
        "to": "2",
    },
    "es": {"que": "q", "porque": "xq", "también": "tb", "por favor": "porfa", "gracias": "grax"},
}
HESITATIONS = {
    "pt": ["é", "ahn", "tipo", "né", "então", "hum"],
    "en": ["uh", "um", "like", "you know", "so", "er"],
    "es": ["eh", "este", "o sea", "pues", "mmm"],
}
MISHEARD = {
    "pt": {
        "conserto": "concerto",
        "mais": "mas",
        "cheguei": "chegue",
        "pedido": "pedindo",
        "cobrado": "comprado",
        "entrega": "entregar",
        "sexta": "cesta",
        "email": "e mail",
    },
    "en": {
        "there": "their",
        "two": "to",
        "four": "for",
        "order": "odor",
        "charged": "charge",
        "refund": "re fund",
        "email": "e mail",
        "right": "write",
    },
    "es": {
        "hay": "ahí",
        "haber": "a ver",
        "pedido": "perdido",
        "cobrado": "cobrando",
        "vaya": "valla",
        "correo": "corro",
    },
}


def typo(rng: random.Random, word: str) -> str:
    """One keyboard slip: swap, drop, double, or hit the neighbouring key."""
    if len(word) < 4 or not word.isalpha():
        return word
    i = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == 1:
        return word[:i] + word[i + 1 :]
    if kind == 2:
        return word[:i] + word[i] + word[i:]
    return word[:i] + _NEIGHBOURS.get(word[i].lower(), word[i]) + word[i + 1 :]


def _typos(rng: random.Random, text: str, rate: float) -> str:
    return " ".join(typo(rng, w) if rng.random() < rate else w for w in text.split(" "))


def _abbreviate(text: str, lang: str) -> str:
    for long, short in ABBREVIATIONS[lang].items():
        text = re.sub(rf"\b{long}\b", short, text, flags=re.IGNORECASE)
    return text


def chat(rng: random.Random, text: str, lang: str, informal: float) -> str:
    """A typed chat turn: with probability `informal`, lower case, no punctuation,
    abbreviations and no accents; typos either way."""
    if rng.random() < informal:
        text = PUNCTUATION.sub("", text).lower()
        if rng.random() < 0.5:
            text = _abbreviate(text, lang)
        if rng.random() < 0.4:
            text = text.translate(_ACCENTS)
    return _typos(rng, text, 0.05 if informal > 0.5 else 0.025)


def asr(rng: random.Random, text: str, lang: str, level: float) -> str:
    """What a speech recognizer writes: lower case, no punctuation, hesitations,
    repeated words, misheard words. `level` scales the noise (0..1)."""
    words = PUNCTUATION.sub(" ", text).lower().split()
    out: list[str] = []
    for word in words:
        if rng.random() < 0.08 * level:
            out.append(rng.choice(HESITATIONS[lang]))
        if rng.random() < 0.04 * level:
            out.append(word)
        heard = word
        if rng.random() < 0.3 * level and word in MISHEARD[lang]:
            heard = MISHEARD[lang][word]
        if rng.random() < 0.02 * level and len(out) > 2:
            continue
        out.append(heard)
    return " ".join(out)


def asr_value(text: str) -> str:
    """A fact's value as it appears in a transcript: lower case, no punctuation."""
    return " ".join(PUNCTUATION.sub(" ", text).lower().split())
