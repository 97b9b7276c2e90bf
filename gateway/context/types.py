"""The plain data the context engine works on: what a customer's facts and earlier
episodes are, what the gateway remembers of a conversation, and the numbers of a window
policy. Standard library only: the pure engine, the prompt texts and the I/O shell all
share these."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fact:
    id: str
    text: str
    tags: tuple[str, ...] = ()
    scope: str = "basic"
    source_channel: str = "unknown"
    confirmed: bool = False
    confirmed_at: float | None = None
    created_at: float = 0.0
    # What the fact states, as it would appear in a transcript ("48213", "ann@x.com"):
    # what redaction withholds from a caller outside the fact's scope. Extracted facts
    # set it to the match; an app's fact may set it, else it is read off `text`.
    value: str = ""


@dataclass(frozen=True)
class Episode:
    conversation: str
    channel: str
    summary: str
    ended_at: float


@dataclass(frozen=True)
class Memory:
    """What the gateway remembers of one conversation's transcript."""

    summary: str = ""
    cursor: int = 0  # transcript[head_end:cursor] lives in the summary
    # Fingerprints of the first and last summarized messages: a history rewritten at
    # either end of the summarized span (or shortened) resets the memory. Checking every
    # summarized message would cost time in proportion to the whole history each turn.
    anchor: str = ""


@dataclass(frozen=True)
class WindowPolicy:
    """Every number the window engine needs for one conversation class and plan."""

    quota_tokens: int = 6000
    system_budget: int = 800
    operational_state_max: int = 400
    facts_floor: int = 200
    facts_ceiling: int = 1200
    episodes_ceiling: int = 1600
    summary_ceiling: int = 3000
    transcript_floor: int = 2000
    keep_last_messages: int = 4
    low_water: float = 0.6
    output_reserve: int = 800
    turn_ceiling: int = 40
    progress_window: int = 3
    escalation_action: str = "signal"
    handoff_message: str = (
        "I am sorry we are going around in circles. Let me hand you over to a member of "
        "our team, who will continue from here."
    )
    context_window: int = 128_000
    priority: int = 0
