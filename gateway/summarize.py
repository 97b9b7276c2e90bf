"""Folding turns into a running summary, and pulling durable facts out of them. Pure.

The extractive summarizer is the fallback when no summarizer model is configured or the
call fails: it keeps the sentences that carry identifiers, numbers, amounts, dates,
emails, names and commitments, plus the first sentence of every customer message (what
they asked for). A summary over its ceiling is recompressed by dropping whole sentences,
least informative and oldest first: never cut mid-sentence.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gateway.window import Fact

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_IDENTIFIER = re.compile(r"\b[A-Z]{2,}[-_]?[A-Z0-9]*\d[A-Z0-9-]*\b|\b\d{4,}\b")
_NUMBER = re.compile(r"\d")
_AMOUNT = re.compile(
    r"[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|BRL|dollars?|euros?)\b", re.I
)
_DATE = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}\b|\btomorrow\b|\bnext week\b",
    re.I,
)
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_COMMITMENT = re.compile(
    r"\b(?:I|we)(?:'ll| will| shall| can| promise)\b|\bwill be\b"
    r"|\brefund|\breplace|\bescalat|\bcredit",
    re.I,
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
ROLE_LABEL = {"user": "customer", "assistant": "agent", "tool": "tool"}


def message_text(message: Any) -> str:
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _score(sentence: str, first_of_customer: bool) -> int:
    score = 2 if first_of_customer else 0
    if _IDENTIFIER.search(sentence):
        score += 3
    if _EMAIL.search(sentence):
        score += 3
    if _AMOUNT.search(sentence) or _DATE.search(sentence):
        score += 2
    elif _NUMBER.search(sentence):
        score += 1
    if _COMMITMENT.search(sentence):
        score += 2
    if _NAME.search(sentence):
        score += 1
    return score


@dataclass(frozen=True)
class _Sentence:
    label: str
    text: str
    score: int


_LONG = 400  # characters: a "sentence" this long is a paste, kept by what it mentions
_MENTIONS = (_IDENTIFIER, _EMAIL, _AMOUNT, _DATE)


def _condense(text: str) -> str:
    """An overlong sentence, reduced to the identifiers, amounts, dates and emails in it,
    so a summary neither loses them nor cuts a sentence in the middle."""
    found: list[str] = []
    for pattern in _MENTIONS:
        for match in pattern.finditer(text):
            if match.group(0) not in found:
                found.append(match.group(0))
    return f"(a long message mentioning {', '.join(found[:20])})" if found else ""


def _sentences(turns: Sequence[Any]) -> list[_Sentence]:
    out: list[_Sentence] = []
    seen: set[str] = set()
    for message in turns:
        role = message.get("role") if isinstance(message, dict) else None
        label = ROLE_LABEL.get(str(role), str(role))
        parts = [s.strip() for s in _SENTENCE.split(message_text(message)) if s.strip()]
        for n, part in enumerate(parts):
            score = _score(part, first_of_customer=(n == 0 and label == "customer"))
            text = _condense(part) if len(part) > _LONG else part
            if text and score >= 2 and text not in seen:
                seen.add(text)
                out.append(_Sentence(label, text, score))
    return out


def _parse_summary(summary: str) -> list[_Sentence]:
    """A previous summary, back into scored sentences (one `label: text` per line)."""
    out = []
    for line in summary.splitlines():
        label, sep, rest = line.partition(": ")
        if not sep:
            label, rest = "note", line
        for text in (s.strip() for s in _SENTENCE.split(rest) if s.strip()):
            out.append(_Sentence(label, text, _score(text, False) + 1))  # already chosen once
    return out


def _render(sentences: Sequence[_Sentence]) -> str:
    lines: list[str] = []
    for s in sentences:
        if lines and lines[-1].startswith(s.label + ": "):
            lines[-1] += " " + s.text
        else:
            lines.append(f"{s.label}: {s.text}")
    return "\n".join(lines)


def fit(sentences: list[_Sentence], ceiling: int, count: Callable[[str], int]) -> str:
    """Keep whole sentences, most informative first (newest first among equals), skipping
    any that does not fit, so one oversized sentence cannot push out all the others."""
    text = _render(sentences)
    if count(text) <= ceiling:
        return text
    order = sorted(range(len(sentences)), key=lambda i: (-sentences[i].score, -i))
    kept: set[int] = set()
    used = 0
    for index in order:
        cost = count(f"{sentences[index].label}: {sentences[index].text}") + 1
        if used + cost <= ceiling:
            kept.add(index)
            used += cost
    return _render([s for i, s in enumerate(sentences) if i in kept])


def extractive_summary(
    previous: str, turns: Sequence[Any], ceiling: int, count: Callable[[str], int]
) -> str:
    return fit(_parse_summary(previous) + _sentences(turns), ceiling, count)


def recompress(summary: str, ceiling: int, count: Callable[[str], int]) -> str:
    """Bring any summary (a model's too) under its ceiling without cutting a sentence."""
    if count(summary) <= ceiling:
        return summary
    return fit(_parse_summary(summary), ceiling, count)


SUMMARIZER_INSTRUCTIONS = (
    "You maintain the running summary of a customer-service conversation for the agent "
    "that continues it. Merge the previous summary with the new turns. Keep who the "
    "customer is, what they asked for, every identifier (order, invoice, SKU, ticket "
    "numbers, emails), amounts, dates, and every commitment the agent made. Write short "
    "plain sentences, one line per speaker, as 'customer: ...' and 'agent: ...'. "
    "Stay under {limit} tokens. Output only the summary."
)


def summarizer_messages(previous: str, turns: Sequence[Any], limit: int) -> list[dict[str, str]]:
    lines = [
        f"{ROLE_LABEL.get(str(m.get('role')), m.get('role'))}: {message_text(m)}"
        for m in turns
        if isinstance(m, dict) and message_text(m)
    ]
    body = f"Previous summary:\n{previous or '(none)'}\n\nNew turns:\n" + "\n".join(lines)
    return [
        {"role": "system", "content": SUMMARIZER_INSTRUCTIONS.format(limit=limit)},
        {"role": "user", "content": body},
    ]


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern[str]
    tags: tuple[str, ...]
    scope: str


def redact(text: str, patterns: Sequence[Pattern], scopes: Sequence[str]) -> str:
    """Withhold what a pattern above the caller's scopes would find (e.g. an email in an
    earlier episode's summary, shown to a customer not verified for it)."""
    for pattern in patterns:
        if pattern.scope not in scopes:
            text = pattern.regex.sub(f"[withheld {pattern.name.replace('_', ' ')}]", text)
    return text


def extract_facts(
    turns: Sequence[Any], patterns: Sequence[Pattern], channel: str, now: float
) -> list[Fact]:
    """Facts the declared patterns find in turns about to leave the window."""
    found: dict[str, Fact] = {}
    for message in turns:
        role = message.get("role") if isinstance(message, dict) else None
        who = "the customer" if role == "user" else "the agent" if role == "assistant" else "a tool"
        for pattern in patterns:
            for match in pattern.regex.finditer(message_text(message)):
                value = match.group(0)
                fid = hashlib.blake2b(f"{pattern.name}:{value}".encode(), digest_size=8).hexdigest()
                if fid not in found:
                    found[fid] = Fact(
                        id=fid,
                        text=f"{pattern.name.replace('_', ' ')}: {value} (mentioned by {who})",
                        tags=pattern.tags,
                        scope=pattern.scope,
                        source_channel=channel,
                        created_at=now,
                    )
    return list(found.values())
