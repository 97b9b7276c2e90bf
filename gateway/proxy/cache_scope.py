"""Each tenant's prompts open with a prefix of its own, so no two tenants share the
provider's prompt cache.

Every tenant reaches the provider with the gateway's one key, so the provider's prompt
cache (shared across an account) is shared by all of them, and the `cached_tokens` a
reply reports tells one tenant whether another sent the same prefix before: a guess at
another's system prompt comes back cached exactly when it is right. A cache hit needs
an exact match of the prompt from its first token on, so a few tokens put first, the same
on each of one tenant's calls and different for every tenant, leave each tenant its own
cache and no other's: its `salt`, an HMAC of the tenant's name under a server secret
(another tenant, or anyone else using the same provider account, can neither compute it
nor make the gateway send it for them). A client's `prompt_cache_key` (routing only) is
made the tenant's own as well.

What the salt is put in front of: the text of a chat window's first message (its
opening system or developer message, else its first customer message: no role is
added), a Responses call's
`instructions` (which the model reads before its input) and each legacy completion
prompt. Replies that echo the request (a Response's `instructions` and
`prompt_cache_key`, a completion's `echo`) are given back as the client sent them.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class TenantScope:
    salt: str  # the text every prompt of the tenant opens with
    key_scope: str  # what its prompt_cache_keys are prefixed with

    def chat(self, messages: list[Any]) -> list[Any]:
        """The window with the salt first: in front of its first message's text, whatever
        its role (an opening system or developer message stays one instruction; a window
        without one gets no system message it did not send, which some models and chat
        templates refuse: o1-mini, Gemma's), else, with no text to put it in front of, as
        a system message of its own."""
        first = messages[0] if messages else None
        if isinstance(first, dict):
            content = first.get("content")
            if isinstance(content, str):
                return [{**first, "content": self.salt + SEPARATOR + content}, *messages[1:]]
            if isinstance(content, list):
                part = {"type": "text", "text": self.salt}
                return [{**first, "content": [part, *content]}, *messages[1:]]
        return [{"role": "system", "content": self.salt}, *messages]

    def responses(self, body: dict[str, Any]) -> None:
        """`instructions` (a developer message the model reads before the input) opened
        with the salt, or the salt alone where the call gives none."""
        instructions = body.get("instructions")
        if isinstance(instructions, str):
            body["instructions"] = self.salt + SEPARATOR + instructions
        elif instructions is None:
            body["instructions"] = self.salt
        self.cache_key(body)

    def completions(self, body: dict[str, Any], encode: Callable[[str], list[int]]) -> None:
        """Every prompt opened with the salt: a text, each text of a list, and a prompt of
        token ids with the salt's ids in the model's encoding (`encode`)."""
        prompt = body.get("prompt")
        if isinstance(prompt, str):
            body["prompt"] = self.salt + SEPARATOR + prompt
        elif isinstance(prompt, list) and prompt:
            if all(isinstance(t, int) for t in prompt):
                body["prompt"] = [*encode(self.salt + SEPARATOR), *prompt]
            else:
                body["prompt"] = [self._prompt(p, encode) for p in prompt]
        self.cache_key(body)

    def _prompt(self, prompt: Any, encode: Callable[[str], list[int]]) -> Any:
        if isinstance(prompt, str):
            return self.salt + SEPARATOR + prompt
        if isinstance(prompt, list) and all(isinstance(t, int) for t in prompt):
            return [*encode(self.salt + SEPARATOR), *prompt]
        return prompt

    def cache_key(self, body: dict[str, Any]) -> None:
        """A client's `prompt_cache_key` made the tenant's: of a fixed length, so two
        tenants' keys never meet however they are chosen."""
        key = body.get("prompt_cache_key")
        if isinstance(key, str) and key:
            body["prompt_cache_key"] = self.scoped_key(key)

    def scoped_key(self, key: str) -> str:
        digest = hashlib.blake2b(key.encode(), digest_size=16).hexdigest()
        return f"{self.key_scope}-{digest}"

    def replier(self, client_key: Any = None) -> Callable[[bytes], bytes]:
        """What gives a reply (or one stream event) back as if the call had gone as the
        client sent it: the salt taken out of what it echoes (a Response's
        `instructions`, a completion's `echo`), and its `prompt_cache_key`, the client's
        own (`client_key`) in place of the tenant's."""
        salt = orjson.dumps(self.salt)  # as the reply's JSON writes it
        pairs = [
            (salt[1:-1] + orjson.dumps(SEPARATOR)[1:-1], b""),  # before the client's text
            (salt, b"null"),  # the salt alone: the client sent none
        ]
        if isinstance(client_key, str) and client_key:
            pairs.append((orjson.dumps(self.scoped_key(client_key)), orjson.dumps(client_key)))
        markers = [salt[1:-1], *(said for said, _ in pairs[2:])]

        def given_back(data: bytes) -> bytes:
            if not any(m in data for m in markers):
                return data
            for said, sent in pairs:
                data = data.replace(said, sent)
            return data

        return given_back


class CacheScopes:
    """Each tenant's scope; None for every tenant with no `secret` (`prompt_cache: shared`)."""

    def __init__(self, secret: bytes | None) -> None:
        self._secret = secret
        self._scopes: dict[str, TenantScope] = {}

    def of(self, tenant: str) -> TenantScope | None:
        if self._secret is None:
            return None
        scope = self._scopes.get(tenant)
        if scope is None:
            if len(self._scopes) >= 4096:
                self._scopes.clear()
            scope = self._scopes[tenant] = _scope(self._secret, tenant)
        return scope

    def chat(self, tenant: str, messages: list[Any]) -> list[Any]:
        """A chat call's messages as the tenant's go upstream: the gateway's own calls
        on its behalf (the summarizer's) open with its salt too."""
        scope = self.of(tenant)
        return messages if scope is None else scope.chat(messages)


def _scope(secret: bytes, tenant: str) -> TenantScope:
    def mac(label: bytes) -> str:
        return hmac.new(secret, label + b"\0" + tenant.encode(), hashlib.sha256).hexdigest()

    # 64 bits: no two tenants' salts meet; ~9 tokens in OpenAI's encodings.
    return TenantScope(f"[cache-scope {mac(b'prompt-salt')[:16]}]", mac(b"cache-key")[:12])


def scope_secret(provider_key: str | None, admin_key: str | None) -> bytes:
    """The secret salts are made under: the provider key (every replica holds it, no
    tenant does), else the admin key; else none, where the salts still differ per tenant
    but whoever knows a tenant's name can compute its salt."""
    for secret in (provider_key, admin_key):
        if secret:
            return b"gateway-cache-scope\0" + secret.encode()
    return b"gateway-cache-scope\0"
