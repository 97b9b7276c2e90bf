"""How long the gateway keeps what it holds per conversation and per customer
(`policies/retention.yaml`), so that its state is bounded by the traffic of a period,
not by every conversation ever held.

- a conversation's record expires once idle `conversation_idle_days` (each turn
  pushes the expiry back), and so do facts kept under a conversation's own id;
- a customer's episode index (the cards of their earlier conversations) expires
  `episodes_days` after its last change, but never before a conversation it lists
  (an erasure finds the customer's conversations through it): a turn restarts its
  expiry when the conversation would otherwise outlive it, so `episodes_days` may not
  be below `conversation_idle_days`. It holds the `episodes_kept` conversations active
  last: registering one more forgets the one idle longest, its record and its facts;
- a customer's facts document is kept until deleted (`facts_days: null`), or expires
  whole `facts_days` after its last write (not fact by fact).
A plan may override any of these (`plans: {basic: {conversation_idle_days: 7}}`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, model_validator

from gateway.yamlfile import Strict, read_yaml, validate

RETENTION_FILE = "retention.yaml"
_DAY_S = 86_400.0


class RetentionEntry(Strict):
    conversation_idle_days: float | None = Field(default=None, gt=0)
    episodes_days: float | None = Field(default=None, gt=0)
    facts_days: float | None = Field(default=None, gt=0)
    episodes_kept: int | None = Field(default=None, ge=1, le=1000)


class RetentionFile(Strict):
    conversation_idle_days: float = Field(default=30, gt=0)
    episodes_days: float = Field(default=180, gt=0)
    facts_days: float | None = Field(default=None, gt=0)  # None: until deleted
    episodes_kept: int = Field(default=50, ge=1, le=1000)
    plans: dict[str, RetentionEntry] = {}

    @model_validator(mode="after")
    def _index_outlives_its_conversations(self) -> RetentionFile:
        """An index that could expire before a conversation it lists would hide that
        conversation from the customer's erasure and export."""
        for name, entry in [("", RetentionEntry()), *self.plans.items()]:
            kept = kept_of(self, entry)
            if kept.episodes_s < kept.conversation_s:
                where = f"plans.{name}: " if name else ""
                raise ValueError(
                    f"{where}episodes_days is below conversation_idle_days: a customer's "
                    "episode index must outlive the conversations it lists (an erasure "
                    "finds them through it)"
                )
        return self


@dataclass(frozen=True, slots=True)
class Kept:
    """A plan's retention, in seconds (None: kept until deleted)."""

    conversation_s: float
    episodes_s: float
    facts_s: float | None
    episodes: int


class Retention:
    def __init__(self, file: RetentionFile | None = None) -> None:
        self.file = file or RetentionFile()
        self._default = kept_of(self.file, RetentionEntry())
        self._plans = {name: kept_of(self.file, entry) for name, entry in self.file.plans.items()}

    def of(self, plan: str) -> Kept:
        return self._plans.get(plan, self._default)


def kept_of(file: RetentionFile, entry: RetentionEntry) -> Kept:
    """A plan's entry over the file's values."""
    facts = entry.facts_days if entry.facts_days is not None else file.facts_days
    return Kept(
        conversation_s=(entry.conversation_idle_days or file.conversation_idle_days) * _DAY_S,
        episodes_s=(entry.episodes_days or file.episodes_days) * _DAY_S,
        facts_s=None if facts is None else facts * _DAY_S,
        episodes=entry.episodes_kept or file.episodes_kept,
    )


def load_retention(policies_dir: Path) -> Retention:
    path = policies_dir / RETENTION_FILE
    if not path.exists():
        return Retention()
    return Retention(validate(RetentionFile, read_yaml(path), path))
