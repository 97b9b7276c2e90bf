"""What the people extractor looks for, as data: the RE2 patterns it runs over a folded
turn and the word lists that tell a name or a city from a common word. Pure.

Every pattern is compiled once, case-blind, at import, and kept as a module-level name so
tests/test_hostile_cpu.py can run each over adversarial text. Patterns are written for
folded text: no accents ("sao", "amanha", "direccion").
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.context.people_numbers import MULTIPLIERS, NUMBERS, ORDINALS, REPEATS
from gateway.context.people_text import linear, word_set


def _alternation(words: Sequence[str]) -> str:
    """Longest first: RE2 takes the first alternative that matches ("dezesseis", not "dez")."""
    return "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"


_NUM = _alternation([*NUMBERS, *MULTIPLIERS, *REPEATS])
_ORD = _alternation(list(ORDINALS))
_SEP = r"[\s,.-]+(?:(?:uh+|uhm|um+|hmm+|eh+|ah+|e|y|and|tipo|like)[\s,.-]+)*"
_RUN = rf"\b{_NUM}\b(?:{_SEP}{_NUM}\b)*"  # number words, fillers between them
_W = r"[A-Za-z][A-Za-z'-]*"
# What a speaker says while finding the word: "my name is, uh, Robert", "é, é, Cláudia".
_HESITATION = r"(?:(?:uh+|u+m+|uhm|hmm+|eh+|ah+|e|tipo|like|well)[\s,.]+)*"
_NAMES = rf"({_W}(?:\.?[ \t]+{_W}){{0,4}})"
_MONTH = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|janeiro|fevereiro|marco|abril|maio|junho|julho|agosto|setembro|outubro|novembro"
    "|dezembro|enero|febrero|marzo|mayo|junio|julio|septiembre|setiembre|octubre|noviembre"
    "|diciembre|jan|feb|fev|apr|abr|jun|jul|aug|ago|sept|sep|oct|nov|dec|dez|dic"
)
_DAY = rf"(?:\d{{1,2}}(?:st|nd|rd|th|o)?|(?:{_NUM}[\s-]+(?:(?:and|e|y)\s+)?)?(?:{_NUM}|{_ORD}))"
_YEAR = r"(?:,?\s+(?:de\s+|del\s+)?\d{4}\b)?"
_WEEKDAY = (
    r"(?:(?:last|next|this|coming|past)\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|(?:(?:proxima|ultima|nesta|nessa|esta|essa)\s+)?(?:segunda|terca|quarta|quinta|sexta)"
    r"[\s-]+feira\b|(?:proxima|ultima|nesta|nessa|na|ate|desde)\s+"
    r"(?:segunda|terca|quarta|quinta|sexta)(?:[\s-]+feira)?\b"
    r"|(?:(?:proximo|ultimo|neste|nesse|este|esse|no|el|ate|desde)\s+)?(?:sabado|domingo)\b"
    r"|(?:(?:el\s+)?(?:proximo|este)\s+)?(?:lunes|martes|miercoles|jueves|viernes)\b"
    r"(?:\s+pasado\b)?"
)
_DATE_CORE = (
    rf"\b(?:{_MONTH})\.?\s+(?:the\s+)?{_DAY}\b{_YEAR}"
    rf"|\b(?:dia\s+)?{_DAY}\s+(?:of\s+|de\s+|del\s+)?(?:{_MONTH})\b{_YEAR}"
    r"|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}(?:/(?:\d{4}|\d{2}))?\b|\bdia\s+\d{1,2}\b"
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
_CURRENCY = r"(?:reais|d[oó]lar(?:es)?|dollars?|bucks|euros?|pesos|usd|brl|eur|gbp|mxn|contos)"

EMAIL = linear(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
AMOUNT = linear(
    r"(?:R\$|US\$|U\$|\$|€|£|\b(?:USD|BRL|EUR|GBP|MXN|ARS|COP|CLP)\b)\s?\d(?:[\d.,]*\d)?"
    rf"|\b\d(?:[\d.,]*\d)?(?:\s?k|\s+(?:mil|thousand|milhoes|milhao|millones|millon))?\s?"
    rf"(?:{_CURRENCY}\b|€)"
    rf"|{_RUN}\s+{_CURRENCY}\b(?:\s+(?:and|e|y|con)\s+{_RUN}\s+(?:cents?|centavos?|centimos?)\b)?"
)
DATE = linear(_DATE_CORE)
DEADLINE = linear(
    r"\b(?:by|before|until|till|no\s+later\s+than|within(?:\s+the\s+next)?|in(?:\s+the\s+next)?"
    r"|em\s+ate|ate|antes\s+d[eoa]|no\s+prazo\s+de|num\s+prazo\s+de|prazo\s+de|dentro\s+de"
    r"|hasta|antes\s+del?|para\s+el|para\s+o\s+dia|a\s+mas\s+tardar|en|em)\s+"
    rf"(?:(?:the|o|a|el|la|dia)\s+)?(?:{_DATE_CORE}|{_DURATION}|{_RELATIVE})"
    r"|\b(?:next|proxim[oa])\s+(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|segunda|terca|quarta"
    r"|quinta|sexta|sabado|domingo|lunes|martes|miercoles|jueves|viernes)\b(?:[\s-]+feira\b)?"
)
OFFER = linear(
    r"\b(?:offer|refund|reimburs|credit|discount|voucher|coupon|compensat|waive|give\s+you"
    r"|send\s+you|return|devolv|devolu|reembols|estorn|desconto|cupo|abon|bonifica|compensa"
    r"|ressarc|descuento|oferec|ofrec|cashback|vale)"
)
PHONE = linear(r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,3}\)|\b\d{2,3})[\s.-]?\d{3,5}[\s.-]?\d{4}\b")
DIGITS = linear(r"(?:\+\d{1,3}\s?)?\(?\d[\d\s.()-]{6,18}\d")
CODE = linear(r"#\s?[A-Za-z0-9-]*\d[A-Za-z0-9-]*|\b[A-Za-z0-9][A-Za-z0-9-]*\d[A-Za-z0-9-]*")
SPELLED = linear(_RUN)
SPELLED_CODE = linear(rf"\b(?:[b-df-hj-np-tv-xz][\s.-]+){{1,3}}{_RUN}")
# Which kind a number is, by the last cue word before it: order, sku, phone, or none
# at all (a postal code, a card, a document: not facts to keep).
CUE = linear(
    r"\b(?:(zip\s+code|postal\s+code|area\s+code)|(orders?|pedidos?|orden|encomenda|compra"
    r"|protocolo|protocol|ticket|chamado|caso|case|reclamacao|invoice|fatura|factura"
    r"|nota\s+fiscal|boleto|booking|reserva|reservation|confirmation|confirmacao|confirmacion"
    r"|localizador|tracking|rastreio|rastreamento"
    r"|seguimiento|guia|ref|reference|referencia)|(sku|codigo|code|product|produto|producto"
    r"|item|modelo|model|part|peca|pieza|article|articulo|artigo)|(phone|telefone|telefono"
    r"|tel|fone|celular|cel|cell|mobile|movil|whatsapp|whats|zap|wpp|contato|contacto"
    r"|call\s+me\s+at|reach\s+me\s+at|my\s+number|meu\s+numero|mi\s+numero)|(zip|cep|cpf"
    r"|cnpj|rg|dni|nif|ssn|postal|cvv|card|cartao|tarjeta|senha|password|pin|conta|account"
    r"|cuenta|agencia|iban))\b"
)
CUE_KINDS = ("block", "order", "sku", "phone", "block")  # CUE's groups, in order
_STREET_TYPE = (
    r"rua|r\.|avenida|av\.?|avda\.?|alameda|al\.|travessa|tv\.|estrada|rodovia|praca|calle"
    r"|carrera|cra\.?|paseo|plaza|pasaje|carretera|rambla|jiron|diagonal|transversal|calzada"
)
_EN_STREET = r"street|road|avenue|lane|drive|boulevard"
_HOUSE = r"(?:n[o.]?\.?\s*|numero\s+|nro\.?\s*|#\s*)?\d{1,5}[A-Za-z]?\b"
STREET_FIRST = linear(
    rf"\b(?:{_STREET_TYPE})\s+((?:{_W}|\d{{1,3}})(?:\s+(?:{_W}|\d{{1,3}})){{0,5}}?),?\s+{_HOUSE}"
)
NUMBER_FIRST = linear(
    rf"\b\d{{1,5}}[A-Za-z]?\s+((?:{_W}\s+){{1,3}}?)(?:{_EN_STREET}|st|rd|ave|ln|blvd|court|ct"
    r"|way|place|terrace|parkway|highway|hwy)\b\.?"
)
NAME_FIRST = linear(rf"\b((?:{_W}\s+){{1,3}}?)(?:{_EN_STREET})\s*,?\s*(?:no\.?\s*)?\d{{1,5}}\b")
NAME = linear(
    r"\b(?:(my\s+name\s+is|my\s+name'?s|name'?s|meu\s+nome\s+(?:completo\s+)?(?:e|eh)|me\s+chamo"
    r"|pode\s+me\s+chamar\s+de|mi\s+nombre\s+(?:completo\s+)?es|me\s+llamo|(?:aqui\s+)?quem"
    r"\s+fala\s+(?:e|eh)(?:\s+[ao])?|(?:le|te)\s+habla|aqui\s+habla|(?:nome|name|nombre)\s*:)"
    r"|i'?m|i\s+am|this\s+is|(?:eu\s+)?sou(?:\s+[ao])?|(?:yo\s+)?soy(?:\s+(?:el|la))?"
    rf"|aqui\s+(?:e|eh)(?:\s+[ao])?|call\s+me)[\s,]+{_HESITATION}{_NAMES}"
)
NAME_HERE = linear(
    rf"^\W*(?:(?:hi|hello|hey|oi|ola|hola)\W+)?({_W}(?:\s+{_W})?),?\s+(?:here|aqui)\b"
)
SIGN_OFF = linear(
    r"(?:^|[\n.!?]\s*)(?:(?:(?:best|kind|warm)\s+regards|regards|sincerely|cheers|best"
    r"|atenciosamente|att|abs|abracos?|cordialmente|saludos(?:\s+cordiales)?|un\s+saludo"
    r"|atentamente|cumprimentos)(?:[,.!]*[ \t]*\n|,)|(?:thanks|thank\s+you|obrigad[oa]|gracias"
    rf"|valeu)[,.!]*[ \t]*\n)\s*{_NAMES}[ \t.!]*(?:\n|$)"
)
CITY = linear(
    r"\b(?:(moro\s+(?:em|no|na|aqui\s+em)|resido\s+em|vivo\s+em|na\s+cidade\s+de|(?:i\s+)?live"
    r"\s+in|living\s+in|based\s+in|located\s+in|in\s+the\s+city\s+of|vivo\s+en|resido\s+en"
    r"|radico\s+en|en\s+la\s+ciudad\s+de|(?:cidade|city|ciudad)\s*:)|(?:eu\s+)?sou\s+d[eoa]"
    r"|(?:yo\s+)?soy\s+de|aqui\s+(?:de|em)|daqui\s+de|(?:estou|to|ta)\s+(?:em|aqui\s+em)"
    r"|i'?m\s+(?:in|from)|i\s+am\s+(?:in|from)|(?:we'?re|calling|writing|originally)\s+from"
    r"|estoy\s+en|desde|((?-i:[A-Z][a-z]+),?\s+from|(?-i:[A-Z][a-z]+),\s+(?:de|desde)))"
    rf"\s+{_NAMES}"
)
CORRECTION = linear(
    r"(?:^|[.!?,;:\n]\s*|\b(?:no|nao|nope|wait|espera|oops|ops|oh|ah|sorry|desculpa|desculpe"
    r"|perdao)[,!.]*\s+)(?:actually|my\s+mistake|my\s+bad|scratch\s+that|i\s+mean|i\s+meant"
    r"|correction|na\s+verdade|quer\s+dizer|correcao|corrigindo|espera,?\s+(?:e|eh)|me\s+enganei"
    r"|(?:eu\s+)?errei|perdon|en\s+realidad|quise\s+decir|mejor\s+dicho|me\s+equivoque|digo"
    r"|sorry,?\s+(?:it'?s|i\s+mean)|desculp[ae],?\s+(?:e|eh|era))\b"
)
ADDITION = linear(
    r"\b(?:another|also|too|second|one\s+more|outr[oa]|tambem|mais\s+um|otr[oa]|tambien)\b"
)
BARE_VALUE = linear(
    r"^[\s,.:;!-]*(?:(?:it'?s|its|it\s+is|is|e|eh|es|era|was|the|o|a|el|la|seria|sera|quise\s+decir"
    r"|quer\s+dizer|i\s+mean|i\s+meant|digo)\s+)*"
    rf"(#?[A-Za-z0-9-]*\d[A-Za-z0-9-]*|{_W}(?:[ \t]+{_W}){{0,2}})\s*(?:[,.!?;\n]|$|\s+(?:not"
    r"|nao|no|instead|rather)\b)"
)
OPENER = linear(
    r"^[\s,.!?;:()*~\"'-]*(?:good\s+(?:morning|afternoon|evening|day)|bom\s+dia|boa\s+(?:tarde"
    r"|noite)|buen(?:os|as)\s+(?:dias|tardes|noches)|buenas|hello|hi|hey|oi+|ola|hola|alo"
    r"|tudo\s+(?:bem|bom|certo|joia)|td\s+(?:bem|bom)|blz|beleza|como\s+vai(?:\s+voce)?|how\s+are"
    r"\s+you(?:\s+doing)?|que\s+tal|e\s+ai|dear\s+(?:sir|madam|team|support|all)|to\s+whom\s+it"
    r"\s+may\s+concern|prezad[oa]s?|estimad[oa]s?|senhor(?:es|a)?|senor(?:es|a)?|sir|madam"
    r"|team|equipe|equipo|support|suporte|soporte|ok|okay|okey|uh+|u+m+|hmm+|ah+|eh+|e|entao"
    r"|bueno|pues|well|so|and|y|yes|yeah|sim|si|please|por\s+favor|thanks|thank\s+you"
    r"|obrigad[oa]|gracias|tipo|olha|veja|escuta|mira|mire|oiga|oye|look|listen|here|there|aqui"
    r"|again"
    r"|de\s+novo|otra\s+vez|(?:e\s+)?o\s+seguinte)\b"
    r"[\s,.!?;:()*~\"'-]*|^[\s,.!?;:()*~\"'-]+"
)
NEW_PROBLEM = linear(
    r"\b(?:outra\s+coisa|outro\s+problema|outra\s+duvida|tenho\s+outro\s+problema|another"
    r"\s+(?:issue|problem|thing|question)|one\s+more\s+thing|something\s+else|otra\s+cosa"
    r"|otro\s+problema|otra\s+duda|tengo\s+otro\s+problema)\b"
)
SENTENCE_END = linear(r"[.!?]+(?:\s|$)|\n")
WORD = linear(r"[A-Za-z0-9][A-Za-z0-9'@.-]*")
TOKEN_WORD = linear(_W)
NONSPACE = linear(r"\S+")
ENGLISH = linear(r"\b(?:the|my|is|and|you|it|to|was|this|for|of|i'm|have)\b")
ROMANCE = linear(r"\b(?:o|de|que|nao|meu|minha|el|la|mi|es|por|para|com|con|uma|una|eu|yo)\b")

# Words that carry nothing on their own: greetings, function words, asking for help.
FILLER = word_set(
    "a an the i i'm im i've i'd i'll me my mine myself you your you're we we're our us they "
    "their them he she his her it it's its this that these those there here is am are was "
    "were be been being do does did done have has had will would shall should can could may "
    "might must not no yes yeah yep nope ok okay so very too also just only still already even "
    "really and or but if then than because as at in on of to from for with without about "
    "into over under up down out off by near now today tomorrow yesterday again back all any "
    "some each every what which who whom when where why how hi hello hey thanks thank please "
    "sorry dear sir madam well oh uh um hmm lol o os as um uma uns umas de do da dos das no na "
    "nos nas em ao aos pelo pela por para pra pro com sem sobre e ou mas que se nao sim ja "
    "ainda mais muito muita muitos pouco bem mal meu minha meus minhas seu sua seus suas eu "
    "voce voces ele ela eles elas isso isto esse essa este esta aquele aqui ali la ca hoje "
    "ontem amanha agora entao tambem quando onde como porque pq qual quem tudo nada todo toda "
    "oi ola bom boa dia tarde noite obrigado obrigada favor desculpa desculpe ta to tipo ne ai "
    "vc vcs q tb tbm el los las un unos unas del al con sin y pero si ya todavia muy mucho "
    "mucha mi mis tu tus su sus yo usted ustedes nosotros eso esto ese esa alli hoy ayer "
    "manana ahora entonces cual todo hola buenas buenos gracias perdon disculpe le lo les te "
    "nos es soy estoy help ajuda ayuda assist assistance support suporte soporte atendimento "
    "atencion question questions pergunta pregunta duvida duvidas duda info information "
    "informacao informacion need want wanted like preciso precisava quero queria gostaria "
    "necesito quiero quisiera pode poderia podem puede podria pueden someone anyone alguem "
    "alguien human humano agent atendente agente talk speak falar hablar get got hope espero "
    "doing going fine great good nice morning afternoon evening waiting wait aguardando "
    "aguardar esperando esperar entendi entendo understood understand perfect perfeito "
    "perfecto certo claro sure vale beleza combinado show otimo genial email e-mail mail "
    "correo phone telefone telefono celular whatsapp number numero name nome nombre address "
    "endereco direccion problem problema issue thing coisa cosa ask asking perguntar "
    "preguntar saber know sei sabe tell dizer decir sou soy live lives living moro vivo resido "
    "based located calling writing chamo llamo escribo rn atm btw pls plz kk kkk haha jaja faz "
    "hace ha quise quer dizer mean meant actually verdade realidad scratch mistake enganei "
    "errei correcao correction originally cliente customer client member subscriber "
    "assinante loyal fiel anos years since desde sigo continuo sigue vou vamos voy cel cell "
    "mobile movil whats zap wpp fone tel contato contacto"
)
# And what follows "I'm", "sou", "soy", "this is", "moro em" without being a name or a city.
NOT_PROPER = (
    FILLER
    | word_set(
        "upset angry mad sad happy glad afraid sick tired bored scared worried annoyed frustrated "
        "disappointed confused concerned unhappy satisfied furious pissed ready available "
        "interested new old late early busy home outside inside online stuck lost unable able "
        "gonna kinda literally honestly seriously totally extremely super quite pretty definitely "
        "probably certain positive shocked surprised grateful thankful pleased excited nervous "
        "desperate customer client member subscriber user owner buyer calling writing trying "
        "looking having getting absurd insane crazy urgent important wrong weird strange odd "
        "serious terrible horrible awful bad unacceptable correct right regarding supposed exactly "
        "american brazilian mexican spanish portuguese colombian argentinian canadian british "
        "english chilean peruvian live living based located originally moving traveling away "
        "cliente consumidor consumidora assinante usuario usuaria titular dono dona responsavel "
        "mae pai filho filha esposa marido esposo mulher irma irmao pessoa unica unico primeira "
        "primeiro nova novo velha velho casado casada aposentado aposentada brasileiro brasileira "
        "portugues portuguesa estudante professor professora fiel mesmo mesma tenho tive estou "
        "estava vim vou fui fiz comprei recebi paguei pedi liguei moro falo escrevo acho achei vi "
        "consegui posso chateado chateada irritado irritada triste feliz revoltado revoltada "
        "indignado indignada cansado cansada frustrado frustrada preocupado preocupada dueno duena "
        "responsable madre padre hijo hija persona nuevo nueva mexicano mexicana colombiano "
        "colombiana argentino espanol espanola chileno chilena peruano peruana tengo tuve estaba "
        "compre hice recibi pague llame vivo escribo creo pense puedo enojado enojada molesto "
        "molesta casa house work trabalho trabajo escritorio office oficina town city cidade "
        "ciudad centro downtown bairro barrio zona interior capital area regiao region lado "
        "frente perto cerca longe lejos trouble hurry shock choque pain love line queue fila "
        "touch contact contato contacto doubt charge control debt bed hospital viagem viaje trip "
        "vacation ferias vacaciones reuniao reunion meeting process processo proceso transito "
        "traffic espera hold stock chat call ligacao llamada linea apartamento apartment apto "
        "condominio predio edificio building loja store tienda shop mall shopping site app "
        "aplicativo internet stuff menor maior january february march august september october "
        "november december janeiro fevereiro abril maio junho julho agosto setembro outubro "
        "novembro dezembro enero febrero mayo junio julio septiembre octubre noviembre diciembre "
        "monday tuesday wednesday thursday friday saturday sunday segunda terca quarta quinta "
        "sexta sabado lunes martes miercoles jueves viernes days day hours hour weeks week months "
        "month years year dias horas hora semanas semana meses mes anos ano minutos minutes "
        "minute vez vezes veces times time pedido pedidos order orders orden compra encomenda "
        "protocolo protocol ticket chamado reclamacao invoice fatura factura boleto codigo code "
        "sku produto product producto item modelo model reais dollars euros pesos since desde "
        "ate hasta until right rua avenida alameda travessa calle street road avenue"
    )
    | frozenset(NUMBERS)
    | frozenset(ORDINALS)
    | frozenset(MULTIPLIERS)
)
# A street is named after numbers and dates ("Rua Sete de Setembro", "Calle 3 de Mayo").
NOT_STREET = (
    NOT_PROPER
    - frozenset(NUMBERS)
    - word_set(
        "janeiro fevereiro abril maio junho julho agosto setembro outubro novembro dezembro enero "
        "febrero mayo junio julio septiembre octubre noviembre diciembre"
    )
)
# A city's name may start with "new" or "nova"; alone, "city" is no city.
NOT_CITY = NOT_PROPER - word_set("new nova novo nuevo nueva city cidade ciudad janeiro")
TITLES = word_set("dr dra mr mrs ms miss sr sra srta prof profa dona don dom senhor senhora senor")
ABBREVIATIONS = word_set("st sta sto ft mt")
PLACE_WORDS = word_set("city cidade ciudad new nova novo nuevo nueva")
CONNECTORS = word_set("de da do dos das del la las los di van von der du")
CONTRACTIONS = ("'s", "'m", "'re", "'ll", "'ve", "'d", "'t")
SUFFIXES = ("ing", "ed", "ly", "ful", "ous", "ive", "able", "ible", "ado", "ada", "ido", "ida")
# After "segunda" or "quinta" these make an ordinal, not a weekday ("segunda vez").
NOT_WEEKDAY = word_set("vez vezes via parcela tentativa opcao mao compra entrega semana")
