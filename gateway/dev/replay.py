"""`gateway replay FILE.jsonl`: a workload (gateway/dev/cs_workload.py) played turn by
turn through the gateway, in this process, against the simulated upstream, and the same
conversations sent to the simulator directly (the baseline: full history every turn).

Each conversation is played as a stateless app plays it: its earlier episodes first (on
their own channels, each closed afterwards so its episode summary exists), then the
conversation; every customer turn sends the system message and the whole history so
far, with X-Conversation-Id, X-Customer-Id and X-Channel and nothing else. The history
grows by the file's assistant turns, not by the simulator's replies, so both sides see
the same conversation; the simulator answers each turn with the file's next assistant
turn (`x-simulator-reply`), so what the gateway relays is what the app sends back, and
an episode's last answer is the file's too. The simulator logs the messages of every
request that reached it; gateway/dev/replay_metrics.py scores them,
gateway/dev/replay_report.py prints them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from gateway.config import Settings, load_settings, pricer_for
from gateway.context.policy import POLICY_FILE
from gateway.context.prompts import facts_block
from gateway.dev.replay_metrics import (
    Played,
    QuotaTurn,
    Tally,
    floor_tokens,
    merge,
    score_facts,
    score_verbatim,
    token_offsets,
)
from gateway.dev.replay_workload import read_workload, turn_time
from gateway.dev.simulator import create_simulator_app, serve_simulator_in_background
from gateway.dev.simulator_cache import SimulatorState
from gateway.errors import ConfigError
from gateway.ledger.tokens import TokenCounter
from gateway.ledger.usage import TokenUsage, normalize
from gateway.messages import message_text
from gateway.ops.tenants import add_tenant
from gateway.proxy.app import create_app
from gateway.spend.ceilings import SPEND_FILE
from gateway.spend.pricing import Pricer

TENANT = "replay"
__all__ = ["ReplayError", "UnpricedModel", "read_workload", "replay", "turn_time"]


class ReplayError(Exception):
    """The replay could not go on (a request failed): its message says which."""


class UnpricedModel(ReplayError):
    """`--model` has no price: a replay that compares costs would print $0 against $0."""


@dataclass(frozen=True)
class Sent:
    """What one customer turn cost and what reached the upstream (None: nothing did,
    the gateway answered by itself)."""

    text: str | None
    usage: TokenUsage
    cost: Decimal
    quota: QuotaTurn | None = None
    input_cost: Decimal = Decimal(0)  # the same calls' input alone, each at its model
    keep_last: int | None = None  # the policy's keep_last_messages (the gateway side)


@dataclass
class SideResult:
    """Everything one side (the policy or the baseline) measured."""

    usage: TokenUsage = field(default_factory=TokenUsage)
    costs: list[Decimal] = field(default_factory=list)  # per workload conversation
    classes: list[str] = field(default_factory=list)  # the gateway's, at the last turn
    tally: Tally = field(default_factory=dict)
    quota: list[QuotaTurn] = field(default_factory=list)
    requests: int = 0
    answered_by_gateway: int = 0
    input_cost: Decimal = Decimal(0)
    cache_clock: float = 1.0  # --clock wall: the simulator's cache's clock (CACHE_STEP_S)
    # Each customer's facts document at the end: (facts, tokens as the prompt shows them).
    fact_docs: list[tuple[int, int]] = field(default_factory=list)


class Side(Protocol):
    async def send(
        self,
        conv: dict[str, Any],
        played: str,
        channel: str,
        messages: list[Any],
        answer: str,
        at: Moment | None = None,
    ) -> Sent: ...

    async def close(self, conv: dict[str, Any], played: str, at: Moment | None = None) -> None: ...


# --clock wall: the conversation's clock starts at its first turn's time (the cards'
# and facts' dates are the workload's, never the day the replay runs) and moves this
# much a customer turn, so no pause ever reaches cache_idle_s; the simulator's cache
# runs on a clock of its own that moves CACHE_STEP_S a request, so nothing the replay
# cached expires before 300,000 requests (5 minutes' TTL), however slow the machine.
WALL_STEP_S = 1.0
CACHE_STEP_S = 0.001
REPLAY_EPOCH = 1735689600.0  # 2025-01-01T00:00:00Z: a conversation without times


@dataclass(frozen=True)
class Moment:
    """When a turn is played: `said`, the conversation's clock the gateway reads (the
    pause since the last turn, facts' and cards' dates); `cache`, the clock the
    simulator's prompt cache (its TTL) runs on."""

    said: float
    cache: float


def clocked(at: Moment | None) -> dict[str, str]:
    """The simulator's cache reads the replay's clock, not its own: the turns' own
    times under `--clock workload` (a turn after a pause longer than the TTL finds it
    cold, as a provider's would), a clock without pauses under `--clock wall`."""
    return {} if at is None else {"x-simulator-clock": f"{at.cache:.3f}"}


def first_time(turns: list[dict[str, Any]]) -> float:
    """The played conversation's first turn's time (REPLAY_EPOCH when none has one)."""
    return next((turn_time(t) for t in turns if t.get("at")), REPLAY_EPOCH)


SCRIPTED_CHARS = 6000  # a longer answer is not scripted (a header that size is refused)


def scripted(answer: str) -> dict[str, str]:
    """The simulator answers with the file's own agent turn, so the answer the gateway
    relays is the one the app sends back next turn (as a real app's is), and an
    episode's last answer, which never comes back, is the file's."""
    quoted = quote(answer, safe=" ")
    return {"x-simulator-reply": quoted} if answer and len(quoted) <= SCRIPTED_CHARS else {}


def priced(pricer: Pricer, model: str, usage: TokenUsage) -> tuple[Decimal, Decimal]:
    """(what a call cost, what its input alone cost), at its model's prices."""
    cost = pricer.cost(model, usage) or Decimal(0)
    input_only = dataclasses.replace(usage, output=0, reasoning=0, output_audio=0)
    return cost, pricer.cost(model, input_only) or Decimal(0)


def _usage_sum(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    return TokenUsage(
        fresh_input=a.fresh_input + b.fresh_input,
        cached_input=a.cached_input + b.cached_input,
        cache_write=a.cache_write + b.cache_write,
        output=a.output + b.output,
    )


def _text(messages: Iterable[Any]) -> str:
    return "\n".join(message_text(m) for m in messages)


class GatewaySide:
    """Turns through the gateway app (ASGI, lifespan running); what reached the upstream
    is read off the simulator's own log, emptied after each turn."""

    def __init__(
        self, app: Any, sim: SimulatorState, key: str, settings: Settings, model: str, plan: str
    ) -> None:
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://gateway", timeout=120
        )
        self.app, self.sim, self.key, self.settings = app, sim, key, settings
        self.model, self.plan = model, plan
        self.pricer = pricer_for(settings.config)
        self.tokens = TokenCounter()

    def _headers(self, conv: dict[str, Any], played: str, channel: str) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.key}",
            "X-Conversation-Id": played,
            "X-Customer-Id": str(conv["customer_id"]),
            "X-Channel": channel,
            "x-simulator-log-messages": "1",
        }

    async def send(
        self,
        conv: dict[str, Any],
        played: str,
        channel: str,
        messages: list[Any],
        answer: str,
        at: Moment | None = None,
    ) -> Sent:
        body = {"model": self.model, "messages": messages}
        headers = {**self._headers(conv, played, channel), **scripted(answer), **clocked(at)}
        self._set_clock(at)
        reply = await self.http.post("/v1/chat/completions", json=body, headers=headers)
        if reply.status_code != 200:
            raise ReplayError(f"{played}: the gateway answered {reply.status_code}: {reply.text}")
        calls = list(self.sim.usage_log)
        self.sim.usage_log.clear()
        usage, cost, input_cost = TokenUsage(), Decimal(0), Decimal(0)
        for call in calls:
            one = normalize(call["usage"]) or TokenUsage()
            usage = _usage_sum(usage, one)
            whole, inputs = priced(self.pricer, str(call["model"]), one)
            cost, input_cost = cost + whole, input_cost + inputs
        sent = next((c["messages"] for c in reversed(calls) if c.get("messages")), None)
        text = None if sent is None else _text(sent)
        quota, keep_last = self._quota(reply, messages)
        return Sent(text, usage, cost, quota, input_cost, keep_last)

    def _quota(self, reply: httpx.Response, messages: list[Any]) -> tuple[QuotaTurn, int]:
        cls = reply.headers.get("x-gateway-class", "")
        policy = self.settings.policies.resolve(self.plan, cls, self.model)

        def count(messages: list[Any]) -> int:  # as the engine counts: no reply priming
            return sum(self.tokens.message_tokens(self.model, m) for m in messages)

        floor = floor_tokens(messages, policy.keep_last_messages, count)
        window = int(reply.headers.get("x-gateway-window-tokens", "0"))
        return QuotaTurn(cls, window, policy.quota_tokens, floor), policy.keep_last_messages

    async def fact_documents(self, conversations: list[dict[str, Any]]) -> list[tuple[int, int]]:
        """How big each customer's facts document ended up (the gateway's own store)."""
        store = self.app.state.gateway.windows.conversations
        out = []
        for customer in sorted({str(c["customer_id"]) for c in conversations}):
            facts = await store.customer_facts(TENANT, customer)
            out.append(
                (len(facts), self.tokens.count_text(self.model, "\n".join(facts_block(facts))))
            )
        return out

    def _set_clock(self, at: Moment | None) -> None:
        """The conversation's clock: the pause since its last turn, facts' and cards'
        dates."""
        if at is not None:
            said = at.said
            self.app.state.gateway.turn_clock = lambda: said

    async def close(self, conv: dict[str, Any], played: str, at: Moment | None = None) -> None:
        self._set_clock(at)
        reply = await self.http.post(
            f"/v1/conversations/{played}/close",
            headers=self._headers(conv, played, str(conv["channel"])),
        )
        if reply.status_code != 200:
            raise ReplayError(f"closing {played}: {reply.status_code}: {reply.text}")
        self.sim.usage_log.clear()  # a summarizer call is not a turn of the conversation

    async def aclose(self) -> None:
        await self.http.aclose()


class BaselineSide:
    """The same requests sent to a simulator of its own, no gateway: full history."""

    def __init__(self, model: str, pricer: Pricer) -> None:
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_simulator_app()), base_url="http://sim"
        )
        self.model, self.pricer = model, pricer

    async def send(
        self,
        conv: dict[str, Any],
        played: str,
        channel: str,
        messages: list[Any],
        answer: str,
        at: Moment | None = None,
    ) -> Sent:
        reply = await self.http.post(
            "/v1/chat/completions",
            json={"model": self.model, "messages": messages},
            headers={**scripted(answer), **clocked(at)},
        )
        if reply.status_code != 200:
            raise ReplayError(f"{played}: the simulator answered {reply.status_code}")
        usage = normalize(reply.json().get("usage")) or TokenUsage()
        cost, input_cost = priced(self.pricer, self.model, usage)
        return Sent(_text(messages), usage, cost, None, input_cost)

    async def close(self, conv: dict[str, Any], played: str, at: Moment | None = None) -> None:
        return None

    async def aclose(self) -> None:
        await self.http.aclose()


async def _play_one(
    side: Side,
    conv: dict[str, Any],
    played: str,
    channel: str,
    turns: list[dict[str, Any]],
    offsets: list[int],
    result: SideResult,
    clock: bool = False,
    keep_last: dict[int, int] | None = None,
) -> tuple[Played, Decimal, Moment]:
    """`keep_last`: the policy's keep_last_messages per turn, when this side has none of
    its own (the baseline: its checks are counted as the gateway's are)."""
    history: list[Any] = [{"role": "system", "content": conv["system"]}]
    requests: dict[int, str] = {}
    kept_last: dict[int, int] = dict(keep_last or {})
    start = first_time(turns)
    at = Moment(start, result.cache_clock)
    cost = Decimal(0)
    for i, turn in enumerate(turns):
        history.append({"role": turn["role"], "content": turn["content"]})
        if turn["role"] != "user":
            continue
        after = turns[i + 1] if i + 1 < len(turns) else {}
        answer = str(after.get("content") or "") if after.get("role") == "assistant" else ""
        if clock:
            at = Moment(turn_time(turn), turn_time(turn))
        else:
            result.cache_clock += CACHE_STEP_S
            at = Moment(at.said + WALL_STEP_S, result.cache_clock)
        sent = await side.send(conv, played, channel, list(history), answer, at)
        result.requests += 1
        result.usage = _usage_sum(result.usage, sent.usage)
        result.input_cost += sent.input_cost
        cost += sent.cost
        if sent.quota is not None:
            result.quota.append(sent.quota)
        if sent.keep_last is not None:
            kept_last[i] = sent.keep_last
        if sent.text is None:
            result.answered_by_gateway += 1
        else:
            requests[i] = sent.text
    return Played(played, turns, requests, offsets, kept_last), cost, at


async def play_conversation(
    side: Side,
    conv: dict[str, Any],
    offsets: dict[str, list[int]],
    result: SideResult,
    clock: bool = False,
    like: list[Played] | None = None,
) -> list[Played]:
    """Its episodes (each closed after), then itself; scores and costs into `result`.
    `clock`: the gateway and the simulator's cache read each turn's own time (else
    the clocks without pauses of `--clock wall`). `like`: the gateway's
    plays of it, whose policy says what every window sends verbatim (for the baseline).
    Returns the plays."""
    played: list[Played] = []
    total = Decimal(0)
    parts = [(ep["id"], ep["channel"], ep["turns"]) for ep in conv["episodes"]]
    parts.append((conv["id"], conv["channel"], conv["turns"]))
    for n, (pid, channel, turns) in enumerate(parts):
        keep_last = dict(like[n].keep_last) if like else None
        p, cost, last = await _play_one(
            side, conv, pid, channel, turns, offsets[pid], result, clock, keep_last
        )
        if n < len(conv["episodes"]):
            await side.close(conv, pid, last)
        played.append(p)
        total += cost
    result.costs.append(total)
    result.classes.append(result.quota[-1].conversation_class if result.quota else "")
    merge(result.tally, score_facts(conv["facts"], played))
    merge(result.tally, score_verbatim(played))
    return played


def write_replay_config(
    root: Path, upstream_url: str, policies: Path | None, plan: str
) -> tuple[Path, str]:
    """A config for this replay (temp store) and the tenant's key. The policy folder's
    context.yaml and spend.yaml are used when it has them."""
    folder = root / "policies"
    folder.mkdir(parents=True)
    for name in (POLICY_FILE, SPEND_FILE):
        if policies is not None and (policies / name).exists():
            shutil.copy(policies / name, folder / name)
    key = add_tenant(folder, TENANT, plan)
    config = root / "config.yaml"
    config.write_text(
        f"upstream:\n  base_url: {upstream_url}\n  api_key_env: GATEWAY_REPLAY_PROVIDER_KEY\n"
        "store: sqlite:///replay.db\npolicies: policies\n"
        # Two lines a turn on stderr (thousands a replay) buried its progress lines.
        "logging:\n  access_log: 'off'\n"
    )
    return config, key


def conversation_offsets(
    conv: dict[str, Any], tokens: TokenCounter, model: str
) -> dict[str, list[int]]:
    """Tokens said before each message, per played conversation (for `far back`)."""
    parts = [(e["id"], e["turns"]) for e in conv["episodes"]] + [(conv["id"], conv["turns"])]
    return {
        pid: token_offsets(tokens.count_text(model, str(t["content"])) for t in turns)
        for pid, turns in parts
    }


def _outline(conversations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"id": c["id"], "messages": len(c["turns"]), "class_hint": c.get("class_hint")}
        for c in conversations
    ]


@dataclass
class Replay:
    """What a replay measured, with what the report needs to say how."""

    policy: SideResult
    baseline: SideResult | None
    pricer: Pricer
    conversations: list[dict[str, Any]]  # id, messages, class_hint of each
    wall_s: float = 0.0
    clock: str = "wall"  # whose time the simulator's cache TTL runs on


def _as_given(
    problems: list[tuple[str, str, str]], copy: Path, folder: Path | None
) -> list[tuple[str, str, str]]:
    """A problem in the replay's copy of the policy folder, said of the folder itself."""
    if folder is None:
        return problems
    return [
        (f.replace(str(copy), str(folder)), k, r.replace(str(copy), str(folder)))
        for f, k, r in problems
    ]


@contextlib.asynccontextmanager
async def _sides(
    root: Path, policies: Path | None, baseline: bool, model: str, plan: str
) -> AsyncIterator[tuple[GatewaySide, BaselineSide | None]]:
    """The gateway (its lifespan running, on the simulator) and the baseline."""
    async with serve_simulator_in_background() as (url, sim):
        config, key = write_replay_config(root, url, policies, plan)
        try:
            settings = load_settings(config, {})
        except ConfigError as exc:  # named as the user's folder, not the temporary copy
            raise ConfigError(_as_given(exc.problems, root / "policies", policies)) from None
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            gateway = GatewaySide(app, sim, key, settings, model, plan)
            if gateway.pricer.cost(model, TokenUsage(fresh_input=1_000, output=100)) is None:
                raise UnpricedModel(
                    f"--model {model!r} has no price (config `prices` or genai-prices): "
                    "a replay compares what the policy and the baseline cost"
                )
            base = BaselineSide(model, gateway.pricer) if baseline else None
            try:
                yield gateway, base
            finally:
                await gateway.aclose()
                if base is not None:
                    await base.aclose()


async def replay(
    conversations: list[dict[str, Any]],
    policies: Path | None = None,
    baseline: bool = True,
    model: str = "gpt-4o-mini",
    plan: str = "pro",
    progress: Callable[[int, float], None] | None = None,
    clock: str = "wall",
) -> Replay:
    """`clock`: "wall" (no pauses: each conversation's clock starts at its first turn's
    time and moves WALL_STEP_S a turn, the cache's CACHE_STEP_S a request, so no turn
    finds the cache expired) or "workload" (each turn's `at`, for both: a pause past the
    TTL leaves it cold)."""
    timed = clock == "workload"
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gateway-replay-") as tmp:
        async with _sides(Path(tmp), policies, baseline, model, plan) as (gateway, base):
            policy, full = SideResult(), SideResult()
            for n, conv in enumerate(conversations):
                offsets = conversation_offsets(conv, gateway.tokens, model)
                plays = await play_conversation(gateway, conv, offsets, policy, timed)
                if base is not None:
                    await play_conversation(base, conv, offsets, full, timed, plays)
                if progress is not None:
                    progress(n + 1, time.monotonic() - started)
            policy.fact_docs = await gateway.fact_documents(conversations)
    outline = _outline(conversations)
    done = Replay(policy, full if baseline else None, gateway.pricer, outline, clock=clock)
    done.wall_s = time.monotonic() - started
    return done
