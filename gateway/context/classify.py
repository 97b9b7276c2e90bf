"""Which class a conversation belongs to: pure, from the header, the rules and the
class it already had."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gateway.context.content_memo import ContentMemo
from gateway.context.linear_regex import LinearPattern, compile_linear
from gateway.context.policy import PolicyFile
from gateway.context.summaries import SCAN_TOTAL, clip_text
from gateway.errors import InvalidRequest
from gateway.messages import texts_of


@dataclass(frozen=True)
class CompiledRule:
    to_class: str
    channels: frozenset[str]
    models: frozenset[str]
    keywords: LinearPattern | None  # every keyword in one pass over the text
    patterns: tuple[LinearPattern, ...]

    def matches(self, channel: str | None, model: str, text: bytes) -> bool:
        if self.channels and (channel or "") not in self.channels:
            return False
        if self.models and model not in self.models:
            return False
        if self.keywords is None and not self.patterns:
            return True
        if self.keywords is not None and self.keywords.search(text):
            return True
        return any(p.search(text) for p in self.patterns)


# Texts whose rule scan is remembered: a request sent again (a client's retry, a load
# tool, every turn of a conversation re-read) is classified once per replica.
SCANS_KEPT = 1024
_NONE = ""  # no rule matched (a memo holds no None)


@dataclass(frozen=True)
class Classifier:
    rules: tuple[CompiledRule, ...]
    priorities: dict[str, int]
    default: str
    # (channel, model, the scanned text's length and hash) -> the first rule's class
    _scans: ContentMemo[str] = field(
        default_factory=lambda: ContentMemo(SCANS_KEPT), compare=False, repr=False
    )

    @classmethod
    def from_policy(cls, policy: PolicyFile) -> Classifier:
        rules = tuple(
            CompiledRule(
                to_class=r.to_class,
                channels=frozenset(r.channels),
                models=frozenset(r.models),
                keywords=_any_of(r.keywords),
                patterns=tuple(compile_linear(p, ignore_case=True) for p in r.regex),
            )
            for r in policy.rules
        )
        priorities = {name: c.priority or 0 for name, c in policy.classes.items()}
        return cls(rules, priorities, policy.default_class)

    def classify(
        self,
        *,
        header: str | None,
        channel: str | None,
        model: str,
        user_texts: Iterable[str],
        previous: str | None,
    ) -> str:
        """The header wins; else the first matching rule, but a conversation never moves
        to a class of lower or equal priority than the one it has."""
        if header is not None:
            if header not in self.priorities:
                raise InvalidRequest(
                    f"X-Conversation-Class {header!r} is not a configured class "
                    f"({', '.join(sorted(self.priorities))}).",
                    param="X-Conversation-Class",
                )
            return header
        found = self._first_rule(channel, model, _scanned(user_texts)) or None
        if previous is not None and previous in self.priorities:
            if found is None or self.priorities[found] <= self.priorities[previous]:
                return previous
            return found
        return found or self.default

    def _first_rule(self, channel: str | None, model: str, scanned: str) -> str:
        """The class of the first rule that matches ("" for none), remembered per text:
        each rule is an RE2 search, and each search lets go of the GIL, which the
        store's threads then hold a while (23% of a repeated request's samples)."""
        key = (channel or "", model, len(scanned), hash(scanned))
        found = self._scans.get(key)
        if found is None:
            # Rules only ask whether they match: RE2 reads UTF-8 bytes encoded once,
            # instead of encoding the text again for every rule's search.
            text = scanned.lower().encode()
            rule = next((r for r in self.rules if r.matches(channel, model, text)), None)
            found = rule.to_class if rule is not None else _NONE
            self._scans.put(key, found)
        return found


def _scanned(texts: Iterable[str]) -> str:
    """What rules look at: each text clipped as facts are (gateway.context.summaries), and at
    most SCAN_TOTAL characters of them all, oldest and newest, so a first turn with a
    history of megabytes costs no more than a long message."""
    text = " ".join(clip_text(t) for t in texts)
    if len(text) <= SCAN_TOTAL:
        return text
    return text[: SCAN_TOTAL // 2] + " " + text[-SCAN_TOTAL // 2 :]


def user_texts(messages: Sequence[object], last_only: bool) -> list[str]:
    """Text of the user's messages: the latest one, or all (a conversation's first turn)."""
    texts = texts_of(messages, "user")
    return texts[-1:] if last_only else texts


def _any_of(keywords: list[str]) -> LinearPattern | None:
    """The keywords as one RE2 alternation: one linear pass, however many there are."""
    if not keywords:
        return None
    return compile_linear("|".join(re.escape(k.lower()) for k in keywords), ignore_case=True)
