"""What a message says, as the loop detector compares it: language-aware content units.
Pure: no I/O but reading the packaged word lists once.

A message becomes sentences, each a set of units: content words stemmed by the Snowball
stemmer of its language (`snowballstemmer`, the C `PyStemmer` when installed), with the
language's stop words dropped (the `stop-words` package's lists, with the courtesies
its pt and es lists lack, capitalised first names: who is greeted or signs, and an
email's opening and closing sentences) and
accents folded after stemming (chat customers drop them:
"endereco" is "endereço"), plus identifiers (the digits of a token that holds a run of
3+ of them, whatever surrounds them: "ORD-482135", "#482135" and "482135" are one order,
and so is "INV-482135"; an email), and numbers as words (amounts, days). Units are
32-bit CRCs: stable across processes and replicas, four bytes each in the stored state.

The language is voted by stop words: each of pt, en and es counts its stop words in the
text. The detector keeps a conversation's running votes, so a two-word turn is read in
the language of the conversation, not guessed alone.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import snowballstemmer
from stop_words import get_stop_words

from gateway.context.first_names import first_names
from gateway.context.linear_regex import compile_linear
from gateway.context.people_text import word_set

LANGUAGES = {"pt": "portuguese", "en": "english", "es": "spanish"}
# Words of a message past this many characters do not change what it asks or answers; a
# pasted megabyte would otherwise cost milliseconds on every turn (4 KB: about 1 ms).
MESSAGE_CHARS = 4 * 1024
MOST_SENTENCES = 64  # a message's first sentences with content; 4 KB of prose holds ~40
SHORTEST_WORD = 3  # "vc", "ok", "de": chat shorthand and particles say nothing here
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
# Linear: possessive runs, one token at a time.
_TOKEN = re.compile(r"[^\W_]++(?:[-_.@/][^\W_]++)*+")
_DIGITS = re.compile(r"\d{3,}")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


# The package's English list holds the courtesies ("thanks", "ok", "great", "welcome",
# "please"); its Portuguese and Spanish lists hold none. Their equivalents, folded, so a
# "certo, obrigado" after each answer is no content in any of the three languages; and
# an email's greeting and closing words ("Prezados", "Atenciosamente", "Kind regards").
COURTESIES: dict[str, frozenset[str]] = {
    "en": frozenset({"dear", "regards", "sincerely", "cheers", "kindly"}),
    "pt": frozenset(
        {"obrigado", "obrigada", "obrigadao", "brigado", "brigada", "valeu", "ok", "okay"}
        | {"certo", "beleza", "otimo", "favor"}
        # an email's greeting and closing ("Prezados, ... Aguardo retorno. Atenciosamente")
        | {"prezados", "prezado", "prezadas", "prezada", "atenciosamente", "cordialmente"}
        | {"abracos", "abraco", "att", "grato", "grata", "aguardo"}
    ),
    "es": frozenset(
        {"gracias", "vale", "ok", "okay", "genial", "favor"}
        | {"estimado", "estimados", "estimada", "estimadas", "atentamente", "cordialmente"}
        | {"saludos", "cordiales", "antemano"}
    ),
}


# A digit said as a word: alone, a number too small to say what is asked; in a run ("nove
# oito sete seis"), a phone number or an order read out, which a transcript hears
# differently each time (as one identifier, a run ended loops: 2026-12-06, fourth
# session). The package's English list holds them; its Portuguese and Spanish lists do
# not, and two different numbers read out looked like one question asked again.
DIGIT_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(),
    "pt": word_set("zero um uma dois duas tres quatro cinco seis sete oito nove"),
    "es": word_set("cero uno una dos tres cuatro cinco seis siete ocho nueve"),
}


@cache
def _folded_stops(lang: str) -> frozenset[str]:
    stops = frozenset(fold(word) for word in get_stop_words(lang))
    return stops | COURTESIES[lang] | DIGIT_WORDS[lang]


@cache
def _stemmer(lang: str) -> Any:
    return snowballstemmer.stemmer(LANGUAGES[lang])


def _stem(lang: str, token: str) -> str:
    """A content word as compared: stemmed in its language, then folded."""
    return fold(_stemmer(lang).stemWord(token))


def fold_text(text: str) -> str:
    """Lower case without accents ("Endereço" -> "endereco")."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


# A conversation repeats its words: each token's folding is remembered (a whole message,
# read once, goes through fold_text), up to LONGEST_REMEMBERED characters: the cache
# counts entries, and 65,536 tokens of 4 KB each would hold half a gigabyte.
_fold_cached = lru_cache(maxsize=65536)(fold_text)


def fold(token: str) -> str:
    return _fold_cached(token) if len(token) <= LONGEST_REMEMBERED else fold_text(token)


def unit(token: str) -> int:
    return zlib.crc32(token.encode())


@dataclass(frozen=True)
class Sentence:
    key: int  # the sentence's content, for recognising a formula said again
    words: frozenset[int]
    identifiers: frozenset[int]


Parsed = list[list[tuple[str, str]]]  # sentences of (token, folded token)


def _named(token: str) -> bool:
    """A capitalised first name people are given ("Michael", "Larissa"): who is greeted or
    signs, never what is asked ("Thanks in advance, Ashley" / "Happy to help, Ashley!")."""
    return token[:1].isupper() and fold(token) in first_names()


# An email's opening ("Dear support team", "Prezados", "Estimado equipo") said at the
# start of a sentence, and a sentence that is all its closing ("Thanks in advance",
# "Looking forward to your reply", "Fico no aguardo do retorno", "Quedo a la espera de su
# respuesta"), say who writes and how, never what is asked: a thanks with them beside it
# each time is not a question asked again. Matched on the sentence's folded words joined
# by single spaces (the names greeted or signing left out). From general usage.
_OPENINGS = (
    r"(?:dear|hello|hi|hey) (?:support|customer (?:service|support|care)|team|all"
    r"|sir or madam)(?: team)?",
    r"(?:prezad[oa]s?|ola|oi)(?: (?:equipe|suporte|atendimento|senhores|senhoras))?"
    r"(?: de (?:suporte|atendimento))?",
    r"(?:estimad[oa]s?|hola)(?: (?:equipo|soporte|senores|senoras))?"
    r"(?: de (?:soporte|atencion(?: al cliente)?))?",
)
_CLOSINGS = (
    r"(?:many |a lot of )?(?:thanks|thank you) in advance(?: for your (?:help|time"
    r"|assistance))?",
    r"(?:i )?(?:look|am looking|m looking|looking) forward to (?:your|a|an) (?:reply|response"
    r"|answer|update)(?: soon)?",
    r"(?:i )?(?:look|am looking|m looking|looking) forward to hearing (?:from you|back)(?: soon)?",
    r"(?:i )?hope to hear (?:from you|back)(?: soon)?",
    r"(?:awaiting|waiting for|i await) your (?:reply|response|answer)",
    r"(?:kind |best |warm )?regards|best wishes|sincerely|yours (?:truly|sincerely)",
    r"(?:desde ja )?(?:agradeco|obrigad[oa])(?: desde ja)?(?: (?:pela|a) atencao)?",
    r"(?:fico|ficamos|estou|seguimos) no aguardo(?: d[oae] (?:sua |seu |um |uma )?(?:retorno"
    r"|resposta|contato))?",
    r"(?:aguardo|aguardando|espero|esperando) (?:o |a |seu |sua |o seu |a sua |um |uma |vosso "
    r"|breve )?(?:retorno|resposta|contato)(?: breve)?",
    r"(?:muchas )?gracias (?:de|por) antemano",
    r"(?:quedo|quedamos|me quedo) (?:a la espera|en espera|atent[oa]s?)(?: (?:de|a) (?:su|tu"
    r"|vuestra) (?:respuesta|contestacion))?",
    r"(?:espero|esperamos|en espera de|a la espera de) (?:su|tu|vuestra) (?:pronta )?"
    r"(?:respuesta|contestacion)",
)
_OPENING = compile_linear(r"^(?:" + "|".join(_OPENINGS) + r")(?: |$)")
_CLOSING = compile_linear(r"^(?:" + "|".join(_CLOSINGS) + r")$")
FRAME_WORDS_MOST = 12  # a longer sentence is no email's closing
# The words the phrases above can start with: a sentence starting otherwise is read
# without a call into RE2 (most are; each call lets go of the GIL).
_OPENING_FIRST = word_set(
    "dear hello hi hey prezado prezada prezados prezadas ola oi estimado estimada "
    "estimados estimadas hola"
)
_CLOSING_FIRST = word_set(
    "many a thanks thank i look am looking hope awaiting waiting kind best warm regards "
    "sincerely yours desde agradeco obrigado obrigada fico ficamos estou seguimos aguardo "
    "aguardando espero esperando muchas gracias quedo quedamos me esperamos en"
)


def _unframed(tokens: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A sentence's tokens without an email's opening before them; none when it is all
    an email's closing."""
    if tokens[0][1] in _OPENING_FIRST:
        opening = _OPENING.search(" ".join(folded for _, folded in tokens))
        if opening is not None:
            tokens = tokens[opening.group(0).strip().count(" ") + 1 :]
    if not tokens or len(tokens) > FRAME_WORDS_MOST or tokens[0][1] not in _CLOSING_FIRST:
        return tokens
    closing = _CLOSING.search(" ".join(folded for _, folded in tokens))
    return [] if closing is not None else tokens


def parse(text: str) -> Parsed:
    """The message's sentences as tokens (its first MESSAGE_CHARS), without the names of
    the people greeted or signing, and without an email's opening or closing sentences."""
    out = []
    for part in _SENTENCE_END.split(text[:MESSAGE_CHARS]):
        found = [t.lower() for t in _TOKEN.findall(part) if not _named(t)]
        # lower case ASCII is folded already; fold() is for accents
        tokens = [(t, t) for t in found] if part.isascii() else [(t, fold(t)) for t in found]
        tokens = _unframed(tokens) if tokens else tokens
        if tokens:
            out.append(tokens)
    return out


@cache
def _stop_languages() -> dict[str, tuple[str, ...]]:
    """Each folded stop word and the languages whose list holds it."""
    out: dict[str, tuple[str, ...]] = {}
    for lang in LANGUAGES:
        for word in _folded_stops(lang):
            out[word] = (*out.get(word, ()), lang)
    return out


def votes(parsed: Parsed) -> dict[str, int]:
    """Stop words of each language in the message."""
    table, tally = _stop_languages(), dict.fromkeys(LANGUAGES, 0)
    for sentence in parsed:
        for _, folded in sentence:
            for lang in table.get(folded, ()):
                tally[lang] += 1
    return tally


def language(tally: Mapping[str, int]) -> str:
    """The language with the most votes; English on a tie (the stemmer that harms least)."""
    return max(LANGUAGES, key=lambda lang: (tally.get(lang, 0), lang == "en"))


def _identifier(token: str) -> str | None:
    if token.isalpha():  # most words: no digit, no "@"
        return None
    if "@" in token and _EMAIL.match(token):
        return token
    digits = _DIGITS.findall(token)
    return "#" + "".join(digits) if digits else None


# Words a customer and an agent use for one thing of customer service, in pt, en and es:
# a re-ask reworded ("e o meu reembolso?" after "não recebi o estorno") says the same
# thing in another word. Each group's words count as one unit (after stemming, in each
# language). Written from general usage, not from any workload's phrasing.
CONCEPTS: dict[str, dict[str, str]] = {  # per group and language: its words
    "refund": {
        "en": "refund refunded refunds reimburse reimbursed reimbursement",
        "pt": "reembolso reembolsar reembolsado estorno estornar estornado estornaram",
        "es": "reembolso reembolsar reembolsado reintegro reintegrar reintegrado",
    },
    "charge": {
        "en": "charge charged charges debit debited billed",
        "pt": "cobranca cobrar cobrado cobraram cobrou debito debitado debitaram",
        "es": "cargo cargos cobro cobrar cobrado cobraron debito debitado debitaron",
    },
    "arrive": {
        "en": "arrive arrived arrival deliver delivered delivery",
        "pt": "chegar chegou chegada entrega entregar entregue entregaram",
        "es": "llegar llego llegada entrega entregar entregado entregaron",
    },
    "late": {
        "en": "late delayed delay",
        "pt": "atrasado atrasada atraso demora",
        "es": "retraso retrasado retrasada demora",
    },
    "broken": {
        "en": "broken damaged defective faulty",
        "pt": "quebrado quebrada defeito defeituoso danificado estragado",
        "es": "roto rota danado defectuoso averiado",
    },
    "cancel": {
        "en": "cancel cancelled canceled cancellation",
        "pt": "cancelar cancelado cancelamento",
        "es": "cancelar cancelado cancelacion",
    },
    "replace": {
        "en": "replace replacement exchange",
        "pt": "troca trocar substituir substituicao",
        "es": "reemplazo reemplazar cambio cambiar",
    },
    "access": {
        "en": "login logon signin password",
        "pt": "senha acessar acesso entrar login",
        "es": "contrasena acceder acceso entrar login",
    },
    "invoice": {"en": "invoice bill receipt", "pt": "fatura boleto recibo", "es": "factura recibo"},
    "money": {
        "en": "money amount price cost fee",
        "pt": "valor dinheiro quantia preco custo taxa mensalidade tarifa",
        "es": "dinero importe monto valor precio costo tarifa cuota",
    },
    "increase": {"en": "increase raise", "pt": "aumento aumentar reajuste", "es": "aumento subida"},
    "parcel": {
        "en": "package parcel order shipment",
        "pt": "pedido encomenda pacote",
        "es": "pedido paquete envio",
    },
    "track": {
        "en": "tracking track",
        "pt": "rastreio rastrear rastreamento",
        "es": "seguimiento rastreo rastrear",
    },
}


@cache
def _concepts(lang: str) -> dict[str, str]:
    """Each concept word's stem in `lang`, and the concept's unit word ("=refund")."""
    return {
        _stem(lang, word): f"={name}"
        for name, words in CONCEPTS.items()
        for word in words[lang].split()
    }


LONGEST_REMEMBERED = 40  # characters: a longer token is read each time, not kept


def _read(lang: str, token: str, folded: str) -> tuple[bool, str, int] | None:
    """What one token counts as: (True, the identifier, its unit), (False, the content
    word, its unit), or None for a stop word or a short one."""
    ident = _identifier(token)
    if ident is not None:
        return True, ident, unit(ident)
    if folded.isdigit():  # a small number: an amount, a date, a deadline
        return False, folded, unit(folded)
    if len(folded) >= SHORTEST_WORD and folded not in _folded_stops(lang):
        word = _stem(lang, token)
        word = _concepts(lang).get(word, word)
        return False, word, unit(word)
    return None


# Per language, the reading of each token up to LONGEST_REMEMBERED characters, looked up
# inline by `sentences`: a conversation repeats its words, and a call per token cost more
# than the lookup. Emptied when full; a longer token (a 4 KB run of letters) is not kept.
_READINGS: dict[str, dict[str, tuple[bool, str, int] | None]] = {}
_READINGS_MOST = 65536
_UNREAD: Any = object()


def sentences(parsed: Parsed, lang: str) -> list[Sentence]:
    """The message's sentences with content (a sentence of stop words alone is dropped)."""
    out: list[Sentence] = []
    known = _READINGS.setdefault(lang, {})
    if len(known) > _READINGS_MOST:
        known.clear()
    for part in parsed:
        if len(out) == MOST_SENTENCES:
            break
        words: list[str] = []
        identifiers: list[str] = []
        word_units: set[int] = set()
        id_units: set[int] = set()
        for token, folded in part:
            read = known.get(token, _UNREAD)
            if read is _UNREAD:
                read = _read(lang, token, folded)
                if len(token) <= LONGEST_REMEMBERED:
                    known[token] = read
            if read is None:
                continue
            if read[0]:
                identifiers.append(read[1])
                id_units.add(read[2])
            else:
                words.append(read[1])
                word_units.add(read[2])
        if words or identifiers:
            out.append(
                Sentence(
                    key=unit(" ".join((*words, *identifiers))),
                    words=frozenset(word_units),
                    identifiers=frozenset(id_units),
                )
            )
    return out


def whole(parsed: Parsed) -> int:
    """The message word for word (folded, stop words included); 0 when it has no words."""
    folded = " ".join(f for sentence in parsed for _, f in sentence)
    return unit(folded) if folded else 0


def union(parts: Iterable[frozenset[int]]) -> frozenset[int]:
    return frozenset().union(*parts)
