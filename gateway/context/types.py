"""The plain data the context engine works on: what a customer's facts and earlier
episodes are, what the gateway remembers of a conversation, and the numbers of a window
policy. Standard library only: the pure engine, the prompt texts and the I/O shell all
share these."""

from __future__ import annotations

from dataclasses import dataclass

# Every caller holds this scope; `X-Customer-Scopes` adds to it. A fact without a scope
# has it: what any caller serving this customer may see.
BASIC_SCOPE = "basic"


@dataclass(frozen=True)
class Fact:
    id: str
    text: str
    tags: tuple[str, ...] = ()
    scope: str = BASIC_SCOPE
    source_channel: str = "unknown"
    confirmed: bool = False
    confirmed_at: float | None = None
    created_at: float = 0.0
    # What the fact states, as it would appear in a transcript ("48213", "ann@x.com"):
    # what redaction withholds from a caller outside the fact's scope. Extracted facts
    # set it to the match; an app's fact may set it, else it is read off `text`.
    value: str = ""
    # Found by an extraction pattern in a conversation's turns (its text is the pattern's
    # name and `value`, nothing more): visible in a conversation where the customer
    # states `value`, whatever the caller's scopes.
    extracted: bool = False
    # When its value was last stated again (a later turn referring back to it), if it
    # was: of a kind that keeps several facts, the ones said last stay (gateway.context.
    # people.current_facts). Not `created_at`, which places it in the prompt.
    said_again_at: float | None = None
    # Heard in a turn whose caller did not hold its scope (a contact detail stated by a
    # caller without `verified`): theirs to see in the conversation that stated it, but
    # never verified data elsewhere (gateway.context.unverified).
    stated_unverified: bool = False
    # The conversation whose turns it was heard in ("" for the app's facts, and for
    # facts stored before it was recorded): what decides that a customer stated it
    # *here*, not the time it was heard (another conversation of theirs may run beside).
    heard_in: str = ""


def fact_kind(fact: Fact) -> str:
    """What a fact is about ("name", "order", ...): its first tag, "" without one."""
    return fact.tags[0] if fact.tags else ""


LATEST_TIME = 253402300799  # 9999-12-31T23:59:59Z: the latest time a fact may carry


def heard_in_conversation(fact: Fact, started: float, conversation: str) -> bool:
    """Heard in the turns of `conversation`, which began at `started`: since then, and
    under its id (`Fact.heard_in`; a fact stored before that was recorded goes by when
    it was heard, so another conversation running beside this one may pass for it)."""
    return fact.created_at >= started and fact.heard_in in ("", conversation)


def last_said(fact: Fact) -> float:
    """When a fact was last stated: heard, or stated again by a later turn since."""
    return max(fact.created_at, fact.said_again_at or 0.0)


@dataclass(frozen=True)
class Episode:
    conversation: str
    channel: str
    summary: str
    ended_at: float
    # Its facts above `basic` when it was carded: withheld from a caller without their
    # scope even once the customer's facts document has replaced them (a new phone).
    private: tuple[Fact, ...] = ()
    # The card the summarizer model wrote ("" when none): `summary` is then the
    # deterministic card. The model read turns and a summary that may restate verified
    # data in forms no redaction by value finds ("born 2 March 1985"): shown only to a
    # caller holding every scope the customer's facts use (gateway.context.episodes).
    model_summary: str = ""


@dataclass(frozen=True)
class Memory:
    """What the gateway remembers of one conversation's transcript."""

    summary: str = ""
    cursor: int = 0  # transcript[head_end:cursor] lives in the summary
    # Fingerprints of the first and last summarized messages: a history rewritten at
    # either end of the summarized span (or shortened) resets the memory. Checking every
    # summarized message would cost time in proportion to the whole history each turn.
    anchor: str = ""
    # When the last compaction happened: facts heard in this conversation up to then
    # are shown (their turns are folded, or soon will be); later ones wait for the next.
    facts_until: float = 0.0


@dataclass(frozen=True)
class WindowPolicy:
    """Every number the window engine needs for one conversation class and plan. No
    defaults here: they live once, in the shipped policy (gateway/data/context.yaml),
    and `gateway.context.policy` resolves its layers into a complete WindowPolicy."""

    quota_tokens: int
    system_budget: int
    operational_state_max: int
    facts_floor: int
    facts_ceiling: int
    episodes_ceiling: int
    summary_ceiling: int
    transcript_floor: int
    keep_last_messages: int
    low_water: float
    cache_idle_s: int
    output_reserve: int
    turn_ceiling: int
    progress_window: int
    escalation_action: str
    handoff_message: str
    context_window: int
    priority: int
