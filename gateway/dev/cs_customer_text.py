"""What customers say around the point of their turn, per language (pt, en, es): the
context, complaints, asides and follow-up questions that make a real turn 15-20 words
rather than 5, the connectives of a phone caller's run-on sentences, and the greeting
and signature of an email. None of it holds a fact's value. Plain data, no logic."""

from __future__ import annotations

Blocks = dict[str, list[str]]

CONTEXT: Blocks = {
    "pt": [
        "comprei pelo aplicativo na semana passada",
        "já é a segunda vez que isso acontece comigo",
        "tentei resolver pelo site mas não consegui",
        "liguei ontem e me mandaram falar por aqui",
        "fiquei esperando em casa o dia todo",
        "era presente de aniversário e agora não sei o que fazer",
        "já mandei email e ninguém respondeu",
        "sempre comprei com vocês e nunca tive problema",
        "preciso disso resolvido logo porque vou viajar",
        "no rastreio aparece uma coisa e na prática é outra",
        "minha esposa que fez a compra mas a conta é minha",
        "olhei o extrato do banco hoje de manhã",
        "o atendente anterior disse que ia me retornar e nada",
        "não quero cancelar, só quero receber o que paguei",
        "to trabalhando e só consigo responder de vez em quando",
        "vi no site que o prazo era bem menor",
        "meu vizinho comprou a mesma coisa e chegou antes",
        "não sou muito bom com essas coisas de aplicativo",
        "to bem chateada com essa situação",
        "sinceramente esperava mais de vocês",
        "se precisar de mais algum dado é só falar",
        "já reiniciei o celular e continua igual",
        "queria entender o que aconteceu de fato",
        "não recebi nenhuma notificação sobre isso",
        "paguei o frete mais caro justamente pra chegar rápido",
    ],
    "en": [
        "I ordered through the app last week",
        "this is the second time this has happened to me",
        "I tried sorting it out on the website but couldn't",
        "I called yesterday and they told me to message here",
        "I stayed home all day waiting for it",
        "it was a birthday present and now I don't know what to do",
        "I already emailed and nobody replied",
        "I've always ordered from you and never had a problem",
        "I need this sorted soon because I'm traveling",
        "the tracking says one thing and reality is another",
        "my wife placed the order but it's my account",
        "I checked my bank statement this morning",
        "the last agent said they'd get back to me and never did",
        "I don't want to cancel, I just want what I paid for",
        "I'm at work so I can only reply now and then",
        "the website said it would be much quicker",
        "my neighbor ordered the same thing and got it first",
        "I'm not great with apps, to be honest",
        "I'm pretty upset about all this",
        "honestly I expected better from you guys",
        "let me know if you need anything else from me",
        "I already restarted my phone and it's the same",
        "I'd just like to understand what actually happened",
        "I never got any notification about it",
        "I paid extra for express shipping for exactly this reason",
    ],
    "es": [
        "compré por la aplicación la semana pasada",
        "es la segunda vez que me pasa",
        "intenté arreglarlo en la web pero no pude",
        "llamé ayer y me dijeron que escribiera por aquí",
        "me quedé todo el día en casa esperando",
        "era un regalo de cumpleaños y ahora no sé qué hacer",
        "ya mandé un correo y nadie me contestó",
        "siempre les compro y nunca tuve problemas",
        "necesito que se resuelva pronto porque me voy de viaje",
        "el seguimiento dice una cosa y la realidad es otra",
        "mi mujer hizo la compra pero la cuenta es mía",
        "revisé el extracto del banco esta mañana",
        "el agente anterior dijo que me llamaría y nada",
        "no quiero cancelar, solo quiero recibir lo que pagué",
        "estoy trabajando y contesto cuando puedo",
        "en la web ponía que tardaba mucho menos",
        "no se me dan bien las aplicaciones",
        "estoy bastante molesto con todo esto",
        "la verdad esperaba más de ustedes",
        "si necesitan algún dato más me dicen",
        "ya reinicié el móvil y sigue igual",
        "solo quiero entender qué pasó",
        "no me llegó ninguna notificación",
        "pagué el envío urgente justo para esto",
    ],
}
# Phone callers string their sentences together.
RUN_ON: Blocks = {
    "pt": ["e aí", "e tipo", "então", "aí", "e também", "mas enfim", "e outra coisa"],
    "en": ["and then", "and like", "so", "and also", "but anyway", "and another thing"],
    "es": ["y entonces", "y pues", "o sea", "y también", "pero bueno", "y otra cosa"],
}
EMAIL_OPEN: Blocks = {
    "pt": ["Prezados,", "Olá, equipe,", "Bom dia,", "Boa tarde, tudo bem?"],
    "en": ["Dear support team,", "Hello,", "Hi there,", "Good morning,"],
    "es": ["Estimados,", "Hola,", "Buenos días,", "Buenas tardes,"],
}
EMAIL_CLOSE: Blocks = {
    "pt": ["Aguardo retorno.", "Obrigado desde já.", "Atenciosamente.", "Grata pela atenção."],
    "en": ["Looking forward to hearing from you.", "Thanks in advance.", "Regards.", "Best."],
    "es": ["Quedo a la espera.", "Gracias de antemano.", "Un saludo.", "Atentamente."],
}
PASTE_LEAD: Blocks = {
    "pt": [
        "vou colar aqui o que recebi:",
        "segue abaixo pra vcs verem:",
        "copiei tudo, olha só:",
        "olha o que apareceu:",
    ],
    "en": [
        "pasting what I got below:",
        "here it is so you can see:",
        "I copied the whole thing:",
        "this is what came up:",
    ],
    "es": ["pego aquí lo que me llegó:", "lo copio abajo para que lo vean:", "miren esto:"],
}
