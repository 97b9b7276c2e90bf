"""The wording layer of the loop workload (`cs_loops`): the onboarding how-to topics of
topic-hopping conversations (`? question | another wording = its answer`), the recurring
formulas and small talk of both sides (`key: a | b | c`, per language), the parser of
these banks and of `cs_loops_text`, the state of a conversation being built (its values
and its own recurring formulas) and the agent's replies: a core answer wrapped in
greetings, empathy, holding lines, closing questions and email sign-offs.
Slots: {name} the customer's first name, {field} and {v} a piece of data being verified,
{ref} {date} {date2} {proto} {team} {amount} {status} as in `cs_loops_text`."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from gateway.dev import cs_values
from gateway.dev.cs_loops_text import INTENTS
from gateway.dev.cs_places import MONTHS

ONBOARDING = """
[pt]
? como configuro o aviso automático? | onde ativo o aviso automático? = Em Configurações > Notificações você liga o aviso automático e escolhe o canal.
? tem algum vídeo explicando o painel? | existe tutorial do painel? = Sim! Na Central de Ajuda, em Primeiros passos, tem um vídeo de 5 minutos sobre o painel.
? como convido os outros usuários? | dá pra colocar minha equipe no sistema? = Em Equipe > Convidar, digite o email de cada pessoa e defina se é admin ou atendente.
? consigo importar minha lista de clientes? | como subo minha planilha de contatos? = Sim, em Contatos > Importar você envia um arquivo CSV ou Excel com nome e telefone.
? como mudo o horário de atendimento? | onde defino os dias que a loja abre? = O horário fica em Configurações > Empresa > Horários; fora dele entra a mensagem de ausência.
? posso personalizar a mensagem de boas-vindas? | como troco o texto de saudação? = Pode sim: em Mensagens > Boas-vindas você edita o texto e pode incluir o nome do cliente.
? como emito a nota fiscal pelo sistema? | onde eu gero as notas? = Depois de cadastrar o certificado digital em Fiscal, o botão Emitir aparece em cada venda.
? tem aplicativo pra celular? | dá pra usar pelo telefone? = Tem sim, o app está na Play Store e na App Store com o mesmo login do painel.
? como vejo os relatórios de vendas? | onde acompanho o faturamento do mês? = Em Relatórios > Vendas você filtra por período e pode exportar em PDF ou planilha.
? como conecto minha loja virtual? | dá pra integrar com o meu site? = Em Integrações, escolha a plataforma da sua loja e cole a chave de API que ela fornece.
[en]
? how do I set up the automatic notice? | where do I turn on automatic notices? = Under Settings > Notifications you switch on the automatic notice and pick a channel.
? is there a video that walks through the dashboard? | any tutorial for the dashboard? = Yes! In the Help Center, under Getting started, there's a 5-minute dashboard video.
? how do I invite the other users? | can I add my team to the system? = Go to Team > Invite, type each person's email and choose admin or agent.
? can I import my customer list? | how do I upload my contacts spreadsheet? = Yes, under Contacts > Import you can upload a CSV or Excel file with names and phone numbers.
? how do I change our opening hours? | where do I set the days the shop is open? = Hours are in Settings > Business > Opening hours; outside them the away message is sent.
? can I customise the welcome message? | how do I change the greeting text? = Sure: in Messages > Welcome you edit the text, and you can include the customer's name.
? how do I issue invoices from the system? | where do I generate invoices? = Once your tax details are saved under Billing, an Issue invoice button shows on each sale.
? is there a mobile app? | can I use it from my phone? = There is, it's on Google Play and the App Store and uses the same login as the dashboard.
? where do I see the sales reports? | how do I track this month's revenue? = In Reports > Sales you filter by period and can export to PDF or a spreadsheet.
? how do I connect my online store? | can I integrate it with my website? = In Integrations, choose your store platform and paste the API key it gives you.
[es]
? ¿cómo configuro el aviso automático? | ¿dónde activo el aviso automático? = En Ajustes > Notificaciones activa el aviso automático y elige el canal.
? ¿hay algún vídeo que explique el panel? | ¿tienen tutorial del panel? = ¡Sí! En el Centro de ayuda, en Primeros pasos, hay un vídeo de 5 minutos sobre el panel.
? ¿cómo invito a los demás usuarios? | ¿puedo añadir a mi equipo al sistema? = En Equipo > Invitar, escriba el correo de cada persona y elija si es admin o agente.
? ¿puedo importar mi lista de clientes? | ¿cómo subo mi hoja de contactos? = Sí, en Contactos > Importar puede subir un archivo CSV o Excel con nombre y teléfono.
? ¿cómo cambio el horario de atención? | ¿dónde pongo los días que abre la tienda? = El horario está en Ajustes > Empresa > Horarios; fuera de él se envía el mensaje de ausencia.
? ¿puedo personalizar el mensaje de bienvenida? | ¿cómo cambio el texto del saludo? = Claro: en Mensajes > Bienvenida edita el texto y puede incluir el nombre del cliente.
? ¿cómo emito facturas desde el sistema? | ¿dónde genero las facturas? = Cuando guarde sus datos fiscales en Facturación, aparece el botón Emitir en cada venta.
? ¿hay aplicación para el móvil? | ¿se puede usar desde el teléfono? = Sí, la app está en Google Play y en App Store con el mismo acceso que el panel.
? ¿dónde veo los informes de ventas? | ¿cómo sigo la facturación del mes? = En Informes > Ventas filtra por periodo y puede exportar a PDF o a hoja de cálculo.
? ¿cómo conecto mi tienda online? | ¿se puede integrar con mi web? = En Integraciones, elija la plataforma de su tienda y pegue la clave API que le da.
"""  # noqa: E501

FORMULAS = """
[pt]
remind: Você acompanha tudo pelo app, em Meus pedidos. | Este atendimento fica no seu histórico.
policy: Reforçamos que todas as solicitações ficam registradas no seu cadastro e podem ser consultadas a qualquer momento pelo aplicativo ou pelo site, na área Minha conta, onde também aparecem os prazos e o histórico completo do atendimento. | Caso prefira, você também pode falar com a gente pelo WhatsApp ou pelo telefone da central, de segunda a sábado, das 8h às 20h, informando o seu CPF para agilizar a identificação do cadastro.
v_done: Obrigado, cadastro confirmado! Como posso te ajudar hoje? | Pronto, localizei sua conta. Em que posso ajudar?
next: outra dúvida: | e mais uma coisa, | aproveitando, | ah, e
st_line: O pedido {ref} {status}.
greet: Olá, {name}! Tudo bem? | Oi, {name}, boa tarde! | Olá! Aqui é a Carla, do atendimento. | Oi, {name}! Obrigado por falar com a gente.
empathy: Compreendo sua preocupação. | Entendo sua frustração, {name}. | Sinto muito pelo transtorno. | Peço desculpas pela demora. | Entendo perfeitamente, {name}.
hold: Só um instante, vou verificar. | Deixa eu consultar aqui. | Um momento, por favor.
again: Como informei, | Conforme verifiquei, | Reforçando, | Olhando de novo aqui,
close: Posso ajudar em algo mais? | Ficou alguma dúvida? | Mais alguma coisa em que eu possa ajudar? | Estou à disposição para o que precisar.
mail_open: Olá, {name}, | Prezado(a) {name}, | Bom dia, {name},
sign: Atenciosamente, equipe de atendimento. | Um abraço, Carla - Atendimento. | Fico à disposição.
thanks_reply: Por nada! Posso ajudar em algo mais? | Imagina, {name}! Estamos à disposição. | Eu que agradeço! Tenha um ótimo dia.
teams: equipe financeira | equipe de logística | suporte técnico nível 2 | ouvidoria
plans: Plano Essencial | Plano Pro | Plano Empresas
again_pre: já perguntei isso, | de novo: | mais uma vez, | gente, | sério,
again_post: já é a terceira vez que pergunto | ninguém me responde direito | vocês só repetem
hi: oi, boa tarde | olá | bom dia | oi
thanks: ok, obrigado | valeu | beleza, obrigada! | certo, obrigado | ok | obrigado mesmo
ok: ok | certo, e agora? | pronto | feito | beleza, fiz | e agora?
giveup: tá bom, vou esperar então | ok, vou aguardar | tá, fazer o quê
escalate: quero falar com um supervisor | me passa pra alguém que resolva
escalated: Vou transferir você para a supervisão agora; o número do atendimento é {proto}.
ref_tag: {q} (pedido {ref}) | pedido {ref}: {q} | {q} é o {ref}
mail_hi: Prezados, | Boa tarde, | Olá,
mail_ctx: Fiz a compra pelo site na semana passada. | Sou cliente há alguns anos.
mail_bye: Aguardo retorno. Atenciosamente, {name} | Obrigado desde já, {name}
v_first: Para localizar seu cadastro, preciso confirmar alguns dados. Qual o seu {field}?
v_next: Obrigado. Agora preciso do {field}. | Perfeito. Agora me informe o {field}, por favor. | Certo, obrigado. Pode me passar o {field}?
v_retry: Não localizei esse {field}. Pode confirmar, por favor?
v_fields: nome completo | CPF | email cadastrado | número do pedido | telefone com DDD
give: {v} | é {v} | meu {field} é {v} | segue: {v}
fix: opa, errei, o certo é {v} | desculpa, é {v}
similar: e o pedido {ref}? | e o {ref}, já saiu? | agora o {ref}, por favor
status: está em trânsito, com entrega prevista para {date} | foi entregue em {date} | está em separação no estoque e sai até {date} | aguarda a confirmação do pagamento | voltou ao remetente em {date}
s_verb: Agora toque em | Em seguida, abra | Depois clique em | Agora selecione | Entre em
s_el: Configurações | Integrações | Conta | Permissões | Canais | Modelos | Etiquetas | Agenda | Pagamentos | Estoque | Relatórios | Segurança | Backup | Equipes | Automação
s_where: no menu lateral | no topo da tela | no canto direito | na aba Avançado | no rodapé
[en]
remind: You can follow everything in the app under My orders. | This chat is saved to your history.
policy: Please note that every request is logged on your account and you can check it at any time in the app or on the website, under My account, where you will also find the timelines and the full history of this case. | If you prefer, you can also reach us on WhatsApp or by phone, Monday to Saturday from 8 am to 8 pm, and having your account email at hand will help us find your details faster.
v_done: Thanks, your account is verified! How can I help today? | Great, I found your account. What can I do for you?
next: another question: | one more thing, | also, | oh and
st_line: Order {ref} {status}.
greet: Hi {name}! How are you? | Hello {name}, good afternoon! | Hi! This is Carla from support. | Hi {name}! Thanks for reaching out.
empathy: I understand how frustrating this is. | I understand your concern, {name}. | Sorry for the trouble. | Apologies for the wait. | I completely understand, {name}.
hold: One moment, let me check. | Let me look into that. | Bear with me a second.
again: As I mentioned, | Like I said, | Just to confirm, | Looking at it again,
close: Is there anything else I can help you with? | Any other questions? | Anything else I can do for you today? | I'm here if you need anything else.
mail_open: Hi {name}, | Dear {name}, | Hello {name},
sign: Kind regards, the support team. | Best, Carla - Customer Support. | Warm regards.
thanks_reply: You're welcome! Anything else I can help with? | Happy to help, {name}! | My pleasure, have a great day!
teams: billing team | logistics team | tier 2 technical support | customer relations team
plans: Basic plan | Pro plan | Business plan
again_pre: I already asked this, | again: | once more, | seriously, | come on,
again_post: this is the third time I'm asking | nobody is answering me properly
hi: hi there | hello | good morning | hey
thanks: ok thanks | thank you | great, thanks! | cool, thank you | ok | thanks a lot
ok: ok | right, what now? | done | ok done | got it, next? | and now?
giveup: fine, I'll wait then | ok, I'll wait | whatever, I'll wait
escalate: I want to talk to a supervisor | put me through to someone who can fix this
escalated: I'm transferring you to a supervisor now; your case number is {proto}.
ref_tag: {q} (order {ref}) | order {ref}: {q} | {q} it's {ref}
mail_hi: Hello, | Dear support team, | Hi,
mail_ctx: I placed the order on your website last week. | I've been a customer for years.
mail_bye: Looking forward to your reply. Regards, {name} | Thanks in advance, {name}
v_first: To find your account I need to confirm a few details. What's your {field}?
v_next: Thanks. Now I need your {field}. | Great. Next, could you give me your {field}? | Thank you. And your {field}?
v_retry: I couldn't find that {field}. Could you double-check it?
v_fields: full name | ZIP code | account email | order number | phone number
give: {v} | it's {v} | my {field} is {v} | here: {v}
fix: oops, typo, it's {v} | sorry, it's {v}
similar: and order {ref}? | what about {ref}? | now {ref}, please
status: is in transit, expected on {date} | was delivered on {date} | is being picked at the warehouse and ships by {date} | is awaiting payment confirmation | was returned to sender on {date}
s_verb: Now tap | Next, open | Then click | Now select | Go to
s_el: Settings | Integrations | Account | Permissions | Channels | Templates | Labels | Calendar | Payments | Inventory | Reports | Security | Backup | Teams | Automation
s_where: in the side menu | at the top of the screen | on the right | under Advanced | at the bottom
[es]
remind: Puede seguirlo todo en la app, en Mis pedidos. | Esta conversación queda en su historial.
policy: Le recordamos que todas las solicitudes quedan registradas en su cuenta y puede consultarlas en cualquier momento desde la aplicación o la web, en Mi cuenta, donde también verá los plazos y el historial completo de esta gestión. | Si lo prefiere, también puede contactarnos por WhatsApp o por teléfono, de lunes a sábado de 8:00 a 20:00, y tener a mano su correo registrado nos ayudará a localizar sus datos más rápido.
v_done: Gracias, cuenta verificada. ¿En qué puedo ayudarle hoy? | Listo, ya tengo su cuenta. ¿Qué necesita?
next: otra duda: | y una cosa más, | ya que estoy, | ah, y
st_line: El pedido {ref} {status}.
greet: ¡Hola, {name}! ¿Qué tal? | Buenas tardes, {name}. | ¡Hola! Le atiende Carla, de soporte. | Hola, {name}, gracias por escribirnos.
empathy: Entiendo su frustración. | Comprendo su preocupación, {name}. | Lamento las molestias. | Disculpe la espera. | Le entiendo perfectamente, {name}.
hold: Un momento, lo compruebo. | Déjeme revisarlo. | Deme un segundo, por favor.
again: Como le indiqué, | Según lo que revisé, | Le confirmo, | Revisándolo de nuevo,
close: ¿Puedo ayudarle en algo más? | ¿Tiene alguna otra duda? | Quedo a su disposición. | ¿Hay algo más que pueda hacer por usted?
mail_open: Hola, {name}: | Estimado/a {name}: | Buenos días, {name}:
sign: Un saludo, el equipo de atención al cliente. | Atentamente, Carla - Soporte.
thanks_reply: ¡De nada! ¿Algo más en que le pueda ayudar? | Un placer, {name}. | ¡A usted! Que tenga un buen día.
teams: departamento de facturación | equipo de logística | soporte técnico de nivel 2 | atención VIP
plans: Plan Básico | Plan Pro | Plan Empresa
again_pre: ya lo pregunté, | otra vez: | de nuevo, | en serio, | vamos a ver,
again_post: es la tercera vez que lo pregunto | nadie me contesta claro
hi: hola, buenas tardes | hola | buenos días | buenas
thanks: vale, gracias | gracias | perfecto, ¡gracias! | ok, muchas gracias | ok | mil gracias
ok: ok | vale, ¿y ahora? | listo | hecho | vale, ya está | ¿y ahora?
giveup: vale, esperaré entonces | ok, me toca esperar | bueno, qué le vamos a hacer
escalate: quiero hablar con un supervisor | páseme con alguien que lo resuelva
escalated: Le paso ahora con un supervisor; su número de caso es {proto}.
ref_tag: {q} (pedido {ref}) | pedido {ref}: {q} | {q} es el {ref}
mail_hi: Buenas tardes: | Estimados señores: | Hola:
mail_ctx: Hice la compra en su web la semana pasada. | Soy cliente desde hace años.
mail_bye: Quedo a la espera de su respuesta. Saludos, {name} | Gracias de antemano, {name}
v_first: Para localizar su cuenta necesito confirmar unos datos. ¿Cuál es su {field}?
v_next: Gracias. Ahora necesito su {field}. | Perfecto. Ahora indíqueme su {field}, por favor. | De acuerdo, gracias. ¿Me facilita su {field}?
v_retry: No encuentro ese {field}. ¿Puede comprobarlo, por favor?
v_fields: nombre completo | DNI | correo registrado | número de pedido | teléfono
give: {v} | es {v} | mi {field} es {v} | aquí va: {v}
fix: perdón, me equivoqué, es {v} | uy, es {v}
similar: ¿y el pedido {ref}? | ¿y el {ref}, ya salió? | ahora el {ref}, por favor
status: está en tránsito, con entrega prevista el {date} | se entregó el {date} | está en preparación en el almacén y sale antes del {date} | espera la confirmación del pago | se devolvió al remitente el {date}
s_verb: Ahora pulse en | A continuación, abra | Después haga clic en | Ahora seleccione | Entre en
s_el: Ajustes | Integraciones | Cuenta | Permisos | Canales | Plantillas | Etiquetas | Agenda | Pagos | Inventario | Informes | Seguridad | Copia de seguridad | Equipos | Automatización
s_where: en el menú lateral | arriba de la pantalla | a la derecha | en la pestaña Avanzado | abajo
"""  # noqa: E501

Entry = tuple[str, list[str]]
Sections = dict[str, dict[str, list[Entry]]]
STYLE = ("empathy", "close", "sign", "mail_open", "remind", "policy")  # per conversation
ORDER_STYLE = {"pt": "PED-{d}", "en": "ORD-{d}", "es": "PED-{d}"}


def parse_banks(text: str) -> Sections:
    """`@section` / `[lang]` / `marker alternatives` lines (see `cs_loops_text`)."""
    lines: list[str] = []
    for raw in text.strip().splitlines():
        if raw.startswith("+ "):
            lines[-1] += " " + raw[2:]
        else:
            lines.append(raw.strip())
    out: Sections = {}
    section, lang = "", ""
    for line in lines:
        if line.startswith("@"):
            section = line[1:].split()[0]
        elif line.startswith("["):
            lang = line[1:-1]
        else:
            marker, _, rest = line.partition(": ") if line[0].isalpha() else (line[0], "", line[2:])
            out.setdefault(section, {}).setdefault(lang, []).append((marker, rest.split(" | ")))
    return out


def _flat(entries: list[Entry], marker: str) -> list[str]:
    return [alt for m, alts in entries if m == marker for alt in alts]


@dataclass(frozen=True)
class Intent:
    name: str
    ref: str  # what identifies it: "order", "account" or "none"
    class_hint: str
    ask: dict[str, list[str]]
    same: dict[str, list[str]]
    move: dict[str, list[str]]


def _intents() -> dict[str, Intent]:
    heads = [line[1:].split() for line in INTENTS.splitlines() if line.startswith("@")]
    banks = parse_banks(INTENTS)
    return {
        name: Intent(
            name,
            ref,
            hint,
            {lang: _flat(e, "?") for lang, e in banks[name].items()},
            {lang: _flat(e, "=") for lang, e in banks[name].items()},
            {lang: _flat(e, ">") for lang, e in banks[name].items()},
        )
        for name, ref, hint in heads
    }


INTENT_BANK = _intents()
FORM: dict[str, dict[str, list[str]]] = {
    lang: {key: _flat(entries, key) for key, _ in entries}
    for lang, entries in parse_banks(FORMULAS)[""].items()
}


def _topic(alts: list[str]) -> tuple[list[str], str]:
    question, _, answer = alts[-1].partition(" = ")
    return [*alts[:-1], question], answer


TOPICS: dict[str, list[tuple[list[str], str]]] = {
    lang: [_topic(alts) for _, alts in entries]
    for lang, entries in parse_banks(ONBOARDING)[""].items()
}
ORDER_INTENTS = tuple(name for name, i in INTENT_BANK.items() if i.ref == "order")


@dataclass
class Conv:
    """One conversation being built: its values, its formulas and its turns."""

    rng: random.Random
    lang: str
    channel: str
    name: str
    slots: dict[str, str]
    style: dict[str, list[str]]
    turns: list[tuple[str, str]] = field(default_factory=list)
    loops: list[bool] = field(default_factory=list)
    used: list[str] = field(default_factory=list)

    def form(self, key: str) -> list[str]:
        return FORM[self.lang][key]

    def fill(self, template: str, **extra: str) -> str:
        return template.format_map({**self.slots, "name": self.name, **extra})

    def add(self, customer: str, agent: str, loop: bool = False) -> None:
        self.turns.append((customer, agent))
        self.loops.append(loop)


def date_text(rng: random.Random, lang: str, month: int, day: int) -> str:
    name = MONTHS[lang][month]
    if lang == "en":
        return f"{name} {day}"
    return f"{day} de {name}" if rng.random() < 0.7 else f"{day:02d}/{month + 1:02d}"


def proto(rng: random.Random) -> str:
    n = rng.randint(10_000_000, 99_999_999)
    return rng.choice([str(n), f"AT{n}", f"{n // 10_000}-{n % 10_000:04d}"])


def new_conv(rng: random.Random, lang: str, channel: str) -> Conv:
    first, last = cs_values.person_name(rng, lang)
    spoken = channel == "phone"
    order = cs_values.order_value(rng, ORDER_STYLE[lang], spoken, lang)
    mail = cs_values.email_value(rng, first, last, False, lang).canonical
    month, day = rng.randrange(12), rng.randint(1, 18)
    slots = {
        "ref": order.canonical,
        "ref_said": order.surface,
        "acct": mail,
        "last": last,
        "date": date_text(rng, lang, month, day),
        "date2": date_text(rng, lang, month, day + rng.randint(3, 9)),
        "amount": cs_values.amount_value(rng, lang, False).surface,
        "days": str(rng.choice([5, 7, 10, 15])),
        "plan": rng.choice(FORM[lang]["plans"]),
        "team": rng.choice(FORM[lang]["teams"]),
        "proto": proto(rng),
        "month": str(month),
        "day": str(day),
    }
    style = {
        key: rng.sample(FORM[lang][key], min(n, len(FORM[lang][key])))
        for key, n in zip(STYLE, (2, 2, 1, 1, 1, 1), strict=True)
    }
    return Conv(rng, lang, channel, first, slots, style)


# --- the agent's side ----------------------------------------------------------------


def _lead(lead: str, core: str) -> str:
    keep = core.startswith(("I ", "I'", "{"))
    return f"{lead} {core if keep else core[0].lower() + core[1:]}"


def reply(conv: Conv, core: str, *, tense: float = 0.0, wrap: float = 0.45) -> str:
    """The core answer wrapped in this conversation's recurring formulas; email and
    phone replies run longer (reminders, policy paragraphs)."""
    rng, style = conv.rng, conv.style
    long = {"email": 0.75, "phone": 0.4}.get(conv.channel, 0.0)
    greet = not conv.turns and conv.channel != "email" and rng.random() < 0.6
    parts = [rng.choice(conv.form("greet"))] if greet else []
    if rng.random() < 0.2 + 0.5 * tense:
        parts.append(rng.choice(style["empathy"]))
    if conv.channel != "email" and rng.random() < 0.15:
        parts.append(rng.choice(conv.form("hold")))
    parts.append(core)
    parts += [text for text in style["remind"] + style["policy"] if rng.random() < long]
    if rng.random() < max(wrap, long):
        parts.append(rng.choice(style["close"]))
    return frame(conv, " ".join(parts))


def frame(conv: Conv, text: str) -> str:
    """A fixed formula, framed as an email on that channel."""
    if conv.channel != "email":
        return conv.fill(text)
    style = conv.style
    return conv.fill(f"{style['mail_open'][0]}\n\n{text}\n\n{style['sign'][0]}")


def field_value(conv: Conv, index: int) -> str:
    """A piece of data the customer gives: name, document, email, order or phone
    (document and phone are fresh each time: a mistyped one gets corrected)."""
    rng, lang = conv.rng, conv.lang
    if index == 0:
        return f"{conv.name} {conv.slots['last']}"
    if index == 1:
        n = rng.randint(10**8, 10**9 - 1)
        doc = {"pt": f"{n:09d}{rng.randint(10, 99)}", "en": f"{n % 90000 + 10000}"}
        return doc.get(lang, f"{n % 10**8:08d}{rng.choice('TRWAGMYFPDXBNJZ')}")
    if index in (2, 3):  # the conversation's own account and order
        return conv.slots["acct" if index == 2 else "ref_said"]
    return cs_values.phone_value(rng, lang, conv.channel == "phone").surface


def _core(pool: list[str], last: list[str], rng: random.Random) -> str:
    core = rng.choice([c for c in pool if c not in last[-2:]])
    last.append(core)
    return core


def answer(conv: Conv, intent: Intent, said: list[str], *, again: bool, tense: float) -> str:
    core = _core(intent.same[conv.lang], said, conv.rng)
    if intent.ref == "account":
        core = core.replace("{ref}", conv.slots["acct"])
    if again and conv.rng.random() < 0.35:
        core = _lead(conv.rng.choice(conv.form("again")), core)
    return reply(conv, core, tense=tense)


def move(conv: Conv, intent: Intent, moved: list[str]) -> str:
    conv.slots["proto"] = proto(conv.rng)
    month, day = int(conv.slots["month"]), int(conv.slots["day"]) + conv.rng.randint(2, 12)
    conv.slots["date2"] = date_text(conv.rng, conv.lang, month, min(day, 28))
    core = conv.rng.choice([m for m in intent.move[conv.lang] if m not in moved])
    moved.append(core)
    if intent.ref == "account":
        core = core.replace("{ref}", conv.slots["acct"])
    if conv.rng.random() < 0.3:
        core = _lead(conv.form("again")[-1], core)
    return reply(conv, core, tense=0.6)
