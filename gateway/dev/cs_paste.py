"""Long texts a customer pastes into a chat or an email: an email thread with the
store, an error log from the app, a product description, the terms they are
disputing. 300-1,500 words each, varied per seed, and free of the customer's facts
(a paste is context, never where a labelled value is stated)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from gateway.dev import cs_agent_steps, cs_agent_text, cs_customer_text

SHORTEST, LONGEST = 300, 1500

SUBJECTS = {
    "pt": ["Sua solicitação", "Atualização do pedido", "Protocolo de atendimento", "Reembolso"],
    "en": ["Your request", "Order update", "Your support ticket", "Refund status"],
    "es": ["Su solicitud", "Actualización del pedido", "Su caso de soporte", "Reembolso"],
}
HEADERS = {
    "pt": ("De", "Enviado", "Para", "Assunto"),
    "en": ("From", "Sent", "To", "Subject"),
    "es": ("De", "Enviado", "Para", "Asunto"),
}
SERVICES = ["auth-service", "checkout-api", "session-gw", "orders-api", "push-worker", "cdn-edge"]
LEVELS = ["ERROR", "WARN", "INFO", "DEBUG", "ERROR", "ERROR"]
MESSAGES = [
    "POST /api/v2/session 500 Internal Server Error",
    "token refresh failed: invalid_grant",
    "upstream timed out (110: Connection timed out) while reading response header",
    "java.lang.NullPointerException: Cannot invoke String.length() on null",
    "retrying request attempt={n} backoff_ms={m}",
    "GET /api/v2/me 401 Unauthorized",
    "SSL handshake failed: certificate verify failed",
    "device fingerprint mismatch, forcing logout",
    "cache miss for key user:{n}:profile",
    "rate limit exceeded for client app-android, retry after {m} ms",
]
FRAMES = [
    "at com.store.auth.SessionController.login(SessionController.java:{n})",
    "at com.store.auth.TokenService.refresh(TokenService.java:{n})",
    "at okhttp3.internal.http.RetryAndFollowUpInterceptor.intercept(RetryAndFollowUp.kt:{n})",
    "at android.os.Handler.dispatchMessage(Handler.java:{n})",
    'File "/app/orders/views.py", line {n}, in create_session',
    "at async Promise.all (index {n})",
]
SPEC_KEYS = {
    "pt": [
        "Potência",
        "Voltagem",
        "Capacidade",
        "Material",
        "Peso",
        "Dimensões",
        "Cor",
        "Garantia",
    ],
    "en": ["Power", "Voltage", "Capacity", "Material", "Weight", "Dimensions", "Color", "Warranty"],
    "es": [
        "Potencia",
        "Voltaje",
        "Capacidad",
        "Material",
        "Peso",
        "Dimensiones",
        "Color",
        "Garantía",
    ],
}
PRODUCT_PROSE = {
    "pt": [
        "Design moderno que combina com qualquer ambiente da casa.",
        "Fácil de limpar, com peças removíveis que podem ir à lava-louças.",
        "Sistema antigotejamento e desligamento automático para mais segurança.",
        "Acompanha manual de instruções em português e certificado de garantia.",
        "Ideal para o dia a dia, com acabamento resistente a riscos.",
        "Produto homologado pelo Inmetro.",
        "Não deixe o aparelho ligado sem supervisão.",
        "Imagens meramente ilustrativas, a cor pode variar conforme a tela.",
    ],
    "en": [
        "A modern design that fits any room in the house.",
        "Easy to clean, with removable parts that are dishwasher safe.",
        "Anti-drip system and automatic shut-off for extra safety.",
        "Comes with an instruction manual and a warranty card.",
        "Made for everyday use, with a scratch-resistant finish.",
        "Certified to UL safety standards.",
        "Do not leave the appliance running unattended.",
        "Pictures are for illustration only, colors may vary by screen.",
    ],
    "es": [
        "Diseño moderno que combina con cualquier espacio de la casa.",
        "Fácil de limpiar, con piezas desmontables aptas para lavavajillas.",
        "Sistema antigoteo y apagado automático para mayor seguridad.",
        "Incluye manual de instrucciones y tarjeta de garantía.",
        "Pensado para el día a día, con acabado resistente a arañazos.",
        "No deje el aparato encendido sin supervisión.",
        "Las imágenes son orientativas, el color puede variar según la pantalla.",
    ],
}
CLAUSE = {"pt": "Cláusula", "en": "Section", "es": "Cláusula"}


def paste(rng: random.Random, lang: str, store: str) -> str:
    """A paste of 300-1,500 words (log-uniform), one of the kinds above."""
    target = round(math.exp(rng.uniform(math.log(SHORTEST), math.log(LONGEST))))
    kinds: list[Callable[[random.Random, str, str, int], str]] = [
        _email_thread,
        _error_log,
        _product,
        _terms,
    ]
    return rng.choice(kinds)(rng, lang, store, target)


def _words(parts: list[str]) -> int:
    return sum(len(p.split()) for p in parts)


def _stamp(rng: random.Random) -> str:
    return (
        f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
    )


def _email_thread(rng: random.Random, lang: str, store: str, target: int) -> str:
    sender, sent, to, subject = HEADERS[lang]
    topic = rng.choice(SUBJECTS[lang])
    parts: list[str] = []
    depth = 0
    while _words(parts) < target:
        quote = "> " * depth
        from_store = depth % 2 == 0
        who = f"{store} <no-reply@{store}.com>" if from_store else "me"
        lines = [
            f"{sender}: {who}",
            f"{sent}: {_stamp(rng)}",
            f"{to}: {'me' if from_store else store}",
            f"{subject}: {'Re: ' * min(depth, 3)}{topic}",
        ]
        if from_store:
            body = [rng.choice(cs_agent_text.EMPATHY[lang]), rng.choice(cs_agent_text.HOLD[lang])]
            body += rng.sample(cs_agent_steps.POLICY[lang], 2)
            body.append(rng.choice(cs_agent_text.SIGN_OFF[lang]))
        else:
            body = [rng.choice(cs_customer_text.EMAIL_OPEN[lang])]
            body += [s.capitalize() + "." for s in rng.sample(cs_customer_text.CONTEXT[lang], 3)]
            body.append(rng.choice(cs_customer_text.EMAIL_CLOSE[lang]))
        parts.append("\n".join(quote + line for line in [*lines, "", *body]))
        depth += 1
    return "\n\n".join(parts)


def _error_log(rng: random.Random, lang: str, store: str, target: int) -> str:
    del lang
    lines: list[str] = []
    while _words(lines) < target:
        stamp = (
            _stamp(rng).replace(" ", "T") + f":{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z"
        )
        message = rng.choice(MESSAGES).format(n=rng.randint(2, 9999), m=rng.randint(50, 9000))
        lines.append(
            f"{stamp} {rng.choice(LEVELS)} [{rng.choice(SERVICES)}] "
            f"req={rng.getrandbits(32):08x} app={store} {message}"
        )
        if rng.random() < 0.2:
            lines += [
                "    " + rng.choice(FRAMES).format(n=rng.randint(10, 900))
                for _ in range(rng.randint(2, 6))
            ]
    return "\n".join(lines)


def _product(rng: random.Random, lang: str, store: str, target: int) -> str:
    parts: list[str] = [f"{store} - {rng.choice(SUBJECTS[lang])}"]
    while _words(parts) < target:
        keys = rng.sample(SPEC_KEYS[lang], rng.randint(3, len(SPEC_KEYS[lang])))
        parts.append("\n".join(f"- {k}: {rng.randint(1, 2000)}" for k in keys))
        parts.append(" ".join(rng.sample(PRODUCT_PROSE[lang], rng.randint(2, 5))))
    return "\n\n".join(parts)


def _terms(rng: random.Random, lang: str, store: str, target: int) -> str:
    parts: list[str] = [store.upper()]
    number = rng.randint(1, 9)
    while _words(parts) < target:
        body = " ".join(rng.sample(cs_agent_steps.POLICY[lang], 2))
        parts.append(f"{CLAUSE[lang]} {number}.{rng.randint(1, 9)} {body}")
        number += 1
    return "\n\n".join(parts)
