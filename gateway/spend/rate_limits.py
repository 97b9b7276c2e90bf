"""Rate limits (`policies/limits.yaml`): requests and tokens per window (a minute by
default), per tenant and per key. Pure: which counters a call counts against, the
window arithmetic, and what a refusal or an admission tells the client (`Retry-After`,
OpenAI's `x-ratelimit-*` headers). The store counts, atomically
(`Store.count_rate`: one Lua script, one SQLite transaction); gateway.spend.rate_guard
is the step on the request path.

The window is a sliding window of `BUCKETS` buckets (one second each for a minute): a
counter's use is the sum of the current bucket and the `BUCKETS` before it, so a call
stays counted for between one window and one window plus a bucket. Picked over two
fixed windows weighted by the time elapsed (which assume the previous window's calls
were spread evenly, and so let through up to half again the limit within one window
after a burst at its end) and over a log of every call (exact, but one entry per call:
a key allowed 100,000 requests a minute would hold 100,000 of them). Buckets never let
more than the limit through in any window-long span (at worst they refuse for one
bucket longer than a log would, and `Retry-After` says exactly how long), hold at most
`BUCKETS` + 1 numbers per counter whatever the rate, and settle a reply's output
tokens into the bucket its request was counted in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import Field, PositiveInt

from gateway.store.base import RateUse
from gateway.yamlfile import Strict

BUCKETS = 60
REQUESTS, TOKENS = "requests", "tokens"


class RateLimit(Strict):
    """Per window (`window_s`): the tenant's requests and tokens, and each key's (a key's
    own `rpm_limit` / `tpm_limit` wins over `key_rpm` / `key_tpm`). Absent: unlimited."""

    rpm: PositiveInt | None = None
    tpm: PositiveInt | None = None
    key_rpm: PositiveInt | None = None
    key_tpm: PositiveInt | None = None


class RateLimitsFile(Strict):
    plans: dict[str, RateLimit] = {}
    tenants: dict[str, RateLimit] = {}
    # The window the limits count over: a minute (rpm, tpm); shorter only for tests.
    window_s: float = Field(default=60.0, ge=1.0, le=3600.0)


@dataclass(frozen=True, slots=True)
class Counter:
    """One limited counter: `scope` "tenant" or "key", `kind` requests or tokens."""

    scope: str
    kind: str
    limit: int
    key_id: str = ""

    @property
    def name(self) -> str:
        """Its name within the tenant's counters (the store keys it by tenant and name)."""
        return (
            f"{self.scope}:{self.kind}"
            if self.scope == "tenant"
            else f"key:{self.key_id}:{self.kind}"
        )


@dataclass(frozen=True, slots=True)
class Window:
    bucket_ms: int
    buckets: int = BUCKETS

    @classmethod
    def of(cls, window_s: float) -> Window:
        return cls(max(math.ceil(window_s * 1000 / BUCKETS), 1))

    def leaves_at_ms(self, bucket: int) -> int:
        """When what was counted in `bucket` stops counting."""
        return (bucket + self.buckets + 1) * self.bucket_ms


def _merge(plan: RateLimit | None, tenant: RateLimit | None) -> RateLimit:
    values: dict[str, object] = {}
    for layer in (plan, tenant):
        if layer is not None:
            values.update(layer.model_dump(exclude_unset=True, exclude={"schema_ref"}))
    return RateLimit.model_validate(values)


@dataclass(frozen=True)
class RateRules:
    file: RateLimitsFile
    # Each (plan, tenant)'s merged limits, made once per loaded file, not per request.
    _merged: dict[tuple[str, str], RateLimit] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def window(self) -> Window:
        return Window.of(self.file.window_s)

    def counters(
        self,
        tenant: str,
        plan: str,
        key_id: str,
        key_rpm: int | None = None,
        key_tpm: int | None = None,
    ) -> tuple[Counter, ...]:
        """Every limited counter a call of this tenant's key counts against."""
        limit = self._merged.get((plan, tenant))
        if limit is None:
            limit = _merge(self.file.plans.get(plan), self.file.tenants.get(tenant))
            self._merged[(plan, tenant)] = limit
        rpm = key_rpm if key_rpm is not None else limit.key_rpm
        tpm = key_tpm if key_tpm is not None else limit.key_tpm
        found = [
            ("tenant", REQUESTS, limit.rpm, ""),
            ("tenant", TOKENS, limit.tpm, ""),
            ("key", REQUESTS, rpm, key_id),
            ("key", TOKENS, tpm, key_id),
        ]
        return tuple(Counter(s, k, n, i) for s, k, n, i in found if n is not None)


def amount(counter: Counter, tokens: int) -> int:
    return 1 if counter.kind == REQUESTS else max(tokens, 0)


def used(use: RateUse, index: int, window: Window) -> int:
    oldest = use.now_ms // window.bucket_ms - window.buckets
    return sum(a for b, a in use.used[index] if b >= oldest)


def wait_ms(
    buckets: Sequence[tuple[int, int]], limit: int, wanted: int, now_ms: int, window: Window
) -> int | None:
    """How long until `wanted` more fits under `limit` as the counted buckets leave the
    window (nothing else counted meanwhile); None when it never fits."""
    if wanted > limit:
        return None
    oldest = now_ms // window.bucket_ms - window.buckets
    live = sorted((b, a) for b, a in buckets if b >= oldest)
    total = sum(a for _, a in live)
    at = now_ms
    for bucket, counted in live:
        if total + wanted <= limit:
            break
        total -= counted
        at = window.leaves_at_ms(bucket)
    return max(at - now_ms, 0)


def reset_ms(buckets: Sequence[tuple[int, int]], now_ms: int, window: Window) -> int:
    """How long until the counter is back to nothing (OpenAI's `x-ratelimit-reset-*`)."""
    oldest = now_ms // window.bucket_ms - window.buckets
    live = [b for b, a in buckets if b >= oldest and a > 0]
    return max(window.leaves_at_ms(max(live)) - now_ms, 0) if live else 0


def duration(ms: int) -> str:
    """A duration as OpenAI writes its reset headers: `120ms`, `1s`, `6m0s`, `1.5s`."""
    if ms < 1000:
        return f"{ms}ms"
    minutes, rest = divmod(ms, 60_000)
    seconds = f"{rest / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{minutes}m{seconds}" if minutes else seconds


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the client hears: admitted or not, the headers, and for a refusal which
    counter refused, its use, and the seconds until a retry can pass (None: never)."""

    admitted: bool
    headers: tuple[tuple[bytes, bytes], ...]
    blocked: Counter | None = None
    blocked_used: int = 0
    retry_after_s: int | None = None


def verdict(counters: Sequence[Counter], tokens: int, use: RateUse, window: Window) -> Verdict:
    """Read the store's answer: the headers, and for a refusal the counter that refused
    and `Retry-After` (whole seconds, at least 1: the time until every counter fits)."""
    headers = _headers(counters, use, window)
    if use.admitted:
        return Verdict(True, headers)
    waits: list[tuple[int | None, Counter, int]] = []
    for n, counter in enumerate(counters):
        wanted, now_used = amount(counter, tokens), used(use, n, window)
        if now_used + wanted > counter.limit:
            waits.append(
                (wait_ms(use.used[n], counter.limit, wanted, use.now_ms, window), counter, now_used)
            )
    if not waits:  # refused by a use this snapshot no longer shows: try again soon
        return Verdict(False, headers, counters[0], 0, 1)
    never = [w for w in waits if w[0] is None]
    wait, counter, now_used = never[0] if never else max(waits, key=lambda w: w[0] or 0)
    retry = None if wait is None else max(math.ceil(wait / 1000), 1)
    return Verdict(False, headers, counter, now_used, retry)


def _headers(
    counters: Sequence[Counter], use: RateUse, window: Window
) -> tuple[tuple[bytes, bytes], ...]:
    """OpenAI's six headers, for each kind that has a limit: the counter with the least
    left (the tenant's or the key's) speaks for it."""
    out: list[tuple[bytes, bytes]] = []
    for kind in (REQUESTS, TOKENS):
        found = [
            (c.limit - used(use, n, window), n, c) for n, c in enumerate(counters) if c.kind == kind
        ]
        if not found:
            continue
        left, n, counter = min(found, key=lambda f: (f[0], f[1]))
        reset = reset_ms(use.used[n], use.now_ms, window)
        out += [
            (f"x-ratelimit-limit-{kind}".encode(), str(counter.limit).encode()),
            (f"x-ratelimit-remaining-{kind}".encode(), str(max(left, 0)).encode()),
            (f"x-ratelimit-reset-{kind}".encode(), duration(reset).encode()),
        ]
    return tuple(out)


def message(verdict: Verdict, tokens: int, window_s: float) -> str:
    """The words of a 429, in OpenAI's manner: what limit, used, requested, when."""
    counter = verdict.blocked
    assert counter is not None
    who = "this key" if counter.scope == "key" else "the tenant"
    per = "min" if window_s == 60 else f"{window_s:g} s"
    short = ("RPM" if counter.kind == REQUESTS else "TPM") if window_s == 60 else "limit"
    wanted = amount(counter, tokens)
    head = (
        f"Rate limit reached for {who} on {counter.kind} per {per} ({short}): "
        f"Limit {counter.limit}, Used {verdict.blocked_used}, Requested {wanted}."
    )
    if verdict.retry_after_s is None:
        return f"{head} The request is larger than the limit itself and cannot pass."
    return f"{head} Please try again in {verdict.retry_after_s}s."
