"""A conversation as the gateway keeps it (ConversationRecord: counters, summary, the
last verbatim turns, loop state), how it is stored field by field, and which request
may use it: an app's id, or for an app that sends none the fingerprint of its opening
and the history it last saw. Pure: gateway.context.conversations stores it."""

from __future__ import annotations

import dataclasses
import hashlib
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.context.record_merge import MESSAGE_FIELD, relay_place
from gateway.context.types import Memory
from gateway.messages import SYSTEM_ROLES, message_text, role


@dataclass
class ConversationRecord:
    id: str
    tenant: str
    customer: str | None = None
    channel: str = "unknown"
    conversation_class: str | None = None
    plan: str = ""
    model: str = ""
    turns: int = 0
    summary: str = ""
    cursor: int = 0
    anchor: str = ""
    facts_until: float = 0.0  # Memory.facts_until
    opening: list[Any] = field(default_factory=list)  # the opening turn(s), verbatim
    recent: list[Any] = field(default_factory=list)  # the last verbatim turns seen
    operational_state: str | None = None
    window_tokens: int = 0
    evicted_messages: int = 0
    quota_hits: int = 0
    over_quota_turns: int = 0
    summary_recompressions: int = 0
    cost_units: int = 0
    first_turn_cost_units: int | None = None
    started: float = 0.0
    last_seen: float = 0.0
    closed: bool = False
    escalation: str | None = None  # the latest escalation's reason
    escalations: int = 0
    # A loop noticed once its last turn was answered: its action (the header, the
    # instruction, the handoff) applies to the next turn answered.
    escalation_pending: str | None = None
    # The turn the latest escalation's action was applied to (answered with it): a
    # client's retry of that turn gets the action again (gateway.loops.escalation).
    escalated_turn: int = 0
    loop_state: dict[str, Any] | None = None  # gateway.loops.detector.LoopState, as JSON
    last_event: str | None = None  # the app's latest event: progress / resolved
    events: int = 0  # events the app posted
    version: int = 0  # of the stored record: each write adds one (ConversationStore.save)
    replacing: bool = False  # replaces another user's record whole (never merged into it)
    recent_at: int = 0  # the transcript place of recent[0]
    # The answer relayed to the newest message, and the transcript place it takes: a
    # stateless app sends it back with its next turn, so the one it never sends back is
    # an episode's last answer.
    last_reply: str = ""
    last_reply_at: int = 0
    # The attempt whose answer `last_reply` is (`answer_mark`): the history it answered,
    # when it began, whether the client marked it a retry.
    answered: dict[str, Any] | None = None
    # When each answer still unfolded was relayed, by its transcript place: [time, CRC-32
    # of its text]. A fold reads an answer as said then ("tomorrow" gets its day), if the
    # app sent it back unchanged.
    relayed: dict[str, list[float]] = field(default_factory=dict)
    # The wall-clock time (s) until which its customer's episode index is known to live,
    # as this conversation last restarted or registered it (ConversationStore.save).
    index_until: float = 0.0
    degraded: bool = False  # built while the store was down: not persisted
    # Each stored field as last read or written (orjson): a save writes what differs.
    stored: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    # Not stored: whether this turn read or learned any facts (None: not known).
    facts_held: bool | None = field(default=None, repr=False, compare=False)
    # Not stored: when its customer was last erased as the turn began (None: not known
    # to be), so its saves can tell an erasure that ran while it was in flight.
    erasure_seen: float | None = field(default=None, repr=False, compare=False)

    def relay(self, place: int, reply: str, now: float) -> None:
        """The answer at `place` (of the messages after the leading system ones, as the
        window engine counts them) was relayed at `now`; answers from `recent_at` on are
        remembered (earlier ones are folded or in the opening), at most RELAYED_KEPT."""
        kept = [(p, v) for p, v in relay_entries(self.relayed).items() if p >= self.recent_at]
        if reply:
            kept.append((place, (now, text_crc(reply))))
        self.relayed = {str(p): [t, float(crc)] for p, (t, crc) in kept[-RELAYED_KEPT:]}

    def relayed_times(self, first: int, messages: Sequence[Any]) -> list[float | None]:
        """For messages from place `first` on: when each was relayed, for an answer this
        gateway relayed that comes back as it was said (else None)."""
        entries = relay_entries(self.relayed)
        out: list[float | None] = []
        for place, message in enumerate(messages, first):
            seen = entries.get(place)
            if seen is None or role(message) != "assistant":
                out.append(None)
            else:
                out.append(seen[0] if seen[1] == text_crc(message_text(message)) else None)
        return out

    @property
    def memory(self) -> Memory:
        return Memory(self.summary, self.cursor, self.anchor, self.facts_until)

    def remember(self, memory: Memory) -> None:
        self.summary, self.cursor, self.anchor = memory.summary, memory.cursor, memory.anchor
        self.facts_until = memory.facts_until

    def to_json(self) -> dict[str, Any]:
        # Shallow on purpose: dataclasses.asdict deep-copies every stored message, on
        # every turn; orjson serializes the nested lists as they are.
        return {f.name: getattr(self, f.name) for f in RECORD_FIELDS}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ConversationRecord:
        return cls(**{k: v for k, v in doc.items() if k in RECORD_NAMES})

    def to_fields(self) -> dict[str, Any]:
        """As stored: `recent` as one field per message, named by its transcript place."""
        doc = self.to_json()
        del doc["recent"], doc["version"], doc["replacing"]
        for place, message in enumerate(self.recent, self.recent_at):
            doc[f"{MESSAGE_FIELD}{place}"] = message
        return doc

    @classmethod
    def from_fields(cls, doc: dict[str, Any]) -> ConversationRecord:
        places = sorted(
            (int(k.removeprefix(MESSAGE_FIELD)), k) for k in doc if k.startswith(MESSAGE_FIELD)
        )
        values = {k: v for k, v in doc.items() if k in RECORD_NAMES}
        values["version"] = int(doc.get("version") or 0)
        if places:  # else a record of an earlier version: `recent` is a field
            values["recent"] = [doc[k] for _, k in places]
            values["recent_at"] = places[0][0]
        record = cls(**values)
        record.stored = {k: orjson.dumps(v) for k, v in doc.items() if k != "version"}
        return record

    def public(self) -> dict[str, Any]:
        """What `GET /v1/conversations/{id}` shows the tenant."""
        doc = self.to_json()
        for private in (
            "opening",
            "recent",
            "anchor",
            "facts_until",
            "tenant",
            "degraded",
            "loop_state",
            "recent_at",
            "replacing",
            "last_reply",
            "last_reply_at",
            "answered",
            "relayed",
            "index_until",
        ):
            doc.pop(private)
        doc["class"] = doc.pop("conversation_class")
        state = self.loop_state or {}
        doc["loop"] = {
            "streak": state.get("streak", 0),
            "loop_turns": state.get("loop_turns", 0),
            "last_progress_turn": state.get("last_progress_turn", 0),
        }
        return doc


RELAYED_KEPT = 256  # answers whose relay time a record remembers


def text_crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def relay_entries(value: Any) -> dict[int, tuple[float, int]]:
    """A stored `relayed` field as {place: (time, CRC)}; what cannot be read (a record
    written by hand, or damaged) is left out, never an error."""
    out: dict[int, tuple[float, int]] = {}
    if not isinstance(value, dict):
        return out
    for key, entry in value.items():
        place = relay_place(key)
        if place is None or not isinstance(entry, list) or len(entry) != 2:
            continue
        time, crc = entry
        if isinstance(time, int | float) and isinstance(crc, int | float):
            out[place] = (float(time), int(crc))
    return out


_UNSTORED = ("stored", "facts_held", "erasure_seen")
RECORD_FIELDS = tuple(f for f in dataclasses.fields(ConversationRecord) if f.name not in _UNSTORED)
RECORD_NAMES = frozenset(f.name for f in RECORD_FIELDS)


FINGERPRINT_PREFIX = "fp-"  # ids the gateway made; an app's own ids should not start so


def conversation_fingerprint(tenant: str, customer: str | None, messages: list[Any]) -> str:
    """Identity of a conversation whose app sends no X-Conversation-Id: tenant, customer,
    system message and first user message, which a stateless app resends every turn.

    Without a customer id this is shared by everyone who opens the same way ("Hi"): such
    an anonymous record is only used by a request whose history extends what the record
    last saw (see `continued`), and it holds no state that the app can set."""
    system = next((message_text(m) for m in messages if role(m) in SYSTEM_ROLES), "")
    first = next((message_text(m) for m in messages if role(m) == "user"), "")
    digest = hashlib.blake2b(digest_size=12)
    for part in (tenant, customer or "", system, first):
        digest.update(part.encode() + b"\x1f")
    return FINGERPRINT_PREFIX + digest.hexdigest()


def archived_id(record: ConversationRecord) -> str:
    """The id a customer's earlier session under a fingerprint is kept as, closed, once
    their next session takes the fingerprint (`{fingerprint}@{its start}`)."""
    return f"{record.id}@{int(record.started)}"


def heard_in_of(record: ConversationRecord) -> str:
    """The conversation id its facts were heard under (`Fact.heard_in`): its own, or for
    an archived fingerprint session the fingerprint it ran under."""
    if record.id.startswith(FINGERPRINT_PREFIX):
        return record.id.partition("@")[0]
    return record.id


def is_anonymous(record: ConversationRecord) -> bool:
    """Known only by its opening: neither the app nor a customer id names it."""
    return record.customer is None and record.id.startswith(FINGERPRINT_PREFIX)


def transcript_of(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """The conversation's turns as a record keeps them: every message but the app's
    system and developer instructions."""
    return [m for m in messages if isinstance(m, dict) and role(m) not in SYSTEM_ROLES]


def answer_mark(transcript: Sequence[Any], started: float, retried: bool) -> dict[str, Any]:
    """What `ConversationRecord.answered` holds of an attempt: the history it answered (its
    length and a CRC-32 of its last two messages: a retry sends the same bytes), when it
    began, and whether the client marked it a retry."""
    tail = zlib.crc32(orjson.dumps(list(transcript[-2:]), default=str))
    return {"history": f"{len(transcript)}:{tail}", "started": started, "retry": retried}


def repeated(record: ConversationRecord, messages: Sequence[Any]) -> bool:
    """Whether this request's history is the last answered one's: as long, with the same
    opening and the same turns the record still holds verbatim at the same places. Only
    a client's retry says it is the same turn: an app that sends a sliding window of its
    last messages can send the same bytes twice when a customer and an agent repeat
    themselves (a loop), and that is two turns. A first request answered holds its
    opening alone (no turn past it in `recent`): sent again, it is that turn again."""
    if record.last_reply_at <= 0 or not record.opening:
        return False
    transcript = transcript_of(messages)
    if len(transcript) != record.last_reply_at:
        return False
    head = len(record.opening)
    return transcript[:head] == record.opening and transcript[record.recent_at :] == record.recent


def started_over(record: ConversationRecord | None, messages: Sequence[Any]) -> bool:
    """A customer's conversation known by its fingerprint (the app sends X-Customer-Id,
    no X-Conversation-Id), answered past its opening, whose app now sends its opening
    alone: the customer's next session, opening the same way ("Hi"), not a turn of this
    one (an edited, regenerated or shortened later message keeps more than the opening;
    a retry of the opening turn is before any answer past it)."""
    if record is None or not record.customer or not record.id.startswith(FINGERPRINT_PREFIX):
        return False
    return bool(record.recent) and len(transcript_of(messages)) <= len(record.opening)


def continued(
    record: ConversationRecord | None, messages: list[Any], retried: bool = False
) -> ConversationRecord | None:
    """The record, if this request may use it. An anonymous record only serves a request
    whose history strictly extends the one it last saw: the same opening, and the turns
    it still holds verbatim (everything after its summary) at the same places. Two end
    users with the same opening therefore never share a summary or the turns after it
    (the last request sent again whole by a client `retried`, `repeated`, is the same
    user's turn); a request that does not continue the record starts afresh (and, when
    saved, replaces it: the price of having no id is that such users reset each other's
    memory). A record that holds its opening alone (one answered turn, its answer not sent
    back yet) is continued by any history that extends that opening: the second user's
    next turn then counts on the first one's turn and loop state (the answer is not
    compared: apps rewrite it before sending it back)."""
    if record is None or not is_anonymous(record):
        return record
    transcript = transcript_of(messages)
    head = len(record.opening)
    start = max(record.cursor, head)
    end = start + len(record.recent)
    if (
        len(transcript) > end
        and transcript[:head] == record.opening
        and transcript[start:end] == record.recent
    ):
        return record
    return record if retried and repeated(record, messages) else None  # its retry
