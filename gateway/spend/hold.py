"""A spend reservation and the one life it has: reserved, kept alive while its call
runs, then settled by the call's booking or released, exactly once.

`SpendGuard.held()` (gateway.spend.guard) opens a `Hold`; chat and the pass-through routes
use it the same way, so no route repeats the release-under-a-shield dance.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

if TYPE_CHECKING:
    from gateway.ledger.inflight import InFlight

T = TypeVar("T")


@dataclass(frozen=True)
class Reservation:
    id: str
    model: str  # the model to call: the requested one, or the cheaper one when degraded
    budgets: tuple[str, ...]  # every counter the booking adds to
    guarded: tuple[str, ...]  # the counters this reservation holds an amount on
    degraded_from: str | None = None
    price_as: str | None = None  # an unpriced model is held and booked at this one's price
    # When it was made: the booking is dated then, so the ledger's period is the one whose
    # budgets (`budgets`, named for that day and month) it adds to, for a call running
    # past midnight too (0: not known, booked when it is booked).
    at: float = 0.0

    @property
    def priced_as(self) -> str:
        """The model whose price books the call when the served model has none."""
        return self.price_as or self.model


class Hold:
    """A reservation in flight. `settled()` after the booking that settles it;
    `close()` releases it unless it was settled; renewal stops with either."""

    def __init__(
        self,
        reservation: Reservation,
        release: Callable[[Reservation], Awaitable[None]],
        renew: Callable[[Reservation], Awaitable[None]],
        freed: Callable[[], None],
        renew_every_s: float,
    ) -> None:
        self.reservation = reservation
        self.book_estimate: Callable[[], Awaitable[None]] | None = None
        # The call's worst case, journaled in flight from `forwarded()` until the hold
        # ends (gateway.ledger.inflight); `call`, its id there, its booking's id too.
        self.journal: tuple[InFlight, dict[str, Any]] | None = None
        self.call: str | None = None
        self.handed_over = False
        self.done = False
        self._release = release
        self._renew = renew
        self._freed = freed
        self._renewer: asyncio.Task[None] | None = None
        if reservation.guarded:
            self._renewer = asyncio.get_running_loop().create_task(
                self._keep_alive(renew_every_s), name=f"renew-{reservation.id}"
            )

    async def _keep_alive(self, every_s: float) -> None:
        # A stream may outlast the reservation TTL (a short TTL frees a dead replica's
        # holds sooner): renew it until the call ends.
        while True:
            await asyncio.sleep(every_s)
            await self._renew(self.reservation)

    def forwarded(self) -> None:
        """The call is about to go upstream: journaled in flight until the hold ends."""
        if self.journal is not None and self.call is None and not self.done:
            inflight, entry = self.journal
            self.call = inflight.begin(entry)

    def hand_over(self) -> None:
        """A stream relay now owns the end: leaving `held()` does not release."""
        self.handed_over = True

    def end_with_stream(
        self, book: Callable[[T], Awaitable[None]]
    ) -> Callable[[T], Awaitable[None]]:
        """Hand the hold to a stream relay: its end books the call (settling the hold),
        then releases what the booking did not settle, whatever happened."""
        self.hand_over()

        async def on_done(outcome: T) -> None:
            try:
                await book(outcome)
            finally:
                await self.close()  # a no-op once the booking settled it

        return on_done

    def settled(self) -> None:
        """The booking settled the reservation (in the store, atomically)."""
        if not self.done:
            self._end()
            self._freed()

    async def close(self) -> None:
        """Release unless settled. Shielded: it runs even when the call was cancelled."""
        if not self.done:
            self._end()
            await self.shielded(lambda: self._release(self.reservation))

    @staticmethod
    async def shielded(step: Callable[[], Awaitable[None]]) -> None:
        with anyio.CancelScope(shield=True):
            await step()

    def _end(self) -> None:
        self.done = True
        if self._renewer is not None:
            self._renewer.cancel()
            self._renewer = None
        if self.journal is not None:
            self.journal[0].end(self.call)  # never raises
