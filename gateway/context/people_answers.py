"""Facts a customer gives bare, as an answer: the agent asked for the name ("Com quem eu
falo?", "Can I get the name on the booking?", "¿Me dice su nombre completo?") and the
reply opens with it ("sure it's angela torres", "é a luciana prado", "Beatriz
Nogueira"); asked for the order or booking number, the reply opens with the code
("7730418", "KXT4PZ"); asked which city, with the city. Real customers answer so far
more often than they say "my name is". Two shapes need no question: a name after "in
the name of" ("tá no nome de cláudio", "a nombre de Lucía Gómez"), and a line that is a
full name alone in a message of several lines (a form-like answer: "Marcos Vinicius
Teixeira\\napolice PA-0098812-3"). And a big city said where people say where they
are, whatever the case: after the address it belongs to ("27 Clarendon Park Road,
Leicester", "... ap 21, icaraí, niteroi", "4127 Bryant Ave S in Minneapolis") and after
"here in" ("estoy aquí en guadalajara"). Pure.
"""

from __future__ import annotations

import functools
import re

from gateway.context.common_words import is_common
from gateway.context.first_names import is_first_name, is_last_name
from gateway.context.people_cities import address_city, city_at
from gateway.context.people_hits import Hit, add_hit, proper
from gateway.context.people_text import first_matches, linear, word_set
from gateway.context.people_words import SIGN_OFF_WORDS
from gateway.context.places import is_city

# What the agent asks for, in a sentence that asks (a "?", or a request verb: phone
# transcripts write no question marks).
_NAME_ASK_SAID = (
    r"\b(?:(?:your|ur)\s+(?:full\s+|first\s+and\s+last\s+|first\s+|last\s+)?name"
    r"|name\s+(?:on|of|under)\s+(?:the\s+|your\s+)?(?:account|booking|order|reservation|card"
    r"|policy|ticket)|who\s+(?:am\s+i|i'?m)\s+(?:speaking|talking|chatting)\s+(?:with|to)"
    r"|(?:seu|teu)\s+nome|nome\s+(?:completo|do\s+titular|de\s+quem|d[oa]\s+(?:cadastro"
    r"|titular|pedido|reserva|segurad[oa]|cliente))|com\s+quem\s+(?:eu\s+)?(?:falo|estou"
    r"\s+falando|tenho\s+o\s+prazer)|como\s+(?:voce\s+|vc\s+|o\s+senhor\s+|a\s+senhora\s+)?se"
    r"\s+chama|(?:su|tu)\s+nombre|nombre\s+(?:completo|del\s+titular|de\s+la\s+reserva"
    r"|del\s+cliente)|con\s+quien\s+(?:tengo\s+el\s+gusto|hablo)|como\s+se\s+llama"
    r"|como\s+te\s+llamas)\b"
)
_NAME_ASK = linear(_NAME_ASK_SAID)
_ORDER_ASK_SAID = (
    r"\b(?:(?:order|booking|reservation|confirmation|policy|account|case|ticket|tracking"
    r"|reference|claim|invoice|report|incident|dispute|complaint|protocol|request)\s+(?:number"
    r"|no\b|#|code|id|reference)|booking\s+ref(?:erence)?"
    r"|numero\s+d[oa]s?\s+(?:seu\s+|sua\s+)?(?:pedido|protocolo|apolice|conta|reserva"
    r"|contrato|sinistro|chamado|localizador|rastreio|cadastro)|(?:numero|codigo|num)\s+de"
    r"\s+(?:su\s+|tu\s+)?(?:pedido|reserva|cuenta|poliza|seguimiento|contrato|siniestro|caso"
    r"|ticket)|localizador|codigo\s+d[ao]\s+(?:reserva|rastreio|pedido))\b"
)
_ORDER_ASK = linear(_ORDER_ASK_SAID)
_CITY_ASK_SAID = (
    r"\b(?:(?:which|what)\s+city|where\s+(?:are\s+you|you'?re)\s+(?:located|based|from)"
    r"|(?:qual|que)\s+(?:e\s+)?(?:a\s+)?(?:sua\s+)?cidade|em\s+que\s+cidade|de\s+(?:qual|que)"
    r"\s+cidade|(?:que|cual)\s+ciudad|de\s+onde\s+(?:voce|vc|o\s+senhor|a\s+senhora)\s+(?:fala"
    r"|e)|desde\s+donde)\b"
)
_CITY_ASK = linear(_CITY_ASK_SAID)
_ASKS = (("name", _NAME_ASK), ("order", _ORDER_ASK), ("city", _CITY_ASK))
_ANY_ASK = linear(f"(?:{_NAME_ASK_SAID})|(?:{_ORDER_ASK_SAID})|(?:{_CITY_ASK_SAID})")
_REQUEST = linear(
    r"\b(?:please|can\s+you|could\s+you|may\s+i|can\s+i|what'?s|what\s+is|por\s+favor"
    r"|poderia|pode|me\s+(?:informa|informe|confirma|confirme|passa|passe|diga|diz|fala)"
    r"|qual|quais|podria|puede|me\s+(?:indica|indique|dice|diga|da|pasa)|cual|indiqueme"
    r"|digame|confirmeme|confirm|confirme|confirma|informe|informa|preciso\s+d[eo]|precisamos"
    r"\s+d[eo]|necesito|necesitamos|i\s+need|we\s+need|i'?ll\s+need|we'?ll\s+need)\b"
)
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")

# What opens an answer before the value: yes, sure, "it's", "é a", "con", "sou o".
_LEAD = (
    r"^\W*(?:(?:sim|claro|yes|yeah|yep|yup|sure|ok|okay|si|certo|isso|of\s+course|pois\s+nao"
    r"|uh+|um+|hm+|eh+|ah+|tipo|so|well|right)\W+)*"
)
_NAME_LEAD = linear(
    _LEAD + r"(?:(?:it'?s|it\s+is|its|that'?s|e\s+[ao]|eh|e|sou\s+[ao]|sou|soy|con|com\s+[ao]"
    r"|aqui\s+e(?:\s+[ao])?|this\s+is|i'?m|i\s+am|meu\s+nome\s+e|my\s+name\s+is|me\s+llamo"
    r"|mi\s+nombre\s+es|it\s+is|name'?s)\s+)?"
)
_CODE_LEAD = linear(
    _LEAD + r"(?:(?:it'?s|it\s+is|its|o\s+numero\s+e|el\s+numero\s+es|the\s+number\s+is|eh|es|e"
    r"|number|numero|n[o.]|#)\s*)?"
)
_CITY_LEAD = linear(
    _LEAD + r"(?:(?:aqui|here|aca|aqui\s+mesmo)\s+)?(?:(?:em|no|na|de|do|da|in|from|en|desde"
    r"|at)\s+)?"
)
_CODE = linear(r"#?([A-Za-z]{0,4}-?\d[A-Za-z0-9-]{2,18})\b")
# A number that is no code: a year, a time, a postal code (Brazil's CEP, a US ZIP+4).
_NOT_CODE = re.compile(r"(?:19|20)\d\d|\d{1,2}h\d{2}|\d{5}-\d{3,4}", re.IGNORECASE)
_QUANTITY = re.compile(
    r"\s*(?:points?|pontos?|puntos?|reais|real|dollars?|euros?|pesos?|items?|itens|unidades?"
    r"|units?|pieces?|pecas|kg|km|gb|mb|vezes|times|veces|horas?|hours?|dias?|days?)\b",
    re.IGNORECASE,
)
_UNDER = linear(
    r"\b(?:(?:esta|ta|fica)\s+)?(?:no|em)\s+nome\s+d[eoa]|\bin\s+the\s+name\s+of|\bunder"
    r"\s+the\s+name(?:\s+of)?|\ba\s+nombre\s+de"
)
# Whose name it is, said after it: "no nome de Maria Souza, minha mãe".
_KIN_AFTER = re.compile(
    r"[\s,(-]+(?:(?:minha|meu|my|mi|a|o|la|el|the)\s+)?(?:mae|pai|esposa|esposo|marido|mulher"
    r"|filh[oa]|irma|irmao|sogr[oa]|avo|vo|tia|tio|prima|primo|chefe|patrao|madre|padre|hij[oa]"
    r"|herman[oa]|suegr[oa]|abuel[oa]|mom|mother|dad|father|wife|husband|son|daughter|sister"
    r"|brother|boss|partner|friend|amig[oa]|namorad[oa]|novi[oa])\b",
    re.IGNORECASE,
)
_NAME_CHARS = 60  # a name answered opens the reply: looked for in its first characters


@functools.lru_cache(maxsize=4096)
def asked_kinds(folded: str) -> frozenset[str]:
    """What the agent's message (folded: people_text.FOLD) asks the customer for: "name",
    "order", "city". Remembered: a fold reads the turn again."""
    if _ANY_ASK.search(folded) is None:  # most replies ask for none of them
        return frozenset()
    found: set[str] = set()
    sentences = [m.group(0) for m in _SENTENCE.finditer(folded) if m.group(0).strip()]
    for n, sentence in enumerate(sentences, 1):
        # the last one asks too: a call's transcript writes no question mark
        asks = n == len(sentences) or "?" in sentence or _REQUEST.search(sentence) is not None
        found.update(kind for kind, ask in _ASKS if asks and ask.search(sentence))
    return frozenset(found)


def answer_hits(
    folded: str, asked: frozenset[str], hits: list[Hit], before: str = "", named: bool = False
) -> None:
    """Facts this customer message gives bare: an answer to what was `asked` (`before`:
    the agent's message, folded: a name it holds is the agent's, not the answer), a name
    after "in the name of", a full name alone on a line (only while no name is `named`),
    a city after its address or "here in" (weak: it never replaces a city already heard,
    nor one a cue states in this message); added to `hits` where no other fact stands."""
    hits.extend(_answers(folded, asked, tuple(hits), before, named))


@functools.lru_cache(maxsize=2048)
def _answers(
    folded: str, asked: frozenset[str], found: tuple[Hit, ...], before: str, named: bool
) -> tuple[Hit, ...]:
    """The hits `answer_hits` adds, remembered: a message is read again as its turn folds."""
    hits = list(found)
    _bare(folded, asked, hits, before, named)
    return tuple(hits[len(found) :])


def _bare(folded: str, asked: frozenset[str], hits: list[Hit], before: str, named: bool) -> None:
    if "name" in asked:
        _answered_name(folded, hits, before.lower())
    if "order" in asked:
        _answered_code(folded, hits)
    if "city" in asked:
        _answered_city(folded, hits)
    low = folded.lower()  # a word these need, looked for at C speed first
    if "nom" in low or "name" in low:
        _name_under(folded, hits)
    if not named:
        # asked for, a full name may be any line of the answer ("ninguém se machucou\n
        # Marcos Vinicius Teixeira\napolice PA-0098812-3"): the customer's, not a courier's
        _name_line(folded, hits, anywhere="name" in asked)
    if any(h.kind == "city" for h in hits):
        return  # the message names its city otherwise: these give way
    _city_after_address(folded, hits)
    if "\n" in folded:
        _city_line(folded, hits)
    if "aqui" in low or "aca" in low or "here" in low:
        _city_here(folded, hits)


def _signed(line: str) -> bool:
    """A sign-off ("Atenciosamente,", "Thanks,") or a name of two to four words, the first
    a listed first name, alone on its line."""
    words = line.strip(" \t.,;:!").split()
    if 1 <= len(words) <= 3 and words[0].lower() in SIGN_OFF_WORDS:
        return True
    return 2 <= len(words) <= 4 and is_first_name(words[0]) and all(w[:1].isupper() for w in words)


# A city's line in a signature may end with its state ("Rio de Janeiro - RJ", "Austin,
# TX"): nothing else.
_STATE = re.compile(r"\s*(?:[-\u2013,/]\s*[A-Z]{2})?[\s.]*")
_SIGNATURE_LINES = 4


def _city_line(folded: str, hits: list[Hit]) -> None:
    """A line among the last few of a message of several lines that is a big city's name,
    capitalised, and nothing else but its state, under a sign-off or a name: a
    signature's town ("Atenciosamente,\nRenata Lopes Vieira\nRio de Janeiro - RJ"); not
    a destination on a line of its own ("Quero trocar o voo para\nFortaleza - CE")."""
    if any(h.kind == "city" for h in hits):
        return
    lines = folded.split("\n")
    filled = [n for n, line in enumerate(lines) if line.strip()]
    if len(filled) < 2:
        return
    for k, n in enumerate(filled):
        if k == 0 or n not in filled[-_SIGNATURE_LINES:] or not _signed(lines[filled[k - 1]]):
            continue
        begin = sum(len(x) + 1 for x in lines[:n])
        line = lines[n]
        start = begin + len(line) - len(line.lstrip())
        end = city_at(folded, start)
        if end and folded[start].isupper() and _STATE.fullmatch(folded, end, begin + len(line)):
            add_hit(hits, "city", start, end, start, weak=True)
            return


# What stands between an address and its city: a comma, "in", or the rest of a door or a
# street's side ("... flat 2/1 in glasgow", "... Bryant Ave S in Minneapolis").
_AFTER_ADDRESS = linear(
    r"^[ \t]*(?:[/-]?\w{1,2}\b)?[ \t]*(?:,|-|\bin\b|\bem\b|\ben\b|\bno\b|\bna\b)?[ \t]*"
)
_HERE_IN = linear(r"\b(?:aqui|aca|here)(?:\s+mesmo)?\s+(?:em|no|na|en|in|de)\s+")
_SKIPPED_CHUNK = 32  # a neighbourhood between the address and its city: "icaraí, "


def _city_after_address(folded: str, hits: list[Hit]) -> None:
    for address in [h for h in hits if h.kind == "address"]:
        city = _next_city(folded, address.end)
        # or the big city that ends the address's clause, a district said before it
        # with no comma ("... apartamento trezentos e um centro juiz de fora")
        city = city or address_city(folded, address.end)
        if city is not None:
            add_hit(hits, "city", *city, address.start, weak=True)


def _next_city(folded: str, at: int) -> tuple[int, int] | None:
    """A big city right after an address, or after one chunk (a neighbourhood) and a comma."""
    for _ in range(2):
        lead = _AFTER_ADDRESS.search(folded[at : at + 12])
        start = at + (lead.end() if lead else 0)
        end = city_at(folded, start)
        if end:
            return start, end
        comma = folded.find(",", start, start + _SKIPPED_CHUNK)
        if comma < 0:
            return None
        at = comma
    return None


def _city_here(folded: str, hits: list[Hit]) -> None:
    for m in first_matches(_HERE_IN, folded):
        end = city_at(folded, m.end())
        if end:
            add_hit(hits, "city", m.end(), end, m.start(), weak=True)
            return


def _answered_name(folded: str, hits: list[Hit], agent: str) -> None:
    lead = _NAME_LEAD.search(folded)
    if lead is None:
        return
    start = lead.end()
    span = _named(folded, proper(folded, start, min(len(folded), start + _NAME_CHARS), True, True))
    if not span:
        return
    name = folded[span[0] : span[1]]
    first = name.split(None, 1)[0].lower()
    # "Sarah, hi! It's Tom" to "Hi, I'm Sarah, who am I speaking with?": the agent's name
    if _given(name) and not re.search(rf"\b{re.escape(first)}\b", agent):
        add_hit(hits, "name", *span, cue=start)


def _answered_code(folded: str, hits: list[Hit]) -> None:
    lead = _CODE_LEAD.search(folded)
    m = _CODE.search(folded, lead.end()) if lead else None
    if m is None or m.start() > (lead.end() if lead else 0) + 1:
        return
    code = m.group(1) or ""
    digits = sum(ch.isdigit() for ch in code)
    capitals = sum(ch.isupper() for ch in code)
    if _NOT_CODE.fullmatch(code) or _QUANTITY.match(folded, m.end(1)):
        return  # "2023, acho", "10h30", "01310-100", "1000 points"
    if (
        (digits >= 5 and code.isdigit())
        or (digits >= 4 and not code.isdigit())
        or (digits and capitals >= 3)
    ):
        add_hit(hits, "order", m.start(1), m.end(1), cue=m.start())


def _answered_city(folded: str, hits: list[Hit]) -> None:
    lead = _CITY_LEAD.search(folded)
    start = lead.end() if lead else 0
    span = proper(folded, start, min(len(folded), start + _NAME_CHARS), True, True, city=True)
    if not span:
        return
    said = folded[span[0] : span[1]]
    # a big city's name, in lowercase only if no everyday word ("Uber", "Amazon" are none)
    if is_city(said) and not (said.islower() and all(map(is_common, said.split()))):
        add_hit(hits, "city", *span, cue=start)


def _name_under(folded: str, hits: list[Hit]) -> None:
    for m in first_matches(_UNDER, folded):
        if folded[max(0, m.start() - 5) : m.start()].lower().endswith("what "):
            continue  # "what in the name of Sam Hill is that?"
        end = m.end()
        span = _named(folded, proper(folded, end, min(len(folded), end + _NAME_CHARS), True, True))
        if span and _given(folded[span[0] : span[1]]) and not _KIN_AFTER.match(folded, span[1]):
            add_hit(hits, "name", *span, cue=m.start())
            return


# The last word of a line a name on the next line finishes: a preposition or a link
# ("I talked to", "foi entregue para o"), or a role ("the courier", "o porteiro").
_GOES_ON = word_set(
    "to by was is with from for the a an com con para pelo pela por foi era o a os as de do "
    "da el la los las al del y e and courier driver agent attendant technician porteiro "
    "entregador motoboy atendente tecnico vendedor vendedora repartidor tecnica mensajero"
)


def _goes_on(line: str) -> bool:
    """Whether a line ends unfinished, its clause going on into the next line."""
    words = line.strip(" \t").split()
    return bool(words) and words[-1].lower() in _GOES_ON


def _name_line(folded: str, hits: list[Hit], anywhere: bool = False) -> None:
    """A first or last line that is two to four name words and nothing else, the first a
    listed first name, in a message of several lines ("Beatriz Nogueira\\nlocalizador
    KXT4PZ", a signature); not a line in between (unless `anywhere`: the name was asked
    for), nor one after a label ("Ship to:"): those name the courier, the seller, a
    gift's addressee."""
    lines = folded.split("\n")
    filled = [n for n, line in enumerate(lines) if line.strip()]
    if len(filled) < 2:
        return
    for n in filled if anywhere else (filled[0], filled[-1]):
        line = lines[n]
        earlier = [k for k in filled if k < n]
        if earlier and lines[earlier[-1]].rstrip().endswith(":"):
            continue
        if anywhere and earlier and _goes_on(lines[earlier[-1]]):
            continue  # "the courier was\nJames Walker": the line before names whose
        begin_line = sum(len(x) + 1 for x in lines[:n])
        if earlier and any(h.kind == "address" and h.end <= begin_line for h in hits):
            continue  # the line under an address is its town ("12 Main St\\nAustin Texas")
        words = line.strip(" \t.,;:!").split()
        if not 2 <= len(words) <= 4 or not is_first_name(words[0]):
            continue
        begin = begin_line + line.index(words[0])
        span = proper(folded, begin, begin + len(line.strip(" \t.,;:!")), True, True)
        if span and folded[span[0] : span[1]] == " ".join(words) and _family(words[1:]):
            add_hit(hits, "name", *span, cue=span[0])
            return


def _named(folded: str, span: tuple[int, int] | None) -> tuple[int, int] | None:
    """The span of a name whose words after the first are name words: a lowercase word
    that is an everyday one ends it unless it is a listed family name ("cláudio
    entrega" is Cláudio; "luciana prado" stays whole)."""
    if span is None:
        return None
    start, end = span
    words = list(re.finditer(r"\S+", folded[start:end]))
    keep = 1
    for m in words[1:]:
        word = m.group(0)
        if word.islower() and is_common(word) and not is_last_name(word) and len(word) > 3:
            break
        keep += 1
    return start, start + words[keep - 1].end()


_LAUGH = re.compile(r"(?:[hjk][aeiou]+){2,}h?|k{3,}|(?:rs){2,}|lo+l|lmao|xd+", re.IGNORECASE)


def _family(words: list[str]) -> bool:
    """Words after a first name that are family names: listed, or no everyday word and no
    big city ("Rose Gold", "Virginia Beach", "Victoria Station", "Austin Texas" are none)."""
    return all(is_last_name(w) or not (is_common(w) or is_city(w) or is_laugh(w)) for w in words)


def _given(name: str) -> bool:
    """A name answered reads as one: its first word a listed first name, or capitalised
    as written, no everyday word ("Same") nor a laugh ("Hahaha"), and followed by a
    family name ("Deandra Okoye"; a lone "Gmail", "Expedia", "Idk" is no one)."""
    words = name.split()
    first = words[0] if words else ""
    if not first or is_laugh(first):
        return False
    if is_first_name(first):
        return True
    shaped = first[:1].isupper() and not first.isupper()  # "XD", "NJ" are no one's name
    return shaped and not is_common(first) and len(words) > 1


def is_laugh(word: str) -> bool:
    """ "Hahaha", "kkkk", "rsrs", "jajaja", "lol": no name, no place."""
    return _LAUGH.fullmatch(word.strip(".,!?")) is not None
