"""The long blocks of an agent's reply, per language (pt, en, es): step lists per class
of problem and policy or terms paragraphs. Plain data, no logic (see cs_agent_text for
the short blocks)."""

from __future__ import annotations

Blocks = dict[str, list[str]]

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
