"""How long the gateway keeps what it holds per conversation and per customer
(`policies/retention.yaml`), so that its state is bounded by the traffic of a period,
not by every conversation ever held.

- a conversation's record expires once idle `conversation_idle_days` (each turn
  pushes the expiry back), and so do facts kept under a conversation's own id;
- a customer's episode index (the cards of their earlier conversations) expires
  `episodes_days` after its last change and holds their newest `episodes_kept`
  conversations: registering one more forgets the oldest, its record and its facts;
- a customer's facts document is kept until deleted (`facts_days: null`), or expires
  `facts_days` after its last change.
A plan may override any of these (`plans: {basic: {conversation_idle_days: 7}}`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

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
        self._default = self._resolve(RetentionEntry())
        self._plans = {name: self._resolve(entry) for name, entry in self.file.plans.items()}

    def _resolve(self, entry: RetentionEntry) -> Kept:
        f = self.file
        facts = entry.facts_days if entry.facts_days is not None else f.facts_days
        return Kept(
            conversation_s=(entry.conversation_idle_days or f.conversation_idle_days) * _DAY_S,
            episodes_s=(entry.episodes_days or f.episodes_days) * _DAY_S,
            facts_s=None if facts is None else facts * _DAY_S,
            episodes=entry.episodes_kept or f.episodes_kept,
        )

    def of(self, plan: str) -> Kept:
        return self._plans.get(plan, self._default)


def load_retention(policies_dir: Path) -> Retention:
    path = policies_dir / RETENTION_FILE
    if not path.exists():
        return Retention()
    return Retention(validate(RetentionFile, read_yaml(path), path))
