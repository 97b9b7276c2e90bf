"""Who is calling: the tenant (by its API key, stored hashed) and the conversation
context the app declares in its own headers."""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.datastructures import Headers

from gateway.config import Tenant
from gateway.context.types import BASIC_SCOPE
from gateway.errors import AuthenticationFailed, InvalidRequest
from gateway.tenancy.keys import key_hash

MAX_HEADER_VALUE = 256


@dataclass(frozen=True, slots=True)
class Caller:
    tenant: Tenant
    customer: str | None = None
    conversation: str | None = None
    channel: str | None = None
    scopes: tuple[str, ...] = ()
    conversation_class: str | None = None
    subject_tags: tuple[str, ...] = ()


def bearer(headers: Headers) -> str | None:
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


async def authenticate(headers: Headers, find: Callable[[str], Awaitable[Tenant | None]]) -> Tenant:
    """The tenant the bearer key authenticates; `find` maps a key's sha256 to it (the
    registry: tenants.yaml's keys and the live keys made through the admin API)."""
    token = bearer(headers)
    if token is None:
        raise AuthenticationFailed("Missing API key: send 'Authorization: Bearer <tenant key>'.")
    tenant = await find(key_hash(token))
    if tenant is None:
        raise AuthenticationFailed("Incorrect API key provided.")
    return tenant


def authenticate_admin(headers: Headers, admin_key: str | None) -> None:
    token = bearer(headers)
    if (
        admin_key is None
        or token is None
        or not hmac.compare_digest(token.encode(), admin_key.encode())
    ):
        raise AuthenticationFailed("Admin routes need 'Authorization: Bearer <admin key>'.")


def _one(headers: Headers, name: str) -> str | None:
    value = headers.get(name)
    return header_id(value, name) if value is not None else None


def header_id(value: str, param: str) -> str | None:
    """An id as the gateway keeps it: stripped, and UTF-8 where the client sent UTF-8
    (HTTP headers arrive decoded as latin-1: "José" would otherwise be kept as "JosÃ©",
    and a path naming "José" would not find it). One longer than MAX_HEADER_VALUE
    characters is refused, not cut: two customers whose ids differ only past the cut
    would be kept as one, each seeing the other's facts."""
    return path_id(utf8(value), param)


def utf8(value: str) -> str:
    """A header's text as the client wrote it: headers arrive decoded as latin-1, so the
    UTF-8 a client sends ("Cliente José") would read "Cliente JosÃ©"; a value that is not
    UTF-8 was latin-1 after all, and stays as read."""
    with contextlib.suppress(UnicodeError):
        return value.encode("latin-1").decode("utf-8")
    return value


def header_text(headers: Headers, name: str) -> str | None:
    """Header `name`'s text (`utf8`), or None when it is absent."""
    value = headers.get(name)
    return None if value is None else utf8(value)


def path_id(value: str, param: str) -> str | None:
    """An id named in a URL path, which arrives decoded as UTF-8 already: stripped and
    checked as a header's is, never repaired as one (a customer "JosÃ©" would be read as
    "José", and an erasure of the one would delete the other)."""
    value = value.strip()
    if len(value) > MAX_HEADER_VALUE:
        raise InvalidRequest(
            f"'{param}' is {len(value)} characters long; ids are at most {MAX_HEADER_VALUE}.",
            param=param,
            code="id_too_long",
        )
    return value or None


def sent_id(headers: Headers, name: str) -> bytes | None:
    """Header `name` as the client sent it (its bytes, whichever encoding): what to echo
    back of an id `identify` kept (header_id) from it."""
    raw = next((v for k, v in headers.raw if k == name.encode()), None)
    return raw.strip() if raw is not None else None


def _many(headers: Headers, name: str) -> tuple[str, ...]:
    value = header_text(headers, name)
    if not value:
        return ()
    return tuple(s for part in value.split(",") if (s := part.strip()))


def _scopes(headers: Headers) -> tuple[str, ...]:
    """The caller's verified scopes: `basic`, which every caller holds, and the header's."""
    named = _many(headers, "x-customer-scopes")
    return (BASIC_SCOPE, *(s for s in named if s != BASIC_SCOPE))


def identify(headers: Headers, tenant: Tenant) -> Caller:
    return Caller(
        tenant=tenant,
        customer=_one(headers, "x-customer-id"),
        conversation=_one(headers, "x-conversation-id"),
        channel=_one(headers, "x-channel"),
        scopes=_scopes(headers),
        conversation_class=_one(headers, "x-conversation-class"),
        subject_tags=_many(headers, "x-subject-tags"),
    )
