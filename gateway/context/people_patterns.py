"""What the people extractor looks for, as data: the RE2 patterns it runs over a folded
turn (the word lists that tell a name or a city from a common word are people_words). Pure.

Every pattern is compiled once, case-blind, at import, and kept as a module-level name so
tests/test_hostile_cpu.py can run each over adversarial text. Patterns are written for
folded text: no accents ("sao", "amanha", "direccion").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gateway.context.people_numbers import MULTIPLIERS, NUMBERS, ORDINALS, REPEATS
from gateway.context.people_text import linear, word_set


def _alternation(words: Sequence[str]) -> str:
    """Longest first: RE2 takes the first alternative that matches ("dezesseis", not "dez")."""
    return "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"


_NUM = _alternation([*NUMBERS, *MULTIPLIERS, *REPEATS])
_ORD = _alternation(list(ORDINALS))
_FILLER = r"(?:uh+|uhm|um+|hmm+|eh+|ah+|e|y|and|tipo|like)"  # said between number words
_SEP = rf"[\s,.-]+(?:{_FILLER}[\s,.-]+)*"
_RUN = rf"\b{_NUM}\b(?:{_SEP}{_NUM}\b)*"  # number words, fillers between them
# A code's dash, said as a word when it is read out ("two six dash zero four four",
# "d s p dash two six", "quatro traço um"): a separator inside a code, no number's.
_DASH_WORD = r"(?:dash|hyphen|traco|tracinho|hifen|guion)"
_CODE_SEP = rf"(?:{_SEP}|[\s,.]+{_DASH_WORD}[\s,.]+)"
_CODE_RUN = rf"\b{_NUM}\b(?:{_CODE_SEP}{_NUM}\b)*"
DASH_WORD = linear(rf"\b{_DASH_WORD}\b")
_W = r"[A-Za-z][A-Za-z'-]*"
# Sounds and fillers said while finding the word, in any of the three languages.
_FILLERS = r"uh+|hm+|er+m?|tipo|like"
# What a speaker says while finding the word: "my name is, uh, Robert", "é, é, Cláudia".
_HESITATION = rf"(?:(?:{_FILLERS}|u+m+|uhm|eh+m?|ah+|e|well)[\s,.]+)*"
_NAMES = rf"({_W}(?:\.?[ \t]+{_W}){{0,4}})"
# A filler said inside a cue, between its verb and its preposition ("soy este de
# valencia", "sou tipo de curitiba", "i'm like from boston"); never a word a cue needs
# ("um" and "e" are words there).
_CUE_FILLER = rf"(?:(?:{_FILLERS}|m{{2,}}|eh+|ah+n?|hum|este|pues|assim|ne)[\s,]+)?"
# A filler said between the words of a correction cue, as in a call's transcript ("o
# correto hum é campinas", "scratch like that atlanta", "sorry uh i misspoke", "en o sea
# realidad"): the cue's blanks. Here an "um" is one too: no cue has the word "um" inside.
_GAP = rf"[\s,]+{_CUE_FILLER}(?:(?:u+m+|o\s+sea)[\s,]+)?"
_MONTH = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|janeiro|fevereiro|marco|abril|maio|junho|julho|agosto|setembro|outubro|novembro"
    "|dezembro|enero|febrero|marzo|mayo|junio|julio|septiembre|setiembre|octubre|noviembre"
    "|diciembre|jan|feb|fev|apr|abr|jun|jul|aug|ago|sept|sep|oct|nov|dec|dez|dic"
)
_DAY = rf"(?:\d{{1,2}}(?:st|nd|rd|th|o)?|(?:{_NUM}[\s-]+(?:(?:and|e|y)\s+)?)?(?:{_NUM}|{_ORD}))"
_YEAR = r"(?:,?\s+(?:de\s+|del\s+)?\d{4}\b)?"
# Weekdays' names, folded: English, Portuguese working days (also ordinals without
# "-feira": "a segunda vez"), the weekend in Portuguese and Spanish, Spanish working days.
_EN_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_PT_DAY = r"(?:segunda|terca|quarta|quinta|sexta)"
_WEEKEND = r"(?:sabado|domingo)"
_ES_DAY = r"(?:lunes|martes|miercoles|jueves|viernes)"
_WEEKDAY = (
    rf"(?:(?:(?:last|next|this|coming|past)\s+)?{_EN_DAY}\b"
    rf"|(?:(?:proxima|ultima|nesta|nessa|esta|essa)\s+)?{_PT_DAY}"
    r"[\s-]+feira\b|(?:proxima|ultima|nesta|nessa|na|ate|desde)\s+"
    rf"{_PT_DAY}(?:[\s-]+feira)?\b"
    rf"|(?:(?:proximo|ultimo|neste|nesse|este|esse|no|el|ate|desde)\s+)?{_WEEKEND}\b"
    rf"|(?:(?:el\s+)?(?:proximo|este)\s+)?{_ES_DAY}\b)"
    # said after the day: "sexta que vem", "el viernes que viene", "sábado passado"
    r"(?:\s+(?:que\s+(?:vem|viene)|passad[oa]|pasad[oa])\b)?"
)
# A weekday with its day of the month ("sexta, dia 27", "sábado dia sete", "Monday the
# 16th", "el viernes 27", "Friday 6 March"): one date, which a weekday alone is not. A
# Portuguese weekday without "-feira" is also an ordinal ("a segunda 2 vezes"): "dia" then.
_WEEKDAY_DAY = (
    r"(?:(?:na|no|on|ate|desde|el|this|next|last|coming|proxim[oa]|nest[ea]|ness[ea]|est[ea]"
    r"|ess[ea])\s+)?"
    rf"(?:{_EN_DAY}(?:,\s*|\s+)(?:the\s+)?"
    rf"|{_PT_DAY}[\s-]+feira(?:,\s*|\s+)(?:dia\s+)?"
    rf"|(?:{_PT_DAY}|{_WEEKEND})(?:,\s*|\s+)dia\s+"
    rf"|(?:{_WEEKEND}|{_ES_DAY})(?:,\s*|\s+)(?:(?:el|dia)\s+)?)"
    # its day and month in figures too ("quarta-feira, 06/05", "Friday, 3/13")
    rf"(?:\d{{1,2}}/\d{{1,2}}(?:/(?:\d{{4}}|\d{{2}}))?\b"
    rf"|{_DAY}\b(?:\s+(?:of\s+|de\s+|del\s+)?(?:{_MONTH})\b)?{_YEAR})"
)
# In a date match, a weekday's name and the number after it (gateway.context.
# people_quantities.weekday_day): group 1 the name, 2 what marks the number as a day
# ("dia", "the", "el"), 3 the number (digits or words).
WEEKDAY_NUMBER = re.compile(
    rf"\b({_EN_DAY}|{_PT_DAY}(?:[\s-]+feira)?|{_WEEKEND}|{_ES_DAY}),?\s+"
    r"((?:dia|the|el)\s+)?(\d{1,2}(?:st|nd|rd|th|o)?|[a-z]+)",
    re.IGNORECASE,
)
_DATE_CORE = (
    rf"\b{_WEEKDAY_DAY}"
    # a day of last month ("dia vinte e seis do mês passado", "the 26th of last month",
    # "el 26 del mes pasado"), said as a day: not a count ("5 of last month's orders",
    # "tenho 12 do mês passado para pagar")
    rf"|\b(?:dia|el|the)\s+{_DAY}\s+(?:(?:do|del)\s+m[eê]s\s+pass?ado|of\s+last\s+month(?:[^'\w]|$))"
    rf"|\b(?:{_MONTH})\.?\s+(?:the\s+)?{_DAY}\b{_YEAR}"
    rf"|\b(?:dia\s+)?{_DAY}\s+(?:of\s+|de\s+|del\s+)?(?:{_MONTH})\b{_YEAR}"
    r"|\b\d{4}-\d{1,2}-\d{1,2}\b|\b(?:dia\s+)?\d{1,2}/\d{1,2}(?:/(?:\d{4}|\d{2}))?\b|\bdia\s+\d{1,2}\b"
    # a working day without "-feira" before a date in figures ("na sexta 13/03"): no
    # ordinal ("a segunda 2 vezes") is followed by one
    r"|\b(?:(?:na|ate|desde|proxima|nesta|nessa|esta|essa)\s+)?"
    rf"{_PT_DAY}(?:,\s*|\s+)\d{{1,2}}/\d{{1,2}}(?:/(?:\d{{4}}|\d{{2}}))?\b"
    rf"|\b(?:{_WEEKDAY})"
)
_DURATION = (
    rf"(?:\d{{1,3}}(?:\s*(?:-|a|to|ou|or|y|e)\s*\d{{1,3}})?|{_DAY}(?:\s+(?:a|to|ou|or|y|e)"
    rf"\s+{_DAY})?)\s+(?:business\s+|working\s+)?(?:days?|hours?|weeks?|dias?|horas?"
    r"|semanas?)\b(?:\s+(?:uteis|habiles|laborables|corridos)\b)?"
)
_RELATIVE = (
    r"tomorrow|amanha|manana|end\s+of\s+(?:the\s+)?(?:day|week|month)"
    r"|(?:o\s+)?(?:fim|final)\s+d[oa]\s+(?:dia|semana|mes)|(?:el\s+)?(?:fin|final)\s+del?\s+"
    r"(?:dia|semana|mes)"
)
# The slang people say money in ("50 paus", "63 pavos", "20 quid"; "140 conto" only
# after digits: "um conto de fadas" is a tale), and pounds, a weight too ("lost 10
# pounds", "20 libras de harina"): an amount only where money is spoken of.
SLANG_MONEY = frozenset({"contos", "paus", "pratas", "pavos", "quid", "conto", "pounds", "libras"})
_CURRENCY = (
    r"(?:reais|d[oó]lar(?:es)?|dollars?|bucks|euros?|pesos|usd|brl|eur|gbp|mxn|"
    + "|".join(sorted(SLANG_MONEY - {"conto"}))
    + ")"
)

EMAIL = linear(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_SAID_SEP = (
    r"\s+(?:dot|ponto|punto|underscore|under\s+score|underline|sublinhado|guion\s+bajo|guion"
    r"|hifen|hyphen|dash|traco)\s+"
)
SAID_SEPARATOR = linear(_SAID_SEP)  # in a name read out: a dot, an underscore...
_SAID_DOT = r"(?:\s+(?:dot|ponto|punto)\s+|\.)"
_TLD = r"(?:com|net|org|edu|gov|io|co|br|es|mx|ar|pt|uk|us|ca|cl|pe|uy|info|biz|me|app|dev)"
# An address read out on a call: "ana underscore souza at gmail dot com", "joao ponto silva
# arroba gmail ponto com", "angie dot torres seventy seven at gmail dot com" (its digits
# read out). Group 1 its first word, 2 the rest of its name, 3 "at"/"arroba".
SAID_EMAIL = linear(
    rf"\b([A-Za-z0-9][A-Za-z0-9._-]*)((?:{_SAID_SEP}[A-Za-z0-9][A-Za-z0-9._-]*){{0,4}}"
    rf"(?:\s+(?:{_NUM})\b){{0,4}})\s+"
    rf"(at|arroba)\s+[A-Za-z0-9-]+(?:{_SAID_DOT}[A-Za-z0-9-]+){{0,3}}{_SAID_DOT}{_TLD}\b"
)
# The same with the domain's name heard as two words ("derek at brightpath dental dot
# com": a transcript splits a compound): only after an email's cue (people_spans).
SAID_EMAIL_SPLIT = linear(
    rf"\b([A-Za-z0-9][A-Za-z0-9._-]*)((?:{_SAID_SEP}[A-Za-z0-9][A-Za-z0-9._-]*){{0,4}}"
    rf"(?:\s+(?:{_NUM})\b){{0,4}})\s+"
    rf"(at|arroba)\s+[A-Za-z0-9-]+\s+[A-Za-z0-9-]+(?:{_SAID_DOT}[A-Za-z0-9-]+){{0,3}}"
    rf"{_SAID_DOT}{_TLD}\b"
)
EMAIL_CUE = linear(r"\b(?:e-?mail|correo|mail)\b")
# The cents word, or its plural run into the next word by a missing space
# ("50 centavosdigitei errado"): the cents are still said.
_CENT_WORD = r"(?:cents|centavos|centimos|(?:cent|centavo|centimo)\b)"
_CENTS = rf"(?:\s+(?:and|e|y|con)\s+\d{{2}}\b(?:\s+{_CENT_WORD})?)?"
# Thousands set apart by a space, as pt-PT, es and fr write them ("1 234,56 €", a
# no-break space made plain), before any other number; with the cents only ("2 100 euro
# notes" is two notes).
_SPACED = r"\d{1,3}(?: \d{3})+[.,]\d{2}\b"
AMOUNT = linear(
    r"(?:R\$|US\$|U\$|\$|€|£|\b(?:USD|BRL|EUR|GBP|MXN|ARS|COP|CLP)\b)\s?"
    rf"(?:{_SPACED}|\d(?:[\d.,]*\d)?)"
    rf"|\b(?:{_SPACED}|\d(?:[\d.,]*\d)?)(?:\s?k|\s+(?:mil|thousand|milhoes|milhao|millones|millon))?\s?"
    rf"(?:(?:{_CURRENCY}|conto)\b|€){_CENTS}"
    # "devolver 237 e 49": units and cents said apart, only where money is spoken of
    r"|\b\d{1,5}\s+(?:e|y|and|con)\s+\d{2}\b"
    rf"|{_RUN}\s+{_CURRENCY}\b(?:\s+(?:and|e|y|con)\s+{_RUN}\s+{_CENT_WORD})?"
)
# The cents said after a sum in words without saying "centavos" ("seiscentos e doze reais
# e quarenta e sete"): group 1 the number words, group 2 the word for cents if said.
SPOKEN_CENTS = linear(rf"^\s+(?:and|e|y|con)\s+({_RUN})(\s+{_CENT_WORD})?")
# A number right after the word for paying or costing is money, even with no currency
# ("o orçamento deu 8.900", "paguei 350 na entrega", "it cost 450", "the quote came to
# 1,250"): three digits or more, or thousands written out. Group 1 the amount.
# A bare run of digits is an amount only up to four of them ("paguei 350"; "my quote is
# 48213" names the quote).
PRICED = linear(
    r"\b(?:(?:or[cç]amento|total|valor|fatura|quote|estimate|bill|presupuesto)\s+"
    r"(?:deu|ficou(?:\s+em)?|came\s+to|comes\s+to|sali[oó]|dio)"
    r"|custou|custa|custaram|paguei|pagamos|cobrou|cobraram|me\s+cobraram|cost|costs|paid"
    r"|charged\s+(?:me\s+)?|came\s+to|costo|cost[oó]|cuesta|pagu[eé]|cobraron|me\s+cobraron)"
    r"\s+(?:(?:de|me|us|around|about|uns|umas|unos|like)\s+)?"
    r"(\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{2})?|\d{3,4}(?:[.,]\d{2})?)\b"
)
# A customer's dates also name the day before: when something happened ("chegou ontem",
# "charged yesterday"); not an agent's deadline ("in yesterday's email").
DATE = linear(_DATE_CORE + r"|\b(?:ontem|anteontem|yesterday|ayer|anteayer)\b")
MONTH_AHEAD = linear(rf"^\s+(?:(?:de|del|of)\s+)?(?:{_MONTH})\b")
# Something weighed, in the sentence of a "20 pounds" or "5 libras" (people_quantities).
WEIGHED = linear(
    r"\b(?:weigh|weight|heav(?:y|ier)|pes(?:o|a|ava|ado|ada|aba)\b|kg\b|kilos?\b|lbs?\b|bags?\b"
    r"|luggage|baggage|bagagem|equipaje|malas?\b|maletas?\b|excess|sobrepeso|overweight)"
)
# Money spoken of, before a bare "237 e 49".
MONEY_CUE = linear(
    r"\b(?:pag|valor|reembols|devol|estorn|cobr|cust|preco|total|credit|refund|charg|paid|pay"
    r"|price|cost|precio|reintegr|abon|saldo|fatura|factura|invoice|bill)"
)
# Money spoken of just after a bare "185 e 39" or "29 conto": where it was paid or what
# it adds up to ("deu 185 e 39 no total", "saiu 29 conto no cartão", "in total").
MONEY_AFTER = linear(
    r"^[\s,]*(?:(?:no|na|en|in|on)\s+(?:(?:o|a|el|la|my|the|mi|meu|minha)\s+)?(?:total|cartao"
    r"|credito|debito|pix|boleto|fatura|factura|tarjeta|card|bill|invoice|extrato|extracto"
    r"|statement)|(?:de|of)\s+(?:frete|envio|shipping))\b"
)
DEADLINE = linear(
    r"\b(?:by|before|until|till|no\s+later\s+than|within(?:\s+the\s+next)?|in(?:\s+the\s+next)?"
    r"|em\s+ate|ate|antes\s+d[eoa]|no\s+prazo\s+de|num\s+prazo\s+de|prazo\s+de|dentro\s+de"
    r"|hasta|antes\s+del?|para\s+el|para\s+o\s+dia|a\s+mas\s+tardar|en|em"
    # a new date given: "a nova previsão é 11/11", "la nueva fecha es el 15/04"
    r"|(?:nova\s+)?previsao(?:\s+de\s+entrega)?\s+(?:e|eh|fica|para)|nova\s+data\s+(?:e|eh|sera|fica)"
    r"|nueva\s+fecha\s+(?:es|sera)|new\s+(?:date|eta|delivery\s+date)\s+is|expected\s+(?:on|by))\s+"
    rf"(?:(?:the|o|a|el|la|dia)\s+)?(?:{_DATE_CORE}|{_DURATION}|{_RELATIVE})"
    rf"|\b(?:next|proxim[oa])\s+(?:{_EN_DAY}|{_PT_DAY}|{_WEEKEND}|{_ES_DAY})\b"
    r"(?:[\s-]+feira\b)?"
    rf"|\b(?:ate|antes\s+d[ae])\s+(?:(?:a|o)\s+)?{_PT_DAY}\b"
    # a day booked: "agendado pra sábado dia sete", "programada para el viernes 27",
    # "scheduled for Monday the 16th" (not "fully booked for", "no slots for")
    r"|\b(?:agendad[oa]s?|marcad[oa]s?|programad[oa]s?|reagendad[oa]s?|remarcad[oa]s?"
    r"|scheduled|rescheduled|confirmad[oa]s?|confirmed)(?:\s+(?:\w+\s+)?(?:pra|para|for)\s+"
    r"|\s*:\s*)"
    rf"(?:(?:o|a|el|la|the)\s+)?{_WEEKDAY_DAY}"
)
# Where a sentence or clause of the agent's ends, for telling policy from commitment.
POLICY_BREAK = linear(
    r"[.!?]+(?:\s|$)|\n|;|,\s*(?:but|mas|pero|however|porem|though|embora|aunque)\b"
)
_GENERIC = (
    r"refunds|returns|exchanges|orders|deliveries|shipments|payments|cancellations|requests"
    r"|claims|items|products|purchases|replacements|repairs|reembolsos|estornos|devolucoes"
    r"|trocas|pedidos|entregas|envios|pagamentos|cancelamentos|solicitacoes|reclamacoes"
    r"|produtos|compras|devoluciones|cambios|pagos|cancelaciones|solicitudes|reclamaciones"
    r"|productos"
)
# A clause that states policy: a generic plural subject ("Refunds are...", "Os reembolsos
# são...", "Las devoluciones se..."), an impersonal "se aceptan", or a word of habit.
POLICY = linear(
    r"^[\s\"'(*-]*(?:(?:but|mas|pero|however|porem|and|e|y|also|tambem|(?:please\s+)?note"
    r"(?:\s+that)?|just\s+so\s+you\s+know|fyi|lembrando\s+que|vale\s+lembrar\s+que|recuerde"
    r"\s+que|le\s+recuerdo\s+que|tenga\s+en\s+cuenta\s+que)[\s,:]+)*(?:(?:all|any|every|our|the"
    r"|todos\s+os|todas\s+as|os|as|nossos|nossas|todos\s+los|todas\s+las|los|las|nuestros"
    r"|nuestras)\s+)?(?:(?:standard|international|domestic|online|eligible)\s+)?"
    rf"(?:{_GENERIC})\b|^[\s\"'(*-]*se\s+(?:aceptan|aceitam|procesan|processam|realizan|hacen"
    r"|emiten|reembolsan|admiten|permiten|devuelven|envian|entregan)\b|\b(?:policy|policies"
    r"|politica|politicas|usually|normally|typically|generally|as\s+a\s+rule|standard"
    r"|geralmente|normalmente|costuma|costumam|em\s+geral|via\s+de\s+regra|por\s+lo\s+general"
    r"|generalmente|suele|suelen|en\s+general|por\s+norma|padrao|estandar)\b|\b(?:can|may|must)\s+be"
    r"\s+(?:requested|returned|exchanged|made|cancell?ed)\b|\bpodem?\s+ser\s+(?:feit|solicitad|trocad"
    r"|devolvid|cancelad)[oa]s?\b|\bse\s+pueden?\s+(?:solicitar|devolver|cambiar|cancelar|pedir)\b"
)
# The agent speaking to or for this customer: first and second person ("we" only with a
# future or a present perfect: "we refund within 3 days" is how it goes for everyone).
COMMIT = linear(
    r"\b(?:i|i'?ll|i'?m|i'?ve|me|my|we'?ll|we\s+will|we\s+can|we'?re|we'?ve|you|you'?ll|you'?re"
    r"|your|yours|eu|vou"
    r"|vamos|irei|iremos|consigo|posso|podemos|te|lhe|voce|vc|voces|seu|sua|seus|suas|yo|voy"
    r"|puedo|le|les|usted|ustedes|su|sus|tu|tus|nosotros)\b"
)
OFFER = linear(
    r"\b(?:offer|re\s?fund|reimburs|credit|discount|voucher|coupon|compensat|waive|give\s+you"
    r"|send\s+you|return|devolv|devolu|reembols|estorn|desconto|cupo|abon|bonifica|compensa"
    r"|ressarc|descuento|oferec|ofrec|cashback|vale"
    # a deduction from the next bill, a hold released ("vai ser abatido", "se libera la
    # retención de trescientos euros"; not "pedido liberado para envio")
    r"|abat|(?:libera|releas)\w*\s+(?:(?:a|la|el|o|the|your|sua|su)\s+)?(?:retenc|retenca"
    r"|cauc|deposit|hold|bloqueio|pre-?autoriza)"
    # money coming back: "you'll get $40.50 back", "vai receber R$ 40 de volta", the
    # amount perhaps spelled ("three hundred forty-two dollars and eighty-one cents")
    r"|(?:you'?ll|you\s+will)\s+(?:get|receive)\s+(?:[^.\n]|\.\d){0,64}?\bback\b"
    r"|recebe[^.\n]{0,40}?\bde\s+volta\b|recibi[^.\n]{0,40}?\bde\s+vuelta\b)"
)
PHONE = linear(r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,3}\)|\b\d{2,3})[\s.-]?\d{3,5}[\s.-]?\d{4}\b")
DIGITS = linear(r"(?:\+\d{1,3}\s?)?\(?\d[\d\s.()-]{6,18}\d")
# A machine's timestamp ("2025-06-25T06:35:36.775Z", "2025-06-25 06:35:36,123"), as in
# a pasted log: no code, date or phone the customer states is inside one.
MACHINE_STAMP = linear(
    r"\b\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}|\s\d{2}:\d{2}:\d{2})(?::\d{2})?(?:[.,]\d+)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?"
)
CODE = linear(r"#\s?[A-Za-z0-9-]*\d[A-Za-z0-9-]*|\b[A-Za-z0-9][A-Za-z0-9-]*\d[A-Za-z0-9-]*")
SPELLED = linear(_CODE_RUN)
# A number in any mix of digits and number words, as it is typed or read back ("(415)
# 555-0199", "four one five, five five five, zero one nine nine", "415 555 zero um nove
# nove"): where gateway.context.redaction looks for a hidden phone.
_MIXED_SEP = rf"[\s,.()-]+(?:{_FILLER}[\s,.()-]+)*"
MIXED_NUMBER = linear(rf"\+?\(?(?:\d+|\b{_NUM}\b)(?:{_MIXED_SEP}(?:\d+|\b{_NUM}\b))*")
# A code's letters read out before its digits: a consonant first ("l r three three five"),
# then any letter ("s e nove cinco cinco sete": the "e" a letter, not "and").
SPELLED_CODE = linear(
    rf"\b[b-df-hj-np-tv-xz][\s.-]+(?:[a-z][\s.-]+){{0,2}}(?:{_DASH_WORD}[\s.-]+)?{_CODE_RUN}"
)
# Which kind a number is, by the last cue word before it: order, sku, phone, or none
# at all (a postal code, a card, a document: not facts to keep).
CUE = linear(
    r"\b(?:(zip\s+code|postal\s+code|area\s+code)|(orders?|pedidos?|orden|encomenda|compra"
    r"|protocolo|protocol|ticket|chamado|caso|case|reclamacao|invoice|fatura|factura"
    r"|nota\s+fiscal|boleto|booking|reserva|reservation|confirmation|confirmacao|confirmacion"
    r"|localizador|tracking|rastreio|rastreamento"
    r"|seguimiento|guia|ref|reference|referencia|ordem\s+de\s+servico|work\s+order"
    r"|service\s+order|orden\s+de\s+(?:trabajo|servicio))|(sku|codigo|code|product"
    r"|produto|producto|item|modelo|model|part|peca|pieza|article|articulo|artigo)|(phone"
    r"|telefone|telefono|tel|fone|celular|cel|cell|mobile|movil|whatsapp|whats|zap|wpp|contato"
    r"|contacto|call\s+me\s+at|reach\s+me\s+at|my\s+number|meu\s+numero|mi\s+numero)|(zip"
    r"|cep|cpf|cnpj|rg|dni|nif|ssn|postal|cvv|card|cartao|tarjeta|senha|password|pin|conta"
    r"|account|cuenta|agencia|iban)"
    # Words for a file that also has a sum ("the claim was 865"), or a short number of
    # its own ("the OS 2023 update": an operating system, "OS 7740218": a service order):
    # a code after them is one only when it is long or has letters (people_spans).
    r"|(dispute|disputa|claim|sinistro|siniestro|report|incident|incidente|ocorrencia"
    r"|(?-i:OS)))\b"
)
CUE_KINDS = ("block", "order", "sku", "phone", "block", "file")  # CUE's groups, in order
# The agent's words for a number it gives the customer to quote, the code after them
# in the same sentence ("Protocolo: RES-2026-058214", "your job reference is PV-31174",
# "Caso: RC-90215", "o protocolo da sua reclamação é dois zero dois..."): group 1 the
# text between the word and the code.
REFERENCE_CUE = linear(
    r"\b(?:protocolo|protocol|ticket|chamado|caso|case|radicado|expediente|incidencia"
    r"|reference|referencia|ref|booking|reserva|localizador|claim|sinistro|siniestro"
    r"|order|pedido|ordem\s+de\s+servico|solicitud|solicitacao|atendimento|dispute|disputa"
    r"|contestacao|reclamacao|reclamacion|ocorrencia|incident|incidente|confirmation"
    r"|confirmacao|confirmacion|tracking|rastreio|rastreamento|seguimiento|autorizacao"
    r"|autorizacion|authorization|voucher|file|arquivo|orden\s+de\s+(?:trabajo|servicio)"
    # a service order, as Brazil's technicians write it in capitals: "OS 7740218"
    r"|work\s+order|service\s+order|(?-i:OS|O\.S))\b([^.!?;\n]{0,40})$"
)
_STREET_TYPE = (
    r"rua|r\.|avenida|av\.?|avda\.?|alameda|al\.|travessa|tv\.|estrada|rodovia|praca|calle"
    r"|carrera|cra\.?|paseo|plaza|pasaje|carretera|rambla|jiron|diagonal|transversal|calzada"
    # Catalan, as Barcelona's and Valencia's streets are written
    r"|avinguda|carrer|passeig|travessera|ronda"
)
_EN_STREET = r"street|road|avenue|lane|drive|boulevard"
_HOUSE = r"(?:n[o.]?\.?\s*|numero\s+|nro\.?\s*|#\s*)?\d{1,5}[A-Za-z]?\b"
# A house number said in words ("cento e vinte", "fifteen hundred"): no commas inside, as a
# phone's digits have ("rua x cento e vinte, um abraço" is 120).
_SAID_HOUSE = rf"(\b{_NUM}\b(?:[\s-]+(?:(?:e|y|and)[\s-]+)?{_NUM}\b){{0,4}})"
# Group 1 the street's name, group 2 its number when said in words.
# A street's name may be a code ("Av. T-63", "Rua C-140", as in planned cities).
_STREET_CODE = r"[A-Za-z]{1,3}-\d{1,3}"
STREET_FIRST = linear(
    rf"\b(?:(?:{_STREET_TYPE})\s+|c/\s*)((?:{_W}|{_STREET_CODE}|\d{{1,3}})"
    rf"(?:\s+(?:{_W}|\d{{1,3}})){{0,5}}?),?\s+"
    rf"(?:{_HOUSE}|{_SAID_HOUSE})"
)
# A district after the street, number and door, before the clause ends: ", Setor Bueno",
# ", Jardim América", ", Centro" (capitalised; people_spans keeps a big city out: that is
# the city). Group 1 the district.
DISTRICT = linear(
    r"^,[ \t]*((?-i:[A-Z])[a-z]+(?:[ \t]+(?:(?:de|da|do|dos|das)[ \t]+)?(?-i:[A-Z])[a-z]+){0,2})"
    r"[ \t]*(?:[.;,\n]|$)"
)
NUMBER_FIRST = linear(
    rf"\b\d{{1,5}}[A-Za-z]?\s+((?:{_W}\s+){{1,3}}?)(?:{_EN_STREET}|st|rd|ave|ln|blvd|court|ct"
    # and the side of town after it, in capitals ("4127 Bryant Ave S")
    # (the character after the side is in the match: people_spans trims it)
    r"|way|place|terrace|parkway|highway|hwy|grove|close|crescent|gardens|square|mews|parade"
    r"|circle|trail)\b\.?"
    r"(?:[ \t]+(?-i:NE|NW|SE|SW|N|S|E|W)(?:$|[ \t,.;]))?"
)
# The same with the house number said in words, as a call's transcript writes it ("four
# four one seven north pearl street", "eighteen forty east speedway boulevard"): two
# number words at least ("one main street" is a word's), group 1 the street's name.
NUMBER_FIRST_SAID = linear(
    rf"\b{_NUM}(?:[\s-]+{_NUM}){{1,4}}\s+((?:{_W}\s+){{1,3}}?)(?:{_EN_STREET}|way|place"
    r"|court|terrace|parkway|highway|circle|trail)\b"
)
NAME_FIRST = linear(
    rf"\b((?:{_W}\s+){{1,3}}?)(?:{_EN_STREET}|rd|ave|blvd|ln|dr|st)\.?\s*,?\s*(?:(?:(?:no\.?|number"
    rf"|numero)\s*)?\d{{1,5}}\b"
    rf"|{_SAID_HOUSE})"
)


# What follows a street and number to find the door: "casa 2", "apto 302", "Apt 5",
# "bloco B", "piso 3", each a digit or a single letter ("casa da minha mae" is none).
def _address_unit(letter: str) -> str:
    return (
        r"^(?:,?[ \t]*(?:(?:apto|apartamento|apart|ap|apt|apartment|casa|sala|conjunto|cj|andar"
        r"|piso|depto|departamento|dpto|suite|ste|unit|flat|floor|lote|lt|quadra|qd|room|puerta"
        r"|pta|porta|escalera|esc)\b\.?[ \t]*(?:n[o.]?[ \t]*|#[ \t]*)?(?:\d[A-Za-z0-9/-]{0,4}"
        # or said in words on a call ("apartamento trinta e quatro", "apartment two oh six")
        rf"|{letter}|{_NUM}\b(?:[ \t-]+(?:(?:e|y|and)[ \t]+)?{_NUM}\b){{0,3}})"
        # a Spanish or Catalan floor and door: "5º A", "1º 1ª", "3r 2a" (folded "5o A")
        r"|\d{1,2}[oa]\.?[ \t]*(?:(?-i:[A-Z])|\d{1,2}[oa]\b)|\d{1,2}[rnt][ \t]+\d{1,2}[oa]\b"
        # a floor said first: "2nd Floor", "3rd floor"
        r"|\d{1,2}(?:st|nd|rd|th)[ \t]+floor"
        # a block or tower is a letter, said in lowercase on a call ("bloco b apto 392")
        r"|(?:bloco|bl|torre|tower)\b\.?[ \t]*(?:\d[A-Za-z0-9-]{0,4}|[A-Za-z]))\b){1,3}"
    )


ADDRESS_UNIT = linear(_address_unit(r"(?-i:[A-Z])"))
# A transcript writes the door's letter in lowercase ("piso 1 puerta b"): a consonant
# (a lone vowel is a word: "puerta a la derecha", "casa e"), and only where the clause
# ends with it (a chat's "casa q fica no fundo", "apto n lembro" abbreviate words).
# A door written before the number, as in Britain and North America: "Flat 3, 18 Cotham
# Grove", "Apt 4B, 200 Main St", "Flat 2/1, 14 Hyndland Road" (the match ends the text
# before the number).
DOOR_FIRST = linear(
    r"\b(?:flat|apt|apartment|unit|suite|ste)\.?[ \t]*#?[0-9][0-9A-Za-z/-]*,?[ \t]*$"
)
ADDRESS_UNIT_SPOKEN = linear(_address_unit(r"(?-i:[A-Z])|(?-i:[b-df-hj-np-tv-xz])"))
NAME = linear(
    r"\b(?:(my\s+name\s+is|my\s+name'?s|name's|name\s+is|meu\s+nome\s+(?:completo\s+)?(?:e|eh)|me\s+chamo"
    r"|(?:voce\s+|vc\s+)?pode\s+me\s+chamar\s+de|me\s+chama\s+de|puedes?\s+llamarme|mi\s+nombre\s+(?:completo\s+)?es|me\s+llamo|(?:aqui\s+)?quem"
    # "fala" with one letter typed wrong, left out or doubled ("quem faka é Patrícia")
    r"\s+f(?:[a-z]?ala|[a-z]la|a[a-z]a|al[a-z]a?|la|al)\s+(?:e|eh)(?:\s+[ao])?|(?:le|te)\s+habla|aqui\s+habla|(?:nome|name|nombre)\s*:)"
    r"|i'?m|i\s+am|this\s+is|(?:eu\s+)?sou(?:\s+eu\s*,|\s+[ao])?|(?:yo\s+)?soy(?:\s+yo\s*,|\s+(?:el|la))?"
    rf"|aqui\s+(?:e|eh)(?:\s+[ao])?|(?:you\s+can\s+|just\s+|please\s+)?call\s+me)[\s,]+{_HESITATION}{_NAMES}"
)
# Greetings and a vocative before "Ana Souza aqui", "it's David Moore".
_HELLO = (
    r"hi|hello|hey|oi+|ola|hola|alo|alou|ei+|opa|good\s+(?:morning|afternoon|evening)|bom\s+dia"
    r"|boa\s+(?:tarde|noite)|buen(?:os|as)\s+(?:dias|tardes|noches)|buenas|pessoal|gente|galera"
    r"|folks|guys|everyone|there|tudo\s+bem|any(?:one|body)\s+(?:around|there|here)"
    r"|dear\s+(?:(?:support|customer\s+service|help\s+desk)\s+)?team|dear\s+sir(?:\s+or\s+madam)?"
    r"|prezad[oa]s?(?:\s+senhor(?:es)?)?|estimad[oa]s?(?:\s+equipo)?"
)
HELLO_WORD = linear(rf"^(?:{_HELLO})$")
# "hello it's David Moore.", "hi, it's Ashley here": only after a greeting, and only a
# name that ends its clause ("hello, it's Amazon Prime that charged me" names no one).
NAME_ITS = linear(
    rf"^\W*(?:(?:{_HELLO})\W+)+it'?s\s+({_W}(?:[ \t]+{_W}){{0,3}})[ \t]*(?:[.,!?;:\n]|$"
    r"|[ \t]+(?:here|aqui)\b)"
)
# What may open a message before the customer says who they are: greetings, and asking
# for help ("boa noite preciso de ajuda João aqui", "hi, I need some help, hi, Olivia here").
_OPENING = (
    rf"^\W*(?:(?:{_HELLO}|que\s+tal|(?:i\s+)?need\s+(?:some\s+)?help|preciso\s+de\s+ajuda"
    r"|necesito\s+ayuda)\W+)*"
)
# "aqui" that opens the customer's "aqui é a Ana", not one that closes "Ana aqui".
INTRODUCES = re.compile(r"\s+(?:e|eh|quem)\b")
NAME_HERE = linear(rf"{_OPENING}({_W}(?:\s+{_W})?),?\s+(?:here|aqui)\b")
# On the phone: "Ryan speaking", "Thiago falando"; in Spanish "aquí Sofía", "habla
# Miguel", right after the opening. Only a first name people are given: "Technically
# speaking", "aquí Madrid" name no one.
NAME_SPEAKING = linear(rf"{_OPENING}({_W}(?:\s+{_W})?),?\s+(?:speaking|falando|hablando)\b")
NAME_LEAD = linear(rf"{_OPENING}(?:aqui|habla)\s+({_W}(?:[ \t]+{_W})?)")
SIGN_OFF = linear(
    r"(?:^|[\n.!?]\s*)(?:(?:(?:best|kind|warm)\s+(?:regards|wishes)|regards|sincerely|cheers"
    r"|best|many\s+thanks|all\s+the\s+best|yours(?:\s+(?:sincerely|truly))?"
    r"|atenciosamente|att|abs|abracos?|cordialmente|saludos(?:\s+cordiales)?|un\s+saludo"
    r"|atentamente|cumprimentos)(?:[,.!]*[ \t]*\n|,)|(?:thanks|thank\s+you|obrigad[oa]|gracias"
    rf"|valeu)[,.!]*[ \t]*\n)\s*{_NAMES}[ \t.!]*(?:\n|$)"
)
# "my city's Denver", "a cidade é Niterói": weak cues, as is where an order goes.
_CITY_IS = (
    r"(?:(?:my|the|our)\s+)?city(?:\s+is|'s)|(?:(?:a|minha|nossa)\s+)?cidade\s+(?:e|eh|fica)"
    r"|(?:(?:la|mi|nuestra)\s+)?ciudad\s+es"
).replace(r"\s+", _GAP)
_SENT_TO = (
    r"(?:deliver(?:y|ed|ing)?|ship(?:ped|ping)?|send|sent|mail|shipment)\s+(?:(?:it|them|this"
    r"|that|everything|(?:my|the|a)\s+(?:order|package|parcel|replacement|stuff))\s+)?"
    r"(?:over\s+|out\s+)?to|(?:entrega|entregar|entreguem|entregue|envio|enviar|envia|envie"
    r"|enviem|mandar|manda|mande|mandem)\s+(?:(?:isso|tudo|o\s+pedido|a\s+encomenda|o\s+produto"
    r"|el\s+pedido|el\s+paquete)\s+)?(?:(?:e|eh|vai\s+ser|sera|fica|es|va)\s+)?(?:pra|para|em"
    r"|en|no|na|hacia)|(?:envios?|enviarl[oa]s?|envienl[oa]s?|mandarl[oa]s?|mandenl[oa]s?"
    r"|entregarl[oa]s?)\s+(?:(?:es|sera|va)\s+)?a"
)
# Group 1 a cue that says a city for sure, group 2 where an order goes (part of what the
# customer asks, not an introduction), group 3 a capitalised name before "from", group 4
# the city.
CITY = linear(
    r"\b(?:(moro\s+(?:em|no|na|aqui\s+em)|resido\s+em|vivo\s+em|na\s+cidade\s+de|(?:i\s+)?live"
    r"\s+in|living\s+in|based\s+in|located\s+in|in\s+the\s+city\s+of|vivo\s+en|resido\s+en"
    r"|radico\s+en|en\s+la\s+ciudad\s+de|(?:cidade|city|ciudad)\s*:)"
    rf"|(?:eu\s+)?sou\s+{_CUE_FILLER}d[eoa]|(?:yo\s+)?soy\s+{_CUE_FILLER}de"
    r"|aqui\s+(?:de|em)|daqui\s+de|(?:estou|to|ta)\s+(?:em|aqui\s+em)"
    rf"|i'?m\s+{_CUE_FILLER}(?:in|from)|i\s+am\s+{_CUE_FILLER}(?:in|from)"
    r"|(?:we'?re|calling|writing|originally)\s+from"
    rf"|estoy\s+en|desde|{_CITY_IS}|({_SENT_TO})"
    r"|((?-i:[A-Z][a-z]+),?\s+from|(?-i:[A-Z][a-z]+),\s+(?:de|desde)))"
    rf"\s+{_NAMES}"
)
# Where a big city (gateway.context.places) may follow with no word that says whose city it
# is. Group 1: "in"/"em"/"en" a word or two after the customer ("I'm baded in Boston",
# "i livve in Portland": the cue misspelt) or after their business; group 2: a word for
# city ("cidade Belo Horizonte", "city of Boston"; not "cidade natal"); group 3: where
# the order goes or the customer moves ("it's going to Manchester", "shippign 2 Boston",
# "me mudei para Curitiba"). The city is written capitalised except after a word for city.
PLACE_AFTER = linear(
    r"\b(?:((?:i'?m|im|i|we'?re|eu|to|estou|estoy)(?:\s+[A-Za-z'-]+)?\s+(?:in|em|en)"
    # or where the customer's business is ("head office is in Leeds", "a loja fica em
    # Campinas", "la tienda está en Sevilla")
    r"|(?:office|store|shop|branch|warehouse|clinic|practice|restaurant|company|business"
    r"|headquarters|hq|loja|empresa|escritorio|sede|clinica|filial|tienda|oficina|sucursal"
    r"|negocio)(?:'s|\s+(?:is|are|fica|esta|queda|es))(?:\s+(?:located|based|localizad[oa]"
    r"|ubicad[oa]))?\s+(?:in|em|en|no|na))"
    r"|((?:cidade|city|ciudad|town)(?:\s*:|\s+(?:de|of))?)"
    r"|((?:go(?:ing|es)?|head(?:ing|ed)?|mov(?:e|ed|ing)|ship\w*|deliver\w*|send\w*|sent|mail\w*"
    r"|vai|indo|mudando|mudar|mudei|mudamos|mude|envi\w*|mand\w*|entreg\w*)\s+(?:it\s+|them\s+)?"
    r"(?:to|2|pra|para|hacia)))\s+"
)
# "Perdón" and "sorry" open a correction only before one ("perdón, quise decir..."):
# alone they apologise ("Perdón por la demora").
_CORRECTION_CUES = (
    r"(?:actually|my\s+mistake|my\s+bad|scratch\s+that|i\s+mean"
    r"|i\s+meant|(?:i\s+)?misspoke|i\s+said\s+(?:it\s+)?wrong|let\s+me\s+correct\s+(?:that|myself)"
    r"|correction|na\s+verdade|quer\s+dizer|correcao|corrigindo|corrige(?:\s+ai)?|espera,?\s+(?:e|eh)"
    r"|me\s+enganei"
    r"|(?:eu\s+)?errei|falei\s+errado|en\s+realidad|quise\s+decir|mejor\s+dicho|me\s+equivoque"
    r"|correccion|corrijo|dije\s+mal|digo|sorry,?\s+(?:it'?s|i\s+mean)|desculp[ae],?\s+(?:e|eh|era)"
    r"|perdon,?\s+(?:es|era|son)|[ao]\s+(?:corret|cert)[ao]\s+(?:e|eh|seria)"
    r"|the\s+(?:right|correct)\s+one\s+(?:is|was)|(?:it\s+)?should\s+(?:be|say)"
    r"|(?:lo|el|la)\s+correct[oa]\s+(?:es|seria))\b"
).replace(r"\s+", _GAP)

CORRECTION = linear(
    # "oops typo should be ...": words that own up to a slip may come one after another
    r"(?:^|[.!?,;:\n]\s*|\b(?:(?:no|nao|nope|wait|espera|oops|ops|oh|ah|sorry|desculpa|desculpe"
    rf"|perdao|perdon|foi\s+mal|typo)[,!.]*{_GAP})+)"
    rf"{_CORRECTION_CUES}"
    # "wait no it's Lauren", "não espera é João", "no, es Segovia": a denial opening the
    # turn or a clause, then the value ("o aparelho não é Samsung" denies, corrects nothing)
    r"|(?:^|[.!?,;:\n]\s*)(?:no|nao|nope|wait|espera)[,!.]*\s+(?:(?:no|nao|espera)[,!.]*\s+)?"
    r"(?:it'?s|it\s+is|es|e|eh)\b"
)
# The denial of CORRECTION said mid-sentence in an unpunctuated turn ("for exactly this
# reason wait no it's Toronto honestly"): "wait no", "hold on no" or "não espera", then
# the restating word; only a value a list names is read after it.
_WAIT = r"(?:wait|hold\s+on|espera|pera)"
DENIAL_ANYWHERE = linear(
    rf"\b{_WAIT}[,!.]*\s+(?:no|nao)[,!.]*\s+(?:it'?s|it\s+is|es|e|eh)\b"
    rf"|\b(?:no|nao)[,!.]*\s+{_WAIT}[,!.]*\s+(?:it'?s|it\s+is|es|e|eh)\b"
)
# A cue that says a value was wrong, not only "actually" or "no, it's": after one, a bare
# value may run on into the turn ("scratch that boston and another thing").
STRONG_CUE = linear(
    r"scratch|mistake|my\s+bad|misspoke|said\s+(?:it\s+)?wrong|correct|corrig|corrij|correcao"
    r"|correccion|enganei|errei|falei\s+errado|quise\s+decir|mejor\s+dicho|equivoque|dije\s+mal"
    r"|i\s+meant|should\s+(?:be|say)|right\s+one|[ao]\s+(?:cert|corret)[ao]"
)
# The same cues said mid-sentence in an unpunctuated turn ("vou viajar na verdade e Belo
# Horizonte"): a correction only before a bare value of a kind already heard.
CORRECTION_ANYWHERE = linear(rf"\b{_CORRECTION_CUES}")
# Cues an agent says mid-sentence in a call's run-on transcript ("...with the team
# correction it's actually thirty-three dollars"): a correction only before a value.
MID_CORRECTION = linear(
    rf"\b(?:correction|correcao|correccion|corrijo|sorry,?{_GAP}i{_GAP}misspoke|me{_GAP}enganei)\b"
)
# What may stand between an agent's correction cue and the amount or date it restates
# ("Me enganei antes, o correto é 34,00", "sorry, I misspoke earlier: USD 187.50"):
# nothing but these words says the value is what the cue corrects.
_RESTATING = word_set(
    "earlier before sorry i i'm misspoke mean meant actually correction the correct right "
    "amount value total refund credit price date deadline delivery is it's its it was "
    "should be will would that make in fact really oh um uh so my mistake bad wrong let me "
    "myself antes desculpa desculpe perdao o a correto correta certo certa valor reembolso "
    "estorno credito preco data prazo entrega e eh seria sera foi na verdade quer dizer "
    "enganei errei correcao corrigindo sao fica ficam de do da vai ser ou seja perdon el la "
    "lo correcto correcta cierto monto importe devolucion precio fecha plazo es son era fue "
    "en realidad quise decir digo equivoque correccion queda quedan del mejor dicho corrijo "
    "ne tipo sea pues este hum uhm hmm er like"
)
_PAUSE = "[\\s,.:;!?\"'()\u2013\u2014-]*"  # dashes: "sorry \u2014 it's $40"
RESTATING = linear(rf"^{_PAUSE}(?:{_alternation(sorted(_RESTATING))}\b{_PAUSE})*$")
ADDITION = linear(
    r"\b(?:another|also|too|second|one\s+more|outr[oa]|tambem|mais\s+um|otr[oa]|tambien)\b"
)
# Words that restate a value after a cue: "actually it's Denver".
_RESTATE = r"it'?s|its|it\s+is|is|e|eh|es|era|was"
_BARE_LEAD = (
    rf"^[\s,.:;!-]*(?:(?:{_RESTATE}|the|o|a|el|la|seria|sera"
    r"|quise\s+decir|quer\s+dizer|i\s+mean|i\s+meant|digo|please|por\s+favor|pfv?"
    r"|cert[oa]|corret[oa]|correct[oa]|ciert[oa]|right\s+one|correct\s+one|actually|really"
    r"|realmente|en\s+realidad|na\s+verdade|de\s+hecho|de\s+fato)[,:]?\s+)*"
)
BARE_START = linear(_BARE_LEAD)  # where the value after a cue starts
# After a cue, words that restate a value: "actually it's Denver" corrects whoever said
# "actually" before it ("thank you actually it's Denver").
RESTATED = linear(rf"^[\s,]+(?:{_RESTATE})\b")
# What may follow a corrected value in an unpunctuated turn ("scratch that boston and
# another thing", "na verdade e Belo Horizonte digitei errado").
_BARE_AFTER = (
    r"not|nao|no|instead|rather|and|but|so|then|e|mas|entao|y|pero|entonces|sorry|desculpa"
    r"|perdon|digitei|escrevi|falei|typed|typo|wrote|escribi|dije|please|por\s+favor|thanks"
    r"|thank\s+you|obrigad[oa]|gracias|ok|okay|ta|blz"
)
# The fewest words the value can be: "Campinas digitei errado." is Campinas and a slip.
_BARE = rf"{_BARE_LEAD}(#?[A-Za-z0-9-]*\d[A-Za-z0-9-]*|{_W}(?:[ \t]+{_W}){{0,2}}?)\s*(?:[,.!?;\n]|$"
BARE_VALUE = linear(rf"{_BARE}|\s+(?:{_BARE_AFTER})\b)")
# After a weak cue ("actually", "no, it's"), or one said mid-sentence: the value must end
# its clause or be followed by words that confirm a slip ("... digitei errado").
_SLIP = r"not|nao|no|instead|rather|sorry|desculpa|perdon|digitei|escrevi|falei|typed|typo"
_SLIP += r"|wrote|escribi|dije"
BARE_SLIP = linear(rf"{_BARE}|\s+(?:{_SLIP})\b)")
# After a weak cue an identifier may run on into the turn ("nao, espera, e 214573 paguei
# o frete"): a run-on word would be a guess, a code of CODE_DIGITS digits is not.
BARE_CODE = linear(rf"{_BARE_LEAD}(#?[A-Za-z0-9-]*\d[A-Za-z0-9-]*)[ \t]+[A-Za-z]")
CODE_DIGITS = 5
# After a weak or mid-sentence cue, the words a run-on value may be ("wait no it's atlanta
# and like my wife..."): read only where a list says what they are (a big city's name, a
# listed first name), never by where the clause ends.
RUN_ON_WORDS = linear(rf"{_BARE_LEAD}({_W}(?:[ \t]+{_W}){{0,3}})")
# A capitalised name run on into lowercase words: "e Belo Horizonte tentei de novo".
_CAPITAL = r"(?-i:[A-Z][A-Za-z'-]+)"
BARE_PROPER = linear(
    rf"{_BARE_LEAD}({_CAPITAL}(?:[ \t]+(?:{_CAPITAL}|(?-i:d[aeo]s?[ \t]+){_CAPITAL})){{0,3}})"
    r"[ \t]+(?-i:[a-z])"
)
# Words that say which a bare corrected value is: group 1 a place ("foi mal, na cidade o
# correto é Goiânia"), group 2 a name ("the name, scratch that, Beth").
KIND_CUE = linear(
    r"\b(?:(cidade|city|ciudad|town|moro|mora|live|lives|living|vivo|vive|resido)"
    r"|(nome|name|nombre|chamo|chama|llamo|called))\b"
)
OPENER = linear(
    r"^[\s,.!?;:()*~\"'¿¡-]*(?:good\s+(?:morning|afternoon|evening|day)|(?:bom\s+)+dia|(?:boa\s+)+(?:tarde"
    r"|noite)|buen(?:os|as)\s+(?:dias|tardes|noches)|buenas|hello|hi|hey|oi+|ola|hola|alo"
    r"|tudo\s+(?:bem|bom|certo|joia)|td\s+(?:bem|bom)|blz|beleza|como\s+vai(?:\s+voce)?"
    # how someone is, and thanks for answering: courtesy before the request
    r"|how\s+are\s+you(?:\s+doing)?(?:\s+today)?|how'?re\s+you|how\s+have\s+you\s+been"
    r"|how(?:\s+is|'?s)\s+(?:it|your\s+day|everything|life)(?:\s+going)?|what'?s\s+(?:up|good)"
    r"|como\s+(?:voce|vc)\s+(?:esta|ta)|como\s+esta(?:s|\s+usted)?"
    r"|(?:i\s+)?hope\s+(?:you'?re|you\s+are)\s+(?:doing\s+)?well|(?:thanks?|thank\s+you)\s+for"
    r"\s+(?:getting\s+back(?:\s+to\s+me)?|(?:your|the)\s+(?:quick\s+)?(?:reply|response|help|time)"
    r"|reaching\s+out)"
    r"|que\s+tal|e\s+ai|dear\s+(?:sir|madam|team|support|all)|to\s+whom\s+it"
    r"\s+may\s+concern|prezad[oa]s?|estimad[oa]s?|senhor(?:es|a)?|senor(?:es|a)?|sir|madam"
    r"|team|equipe|equipo|support|suporte|soporte|ok|okay|okey|uh+|u+m+|hmm+|ah+|eh+|e|entao"
    r"|ei+|opa|alo|alou|(?:pessoal|gente|galera|folks|guys|everyone|chicos)\s*[,!.]+\s*"
    r"|any(?:one|body)\s+(?:around|there|here|home|online)|alguem\s+(?:ai|aqui|online|on)"
    r"|(?:hay\s+)?alguien\s+(?:ahi|aqui|ahi\s+)|here'?s\s+the\s+thing"
    r"|bueno|pues|well|so|and|y|yes|yeah|sim|si|please|por\s+favor|thanks|thank\s+you"
    r"|obrigad[oa]|gracias|tipo\s+assim|tipo|olha|veja|escuta|mira|mire|oiga|oye|look|listen|here|there|aqui"
    r"|again|de\s+novo|otra\s+vez|(?:e\s+)?o\s+seguinte|quick\s+(?:one|question)|anyways?"
    r"|basically|basicamente|enfim|resumindo|long\s+story\s+short|the\s+thing\s+is(?:\s+that)?"
    r"|(?:o\s+que\s+)?acontece\s+(?:e\s+)?que|lo\s+que\s+pasa\s+es\s+que|es\s+que|buen\s+dia"
    r"|a\s+ver|pois\s+e|pues\s+nada|(?:so\s+)?sorry\s+(?:to\s+bother(?:\s+you)?|for\s+the\s+(?:trouble"
    r"|inconvenience))|desculp[ae]\s+(?:o\s+)?incomod(?:o|ar)|(?:perdon|disculpe?)\s+(?:la\s+)?molestia)\b"
    r"[\s,.!?;:()*~\"'¿¡-]*|^[\s,.!?;:()*~\"'¿¡-]+"
)
# Asking for help ("preciso de ajuda", "I have a question", "tengo un problema"): it says
# with what only when a word of HELP_WITH follows ("tengo un problema con la factura");
# else the problem is in the words after it, punctuated or not.
HELP = linear(
    r"^(?:(?:eu|i|yo|i'?ve)\s+)?(?:(?:really|realmente|so)\s+)?(?:need\s+(?:some\s+|a\s+little\s+|your"
    r"\s+)?(?:help|assistance)|could\s+use\s+(?:some\s+)?help|(?:can|could)\s+(?:you|someone"
    r"|anyone)\s+help(?:\s+me)?|(?:have|got)\s+(?:a|an)\s+(?:quick\s+)?(?:problem|issue|question"
    r"|doubt)|help\s+me|preciso\s+(?:de\s+)?(?:uma\s+)?(?:ajuda|help|auxilio)|(?:preciso|queria"
    r"|quero|gostaria\s+de)\s+(?:de\s+)?(?:resolver|ver|tirar|saber|perguntar)\s+(?:uma\s+coisa"
    r"|um\s+problema|um\s+assunto|uma\s+duvida|algo)|(?:tenho|estou|to|tou)\s+com\s+(?:um\s+)?"
    r"problema|tenho\s+(?:um\s+problema|uma\s+duvida|uma\s+pergunta)|(?:queria|gostaria\s+de)"
    r"\s+(?:uma\s+)?ajuda|me\s+ajuda(?:m|em)?|alguem\s+(?:pode|poderia)\s+me\s+ajudar|(?:voce|vc"
    r"|voces|vcs)\s+(?:pode|podem|poderia|poderiam)\s+me\s+ajudar|necesito\s+(?:una\s+)?ayuda"
    r"|(?:necesito|quisiera|queria)\s+(?:resolver|consultar|preguntar)\s+(?:algo|una\s+cosa|un"
    r"\s+problema)|tengo\s+(?:un\s+problema|una\s+duda|una\s+pregunta|una\s+consulta)"
    r"|(?:me\s+)?(?:puede|pueden|puedes|podria|podrian)\s+ayudar(?:me)?|ayudenme|ayudame"
    r"|quisiera\s+ayuda)(?:\s+(?:por\s+favor|please|pls|plz|aqui|here|urgente|urgently|hoje|today"
    r"|rapidinho|com\s+urgencia|con\s+urgencia|with\s+something|com\s+(?:uma\s+coisa|algo)"
    r"|con\s+algo))*\b"
)
CLAUSE_END = linear(r"[,;:](?:\s|$)|\s-\s")
NEW_PROBLEM = linear(
    r"\b(?:outra\s+coisa|outro\s+problema|outra\s+duvida|tenho\s+outro\s+problema|another"
    r"\s+(?:issue|problem|thing|question)|one\s+more\s+thing|something\s+else|otra\s+cosa"
    r"|otro\s+problema|otra\s+duda|tengo\s+otro\s+problema)\b"
)
# A clear change of subject inside an unpunctuated clause ("...em estoque e outra coisa
# comprei...", "anyway"): the problem ends before it.
TOPIC_CHANGE = linear(
    r"\s(?:(?:(?:e|and|y|ah|oh|mas|but|pero)(?:\s+ai)?|ai)\s+(?:outra\s+coisa|outro\s+assunto|outro"
    r"\s+problema|outra\s+duvida|another\s+(?:thing|issue|problem|question)|one\s+more\s+thing"
    r"|otra\s+cosa|otro\s+tema|otro\s+problema|otra\s+duda)|anyways?)\b"
)
SENTENCE_END = linear(r"[.!?]+(?:\s|$)|\n")
WORD = linear(r"[A-Za-z0-9][A-Za-z0-9'@.-]*")
TOKEN_WORD = linear(_W)
NONSPACE = linear(r"\S+")
ENGLISH = linear(r"\b(?:the|my|is|and|you|it|to|was|this|for|of|i'm|have)\b")
ROMANCE = linear(r"\b(?:o|de|que|nao|meu|minha|el|la|mi|es|por|para|com|con|uma|una|eu|yo)\b")
