"""How people state, correct and ask back each kind of fact, per language (pt, en, es).
`{v}` is where the fact's surface form goes. Many variants per entry on purpose: the
workload must not be one writer's phrasing. Plain data, no logic."""

from __future__ import annotations

Table = dict[str, dict[str, list[str]]]

# The customer states a fact.
STATE: Table = {
    "pt": {
        "name": [
            "sou a {v}",
            "aqui é {v}",
            "meu nome é {v}",
            "oi, {v} falando",
            "pode me chamar de {v}",
            "{v} aqui",
            "boa tarde, aqui quem fala é {v}",
            "me chamo {v}",
        ],
        "city": [
            "moro em {v}",
            "sou de {v}",
            "aqui em {v} não chegou nada",
            "a entrega é pra {v}",
            "tô em {v}",
            "cidade: {v}",
        ],
        "address": [
            "o endereço é {v}",
            "entrega na {v} por favor",
            "meu endereço: {v}",
            "fica na {v}",
            "mando o endereço: {v}",
            "é {v}",
        ],
        "order": [
            "o pedido é {v}",
            "número do pedido {v}",
            "pedido {v}",
            "meu pedido: {v}",
            "comprei no pedido {v}",
            "o número é {v}",
            "tá aqui o pedido, {v}",
        ],
        "sku": [
            "o código do produto é {v}",
            "é o item {v}",
            "o sku é {v}",
            "produto {v}",
            "aquele de código {v}",
        ],
        "amount": [
            "paguei {v}",
            "foi cobrado {v}",
            "o valor foi {v}",
            "me cobraram {v}",
            "deu {v} no total",
            "saiu {v} no cartão",
        ],
        "date": [
            "comprei dia {v}",
            "foi no dia {v}",
            "a compra foi em {v}",
            "era pra ter chegado {v}",
            "desde {v} esperando",
        ],
        "email": [
            "meu email é {v}",
            "o e-mail é {v}",
            "pode mandar pra {v}",
            "email: {v}",
            "usa o {v}",
            "cadastrei com {v}",
        ],
        "phone": [
            "meu telefone é {v}",
            "pode ligar no {v}",
            "celular {v}",
            "whats {v}",
            "o número é {v}",
            "me liga no {v}",
        ],
    },
    "en": {
        "name": [
            "my name's {v}",
            "this is {v}",
            "hi, {v} here",
            "I'm {v}",
            "name is {v}",
            "it's {v}",
            "{v} speaking",
            "you can call me {v}",
        ],
        "city": [
            "I live in {v}",
            "I'm in {v}",
            "shipping to {v}",
            "it's going to {v}",
            "I'm based in {v}",
            "city is {v}",
        ],
        "address": [
            "my address is {v}",
            "ship it to {v}",
            "the address is {v}",
            "it's {v}",
            "deliver to {v} please",
            "address: {v}",
        ],
        "order": [
            "order number is {v}",
            "my order is {v}",
            "order {v}",
            "it's order {v}",
            "the order # is {v}",
            "here's the order: {v}",
            "ref {v}",
        ],
        "sku": [
            "the item code is {v}",
            "it's product {v}",
            "sku {v}",
            "item {v}",
            "the one with code {v}",
        ],
        "amount": [
            "I paid {v}",
            "I was charged {v}",
            "it came to {v}",
            "total was {v}",
            "you charged me {v}",
            "they took {v} from my card",
        ],
        "date": [
            "I ordered it on {v}",
            "bought it {v}",
            "it was supposed to arrive {v}",
            "I placed it on {v}",
            "been waiting since {v}",
        ],
        "email": [
            "my email is {v}",
            "email's {v}",
            "send it to {v}",
            "use {v}",
            "it's {v}",
            "you can reach me at {v}",
        ],
        "phone": [
            "my number is {v}",
            "call me at {v}",
            "phone: {v}",
            "my cell is {v}",
            "reach me on {v}",
            "number's {v}",
        ],
    },
    "es": {
        "name": [
            "soy {v}",
            "me llamo {v}",
            "aquí {v}",
            "hola, habla {v}",
            "mi nombre es {v}",
            "{v} por aquí",
            "buenas, soy {v}",
        ],
        "city": ["vivo en {v}", "soy de {v}", "estoy en {v}", "el envío es a {v}", "ciudad: {v}"],
        "address": [
            "mi dirección es {v}",
            "envíenlo a {v}",
            "la dirección es {v}",
            "es en {v}",
            "dirección: {v}",
        ],
        "order": [
            "el pedido es {v}",
            "número de pedido {v}",
            "pedido {v}",
            "mi pedido: {v}",
            "es el pedido {v}",
            "les paso el número: {v}",
        ],
        "sku": [
            "el código del producto es {v}",
            "es el artículo {v}",
            "sku {v}",
            "la referencia es {v}",
        ],
        "amount": [
            "pagué {v}",
            "me cobraron {v}",
            "el importe fue {v}",
            "fueron {v}",
            "me quitaron {v} de la tarjeta",
        ],
        "date": [
            "lo compré el {v}",
            "fue el {v}",
            "tenía que llegar el {v}",
            "hice el pedido el {v}",
            "espero desde el {v}",
        ],
        "email": [
            "mi correo es {v}",
            "el email es {v}",
            "mándenlo a {v}",
            "correo: {v}",
            "uso {v}",
        ],
        "phone": [
            "mi teléfono es {v}",
            "llámenme al {v}",
            "móvil {v}",
            "mi número es {v}",
            "whatsapp {v}",
        ],
    },
}

# The customer corrects something said before; the newest value wins.
CORRECT: Table = {
    "pt": {
        "_": [
            "desculpa, errei: o certo é {v}",
            "opa, corrigindo, é {v}",
            "na verdade é {v}, digitei errado",
            "não, espera, é {v}",
            "foi mal, o correto é {v}",
            "corrige aí por favor: {v}",
        ],
        "address": ["mudei de endereço, agora é {v}", "esquece o outro endereço, é {v}"],
        "email": ["esse email tá errado, usa {v}", "troquei de email, agora é {v}"],
        "phone": ["meu número mudou, agora é {v}", "esse número é antigo, o novo é {v}"],
    },
    "en": {
        "_": [
            "sorry, my mistake, it's actually {v}",
            "wait no, it's {v}",
            "correction: {v}",
            "oops, typo, should be {v}",
            "actually it's {v} not the other one",
            "scratch that, {v}",
        ],
        "address": ["I moved, new address is {v}", "forget the old address, use {v}"],
        "email": ["that email's wrong, use {v}", "I changed my email, it's {v} now"],
        "phone": ["new number: {v}", "that's my old phone, the new one is {v}"],
    },
    "es": {
        "_": [
            "perdón, me equivoqué, es {v}",
            "no, espera, es {v}",
            "corrijo: {v}",
            "en realidad es {v}",
            "error mío, el correcto es {v}",
        ],
        "address": ["me mudé, ahora es {v}", "olvide la otra dirección, es {v}"],
        "email": ["ese correo está mal, use {v}", "cambié de correo, ahora es {v}"],
        "phone": ["cambié de número, ahora es {v}"],
    },
}

# The customer asks back for a fact given earlier (its value is NOT in the question).
ASK: Table = {
    "pt": {
        "name": [
            "vc lembra meu nome?",
            "em nome de quem tá o cadastro?",
            "qual nome vc anotou aí?",
        ],
        "city": [
            "qual cidade ficou no cadastro?",
            "vcs entregam na minha cidade né? qual ficou registrada?",
        ],
        "address": [
            "pode confirmar o endereço de entrega?",
            "qual endereço ficou anotado?",
            "vai pro endereço certo né? qual tá aí?",
        ],
        "order": [
            "qual era o número do pedido mesmo?",
            "me passa de novo o número do pedido",
            "esqueci o número do pedido, qual era?",
        ],
        "sku": ["qual era o código do produto?", "o item certo é qual mesmo?"],
        "amount": [
            "quanto eu paguei mesmo?",
            "qual foi o valor cobrado?",
            "confirma o valor que eu paguei?",
        ],
        "date": ["quando foi que eu comprei mesmo?", "qual a data da compra que vc tem aí?"],
        "email": [
            "qual email vcs têm no cadastro?",
            "pra qual email vai a confirmação?",
            "confirma meu email?",
        ],
        "phone": ["qual telefone ficou anotado?", "vão ligar em qual número?"],
        "problem": ["vc entendeu qual é o problema?", "resumindo, qual é o meu problema aqui?"],
        "promise": [
            "qual foi o valor que vc prometeu devolver?",
            "quanto vcs disseram que iam estornar?",
            "o reembolso era de quanto mesmo?",
        ],
        "deadline": [
            "até quando vcs falaram que resolviam?",
            "qual o prazo que vc me deu?",
            "quando chega mesmo?",
        ],
    },
    "en": {
        "name": [
            "do you have my name right?",
            "what name is on the account?",
            "remind me what name you have",
        ],
        "city": ["which city do you have for me?", "what city is on file?"],
        "address": [
            "can you confirm the delivery address?",
            "which address do you have?",
            "what address is it going to?",
        ],
        "order": [
            "what was the order number again?",
            "can you give me the order number again",
            "sorry what was my order #",
        ],
        "sku": ["what was the item code?", "which product was it again?"],
        "amount": [
            "how much did I pay again?",
            "what was I charged?",
            "can you confirm the amount I paid",
        ],
        "date": ["when did I place the order again?", "what date do you have for the purchase?"],
        "email": [
            "what email do you have on file?",
            "which email will the receipt go to?",
            "can you confirm my email",
        ],
        "phone": ["what number do you have for me?", "which phone will you call?"],
        "problem": ["do you understand what the issue is?", "so what's the problem in your notes?"],
        "promise": [
            "what was the amount you promised?",
            "how much did you say you'd refund?",
            "remind me what the refund was",
        ],
        "deadline": [
            "when did you say this would be fixed?",
            "what was the deadline you gave me?",
            "when is it arriving again?",
        ],
    },
    "es": {
        "name": ["¿tienen bien mi nombre?", "¿a nombre de quién está?"],
        "city": ["¿qué ciudad tienen registrada?"],
        "address": ["¿me confirma la dirección de entrega?", "¿qué dirección tienen?"],
        "order": ["¿cuál era el número de pedido?", "me repite el número de pedido porfa"],
        "sku": ["¿cuál era el código del producto?"],
        "amount": ["¿cuánto pagué al final?", "¿cuánto me cobraron?"],
        "date": ["¿cuándo hice la compra?", "¿qué fecha tienen de la compra?"],
        "email": ["¿qué correo tienen registrado?", "¿a qué correo llega la confirmación?"],
        "phone": ["¿a qué número me van a llamar?", "¿qué teléfono tienen?"],
        "problem": ["¿entendió cuál es el problema?"],
        "promise": ["¿cuánto dijeron que me iban a devolver?", "¿de cuánto era el reembolso?"],
        "deadline": ["¿para cuándo dijeron que estaba?", "¿cuál era el plazo que me dio?"],
    },
}

# The agent states a fact: an amount promised, a deadline.
AGENT_STATE: Table = {
    "pt": {
        "promise": [
            "Vou solicitar o estorno de {v} para você.",
            "Consigo devolver {v} no seu cartão.",
            "Aprovei um reembolso de {v}.",
            "Vamos creditar {v} na sua conta.",
            "Fica registrado o reembolso de {v}.",
        ],
        "deadline": [
            "O prazo para resolver é até {v}.",
            "Deve chegar até {v}.",
            "Até {v} está resolvido.",
            "A nova previsão é {v}.",
        ],
    },
    "en": {
        "promise": [
            "I'll refund {v} to your card.",
            "I've approved a refund of {v}.",
            "We'll credit {v} to your account.",
            "You'll get {v} back.",
            "I can offer {v} as a refund.",
        ],
        "deadline": [
            "It should be sorted by {v}.",
            "Expect it by {v}.",
            "The new delivery date is {v}.",
            "We'll have it fixed by {v}.",
        ],
    },
    "es": {
        "promise": [
            "Le devolveremos {v} a su tarjeta.",
            "He aprobado un reembolso de {v}.",
            "Le abonamos {v} en su cuenta.",
        ],
        "deadline": [
            "Debería estar resuelto para el {v}.",
            "Le llega antes del {v}.",
            "La nueva fecha es el {v}.",
        ],
    },
}

AGENT_CORRECT: dict[str, list[str]] = {
    "pt": ["Correção: na verdade {v}.", "Me enganei antes, o correto é {v}."],
    "en": ["Correction: it's actually {v}.", "Sorry, I misspoke earlier: {v}."],
    "es": ["Corrijo: en realidad es {v}.", "Perdón, me equivoqué antes: {v}."],
}

# The agent repeats a fact back when asked.
AGENT_RECALL: dict[str, list[str]] = {
    "pt": ["Aqui consta {v}.", "Tenho anotado {v}.", "Confirmando: {v}.", "É {v}."],
    "en": ["I have {v}.", "It's {v}.", "On file: {v}.", "Confirming: {v}."],
    "es": ["Tengo registrado {v}.", "Es {v}.", "Le confirmo: {v}."],
}

# The customer refers to an earlier episode on another channel.
REFER: dict[str, list[str]] = {
    "pt": [
        "como falei {ch} {when}, ",
        "já expliquei tudo {ch} {when}, ",
        "continuando o que conversei {ch} {when}: ",
        "falei com vcs {ch} {when} e ",
    ],
    "en": [
        "like I said {ch} {when}, ",
        "I already explained {ch} {when}, ",
        "following up on what I said {ch} {when}: ",
        "spoke to you guys {ch} {when} and ",
    ],
    "es": [
        "como dije {ch} {when}, ",
        "ya lo expliqué {ch} {when}, ",
        "sigo con lo que hablé {ch} {when}: ",
    ],
}
CHANNEL_REF: Table = {
    "pt": {
        "phone": ["no telefone", "por ligação", "na central"],
        "email": ["por email"],
        "whatsapp": ["no whatsapp", "no zap"],
        "webchat": ["no chat do site", "no chat"],
    },
    "en": {
        "phone": ["on the phone", "on the call"],
        "email": ["by email", "in my email"],
        "whatsapp": ["on whatsapp"],
        "webchat": ["in the website chat", "on chat"],
    },
    "es": {
        "phone": ["por teléfono", "en la llamada"],
        "email": ["por correo"],
        "whatsapp": ["por whatsapp"],
        "webchat": ["en el chat de la web"],
    },
}
WHEN: dict[str, list[tuple[float, str]]] = {
    # (at least this many hours ago, phrase)
    "pt": [(0, "mais cedo"), (12, "ontem"), (48, "esses dias"), (150, "semana passada")],
    "en": [(0, "earlier"), (12, "yesterday"), (48, "the other day"), (150, "last week")],
    "es": [(0, "hace un rato"), (12, "ayer"), (48, "el otro día"), (150, "la semana pasada")],
}
