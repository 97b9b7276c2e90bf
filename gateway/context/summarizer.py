"""Folding turns into a summary: one call to a small model when one is configured, the
extractive summarizer when not, or when the call fails or times out.

The model call goes through the same upstream seam as every other call and is booked to
the tenant like any other (route `summarizer`), estimated if it was cut short.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from gateway import offload
from gateway.context.content_memo import ContentMemo, content_key
from gateway.context.conversation_record import ConversationRecord
from gateway.context.episode_card import episode_card, unquoted
from gateway.context.model_answers import kept_card, kept_summary
from gateway.context.policy import Policies
from gateway.context.summaries import (
    card_messages,
    extractive_summary,
    recompress,
    summarizer_messages,
)
from gateway.context.types import Fact, WindowPolicy
from gateway.errors import GatewayError
from gateway.ledger.accounting import Accountant
from gateway.ledger.tokens import TokenCounter
from gateway.ledger.usage import UsageBound
from gateway.messages import message_text, role
from gateway.offload import content_chars
from gateway.ops.metrics import GatewayMetrics
from gateway.proxy.identity import Caller
from gateway.proxy.upstream import Upstream, ceiling_key
from gateway.spend.guard import SpendCeilingReached, SpendGuard, WorstCase
from gateway.throttled_log import warn_throttled

log = logging.getLogger("gateway.context.summarizer")
ROUTE = "summarizer"
FOLDS_KEPT = 256  # extractive summaries remembered by content, per process
# The most of a reply read: a token is a few bytes of text, escaped in JSON at most ~12
# (a \uXXXX pair), plus the envelope and usage. A longer reply is no summary of `limit`
# tokens (16 MB of one stalled the event loop 23 s in recompressing it): a bad answer.
REPLY_BYTES_PER_TOKEN = 32
REPLY_SLACK = 4096


class Folded(NamedTuple):
    """A running summary made: its text ("" when nothing fits), whether it had to be
    recompressed, and what its summarizer model's call booked, in units (to the
    conversation it summarizes: part of that conversation's cost)."""

    text: str
    recompressed: bool
    cost_units: int = 0


class Summarizer:
    def __init__(
        self,
        upstream: Upstream,
        accountant: Accountant,
        tokens: TokenCounter,
        policies: Policies,
        guard: SpendGuard,
        metrics: GatewayMetrics,
        tier: str = "default",
        salted: Callable[[str, list[Any]], list[Any]] = lambda _tenant, messages: messages,
    ) -> None:
        self._upstream = upstream
        # Its calls' messages as the tenant's own go upstream (their prompt-cache salt:
        # gateway.proxy.cache_scope): a summary of one tenant's turns shares no cached
        # prefix with another's, whose booked cached tokens would tell them it was sent.
        self._salted = salted
        # The service tier its calls are held and booked at: they name none, so the one
        # the provider account serves them at (upstream.default_service_tier), as chat's.
        self._tier = tier
        self._calls = metrics.summarizer_calls
        self._accountant = accountant
        self._tokens = tokens
        self._policies = policies
        self._guard = guard
        # Extractive folds by content: an anonymous app that resends one long history
        # starts a conversation of its own each time (gateway.context.conversation_record) and
        # would summarize the same turns from scratch on every request.
        self._folds: ContentMemo[Folded] = ContentMemo(FOLDS_KEPT)

    def _count(self, model: str) -> Any:
        return lambda text: self._tokens.text_tokens(model, text)

    async def fold(
        self, caller: Caller, previous: str, turns: Sequence[Any], ceiling: int, model: str
    ) -> Folded:
        """The new running summary, under `ceiling`."""
        settings = self._policies.summarizer(caller.tenant.name)
        count = self._count(model)
        text, spent = None, 0
        if settings.model:
            limit = min(ceiling, settings.max_tokens)
            answer, spent = await self._call(
                caller,
                settings.model,
                settings.timeout_s,
                limit,
                summarizer_messages(previous, turns, limit),
            )
            if answer is not None:
                text = await offload.sized(
                    content_chars(turns), kept_summary, answer, previous, turns
                )
                self._kept(text is not None, "summary not kept: extractive fallback")
        if text is None:
            key = content_key((caller.tenant.name, model, str(ceiling), previous), turns)
            found = self._folds.get(key)
            if found is None:
                found = Folded(
                    *await offload.scanning(
                        content_chars(turns), _extractive, previous, turns, ceiling, count
                    )
                )
                self._folds.put(key, found)
            return found._replace(cost_units=spent)
        # "" when nothing fits: the caller keeps the turns
        return Folded(recompress(text, ceiling, count), count(text) > ceiling, spent)

    async def appended(
        self,
        caller: Caller,
        previous: str,
        turns: Sequence[Any],
        policy: WindowPolicy,
        count: Callable[[str], int],
        model: str,
    ) -> Folded:
        """The running summary `previous` with the leaving `turns` folded in: appended at
        its end, so the prompt up to the older summary stays a prefix the provider has
        cached. Past the class's `summary_ceiling` it is
        rewritten down to its `low_water` mark (that compaction loses the cached prefix;
        the next ones append again)."""
        ceiling, low_water = policy.summary_ceiling, policy.low_water
        # A fold gets a share of the room between the low-water mark and the ceiling, so
        # a rewritten summary takes at least two folds before it is rewritten again.
        part = await self.fold(
            caller, "", turns, max(int(ceiling * (1 - low_water) / 2), 60), model
        )
        if not part.text or not previous:
            return part
        summary = f"{previous}\n{part.text}"
        if count(summary) <= ceiling:
            return part._replace(text=summary)
        shorter = recompress(summary, int(ceiling * low_water), count) or part.text
        return Folded(shorter, True, part.cost_units)

    async def card(
        self,
        caller: Caller,
        episode: EpisodeSource,
        facts: Sequence[Fact],
        ceiling: int,
        model: str,
        withhold: Callable[[str], str],
    ) -> tuple[str, str]:
        """A finished conversation as the short cards later conversations get: the
        deterministic card of gateway.context.episode_card, and the one the summarizer
        model wrote when one is configured ("" when none is, or its call fails, or its
        card is not kept). Only a caller holding every scope the customer's facts use is
        shown the model's (gateway.context.episodes): it read turns and a summary (a
        model's too) that may restate verified data in forms no redaction by value finds
        ("born 2 March 1985", "ana dot souza at example dot com"). It is shown the draft,
        summary and turns through `withhold` all the same (what a `basic` caller may
        not see taken out)."""
        count = self._count(model)
        made = episode_card(
            episode.channel, episode.ended_at, facts, episode.turns, episode.summary, ceiling, count
        )
        settings = self._policies.summarizer(caller.tenant.name)
        if not settings.model:
            return made, ""
        limit = min(ceiling, settings.max_tokens)
        draft, summary = withhold(made), withhold(episode.summary)
        turns = [{"role": role(m), "content": withhold(message_text(m))} for m in episode.turns]
        messages = card_messages(draft, summary, turns, limit)
        # booked to the ended conversation's customer and id (`on_behalf_of`); its
        # record, ended, does not add it to the cost it reports
        text, _ = await self._call(caller, settings.model, settings.timeout_s, limit, messages)
        if text is None:
            return made, ""
        text = kept_card(text, turns, summary, draft)
        self._kept(text is not None, "card not kept: deterministic card")
        if text is None:
            return made, ""
        header = made.split("] ", 1)[0] + "] " if made.startswith("[") else ""
        return made, recompress(header + unquoted(text, turns), ceiling, count)

    def writes_cards(self, tenant: str) -> bool:
        """Whether a summarizer model writes the tenant's cards."""
        return bool(self._policies.summarizer(tenant).model)

    def _kept(self, kept: bool, why: str) -> None:
        self._calls.labels("kept" if kept else "not_kept").inc()
        if not kept:
            warn_throttled(log, "summarizer model's %s", why)

    async def _call(
        self, caller: Caller, model: str, timeout_s: float, limit: int, messages: list[Any]
    ) -> tuple[str | None, int]:
        """The model's answer (None: none, or none to keep) and what the call booked."""
        messages = self._salted(caller.tenant.name, messages)
        estimate = self._tokens.raw_message_tokens(model, messages)
        # Held and bounded as a chat call is (gateway.proxy.chat_cost): its input in the
        # provider's tokens, its one reply's ceiling; a report past them is not believed.
        worst = WorstCase.of(estimate, self._tokens.factor(model), limit)
        bound = UsageBound(worst.output_tokens, worst.input_tokens)
        try:  # the summary is spend too: at the ceiling it comes from the extractive one
            spend = await self._guard.reserve(
                caller, model, worst.input_tokens, limit, tier=self._tier
            )
        except SpendCeilingReached:
            self._calls.labels("refused").inc()
            return None, 0
        if spend.degraded_from:
            await self._guard.release(spend)
            self._calls.labels("refused").inc()
            return None, 0
        body = orjson.dumps({"model": model, "messages": messages, ceiling_key(model): limit})
        outcome = await self._request(body, timeout_s, limit * REPLY_BYTES_PER_TOKEN + REPLY_SLACK)
        usage, spent = None, 0
        if outcome.unread:  # as a chat reply never read: its ceiling may have been billed
            usage = self._accountant.unread(model, estimate, bound)
        elif outcome.billable:
            text = outcome.text or ""
            usage = self._accountant.usage(model, outcome.usage, estimate, lambda: text, bound)
        if usage is None:
            await self._guard.release(spend)
        else:
            # an unpriced model under `price_as` is booked at that model's price, as chat's
            record = await self._accountant.book(
                caller,
                model,
                usage,
                ROUTE,
                budgets=spend.budgets,
                reservation=spend.id,
                fallback_model=spend.priced_as,
                tier=self._tier,
                held_tier=self._tier,
                at=spend.at,
            )
            spent = record.cost_units or 0
        if outcome.text is None:
            self._calls.labels("not_kept" if outcome.read else "failed").inc()
        return outcome.text, spent

    async def _request(self, body: bytes, timeout_s: float, most: int) -> _Outcome:
        """The model's answer, read up to `most` bytes (a longer one is a bad answer)."""
        outcome = _Outcome()
        try:
            async with asyncio.timeout(timeout_s):
                response = await self._upstream.send(
                    "POST",
                    self._upstream.url("/v1/chat/completions", b""),
                    self._upstream.headers([(b"content-type", b"application/json")]),
                    body,
                )
                outcome.billable = response.is_success  # an error status is not billed
                outcome.unread = response.is_success  # until its answer is read
                raw = await self._upstream.read(response, most)
            if not response.is_success:
                warn_throttled(
                    log, "summarizer model answered %s: extractive fallback", response.status_code
                )
                return outcome
            obj = orjson.loads(raw)
            if not isinstance(obj, dict):
                raise TypeError("reply is not a JSON object")
            outcome.unread = False
            outcome.usage = obj.get("usage")
            choice = obj["choices"][0]
            content = choice["message"]["content"]
            outcome.read = True
            # A summary cut off at max_tokens may end mid-sentence: not good enough.
            if (
                isinstance(content, str)
                and content.strip()
                and choice.get("finish_reason") != "length"
            ):
                outcome.text = content.strip()
        except GatewayError as exc:
            outcome.billable = outcome.billable or exc.reached_upstream
            warn_throttled(log, "summarizer model failed (%s): extractive fallback", exc.code)
        except TimeoutError:
            # Cut short after it was sent: the provider writes (and bills) it on.
            outcome.billable = outcome.unread = True
            warn_throttled(log, "summarizer model timed out: extractive fallback")
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
            warn_throttled(
                log, "summarizer model answered oddly (%s): fallback", type(exc).__name__
            )
        return outcome


def on_behalf_of(caller: Caller, record: ConversationRecord) -> Caller:
    """The caller a summarizer call about `record` is held and booked as: its customer and
    conversation, whichever request made the call (a `POST .../close` naming no customer,
    a turn of the customer's next conversation wanting this one's card)."""
    customer = record.customer or caller.customer
    return dataclasses.replace(caller, customer=customer, conversation=record.id)


@dataclass(frozen=True)
class EpisodeSource:
    """What is left of a finished conversation to make its card from."""

    channel: str
    ended_at: float
    turns: Sequence[Any]  # its opening and the turns still verbatim
    summary: str  # its running summary


@dataclass
class _Outcome:
    text: str | None = None
    usage: Any = None
    billable: bool = False
    unread: bool = False  # answered (or abandoned) but its answer never read
    read: bool = False  # its answer was read (it may still be empty or cut short)


def _extractive(
    previous: str, turns: Sequence[Any], ceiling: int, count: Callable[[str], int]
) -> tuple[str, bool]:
    """The extractive summary, and whether it had to drop what a plain merge kept."""
    raw = previous + "\n" + "\n".join(message_text(t) for t in turns) if previous else ""
    return extractive_summary(previous, turns, ceiling, count), bool(raw) and count(raw) > ceiling
