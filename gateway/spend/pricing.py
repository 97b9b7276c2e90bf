"""Prices: genai-prices' bundled data, and a YAML table for models it does not know.

Money is `Decimal`, quantized to 1e-10 USD so sums stored as integers stay exact.
A model with no price returns None: the caller books the tokens and counts it as
unpriced, never as $0. Audio tokens and web searches are priced at genai-prices' audio
and per-search rates; the config table has none (there audio goes at the text price and
searches unpriced, and `lacks_rate` tells the spend guard). Audio on a model genai-prices
prices without a rate for it (gpt-4o-audio-preview has text rates only) is billed at a
rate nobody here knows, OpenAI's audio rates being 13 to 16 times its text ones: such a
call is unpriced, never booked at the text rate. An image model's input image tokens,
the seconds a transcription model heard and the characters a speech model read are
priced at genai-prices' rates for them (`gateway.spend.media_prices`); a price without
the rate for seconds or characters a call bills (the config table has none) leaves it
unpriced, never $0, while a table prices image tokens at its input rate.

A service tier (`service_tier`: "priority", "flex", ...) is priced at genai-prices' rates
for it where the model has them. Without them, a tier billed at most at the standard
rates ("default", "auto", "flex", "scale", "batch") is priced at those; any other
("priority", "fast") bills more than the standard rates say by an amount nobody here
knows: unpriced, never understated.

A config table entry prices its model's dated snapshots too (`gpt-4o` prices the
`gpt-4o-2024-08-06` an OpenAI or Azure reply names), unless the table lists the snapshot
itself: the operator's price wins over genai-prices' for the model it names.

A price is read at the call's time (`at`: the booking's time for a booking, the
reservation's for a hold; now when not given): genai-prices dates its price changes and
prices some models by the time of day (DeepSeek's off-peak half price). Which model a
name is, is looked up once; a model whose prices no time changes keeps its price (and
its plain rates) cached, the others are resolved at each call.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from genai_prices import Usage, calc_price, data_snapshot
from genai_prices.types import StartDateConstraint, TimeOfDateConstraint
from pydantic import Field

from gateway.ledger.usage import TokenUsage
from gateway.spend.media_prices import billed_by_units, has_media_rates, media_fields
from gateway.spend.money import COST_QUANTUM
from gateway.yamlfile import Strict

log = logging.getLogger("gateway.spend.pricing")


class PriceEntry(Strict):
    """USD per million tokens, for models genai-prices does not know (self-hosted)."""

    input_per_mtok: Decimal = Field(ge=0)
    output_per_mtok: Decimal = Field(ge=0)
    cached_input_per_mtok: Decimal | None = Field(default=None, ge=0)
    cache_write_per_mtok: Decimal | None = Field(default=None, ge=0)


_MTOK = Decimal(1_000_000)
_UNKNOWN = object()
# When a call happened: a datetime, or seconds since the epoch (a record's `ts`).
Moment = datetime | float | None
# Tiers that bill at most the standard rates where genai-prices has no rates of their own
# (flex and batch bill half; scale draws on capacity paid for ahead).
AT_MOST_STANDARD = frozenset({"auto", "default", "standard", "flex", "scale", "batch"})
_STANDARD = frozenset({"auto", "default", "standard"})
# What a priced model's call is booked unpriced for lacking, warned once per model.
# A dated snapshot's suffix: -2024-08-06 (OpenAI, Azure), -20241022 (Anthropic), -0613
# (OpenAI's older models).
_SNAPSHOT = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|20\d{6}|(?:0[1-9]|1[0-2])\d{2})$")
_NO_RATE = {
    "audio": "no audio rate for model %r: calls with audio booked with tokens, counted unpriced",
    "media": "model %r has no rate for the audio seconds or characters its call billed: "
    "booked unpriced",
}


def tier_of(value: Any) -> str | None:
    """A body's or a reply's `service_tier`, when it is one (a non-empty string)."""
    return value if isinstance(value, str) and value else None


def held_tier(asked: Any, account_tier: str) -> str:
    """The tier a call is held at: the one its body names, else (none, or "auto") the
    one the provider account serves such calls at (`upstream.default_service_tier`)."""
    tier = tier_of(asked)
    return account_tier if tier is None or tier == "auto" else tier


def snapshot_base(model: str) -> str | None:
    """The model a dated snapshot is of ("gpt-4o" for "gpt-4o-2024-08-06"); None for a
    name without a date."""
    base = _SNAPSHOT.sub("", model)
    return base if base != model and base else None


def _dearer(tier: str | None) -> bool:
    return tier is not None and tier not in AT_MOST_STANDARD


class Pricer:
    def __init__(
        self,
        table: Mapping[str, PriceEntry],
        provider_id: str | None = None,
        provider_api_url: str | None = None,
    ) -> None:
        self._table = dict(table)
        # (provider_id, provider_api_url) to try in turn; last resort: match by model name.
        self._hints: list[tuple[str | None, str | None]] = []
        if provider_id:
            self._hints.append((provider_id, None))
        elif provider_api_url and provider_api_url.startswith("http"):
            self._hints.append((None, provider_api_url))
        self._hints.append((None, None))
        self.provider_known = _provider_known(provider_id, provider_api_url)
        # genai-prices' ModelInfo of each model asked about (None: it knows none)
        self._models: dict[str, Any] = {}
        # (model, tier; None for the standard tiers) -> its price over the span of time
        # the last call fell in
        self._spans: dict[tuple[str, str | None], _Span] = {}
        self._warned: set[str] = set()

    def knows(self, model: str) -> bool:
        """Whether the model has a price (config table or genai-prices); logs nothing."""
        return self._entry(model) is not None or self._model_info(model) is not None

    def operator_priced(self, model: str) -> bool:
        """Whether the config table prices `model` (listed, or a dated snapshot of a model
        listed)."""
        return self._entry(model) is not None

    def _entry(self, model: str) -> PriceEntry | None:
        """The config table's price of `model`: its own entry, else its base model's when
        it is a dated snapshot (the operator priced the model, not each snapshot)."""
        entry = self._table.get(model)
        if entry is None and self._table and (base := snapshot_base(model)) is not None:
            entry = self._table.get(base)
        return entry

    def context_window(self, model: str) -> int | None:
        """genai-prices' context window for `model` (in its tokens); None where it has
        none (the config table has no windows)."""
        if self._entry(model) is not None:
            return None
        window = getattr(self._model_info(model), "context_window", None)
        return window if isinstance(window, int) else None

    def lacks_rate(
        self,
        model: str,
        *,
        audio_output: bool,
        audio_input: bool = False,
        web_searches: bool = False,
        tier: str | None = None,
        at: Moment = None,
    ) -> bool:
        """Whether the model has a price but no rate for audio output, audio input or
        web searches that the call may bill (they would be booked unpriced, or at the
        table's text price), or none for its service `tier` (a dearer one without rates
        of its own), at the time `at` (now when None)."""
        if self._entry(model) is not None:  # a table price has no tiers
            return audio_output or audio_input or web_searches or _dearer(tier)
        if self._model_info(model) is None:
            return False
        model_price = self._price(model, tier, at).price
        if model_price is None:
            return True
        needed = {
            "output_audio_mtok": audio_output,
            "input_audio_mtok": audio_input,
            "web_searches_kcount": web_searches,
        }
        return any(on and getattr(model_price, k, None) is None for k, on in needed.items())

    def cost(
        self, model: str, usage: TokenUsage, tier: str | None = None, *, at: Moment = None
    ) -> Decimal | None:
        """What `usage` of `model` costs, at its service `tier`'s rates as they were at
        the time `at` (now when None); None: unpriced."""
        entry = self._entry(model)
        if entry is not None:
            return self._table_price(model, entry, usage, tier)
        span = self._price(model, tier, at)
        model_price = span.price
        if model_price is None:
            self._unpriced(model, None if tier is None or tier in _STANDARD else tier)
            return None
        if _unrated_audio(model_price, usage):
            self._no_rate(model, "audio")
            return None
        if not has_media_rates(model_price, usage):
            self._no_rate(model, "media")
            return None
        if span.rates is not None and not _has_extras(usage):
            # plain per-token prices: Decimal arithmetic, no lookups (cached)
            return _quantized(_rated_cost(span.rates, usage))
        return _quantized(Decimal(model_price.calc_price(_genai_usage(usage))["total_price"]))

    def _table_price(
        self, model: str, entry: PriceEntry, usage: TokenUsage, tier: str | None
    ) -> Decimal | None:
        """What `usage` costs at a config table price: its image tokens at its input
        rate; unpriced for seconds, characters or a dearer tier (it has no rates for
        them)."""
        if billed_by_units(usage):
            self._no_rate(model, "media")
            return None
        if _dearer(tier):
            self._unpriced(model, tier, " (config.yaml `prices` has no tiers)")
            return None
        return _quantized(_table_cost(entry, usage))

    def _unpriced(self, model: str, tier: str | None, why: str = "") -> None:
        """Warn, once per model (or model and tier), that its calls are booked unpriced."""
        by_model = tier is None or (self._model_info(model) is None and not why)
        key = model if by_model else f"{model}\0{tier}"
        if key in self._warned or len(self._warned) >= 1000:
            return
        self._warned.add(key)
        if by_model:
            log.warning("no price for model %r: booked with tokens, counted unpriced", model)
        else:
            log.warning(
                "no price for model %r at service tier %r%s: booked with tokens, counted unpriced",
                model,
                str(tier)[:32],
                why,
            )

    def _no_rate(self, model: str, what: str) -> None:
        """Warn, once per model, that its calls billing `what` (a `_NO_RATE` key) are
        booked unpriced."""
        key = f"{model}\0{what}"
        if key in self._warned or len(self._warned) >= 1000:
            return
        self._warned.add(key)
        log.warning(_NO_RATE[what], model)

    def _price(self, model: str, tier: str | None, at: Moment) -> _Span:
        """The model's genai-prices price at service `tier` at the time `at` (its rates
        for the tier where it has them, else the standard price for a tier that bills at
        most that, else None, as for a model without a price), with the span of time it
        holds over. A model whose prices no time changes is resolved once, another once
        per span (a day of DeepSeek has three)."""
        key = (model, None if tier is None or tier in _STANDARD else tier)
        span = self._spans.get(key)
        if span is not None and span.start is None and span.end is None:
            return span
        when = _moment(at)
        if span is not None and span.holds(when):
            return span
        if len(self._spans) > 10_000:  # model names and tiers come from clients
            self._spans.clear()
        span = self._spans[key] = _resolved(self._model_info(model), key[1], when)
        return span

    def _model_info(self, model: str) -> Any:
        """What genai-prices knows of `model` (its prices by time and tier, its window),
        under the first provider hint that knows it, looked up once; None: unknown."""
        found = self._models.get(model, _UNKNOWN)
        if found is not _UNKNOWN:
            return found
        if len(self._models) > 10_000:  # model names come from clients
            self._models.clear()
            self._spans.clear()
            _forget_lookups()
        found = self._models[model] = self._lookup(model)
        return found

    def _lookup(self, model: str) -> Any:
        probe = Usage(input_tokens=1, output_tokens=1)
        for provider_id, api_url in self._hints:
            try:
                if provider_id is not None:
                    return calc_price(probe, model, provider_id=provider_id).model
                return calc_price(probe, model, provider_api_url=api_url).model
            except LookupError:
                continue
        return None if self.provider_known else _model_makers_model(model)


def _provider_known(provider_id: str | None, api_url: str | None) -> bool:
    """Whether genai-prices knows the upstream's provider: by its id when one is given,
    else by the URL (the simulator's loopback URL, a proxy or a self-hosted server is no
    provider it knows)."""
    url = api_url if provider_id is None and api_url and api_url.startswith("http") else None
    if provider_id is None and url is None:
        return False
    try:
        data_snapshot.get_snapshot().find_provider(None, provider_id, url)
    except LookupError:
        return False
    return True


def _model_makers_model(model: str) -> Any:
    """For an upstream whose provider is not known: the model as the model makers list
    it (the providers others resell the models of, genai-prices'
    `fallback_model_providers`: OpenAI, Anthropic, DeepSeek, ...), when those that list
    it under this name all price it alike; None otherwise. genai-prices infers a
    provider from a name only by the maker's pattern (`gpt-*`, `claude-*`), which an
    embedding (`text-embedding-3-small`) or a moderation model does not match; a
    reseller's or host's list (Azure's, Groq's, a vLLM's models) is not read, since a
    host prices an open model its own way."""
    snapshot = data_snapshot.get_snapshot()
    makers = {m for p in snapshot.providers for m in p.fallback_model_providers or ()}
    listed = [
        found
        for provider in snapshot.providers
        if provider.id in makers and (found := provider.find_model(model)) is not None
    ]
    if not listed or any(
        (m.prices, m.price_variants) != (listed[0].prices, listed[0].price_variants)
        for m in listed[1:]
    ):
        return None
    return listed[0]


def _moment(at: Moment) -> datetime:
    if at is None:
        return datetime.now(UTC)
    if isinstance(at, datetime):
        return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return datetime.fromtimestamp(at, UTC)


@dataclass(frozen=True, slots=True)
class _Span:
    """A model's price at one tier (None: none) and its plain rates (None: genai-prices
    computes it), over a span of time no price change of the model falls in."""

    price: Any
    rates: tuple[Decimal, Decimal, Decimal, Decimal] | None = None
    start: datetime | None = None  # None: since ever
    end: datetime | None = None  # None: for ever

    def holds(self, when: datetime) -> bool:
        return (self.start is None or self.start <= when) and (self.end is None or when < self.end)


def _resolved(info: Any, tier: str | None, when: datetime) -> _Span:
    """The price of the model `info` (None: unknown) at `tier` (None: standard) at the
    time `when`, and the span around `when` it holds over."""
    if info is None:
        return _Span(None)
    standard = info.get_prices(when)
    price = standard if tier is None else _variant_price(info, tier, when)
    if price is None and tier in AT_MOST_STANDARD:
        price = standard
    start, end = _steady_span(info, tier is not None, when)
    return _Span(price, _plain_rates(price), start, end)


def _steady_span(
    info: Any, variants: bool, when: datetime
) -> tuple[datetime | None, datetime | None]:
    """The span around `when` in which no constraint on the model's prices (a start
    date, a time of day; its `variants`' too) starts or stops applying: the last change
    at or before `when` and the first after it, None where there is none."""
    changes: list[datetime] = []
    constraints = [p.constraint for p in info.prices] if isinstance(info.prices, list) else []
    if variants:
        constraints += [v.constraint for v in info.price_variants or ()]
    for constraint in constraints:
        if isinstance(constraint, StartDateConstraint):
            changes.append(datetime.combine(constraint.start_date, time(0), UTC))
        elif isinstance(constraint, TimeOfDateConstraint):
            today = when.astimezone(UTC).date()
            for at in (constraint.start_time, constraint.end_time):
                clock = _utc_clock(at)
                changes += [datetime.combine(today + timedelta(d), clock) for d in (-1, 0, 1)]
    before = [c for c in changes if c <= when]
    after = [c for c in changes if c > when]
    return (max(before) if before else None), (min(after) if after else None)


def _utc_clock(value: time) -> time:
    """A time of day in UTC (a naive one is UTC, as genai-prices reads it)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return datetime.combine(date(1970, 1, 1), value).astimezone(UTC).timetz()


def _variant_price(info: Any, tier: str, when: datetime) -> Any:
    """genai-prices' price of the model `info` with its `service_tier` variant applied at
    the time `when`, or None when the model has no variant for `tier` then."""
    variants = info.price_variants or ()
    if not any(
        v.when.get("service_tier") == tier and (v.constraint is None or v.constraint.active(when))
        for v in variants
    ):
        return None  # none, or only rates that start later
    return info.get_prices(when, {"service_tier": tier})


def _forget_lookups() -> None:
    """genai-prices remembers every model name it was asked about, priced or not, for
    the life of the process (its snapshot's lookup caches): with model names from
    clients that grew the process without bound (50,000 names refused 400
    model_not_priced: 12 MB). Forgotten with the gateway's own caches."""
    snapshot = data_snapshot.get_snapshot()
    for name in ("_lookup_cache", "_provider_cache", "_provider_misses"):
        cache = getattr(snapshot, name, None)
        if isinstance(cache, dict | set):
            cache.clear()


def _quantized(cost: Decimal) -> Decimal:
    return cost.quantize(COST_QUANTUM, rounding=ROUND_HALF_EVEN)


def _has_extras(usage: TokenUsage) -> bool:
    return bool(usage.input_audio or usage.output_audio or usage.web_searches or usage.media)


def _unrated_audio(model_price: Any, usage: TokenUsage) -> bool:
    """Whether `usage` has audio tokens `model_price` has no rate for: genai-prices would
    price them as text tokens."""
    return bool(
        (usage.input_audio and getattr(model_price, "input_audio_mtok", None) is None)
        or (usage.output_audio and getattr(model_price, "output_audio_mtok", None) is None)
    )


def _genai_usage(usage: TokenUsage) -> Usage:
    extras = {
        "input_audio_tokens": usage.input_audio,
        "output_audio_tokens": usage.output_audio,
        "web_searches": usage.web_searches,
    }
    return Usage(
        input_tokens=usage.input_total,
        cache_read_tokens=usage.cached_input,
        cache_write_tokens=usage.cache_write,
        output_tokens=usage.output,
        **{k: v for k, v in extras.items() if v},
        **media_fields(usage),
    )


def _plain_rates(model_price: Any) -> tuple[Decimal, Decimal, Decimal, Decimal] | None:
    """(input, cache read, cache write, output) USD per MTok when every token price is a
    plain Decimal (no tiers); None sends the model through genai-prices' own calculation."""
    if model_price is None:
        return None
    values = model_price.__dict__
    token_keys = [k for k in values if k.endswith("_mtok")]
    if any(k not in _PLAIN_KEYS for k in token_keys):
        return None  # audio, 1-hour cache writes, ...: let genai-prices decide
    rates = [
        values.get(k) for k in ("input_mtok", "cache_read_mtok", "cache_write_mtok", "output_mtok")
    ]
    if not all(r is None or isinstance(r, Decimal) for r in rates) or rates[0] is None:
        return None
    base = rates[0]
    return (
        base,
        rates[1] if rates[1] is not None else base,
        rates[2] if rates[2] is not None else base,
        rates[3] or Decimal(0),
    )


_PLAIN_KEYS = frozenset({"input_mtok", "cache_read_mtok", "cache_write_mtok", "output_mtok"})


def _rated_cost(rates: tuple[Decimal, Decimal, Decimal, Decimal], usage: TokenUsage) -> Decimal:
    fresh, cached, write, output = rates
    total = (
        usage.fresh_input * fresh
        + usage.cached_input * cached
        + usage.cache_write * write
        + usage.output * output
    )
    return Decimal(total) / _MTOK


def _table_cost(entry: PriceEntry, usage: TokenUsage) -> Decimal:
    cached_rate = entry.cached_input_per_mtok
    write_rate = entry.cache_write_per_mtok
    total = (
        usage.fresh_input * entry.input_per_mtok
        + usage.cached_input * (entry.input_per_mtok if cached_rate is None else cached_rate)
        + usage.cache_write * (entry.input_per_mtok if write_rate is None else write_rate)
        + usage.output * entry.output_per_mtok
    )
    return Decimal(total) / _MTOK
