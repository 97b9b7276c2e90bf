"""Going around in circles, as people say it. A customer pushing back: the phrases people
use in pt, en and es when an answer did not help, was given already, or the conversation
goes around in circles ("you already told me that", "ja fiz isso", "cadê meu dinheiro",
"¿sí o no?", "I want a real person"), of one agent or of them all ("vocês só repetem",
"no responden"). An agent restating: "as I mentioned", "como informado anteriormente",
"como le comenté". Pure: one regular expression for each, compiled at import, on the
message folded to lower case without accents.

Real loops are seldom re-asked in the words of the first question: the customer pushes
back ("ok but when? you said 3pm", "u literally just told me that") while the agent says
its answer again in other words, often saying that it does. With such a phrase in the
customer's message, a reply that repeats the window less closely still makes a loop turn
(`loop.pushback_reply_similarity`); a re-ask answered by a reply that says it restates is
one whatever the reply's words. The phrases were written from general usage and chosen
on a hand-written tuning set (`bench/data/loops_handwritten_tune.jsonl`) and the tuning
seeds, with the real small talk of `chitchat-dataset` as the check that everyday words
("still", "again" in "good to see you again") do not make every chat a loop: a bare
"still" or "already" is no push back, "still not working" and "already tried" are. A
reminder ("lembrando que", "le recordamos que") is not a restating: agents open their
boilerplate with it.
"""

from __future__ import annotations

from gateway.context.linear_regex import compile_linear
from gateway.context.people_text import word_set
from gateway.loops.words import MESSAGE_CHARS, fold_text

_EN_NOT = (
    r"(?:not|no|nothing|never|down|waiting|broken|failing|fails|wrong|missing|can'?t|cannot"
    r"|won'?t|doesn'?t|don'?t|didn'?t|isn'?t|aren'?t|haven'?t|hasn'?t)"
)
ENGLISH = (
    r"again",
    r"once more",
    rf"still {_EN_NOT}",
    r"already (?:tried|did|done|told|asked|said|sent|explained|checked|restarted|gave)",
    r"same (?:thing|answer|response)",
    r"you (?:just )?said",
    r"you (?:already |just )?told me",
    r"i(?:'?ve| have)? (?:already |just )?(?:told|asked) you",
    r"i (?:already|just) said (?:that|it|this)",
    r"(?:read|reading|listen|listening)(?: to)? what i (?:wrote|write|said|say|asked)",
    r"same as (?:before|yesterday)",
    r"(?:it'?s|it has|its) been (?:over |more than |almost )?(?:\d+ ?|(?:a|an|two|three|four"
    r"|five|six|several|a few) )(?:hours?|days?|weeks?)",
    r"something concrete",
    r"told me that",
    r"keep (?:saying|telling|repeating)",
    r"going (?:around )?in circles",
    r"(?:second|third|fourth|fifth|2nd|3rd|4th|5th) time",
    r"(?:several|many|multiple) times",
    r"how many times",
    r"(?:\d+|two|three|four|five) times now",
    r"not what i asked",
    r"(?:doesn'?t|didn'?t|does not|did not|you never|you haven'?t) answer",
    r"answer my question",
    r"(?:nobody|no one|noone)(?:'?s| is| here)? (?:answering|answers|helping|helps|listening"
    r"|listens|responding|responds|replying|replies|reading)",
    r"not helping",
    r"doesn'?t help",
    r"useless",
    r"ridiculous",
    r"(?:a|real|actual) (?:human|person)",
    r"talk to (?:someone|somebody|a manager|a supervisor)",
    r"(?:speak|talk) (?:to|with) (?:a |an )?(?:human|person|agent|representative|rep)",
    r"supervisor",
    r"manager",
    r"escalate",
    r"i (?:did|tried|know) that",
    r"i'?ve (?:done|tried) that",
    r"tried that",
    r"(?:doesn'?t|didn'?t|does not|did not) work",
    r"repeating yourself",
    r"copy ?paste",
    r"forget it",
    r"or not",
    r"yes or no",
)
PORTUGUESE = (
    r"de novo",
    r"novamente",
    r"outra vez",
    r"mais uma vez",
    r"(?:ainda|continua|continuo|sigo) (?:nao|sem|nada|parado|fora|esperando|aguardando"
    r"|com (?:erro|problema))",
    r"ja (?:fiz|tentei|falei|disse|perguntei|mandei|expliquei|enviei|informei|passei"
    r"|reiniciei|entrei|verifiquei|fui)",
    r"mesma (?:coisa|resposta)",
    r"resposta (?:e|foi) a mesma",
    r"mesmo assunto",
    # not "segundo": "according to" as often as "second"
    r"(?:terceiro|quarto|quinto) (?:e-?mail|contato|chamado|protocolo)",
    r"ja (?:se passaram|passaram|passou|faz|fazem) (?:as |os )?(?:mais de |quase )?(?:\d+ ?"
    r"|(?:uma?|dois"
    r"|duas|tres|quatro|cinco|seis|sete|oito|dez|quinze|vinte) )(?:h|hs|horas?|dias?(?: uteis)?"
    r"|semanas?)",
    r"(?:algo|previsao|data|resposta) concret[ao]",
    r"(?:eu|ja) te (?:disse|falei|expliquei)",
    r"(?:falar|conversar) com (?:um |uma |o |a )?(?:pessoa|humano|responsavel)",
    r"(?:voce|vc|ce|vcs|voces) (?:ja )?(?:disse|disseram|falou|falaram)",
    r"(?:falou|disse) isso",
    r"repetindo",
    r"so repetem?",
    r"nao (?:resolvem?|resolveu|resolveram|ajudam?|ajudou|ajudaram|responde(?:m|u|ram)?"
    r"|funciona(?:m|ram)?|funcionou)",
    r"nao (?:e|foi) isso",
    r"nao (?:foi o )?que (?:eu )?perguntei",
    r"nao perguntei",
    r"atendente",
    r"(?:humano|pessoa de verdade|pessoa real)",
    r"supervisor",
    r"gerente",
    r"absurdos?",
    r"ridiculos?",
    r"palhacada",
    r"em circulos",
    r"(?:segunda|terceira|quarta|quinta) vez",
    r"(?:varias|muitas) vezes",
    r"quantas vezes",
    r"ninguem (?:resolve|responde|consegue|me (?:responde|ajuda|diz|explica))",
    r"cade",
    r"esquece",
    r"procon",
    r"reclame aqui",
    r"inacreditavel",
    r"(?:sim )?ou nao",
    r"(?:de|na) brincadeira",
    r"e nada",
    r"(?:ate agora )?nada ainda",
    r"mesmo erro",
    r"fala serio",
    r"aff",
)
SPANISH = (
    r"otra vez",
    r"de nuevo",
    r"nuevamente",
    r"una vez mas",
    r"(?:todavia|aun|sigue|sigo) (?:no|sin|nada|esperando|igual|con (?:el )?(?:error|problema))",
    r"ya (?:lo )?(?:hice|probe|intente|dije|pregunte|explique|envie|mande|reinicie|revise|fui)",
    r"ya (?:le|te) dije",
    r"lo mismo",
    r"misma respuesta",
    r"respuesta es la misma",
    r"mismo tema",
    r"(?:tercer|tercero|cuarto|quinto) (?:correo|e-?mail|mensaje|reclamo)",
    r"(?:ya )?(?:han pasado|pasaron|paso|lleva|llevo|llevamos) (?:las |los )?(?:mas de |casi )?"
    r"(?:\d+ ?|(?:una?|dos|tres|cuatro|cinco|seis|siete|ocho|diez|quince|veinte) )(?:h|hs|horas?"
    r"|dias?(?: habiles)?|semanas?)",
    r"(?:algo|fecha|respuesta) concret[ao]",
    r"(?:hablar|comunicarme) con (?:una |un |alguna |algun |el |la )?(?:persona|humano"
    r"|responsable|supervisora)",
    r"(?:usted|me|ya me) (?:dijo|dijiste|dijeron)",
    r"repiten?",
    r"repitiendo",
    r"no (?:resuelven?|resolvio|resolvieron|ayudan?|ayudo|ayudaron|responden?|respondio"
    r"|respondieron|funcionan?|funciono|funcionaron)",
    r"no es eso",
    r"no es lo que (?:pregunte|pedi)",
    r"no pregunte eso",
    r"agente",
    r"(?:humano|persona real)",
    r"supervisor",
    r"gerente",
    r"encargado",
    r"absurdos?",
    r"ridiculos?",
    r"en circulos",
    r"(?:segunda|tercera|cuarta|quinta) vez",
    r"(?:varias|muchas) veces",
    r"cuantas veces",
    r"nadie (?:resuelve|responde|me (?:responde|ayuda|dice|explica))",
    r"olvidalo",
    r"profeco",
    r"(?:si )?o no",
    r"y nada",
    r"nada todavia",
    r"mismo error",
    r"en serio",
)
# RE2 (gateway.context.linear_regex): one pass over the message whatever the phrases,
# ~7 µs for 4 KB where Python's re, trying every phrase at every place, took ~600.
_PUSHBACK = compile_linear(r"\b(?:" + "|".join((*ENGLISH, *PORTUGUESE, *SPANISH)) + r")\b")


# The agent saying it says again what it said ("as I mentioned", "como informado
# anteriormente", "como le comenté"): a reply that restates, reworded or not. Not a
# reminder ("lembrando que", "le recuerdo que") nor "reiteramos nossas desculpas": agents
# open boilerplate with them; and not a pointer to a source ("como explicado na nossa
# página", "as mentioned in our terms": `restates` reads the word after).
RESTATING = (
    r"as (?:i|we|i'?ve|we'?ve|i have|we have) (?:mentioned|said|stated|explained|noted|advised)",
    r"as mentioned",
    r"like i (?:said|mentioned)",
    r"as (?:previously|already|mentioned|stated|explained|advised|noted) (?:mentioned|stated"
    r"|explained|advised|noted|before|earlier|above)",
    r"as per my (?:previous|last|earlier) (?:message|reply|response|email)",
    r"(?:just )?to reiterate",
    r"i (?:would|'d) like to reiterate",
    r"como (?:eu )?(?:ja )?(?:mencionei|disse|falei|informei|expliquei|comentei|informamos"
    r"|mencionamos|explicamos|dissemos|falamos)",
    r"como (?:ja )?(?:informado|mencionado|dito|explicado)",
    r"conforme (?:ja )?(?:informado|informamos|mencionado|mencionei|explicado|expliquei|dito"
    r"|falei)",
    r"como (?:le |te |les )?(?:ya )?(?:(?:he|hemos) )?(?:mencione|dije|comente|explique|indique"
    r"|informe|mencionamos|dijimos|comentamos|explicamos|indicamos|informamos|mencionado"
    r"|dicho|comentado|explicado|indicado|informado)",
    r"tal (?:y )?como (?:se )?(?:le |te |les )?(?:ha|hemos|habia|habiamos) (?:mencionado|dicho"
    r"|comentado|explicado|indicado|informado)",
    r"como (?:ya )?(?:se )?(?:le |te )?(?:habia |habiamos )?(?:mencionado|dicho|comentado|explicado"
    r"|indicado|informado)",
)
_RESTATING = compile_linear(r"\b(?:" + "|".join(RESTATING) + r")\b")
# "como explicado na página", "as mentioned in our terms": where, not when
_SOURCE_NEXT = word_set("in on at na no nas nos em en el la los las pela pelo por del al within")


def restates(text: str) -> bool:
    """Whether an agent's reply says it is saying again what it said (a phrase followed
    by where it was said, "na nossa página", is a pointer to a source instead)."""
    folded = _folded(text)
    for found in _RESTATING.finditer(folded):
        after = folded[found.end() : found.end() + 24].split(None, 1)
        if not after or after[0].strip(",.;:!?") not in _SOURCE_NEXT:
            return True
    return False


def pushes_back(text: str) -> bool:
    """Whether a customer's message says the answer did not help or was given already."""
    return _PUSHBACK.search(_folded(text)) is not None


# "pedido nº 4521", "1ª via": an ordinal indicator folds to a letter ("o no"), and the
# Spanish "¿sí o no?" would hear push back in every Portuguese order number.
_ORDINALS = str.maketrans("", "", "\u00aa\u00ba")


def _folded(text: str) -> str:
    """A message as the phrases are written: its first MESSAGE_CHARS, lower case, no
    accents, a typographic apostrophe as a plain one."""
    return fold_text(text[:MESSAGE_CHARS].translate(_ORDINALS)).replace("\u2019", "'")
