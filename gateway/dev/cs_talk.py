"""Everything in the customer-service workload that is not a fact: openings, the
original problems (per class), small talk, resumptions, status questions, the agent's
generic replies and closings, and the tenant apps with their system messages.
English small talk also comes from real human chat (`cs_chitchat`). Plain data."""

from __future__ import annotations

# (class hint, canonical problem, {lang: the ways a customer puts it})
PROBLEMS: list[tuple[str, str, dict[str, list[str]]]] = [
    (
        "support",
        "item arrived damaged",
        {
            "pt": [
                "o produto chegou quebrado",
                "veio tudo amassado a caixa e o produto trincado",
                "a cafeteira chegou com a tampa rachada",
                "recebi o item danificado",
            ],
            "en": [
                "the item arrived damaged",
                "it came broken, box crushed",
                "the lamp showed up with a cracked base",
                "my package arrived smashed",
            ],
            "es": [
                "el producto llegó roto",
                "me llegó dañado",
                "la caja vino aplastada y el artículo roto",
            ],
        },
    ),
    (
        "support",
        "order not delivered",
        {
            "pt": [
                "meu pedido não chegou",
                "o rastreio parou faz dias e nada de entrega",
                "diz entregue mas não recebi nada",
                "tá atrasado e ninguém me fala nada",
            ],
            "en": [
                "my order never arrived",
                "tracking hasn't moved in days",
                "it says delivered but I got nothing",
                "my delivery is late and no updates",
            ],
            "es": [
                "mi pedido no llegó",
                "el seguimiento no se mueve hace días",
                "dice entregado pero no recibí nada",
            ],
        },
    ),
    (
        "support",
        "wrong item received",
        {
            "pt": ["veio o produto errado", "pedi azul e veio preto", "mandaram outro item"],
            "en": ["I got the wrong item", "ordered blue, got black", "you sent me something else"],
            "es": ["me mandaron otro producto", "pedí azul y llegó negro"],
        },
    ),
    (
        "dispute",
        "charged twice",
        {
            "pt": [
                "fui cobrado duas vezes",
                "apareceu a cobrança em dobro no cartão",
                "cobraram em duplicidade, quero contestar",
            ],
            "en": [
                "I was charged twice",
                "there's a double charge on my card",
                "you billed me twice, I'll dispute it",
            ],
            "es": ["me cobraron dos veces", "hay un cargo duplicado en mi tarjeta"],
        },
    ),
    (
        "dispute",
        "unauthorized charge",
        {
            "pt": ["tem uma cobrança que eu não reconheço", "não autorizei essa compra"],
            "en": ["there's a charge I didn't authorize", "I don't recognize this charge, fraud?"],
            "es": ["hay un cargo que no reconozco", "no autoricé esta compra"],
        },
    ),
    (
        "support",
        "refund not received",
        {
            "pt": ["o estorno nunca caiu", "devolvi o produto e até agora nada do reembolso"],
            "en": ["my refund never came through", "returned it weeks ago, still no refund"],
            "es": [
                "el reembolso nunca llegó",
                "devolví el producto y no me han devuelto el dinero",
            ],
        },
    ),
    (
        "catalog",
        "stock question",
        {
            "pt": [
                "queria saber se tem esse produto em estoque",
                "vcs ainda vendem aquele modelo?",
            ],
            "en": ["is this in stock?", "do you still sell that model?"],
            "es": ["¿tienen este producto en stock?", "¿todavía venden ese modelo?"],
        },
    ),
    (
        "technical",
        "app login error",
        {
            "pt": ["o app não deixa eu entrar, dá erro 500", "não consigo logar no aplicativo"],
            "en": ["the app won't let me log in, error 500", "can't sign in to the app"],
            "es": ["la app no me deja entrar, da error 500", "no puedo iniciar sesión"],
        },
    ),
    (
        "onboarding",
        "account setup help",
        {
            "pt": [
                "preciso de ajuda pra configurar minha conta",
                "acabei de criar a conta e tô perdido",
            ],
            "en": ["I need help to set up my account", "just signed up and I'm lost"],
            "es": ["necesito ayuda para configurar mi cuenta"],
        },
    ),
]

GREET: dict[str, list[str]] = {
    "pt": [
        "oi",
        "olá, boa tarde",
        "bom dia",
        "oi tudo bem?",
        "boa noite, preciso de ajuda",
        "olá",
        "ei",
        "alô",
        "oii",
        "boa tarde pessoal",
    ],
    "en": [
        "hi",
        "hello",
        "hey there",
        "good morning",
        "hi, I need some help",
        "hello?",
        "hey",
        "hi there, anyone around?",
    ],
    "es": ["hola", "buenas", "buenos días", "hola, necesito ayuda", "buenas tardes", "qué tal"],
}
PROBLEM_LEAD: dict[str, list[str]] = {
    "pt": [
        "{v}",
        "então, {v}",
        "é o seguinte: {v}",
        "tô com um problema, {v}",
        "preciso resolver uma coisa, {v}",
    ],
    "en": ["{v}", "so {v}", "here's the thing, {v}", "I have a problem: {v}", "quick one, {v}"],
    "es": ["{v}", "pues {v}", "tengo un problema: {v}", "mire, {v}"],
}
STATUS: dict[str, list[str]] = {
    "pt": [
        "alguma novidade?",
        "e aí, conseguiu ver?",
        "alguma atualização sobre meu caso?",
        "e então?",
        "vai resolver ou não?",
        "conseguiram ver meu problema?",
    ],
    "en": [
        "any news?",
        "so what's happening with my case?",
        "any update?",
        "did you find anything?",
        "well?",
        "is this getting fixed or not",
    ],
    "es": [
        "¿alguna novedad?",
        "¿y entonces?",
        "¿pudieron ver mi caso?",
        "¿hay alguna actualización?",
    ],
}
RESUME: dict[str, list[str]] = {
    "pt": [
        "voltei",
        "oi de novo",
        "oi, continuando aquele atendimento",
        "bom dia, sou eu de novo",
        "retomando aqui",
    ],
    "en": [
        "hi again",
        "back again",
        "hello, picking this up again",
        "me again",
        "following up from before",
    ],
    "es": ["hola de nuevo", "volví", "buenas, retomo lo de antes"],
}
FILLER: dict[str, list[str]] = {
    "pt": [
        "nossa, que dia corrido hoje",
        "desculpa a demora, tava no trânsito",
        "tá chovendo muito aqui",
        "só um minuto que o cachorro tá latindo",
        "kkkk ok",
        "tô no trabalho, respondo aos poucos",
        "ah entendi",
        "hmm",
        "beleza",
        "pode ser",
        "tá bom então",
        "vixe",
        "aff, que demora",
        "deixa eu ver aqui no meu email",
        "peraí que tô procurando",
        "olha, já é a terceira vez que eu entro em contato",
        "meu filho que usa mais, sabe",
        "obrigada pela paciência viu",
        "essa semana tá difícil",
        "ok ok",
        "tô sem bateria, vou ser rápido",
        "vcs abrem sábado?",
        "sério?",
        "ah tá",
        "ufa",
        "calma que vou achar",
        "comprei de presente pra minha mãe",
        "o sinal aqui é ruim",
        "acabei de chegar em casa",
        "entendi, mas ainda acho estranho",
    ],
    "es": [
        "qué día más largo",
        "perdón, estaba en el metro",
        "aquí está lloviendo muchísimo",
        "un momento que está sonando el timbre",
        "jajaja vale",
        "vale",
        "ah, entiendo",
        "mmm",
        "de acuerdo",
        "bueno",
        "uf, qué lento",
        "déjame buscarlo en el correo",
        "ya es la tercera vez que escribo",
        "era un regalo para mi madre",
        "gracias por la paciencia",
        "estoy en el trabajo, contesto cuando pueda",
        "¿abren los sábados?",
        "¿en serio?",
        "tengo poca batería",
        "espera que lo busco",
        "la cobertura aquí es malísima",
        "acabo de llegar a casa",
        "ok ok",
    ],
    "en": [
        "sorry, was on another call",
        "ugh long day",
        "one sec, dog is barking",
        "ok",
        "hmm",
        "lol ok",
        "right",
        "fine",
        "let me check my email real quick",
        "this is the third time I'm contacting you",
        "it was a gift for my mom",
        "thanks for being patient",
        "battery's low, be quick pls",
        "seriously?",
    ],
}
CLOSE: dict[str, list[str]] = {
    "pt": [
        "obrigado",
        "valeu",
        "ok, obrigada pela ajuda",
        "tá bom, aguardo",
        "blz, tchau",
        "perfeito, obrigado",
    ],
    "en": ["thanks", "ok thank you", "great, thanks for the help", "ok I'll wait", "cheers, bye"],
    "es": ["gracias", "vale, gracias", "perfecto, muchas gracias", "ok, espero entonces"],
}
AGENT_ACK: dict[str, list[str]] = {
    "pt": [
        "Certo, anotado.",
        "Obrigado pela informação, vou verificar.",
        "Entendi.",
        "Um momento, por favor, estou consultando.",
        "Perfeito.",
        "Sinto muito pelo transtorno.",
        "Já estou verificando aqui no sistema.",
        "Pode deixar comigo.",
    ],
    "en": [
        "Got it, thanks.",
        "Thanks, let me check.",
        "Understood.",
        "One moment please, I'm looking into it.",
        "Perfect.",
        "Sorry about the trouble.",
        "I'm checking our system now.",
        "Leave it with me.",
    ],
    "es": [
        "Perfecto, anotado.",
        "Gracias, lo reviso.",
        "Entendido.",
        "Un momento, por favor.",
        "Lamento las molestias.",
        "Lo estoy comprobando en el sistema.",
    ],
}
AGENT_ASK: dict[str, dict[str, str]] = {
    "pt": {
        "name": "Com quem eu falo?",
        "order": "Pode me passar o número do pedido?",
        "email": "Qual o seu email de cadastro?",
        "phone": "Qual um telefone para contato?",
        "address": "Qual o endereço de entrega?",
        "city": "Em qual cidade você está?",
        "sku": "Qual o código do produto?",
        "amount": "Qual foi o valor cobrado?",
        "date": "Em que data foi a compra?",
    },
    "en": {
        "name": "Who am I speaking with?",
        "order": "Could you share the order number?",
        "email": "What's the email on your account?",
        "phone": "What's a good contact number?",
        "address": "What's the delivery address?",
        "city": "Which city are you in?",
        "sku": "What's the product code?",
        "amount": "How much were you charged?",
        "date": "When did you place the order?",
    },
    "es": {
        "name": "¿Con quién hablo?",
        "order": "¿Me pasa el número de pedido?",
        "email": "¿Cuál es su correo?",
        "phone": "¿Un teléfono de contacto?",
        "address": "¿Cuál es la dirección de entrega?",
        "city": "¿En qué ciudad está?",
        "sku": "¿Cuál es el código del producto?",
        "amount": "¿Cuánto le cobraron?",
        "date": "¿Cuándo hizo la compra?",
    },
}
AGENT_CLOSE: dict[str, list[str]] = {
    "pt": ["Por nada! Qualquer coisa é só chamar.", "Obrigado pelo contato, tenha um bom dia."],
    "en": [
        "You're welcome! Anything else, just reach out.",
        "Thanks for contacting us, have a good day.",
    ],
    "es": ["¡De nada! Cualquier cosa, aquí estamos.", "Gracias por contactarnos, buen día."],
}
# Tenant apps: (app id, language, order number style, system message)
APPS: list[tuple[str, str, str, str]] = [
    (
        "loja-aurora",
        "pt",
        "ORD-{d}",
        "Você é a assistente da Loja Aurora, e-commerce de casa e "
        "cozinha. Responda em português, com cordialidade, usando os dados do cliente e do pedido.",
    ),
    (
        "fonte-telecom",
        "pt",
        "PED{d}",
        "Você atende clientes da Fonte Telecom (internet e "
        "celular). Seja objetiva, confirme dados antes de agir e nunca invente prazos.",
    ),
    (
        "northwind",
        "en",
        "NW-{d}",
        "You are Northwind Outfitters' support assistant. Be concise "
        "and friendly; use the customer's order details; never promise what policy does not allow.",
    ),
    (
        "brightcart",
        "en",
        "#{d}",
        "You help BrightCart shoppers with orders, returns and billing. "
        "Answer in the customer's language.",
    ),
    (
        "tienda-sol",
        "es",
        "TS-{d}",
        "Eres el asistente de Tienda Sol. Responde en español, con "
        "amabilidad, usando los datos del pedido y del cliente.",
    ),
]
# A second language a customer slips into, per conversation language.
MIX_WITH = {"pt": "en", "en": "es", "es": "pt"}
MIX_WORDS: dict[str, list[str]] = {
    "pt": ["ok thanks", "sorry", "please", "tracking", "delivery", "anyway", "by the way"],
    "en": ["gracias", "bueno", "obrigado", "por favor", "vale"],
    "es": ["obrigado", "tá", "ok", "entendi", "please"],
}
