"""What the agent commits to doing, in its words: "vou estender o carro reserva até a
entrega do veículo", "I'm going to overnight the replacement card", "te vamos a enviar un
módulo esquinero nuevo, sin ningún costo". Pure.

An amount the agent offers is a `promise` (gateway.context.people_spans); an action it
commits to, with or without an amount, is a `commitment`: the clause that says it, from
its cue (a first-person future, "I'll", "vou", "voy a", "enviaremos"; an action under
way or done, "I'm adding", "I've issued", "já lancei") to the end of its sentence, at most
CLAUSE_WORDS words (a call's transcript has no full stops). Only actions done for the
customer count: "I'll check", "vou verificar", "voy a revisar" are the agent's own
process, said on every turn, and commit to nothing the customer can hold it to.
"""

from __future__ import annotations

from gateway.context.people_text import SpanMatch, first_matches, linear, word_set

CLAUSE_WORDS = 28  # a commitment's clause, from its cue: at most this many words
CLAUSE_CHARS = 240  # and at most this many characters, cut between words
LEAD_WORDS = 6  # a sentence starting at most this many words before the cue starts the clause

# First person, future or about to: the verb follows (after fillers, `_FILLERS`).
_FUTURE = (
    r"\b(?:i|we)(?:'ll|\s+will|\s+shall)"
    r"|\b(?:i'm|i\s+am|we're|we\s+are)\s+going\s+to"
    r"|\b(?:vou|vamos|irei|iremos)"
    r"|\b(?:(?:te|le|les|se\s+te|se\s+le)\s+)?(?:voy|vamos|va)\s+a"
    # someone of the company, to the customer: "o técnico vai te ligar"
    r"|\bvai\s+(?:te|lhe)"
)
# Under way or done ("I'm adding", "I've gone ahead and issued", "já lancei"): the verb is
# the cue's last word and must be an action (`_ACTIONS`, read off its stem).
_DOING = (
    r"\b(?:i'm|i\s+am|we're|we\s+are)\s+(?:now\s+|also\s+|just\s+)?(\w+ing)\b"
    r"|\b(?:i've|i\s+have|we've|we\s+have)\s+(?:now\s+|also\s+|just\s+|already\s+)?"
    r"(?:gone\s+ahead\s+and\s+)?(\w+ed|sent|put|made)\b"
    r"|\bja\s+(?:te\s+|lhe\s+)?(\w+(?:ei|amos|emos|imos))\b"
    r"|\bya\s+(?:te\s+|le\s+|les\s+)?(\w+(?:e|i|amos|imos))\b"
    # what the customer will get: "you'll receive a refund", "you will get a credit"
    r"|\byou(?:'ll|\s+will)\s+(receive|get)\b"
    # Portuguese and Spanish future in one word: "concederemos", "enviaremos", "creditarei"
    r"|\b(\w+(?:aremos|eremos|iremos|arei|erei))\b"
    # Spanish present for a promise, with its object pronoun: "te lo entregamos"
    r"|\b(?:te|le|les)\s+(?:(?:lo|la|los|las)\s+)?(\w+(?:amos|emos|imos))\b"
)
_CUE = linear(rf"(?:{_FUTURE})\s+|{_DOING}")

# Between a future's cue and its verb: "I'll just go ahead and", "vou te", "vamos agora".
_FILLERS = word_set(
    "just also now then personally gladly happily immediately definitely go ahead and be "
    "right away today te lhe lhes agora ja tambem hoje entao mesmo pessoalmente sim aqui "
    "le les ahora ya tambien hoy mismo"
)
# Stems of what an agent does for a customer (en, pt, es): money back, goods sent, visits
# booked, calls made, charges waived, cards blocked... Not its process (check, verify,
# look, see, transfer the call, ask, explain, try): that commits to nothing.
_ACTIONS = (
    # en
    "refund credit reimburs send sending sent resend ship reship deliver replac exchang "
    "schedul reschedul book call ring email e-mail text extend waiv cancel add apply "
    "appli block void issu overnight expedit upgrad downgrad honor honour cover pay paid "
    "return pick process escalat open adjust reduc lower remov revers arrang dispatch "
    "mail post fix repair reactivat activat restor reconnect unlock reset file submit "
    "lodg request order giv offer compensat discount match follow get put made "
    # pt
    "reembols estorn credit devolv envi reenvi mand entreg troc substitu agend reagend "
    "marc lig retorn estend prorrog isent cancel inclu adicion aplic bloque anul emit "
    "lanc conced oferec pag cobr abr solicit ped encaminh escal ajust reduz corrig "
    "liber ativ reativ relig restabelec congel suspend providenci deix despach prioriz "
    "retir colet fa far fiz receiv "
    # es
    "cambi reemplaz program llam contact ampli exoner agreg anad abon bonific ofrec "
    "cubr tramit gestion recog descont reintegr acredit deposit repon hac har hic"
)
_STEMS = tuple(sorted(set(_ACTIONS.split()), key=len, reverse=True))
# A verb of one of those stems that is no action: "fazer uma pergunta" is one, but "fale",
# "falar", "passar", "pedir desculpas"... The short stems ("fa", "hac") are only verbs of
# doing when the clause names what is done for the customer (`_short_done`).
_NOT_ACTIONS = word_set(
    "falar fale falo fala passar passo getting got order ordered openly opening offering "
    "calling filing made giving putting posting matching following pedir pedimos pedi "
    "desculpas perdon hacer hago haremos hare hice hicimos hacemos fazer faco faremos "
    "farei fiz fizemos fazemos address addressing recognize recognise"
)
_SHORT = frozenset(
    {"fa", "far", "fiz", "hac", "har", "hic", "get", "put", "made", "ped", "deix", "receiv"}
    | {"abr", "open", "add", "adicion", "inclu", "agreg", "anad", "giv"}
)
# What a "fazer"/"hacer"/"get"/"put" commits to when it is an action: "fazer o estorno",
# "hacer el reembolso", "get a replacement out", "put a credit on your account".
_DONE = linear(
    r"\b(?:estorno|reembolso|reenvio|envio|troca|credito|ajuste|devolucao|devolucion|cambio"
    r"|abono|bonificacion|agendamento|pedido|solicitacao|solicitud|replacement|refund"
    r"|credit|order|shipment|reembols\w*|estorn\w*|agendad\w*|marcad\w*|programad\w*"
    r"|reservad\w*|chamado|protocolo|solicitacao|reclamacao|reclamo|ticket|case|claim|dispute"
    r"|disputa|contestacao|incidencia|expediente|miles|milhas|millas|points|pontos|puntos"
    r"|seats?|licen[cs]\w*|desconto|descuento|discount|bonus|bono)\b"
)
_SENTENCE_END = linear(r"[.!?;]+(?:\s|$)|\n")
_CLAUSE_START = linear(r"[.!?;,:]+(?:\s|$)|\n|[•*·>-]\s")
_WORD = linear(r"\S+")


def commitment_spans(folded: str) -> list[tuple[int, int]]:
    """Where the agent commits to an action, in a folded message: each clause's (start,
    end), in order, none inside another."""
    spans: list[tuple[int, int]] = []
    for cue in first_matches(_CUE, folded):
        if spans and cue.start() < spans[-1][1]:
            continue  # "I'll refund it and we'll send...": one clause says both
        verb = _verb(folded, cue)
        if verb is None:
            continue
        clause = _clause(folded, cue.start(), verb[1])
        if _action(folded[verb[0] : verb[1]], folded[verb[1] : clause[1]]):
            spans.append(clause)
    return spans


def _verb(folded: str, cue: SpanMatch) -> tuple[int, int] | None:
    """The verb a cue commits to: the word it ends on (an action under way or done), else
    the first word after it past the fillers ("vou te mandar", "I'll just go ahead and
    send")."""
    for group in range(1, 8):
        if cue.group(group):
            return cue.start(group), cue.end(group)
    at = cue.end()
    for _ in range(6):
        word = _WORD.search(folded, at)
        if word is None:
            return None
        text = (word.group(0) or "").strip(",.;:!?").lower()
        # "I'm going to permanently block", "vou imediatamente estornar"
        if text not in _FILLERS and not text.endswith(("ly", "mente")):
            return word.start(), word.start() + len(text)
        at = word.end()
    return None


def _action(verb: str, rest: str) -> bool:
    """Whether the verb is something done for the customer (a stem of `_ACTIONS`, not one
    of `_NOT_ACTIONS`); a verb of doing only with what is done named in the rest of its
    clause, near it."""
    word = verb.lower().replace("-", "")
    named = _DONE.search(rest[:40]) is not None
    if word.endswith(("aste", "iste")):
        return False  # "ya pagaste": the customer did it
    if word in _NOT_ACTIONS and not named:
        return False
    stem = next((s for s in _STEMS if word.startswith(s.replace("-", ""))), None)
    return stem is not None and (stem not in _SHORT or named)


def _clause(folded: str, cue: int, verb_end: int) -> tuple[int, int]:
    """The clause a commitment is said in: from the start of its sentence or its part
    (after a comma, a colon, a bullet) when that is at most LEAD_WORDS words before the
    cue ("Entonces te vamos a enviar...", "..., o financeiro vai te retornar"), else from
    the cue; to the sentence's end, at most CLAUSE_WORDS words and CLAUSE_CHARS
    characters (cut between words)."""
    begin = max(0, cue - 200)
    for end in first_matches(_CLAUSE_START, folded[begin:cue]):
        begin = max(0, cue - 200) + end.end()
    if begin == max(0, cue - 200) and begin > 0:
        begin = cue  # no start found near enough
    lead = folded[begin:cue]
    start = begin if len(lead.split()) <= LEAD_WORDS else cue
    stop_at = _SENTENCE_END.search(folded, verb_end)
    stop = stop_at.start() if stop_at else len(folded)
    words = list(first_matches(_WORD, folded[start:stop]))
    if len(words) > CLAUSE_WORDS:
        stop = start + words[CLAUSE_WORDS - 1].end()
    if stop - start > CLAUSE_CHARS:
        cut = folded.rfind(" ", start, start + CLAUSE_CHARS)
        stop = cut if cut > verb_end else start + CLAUSE_CHARS
    while stop > start and folded[stop - 1] in " ,:-":
        stop -= 1
    return start, stop
