"""The building blocks of an agent's reply, per language (pt, en, es): greetings and
acknowledgements, empathy, restating the customer's issue, holding lines, step lists
per class of problem, policy and terms paragraphs, ticket summaries and closing
questions. `cs_agent` strings them around the reply's core. Many variants per block on
purpose: no single phrasing may dominate the workload. Plain data, no logic.

`{name}` is the customer's first name (only used once it is known), `{topic}` the
restated issue, `{ticket}` a ticket number that is not a fact."""

from __future__ import annotations

Blocks = dict[str, list[str]]

OPEN: Blocks = {
    "pt": [
        "Olá, {name}!",
        "Oi, {name}, tudo bem?",
        "Obrigado por aguardar, {name}.",
        "{name}, agradeço o retorno.",
        "Certo, {name}, obrigado pelas informações.",
        "Perfeito, {name}.",
        "Oi, {name}! Aqui é da equipe de atendimento.",
        "Bom te ver por aqui de novo, {name}.",
        "Muito obrigado pela paciência até aqui, {name}.",
        "Olá! Obrigado por entrar em contato com a nossa central.",
        "Oi! Seja bem-vindo ao nosso atendimento.",
        "Obrigado pela mensagem.",
        "Agradeço por explicar com tantos detalhes.",
        "Entendi perfeitamente, obrigado por avisar.",
        "Que bom que você nos chamou.",
        "Certo, já recebi as informações.",
    ],
    "en": [
        "Hi {name}!",
        "Hello {name}, thanks for your patience.",
        "Thanks for getting back to me, {name}.",
        "Great, {name}, thank you for the details.",
        "Hi {name}, thanks for waiting while I checked.",
        "Thanks {name}, I really appreciate it.",
        "{name}, thank you for bearing with me.",
        "Good to hear from you again, {name}.",
        "Hello and thanks for reaching out to our support team.",
        "Hi there, and welcome to our help desk.",
        "Thank you for your message.",
        "Thanks for explaining all of that so clearly.",
        "Understood, and thank you for letting us know.",
        "I'm glad you contacted us about this.",
        "Thanks, I have everything I need for now.",
        "Got it, thanks for the quick reply.",
    ],
    "es": [
        "¡Hola, {name}!",
        "Hola, {name}, gracias por su paciencia.",
        "Gracias por responder, {name}.",
        "Perfecto, {name}, gracias por los datos.",
        "{name}, gracias por esperar mientras lo revisaba.",
        "Muchas gracias, {name}, se lo agradezco.",
        "Qué gusto saludarle de nuevo, {name}.",
        "Hola, gracias por contactar con nuestro servicio de atención.",
        "Buenas, bienvenido a nuestro centro de ayuda.",
        "Gracias por su mensaje.",
        "Gracias por explicarlo con tanto detalle.",
        "Entendido, gracias por avisarnos.",
        "Me alegra que nos haya escrito.",
        "De acuerdo, ya tengo la información.",
    ],
}
EMPATHY: Blocks = {
    "pt": [
        "Sinto muito pelo transtorno, sei como é frustrante passar por isso.",
        "Lamento muito que você tenha passado por essa situação.",
        "Peço desculpas em nome da empresa pelo inconveniente.",
        "Entendo totalmente a sua preocupação e vou fazer o possível para resolver hoje.",
        "Imagino o quanto isso atrapalhou a sua rotina, e peço desculpas.",
        "Não é essa a experiência que queremos oferecer, e agradeço por nos avisar.",
        "Fico chateado em saber disso, de verdade.",
        "Compreendo, e pode ter certeza de que o seu caso está em boas mãos.",
        "Sei que você já entrou em contato antes, e peço desculpas por ter que repetir.",
        "Obrigado por ter paciência enquanto a gente resolve isso juntos.",
    ],
    "en": [
        "I'm really sorry for the trouble, I know how frustrating this must be.",
        "I apologize that you had to deal with this.",
        "On behalf of the team, I'm sorry for the inconvenience.",
        "I completely understand your concern and I'll do my best to sort it out today.",
        "I can imagine how much this disrupted your week, and I apologize.",
        "This isn't the experience we want you to have, so thank you for flagging it.",
        "I'm sorry to hear that, truly.",
        "I understand, and rest assured your case is in good hands.",
        "I know you've contacted us before and I'm sorry you had to explain it again.",
        "Thanks for your patience while we work through this together.",
    ],
    "es": [
        "Lamento mucho las molestias, entiendo lo frustrante que es.",
        "Siento mucho que haya tenido que pasar por esto.",
        "En nombre del equipo, le pido disculpas por el inconveniente.",
        "Entiendo perfectamente su preocupación y haré todo lo posible por resolverlo hoy.",
        "Imagino cuánto le ha complicado esto, y le pido disculpas.",
        "No es la experiencia que queremos ofrecerle, gracias por avisarnos.",
        "Siento de verdad escuchar eso.",
        "Le entiendo, y puede estar tranquilo, su caso está en buenas manos.",
        "Sé que ya nos había contactado antes y lamento que tenga que repetirlo.",
    ],
}
# What the customer's issue is about, per canonical problem (restated, no values).
TOPIC: dict[str, dict[str, list[str]]] = {
    "item arrived damaged": {
        "pt": ["o produto que chegou danificado", "o estado em que o item chegou"],
        "en": ["the item that arrived damaged", "the condition your item arrived in"],
        "es": ["el producto que llegó dañado", "el estado en que llegó el artículo"],
    },
    "order not delivered": {
        "pt": ["a entrega do seu pedido", "o pedido que ainda não chegou"],
        "en": ["the delivery of your order", "the order that hasn't arrived yet"],
        "es": ["la entrega de su pedido", "el pedido que todavía no ha llegado"],
    },
    "wrong item received": {
        "pt": ["o produto que veio diferente do pedido", "a troca do item errado"],
        "en": ["receiving a different item from the one you ordered", "swapping the wrong item"],
        "es": ["el producto que llegó distinto al pedido", "el cambio del artículo equivocado"],
    },
    "charged twice": {
        "pt": ["a cobrança em duplicidade no seu cartão", "o valor cobrado duas vezes"],
        "en": ["the duplicate charge on your card", "being billed twice"],
        "es": ["el cargo duplicado en su tarjeta", "el cobro repetido"],
    },
    "unauthorized charge": {
        "pt": ["uma cobrança que você não reconhece", "uma compra não autorizada"],
        "en": ["a charge you don't recognize", "a purchase you didn't authorize"],
        "es": ["un cargo que no reconoce", "una compra que no autorizó"],
    },
    "refund not received": {
        "pt": ["o reembolso que ainda não caiu", "o estorno da sua devolução"],
        "en": ["the refund that hasn't come through", "the refund for your return"],
        "es": ["el reembolso que aún no ha recibido", "la devolución del dinero"],
    },
    "stock question": {
        "pt": ["a disponibilidade de um produto", "um item do nosso catálogo"],
        "en": ["whether a product is available", "an item in our catalog"],
        "es": ["la disponibilidad de un producto", "un artículo de nuestro catálogo"],
    },
    "app login error": {
        "pt": ["o acesso ao aplicativo", "o erro ao entrar no app"],
        "en": ["signing in to the app", "the error when you log in"],
        "es": ["el acceso a la aplicación", "el error al iniciar sesión"],
    },
    "account setup help": {
        "pt": ["a configuração da sua conta", "os primeiros passos na plataforma"],
        "en": ["setting up your account", "getting started on the platform"],
        "es": ["la configuración de su cuenta", "los primeros pasos en la plataforma"],
    },
}
RESTATE: Blocks = {
    "pt": [
        "Pelo que entendi, o seu contato é sobre {topic}, certo?",
        "Só para confirmar: estamos falando sobre {topic}.",
        "Então, resumindo, a questão é {topic}.",
        "Anotei aqui que o problema envolve {topic}.",
        "Vou registrar no seu atendimento que se trata de {topic}.",
        "Entendi que você precisa de ajuda com {topic}.",
        "Certo, o caso que estou acompanhando é sobre {topic}.",
    ],
    "en": [
        "If I understand correctly, you're contacting us about {topic}, right?",
        "Just to confirm, we're talking about {topic}.",
        "So, to sum up, the issue is {topic}.",
        "I've noted that the problem involves {topic}.",
        "I'll log on your case that this is about {topic}.",
        "I understand you need help with {topic}.",
        "Okay, the case I'm following up on is about {topic}.",
    ],
    "es": [
        "Si lo entiendo bien, nos escribe por {topic}, ¿verdad?",
        "Solo para confirmar: hablamos de {topic}.",
        "Entonces, en resumen, el problema es {topic}.",
        "He anotado que el caso tiene que ver con {topic}.",
        "Dejo registrado en su caso que se trata de {topic}.",
        "Entiendo que necesita ayuda con {topic}.",
    ],
}
HOLD: Blocks = {
    "pt": [
        "Vou consultar o sistema e já te retorno, só um instante.",
        "Estou verificando as informações com a equipe responsável.",
        "Me dá só um minutinho que estou abrindo o seu cadastro aqui.",
        "Já encaminhei uma consulta interna e estou acompanhando em tempo real.",
        "Deixa eu conferir o histórico completo antes de te passar qualquer informação.",
        "Estou cruzando os dados do pedido com o sistema da transportadora.",
        "Vou checar com o setor financeiro para não te passar nada errado.",
    ],
    "en": [
        "Let me check the system and I'll be right back, just a moment.",
        "I'm checking this with the team that handles it.",
        "Give me a minute while I pull up your account.",
        "I've raised an internal query and I'm following it in real time.",
        "Let me review the full history before I tell you anything.",
        "I'm matching the order details against the carrier's system.",
        "I'll double-check with our billing team so I don't give you wrong information.",
    ],
    "es": [
        "Voy a consultar el sistema y enseguida le respondo, un momento.",
        "Lo estoy verificando con el equipo responsable.",
        "Deme un minuto mientras abro su ficha.",
        "Ya hice una consulta interna y la estoy siguiendo.",
        "Déjeme revisar todo el historial antes de darle información.",
        "Estoy cruzando los datos del pedido con el sistema de la paquetería.",
    ],
}
STEPS_LEAD: Blocks = {
    "pt": [
        "Para resolver, siga estes passos:",
        "O procedimento é o seguinte:",
        "Vou te explicar o passo a passo:",
        "Para agilizar, faça o seguinte:",
        "Segue o que precisamos fazer agora:",
    ],
    "en": [
        "To fix this, please follow these steps:",
        "Here's how the process works:",
        "Let me walk you through it step by step:",
        "To speed things up, please do the following:",
        "Here's what we need to do next:",
    ],
    "es": [
        "Para resolverlo, siga estos pasos:",
        "El procedimiento es el siguiente:",
        "Le explico paso a paso:",
        "Para agilizar, haga lo siguiente:",
    ],
}
SUMMARY_LEAD: Blocks = {
    "pt": [
        "Resumo do seu atendimento, protocolo {ticket}:",
        "Seguem os dados que tenho registrados (protocolo {ticket}):",
        "Para conferência, o que consta no chamado {ticket}:",
        "Só para confirmar os dados do atendimento {ticket}:",
    ],
    "en": [
        "Here's a summary of your case, ticket {ticket}:",
        "These are the details I have on file (ticket {ticket}):",
        "For your reference, what's on case {ticket}:",
        "Just to confirm the details on ticket {ticket}:",
    ],
    "es": [
        "Resumen de su caso, número {ticket}:",
        "Estos son los datos que tengo registrados (caso {ticket}):",
        "Para que lo compruebe, lo que consta en el caso {ticket}:",
    ],
}
SUMMARY_LABEL: dict[str, dict[str, str]] = {
    "pt": {
        "name": "cliente",
        "order": "pedido",
        "email": "email",
        "phone": "telefone",
        "address": "endereço",
        "city": "cidade",
        "sku": "produto",
        "amount": "valor",
        "date": "data da compra",
        "problem": "motivo",
        "promise": "valor combinado",
        "deadline": "prazo",
    },
    "en": {
        "name": "customer",
        "order": "order",
        "email": "email",
        "phone": "phone",
        "address": "address",
        "city": "city",
        "sku": "product",
        "amount": "amount",
        "date": "purchase date",
        "problem": "reason",
        "promise": "agreed amount",
        "deadline": "due by",
    },
    "es": {
        "name": "cliente",
        "order": "pedido",
        "email": "correo",
        "phone": "teléfono",
        "address": "dirección",
        "city": "ciudad",
        "sku": "producto",
        "amount": "importe",
        "date": "fecha de compra",
        "problem": "motivo",
        "promise": "importe acordado",
        "deadline": "plazo",
    },
}
QUESTION: Blocks = {
    "pt": [
        "Posso te ajudar com mais alguma coisa?",
        "Ficou alguma dúvida sobre esse procedimento?",
        "Você consegue confirmar se essas informações estão corretas?",
        "Tem mais alguma coisa que eu possa verificar para você hoje?",
        "Prefere que eu te envie essas orientações por email também?",
        "Consegue fazer isso agora enquanto estamos conversando?",
        "Quer que eu acompanhe e te avise por aqui assim que tiver novidade?",
        "Tudo certo até aqui?",
        "Faz sentido para você?",
        "Posso seguir com a solicitação?",
        "Qual dessas opções fica melhor para você?",
    ],
    "en": [
        "Is there anything else I can help you with?",
        "Do you have any questions about that process?",
        "Could you confirm that those details are correct?",
        "Is there anything else I can check for you today?",
        "Would you like me to email you these instructions as well?",
        "Are you able to try that now while we're chatting?",
        "Would you like me to keep an eye on it and message you here when there's news?",
        "Does that all make sense so far?",
        "Shall I go ahead with the request?",
        "Which of those options works best for you?",
    ],
    "es": [
        "¿Puedo ayudarle con algo más?",
        "¿Tiene alguna duda sobre este procedimiento?",
        "¿Puede confirmarme que estos datos son correctos?",
        "¿Hay algo más que pueda revisar por usted hoy?",
        "¿Quiere que le envíe estas instrucciones por correo también?",
        "¿Puede probarlo ahora mientras hablamos?",
        "¿Le parece bien si sigo con la solicitud?",
        "¿Cuál de estas opciones le viene mejor?",
    ],
}
SIGN_OFF: Blocks = {
    "pt": [
        "Atenciosamente, equipe de atendimento.",
        "Um abraço e até breve.",
        "Fico à disposição.",
        "Conte sempre com a gente.",
    ],
    "en": [
        "Kind regards, the support team.",
        "Best wishes and talk soon.",
        "I'm here if you need anything.",
        "Thanks again for choosing us.",
    ],
    "es": [
        "Un saludo, el equipo de atención al cliente.",
        "Quedo a su disposición.",
        "Gracias por confiar en nosotros.",
    ],
}
