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
# Step lists per class hint; a reply uses a run of consecutive steps of one list.
STEPS: dict[str, dict[str, list[list[str]]]] = {
    "support": {
        "pt": [
            [
                "tire fotos do produto e da embalagem, mostrando bem o dano",
                "acesse Meus Pedidos no site ou no app",
                "clique em Solicitar troca ou devolução e escolha o motivo",
                "anexe as fotos e confirme a solicitação",
                "você vai receber por email uma etiqueta de postagem",
                "leve o pacote a uma agência dos Correios em até sete dias",
            ],
            [
                "confira se ninguém da portaria ou vizinho recebeu o pacote",
                "verifique o rastreio pelo link enviado no email de confirmação",
                "se o status continuar parado, responda aqui que eu abro uma investigação",
                "a transportadora tem até cinco dias úteis para responder",
                "se o extravio for confirmado, você escolhe entre reenvio ou reembolso",
            ],
            [
                "não descarte a embalagem original",
                "guarde a nota fiscal que veio junto com o produto",
                "separe os acessórios e manuais",
                "aguarde o contato da transportadora para agendar a coleta",
                "depois da coleta, a análise leva até três dias úteis",
            ],
        ],
        "en": [
            [
                "take photos of the item and the packaging that clearly show the damage",
                "go to My Orders on the website or in the app",
                "click Request a return or exchange and pick the reason",
                "attach the photos and confirm the request",
                "you'll get a prepaid shipping label by email",
                "drop the parcel off at any post office within seven days",
            ],
            [
                "check whether a neighbor or the building's front desk took the parcel",
                "look at the tracking link in your confirmation email",
                "if the status still hasn't moved, reply here and I'll open an investigation",
                "the carrier has up to five business days to respond",
                "if the parcel is confirmed lost, you can choose a reshipment or a refund",
            ],
            [
                "please keep the original packaging",
                "keep the invoice that came in the box",
                "put the accessories and manuals together",
                "wait for the carrier to contact you to schedule the pickup",
                "after the pickup, the inspection takes up to three business days",
            ],
        ],
        "es": [
            [
                "saque fotos del producto y del embalaje donde se vea bien el daño",
                "entre en Mis pedidos en la web o en la app",
                "pulse Solicitar devolución o cambio y elija el motivo",
                "adjunte las fotos y confirme la solicitud",
                "recibirá por correo una etiqueta de envío prepagada",
                "lleve el paquete a una oficina de correos en un plazo de siete días",
            ],
            [
                "compruebe si algún vecino o el conserje recogió el paquete",
                "revise el enlace de seguimiento del correo de confirmación",
                "si el estado sigue igual, responda aquí y abro una investigación",
                "la paquetería tiene hasta cinco días hábiles para contestar",
                "si se confirma la pérdida, puede elegir reenvío o reembolso",
            ],
        ],
    },
    "dispute": {
        "pt": [
            [
                "confira na fatura a data e o valor exato de cada cobrança",
                "envie aqui um print da fatura, escondendo os números do cartão",
                "eu abro a contestação no nosso financeiro",
                "o financeiro analisa em até cinco dias úteis",
                "se a cobrança indevida for confirmada, o estorno aparece em até duas faturas",
            ],
            [
                "não cancele o cartão antes da análise terminar",
                "se já abriu contestação no banco, me avise para evitar estorno em dobro",
                "guarde o protocolo deste atendimento",
                "acompanhe o andamento pelo email de cadastro",
            ],
        ],
        "en": [
            [
                "check the date and the exact amount of each charge on your statement",
                "send a screenshot of the statement here, hiding the card number",
                "I'll open a dispute with our billing team",
                "billing reviews it within five business days",
                "if the charge is confirmed as wrong, the refund shows within two statements",
            ],
            [
                "please don't cancel the card before the review ends",
                "if you already opened a chargeback with your bank, tell me so we don't refund "
                "twice",
                "keep the ticket number of this conversation",
                "follow the progress through the email on your account",
            ],
        ],
        "es": [
            [
                "revise en el extracto la fecha y el importe exacto de cada cargo",
                "envíe aquí una captura del extracto, ocultando el número de la tarjeta",
                "abro la reclamación con nuestro departamento de facturación",
                "facturación la revisa en un máximo de cinco días hábiles",
                "si se confirma el cargo indebido, el reembolso aparece en dos extractos",
            ],
            [
                "no cancele la tarjeta antes de que termine la revisión",
                "si ya reclamó en su banco, avíseme para no devolverlo dos veces",
                "guarde el número de caso de esta conversación",
            ],
        ],
    },
    "catalog": {
        "pt": [
            [
                "acesse a página do produto e clique em Avise-me quando chegar",
                "confirme o seu email de cadastro",
                "assim que o estoque for reposto, você recebe uma notificação",
                "a reserva não é garantida, então recomendo comprar logo ao receber o aviso",
            ],
        ],
        "en": [
            [
                "open the product page and click Notify me when available",
                "confirm the email on your account",
                "as soon as stock is back you'll get a notification",
                "we can't hold items, so I'd buy soon after you get the alert",
            ],
        ],
        "es": [
            [
                "abra la página del producto y pulse Avísame cuando esté disponible",
                "confirme el correo de su cuenta",
                "en cuanto se reponga el stock recibirá una notificación",
                "no podemos reservar artículos, así que le recomiendo comprar pronto",
            ],
        ],
    },
    "technical": {
        "pt": [
            [
                "feche o aplicativo completamente",
                "vá em Configurações, Aplicativos, e limpe o cache do app",
                "confira se o app está na versão mais recente na loja",
                "reinicie o celular",
                "tente entrar de novo usando a opção Esqueci minha senha",
                "se o erro continuar, me mande um print da tela com a mensagem",
            ],
            [
                "teste o acesso pelo navegador, fora do aplicativo",
                "desative VPN ou bloqueador de anúncios, se tiver",
                "troque da rede Wi-Fi para os dados móveis ou vice-versa",
                "anote o horário exato em que o erro aparece",
            ],
        ],
        "en": [
            [
                "close the app completely",
                "go to Settings, Apps, and clear the app's cache",
                "make sure the app is on the latest version in the store",
                "restart your phone",
                "try signing in again using Forgot password",
                "if the error persists, send me a screenshot of the message",
            ],
            [
                "try signing in from a web browser instead of the app",
                "turn off any VPN or ad blocker",
                "switch from Wi-Fi to mobile data or the other way round",
                "write down the exact time the error shows up",
            ],
        ],
        "es": [
            [
                "cierre la aplicación por completo",
                "vaya a Ajustes, Aplicaciones, y borre la caché de la app",
                "compruebe que la app esté en la última versión",
                "reinicie el teléfono",
                "intente entrar de nuevo con la opción Olvidé mi contraseña",
                "si el error sigue, envíeme una captura con el mensaje",
            ],
        ],
    },
    "onboarding": {
        "pt": [
            [
                "abra o email de boas-vindas e clique em Confirmar conta",
                "crie uma senha com pelo menos oito caracteres",
                "preencha os dados de perfil e o endereço principal",
                "cadastre uma forma de pagamento, se quiser agilizar as compras",
                "ative as notificações para acompanhar os pedidos",
            ],
        ],
        "en": [
            [
                "open the welcome email and click Confirm account",
                "create a password with at least eight characters",
                "fill in your profile and your main address",
                "add a payment method if you'd like faster checkout",
                "turn on notifications to track your orders",
            ],
        ],
        "es": [
            [
                "abra el correo de bienvenida y pulse Confirmar cuenta",
                "cree una contraseña de al menos ocho caracteres",
                "complete su perfil y su dirección principal",
                "añada un método de pago si quiere comprar más rápido",
                "active las notificaciones para seguir sus pedidos",
            ],
        ],
    },
}
POLICY: Blocks = {
    "pt": [
        "Pela nossa política de trocas e devoluções, você pode solicitar a devolução em até "
        "sete dias corridos após o recebimento, conforme o Código de Defesa do Consumidor. "
        "Para produtos com defeito, o prazo é de até noventa dias, e a análise técnica leva "
        "até dez dias úteis a partir do recebimento no nosso centro de distribuição.",
        "Os reembolsos são feitos na mesma forma de pagamento da compra. No cartão de crédito, "
        "o estorno pode aparecer em até duas faturas, dependendo da data de fechamento. No "
        "Pix ou boleto, o valor é devolvido em até cinco dias úteis na conta do titular.",
        "Informo que, por segurança, não solicitamos senhas nem o número completo do cartão "
        "por este canal. Os seus dados são tratados de acordo com a Lei Geral de Proteção de "
        "Dados, e você pode pedir a qualquer momento uma cópia ou a exclusão do seu cadastro.",
        "O prazo de entrega informado na finalização da compra começa a contar a partir da "
        "confirmação do pagamento. Em períodos de alta demanda, como datas promocionais, "
        "pode haver atrasos de alguns dias, e nesses casos a transportadora atualiza o "
        "rastreio diretamente no link enviado por email.",
        "Todos os produtos têm garantia legal de noventa dias, e alguns contam também com "
        "garantia estendida do fabricante. Para acionar a garantia, é necessário apresentar "
        "a nota fiscal e o produto não pode apresentar sinais de mau uso.",
        "Quando um pacote é dado como extraviado, abrimos uma investigação com a "
        "transportadora, que tem até cinco dias úteis para responder. Se o extravio for "
        "confirmado, oferecemos o reenvio sem custo ou o reembolso integral, à sua escolha.",
        "Contestações de cobrança são analisadas pelo setor financeiro em até cinco dias "
        "úteis. Se você também abriu uma disputa no banco emissor do cartão, o processo do "
        "banco prevalece e nós acompanhamos por lá, para evitar estornos em duplicidade.",
        "O cancelamento de um pedido só é possível enquanto ele não foi enviado. Depois do "
        "envio, o caminho é recusar a entrega ou solicitar a devolução após o recebimento, "
        "sem nenhum custo adicional para você.",
        "Lembrando que este atendimento fica registrado e você pode consultar o histórico a "
        "qualquer momento na área Meus Atendimentos. Se preferir, também enviamos um resumo "
        "por email ao final da conversa.",
        "Para pedidos feitos com cupom de desconto, o reembolso considera o valor "
        "efetivamente pago. O cupom é reativado na sua conta quando ainda estiver dentro da "
        "validade, e pode ser usado em uma nova compra.",
    ],
    "en": [
        "Under our returns policy you can ask for a return within thirty days of delivery, "
        "as long as the item is unused and in its original packaging. Faulty items are "
        "covered for up to ninety days, and the inspection takes up to ten business days "
        "after the item reaches our warehouse.",
        "Refunds go back to the original payment method. On a credit card, the refund can "
        "take one or two billing cycles to show up, depending on your statement date. Bank "
        "transfers and wallet payments are usually refunded within five business days.",
        "For your security, we never ask for passwords or your full card number in this "
        "chat. Your personal data is handled under our privacy policy, and you can ask for a "
        "copy of it or for your account to be deleted at any time.",
        "The delivery estimate shown at checkout starts from the moment your payment is "
        "confirmed. During peak periods, like holiday sales, there can be delays of a few "
        "days, and the carrier updates the tracking directly in the link we emailed you.",
        "All products come with a one-year limited warranty, and some also have an extended "
        "manufacturer warranty. To make a warranty claim we'll need the receipt, and the "
        "item must not show signs of misuse or accidental damage.",
        "When a parcel is reported lost we open an investigation with the carrier, which has "
        "up to five business days to reply. If the loss is confirmed, we offer a free "
        "reshipment or a full refund, whichever you prefer.",
        "Billing disputes are reviewed by our finance team within five business days. If "
        "you've also opened a chargeback with your card issuer, the bank's process takes "
        "precedence and we follow it there, so you don't get refunded twice.",
        "An order can only be cancelled before it ships. Once it's on its way, you can "
        "refuse the delivery or request a return after it arrives, at no extra cost to you.",
        "This conversation is saved to your account, and you can review it any time under "
        "My Support Requests. If you'd like, we can also email you a summary once we're done.",
        "For orders placed with a discount code, the refund covers the amount you actually "
        "paid. If the code is still valid it's reactivated on your account so you can use it "
        "on a new purchase.",
    ],
    "es": [
        "Según nuestra política de devoluciones, puede solicitar la devolución dentro de los "
        "catorce días naturales posteriores a la entrega, siempre que el producto esté sin "
        "usar. Los productos defectuosos tienen una garantía legal de tres años, y la "
        "revisión técnica tarda hasta diez días hábiles.",
        "Los reembolsos se hacen en el mismo método de pago de la compra. En tarjeta de "
        "crédito, el abono puede tardar uno o dos ciclos de facturación en aparecer. En "
        "transferencias bancarias, suele tardar hasta cinco días hábiles.",
        "Por su seguridad, nunca pedimos contraseñas ni el número completo de la tarjeta por "
        "este canal. Sus datos personales se tratan conforme al Reglamento General de "
        "Protección de Datos, y puede pedir una copia o su eliminación cuando quiera.",
        "El plazo de entrega que se muestra al finalizar la compra empieza a contar desde la "
        "confirmación del pago. En épocas de mucha demanda, como rebajas, puede haber "
        "retrasos de unos días, y la paquetería actualiza el seguimiento en el enlace que le "
        "enviamos por correo.",
        "Cuando un paquete se da por perdido, abrimos una investigación con la paquetería, "
        "que tiene hasta cinco días hábiles para responder. Si se confirma la pérdida, le "
        "ofrecemos un reenvío gratuito o el reembolso completo, como prefiera.",
        "Las reclamaciones de cobro las revisa el departamento financiero en un máximo de "
        "cinco días hábiles. Si también abrió una disputa con su banco, prevalece el proceso "
        "del banco y lo seguimos por ahí, para evitar devoluciones duplicadas.",
        "Un pedido solo se puede cancelar antes de su envío. Una vez enviado, puede rechazar "
        "la entrega o pedir la devolución después de recibirlo, sin ningún coste adicional.",
        "Esta conversación queda guardada en su cuenta y puede consultarla cuando quiera en "
        "Mis consultas. Si lo prefiere, también le enviamos un resumen por correo al final.",
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
