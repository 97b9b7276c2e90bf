"""A store that just failed fails the next calls at once, instead of each waiting out its
timeout again.

After a call fails for the store's sake (`StoreUnavailable`, not a busy pool), the next
calls raise at once for `RETRY_AFTER_S`; then one call tries while the others still fail
at once, and its success ends the state. So during an outage a request pays one bounded
wait per second per store, not one per store call it makes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from gateway.errors import StoreBusy, StoreRejected, StoreUnavailable

RETRY_AFTER_S = 1.0


class FailFast:
    """The fail-fast state of one store connection (or thread): wrap each call in
    `with state.guard():`."""

    def __init__(self, retry_after_s: float = RETRY_AFTER_S) -> None:
        self.retry_after_s = retry_after_s
        self._failing: str | None = None
        self._retry_at = 0.0
        self._trying = False

    @property
    def failing(self) -> bool:
        """The last call failed for the store's sake (and none has succeeded since)."""
        return self._failing is not None

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """One store call: raises `StoreUnavailable` at once while the store is known to
        fail; otherwise runs the call and notes how it ended."""
        trial = self._admit()
        try:
            yield
        except StoreBusy:
            raise  # this process's own load: the store itself answers
        except StoreUnavailable as exc:
            self._failing = exc.message
            self._retry_at = time.monotonic() + self.retry_after_s
            raise
        except StoreRejected:
            self._failing = None  # the store answered: the data was at fault
            raise
        else:
            self._failing = None
        finally:
            if trial:
                self._trying = False

    def _admit(self) -> bool:
        """Raise at once while failing; True when this call is the one that tries again."""
        if self._failing is None:
            return False
        if self._trying or time.monotonic() < self._retry_at:
            raise StoreUnavailable(f"{self._failing} (not retried yet)")
        self._trying = True
        return True
