"""A circuit breaker: after ``threshold`` failures in a row, calls are not made for ``cooloff``
seconds (the breaker is *open*); after that one call is let through as a probe: an answer closes
it, a failure opens it again at once. A hung plugin or an LLM server that is down then costs one
failed call per cool-off, not one per call.

Used per plugin by guarded hook calls (`host.plugins.hook_guard`: one timeout opens it) and per
LLM provider (`memgraph_plugin.llm.openai_compat`). The clocks are parameters, so tests can step
time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

import attrs

Cause = TypeVar("Cause")


@attrs.frozen
class Trip(Generic[Cause]):
    """Why the breaker opened, since when, and when a call is let through again."""

    cause: Cause  # the failure that opened it
    since: float  # wall clock (`time.time()`) of that failure
    retry_at: float  # wall clock after which a probe is let through
    until: float = attrs.field(eq=False, repr=False)  # `retry_at` on the monotonic clock


class CircuitBreaker(Generic[Cause]):
    """Consecutive failures of one callee, and the trip that stops calls to it; thread-safe."""

    def __init__(
        self,
        *,
        cooloff: float,
        threshold: int = 1,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.cooloff = cooloff
        self.threshold = max(1, threshold)
        self._clock, self._wall_clock = clock, wall_clock
        self._lock = threading.Lock()
        self._failures = 0
        self._trip: Trip[Cause] | None = None

    def blocking(self) -> Trip[Cause] | None:
        """The trip while its cool-off lasts: do not call (None: call, maybe as the probe)."""
        with self._lock:
            trip = self._trip
        return trip if trip is not None and self._clock() < trip.until else None

    def seconds_left(self, trip: Trip[Cause]) -> float:
        """Seconds until `trip` lets a probe through."""
        return max(0.0, trip.until - self._clock())

    @property
    def failures(self) -> int:
        """Failed calls in a row."""
        return self._failures

    @property
    def trip(self) -> Trip[Cause] | None:
        """The last trip, cooling off or waiting for its probe (None: closed)."""
        return self._trip

    def failed(self, cause: Cause, *, at_once: bool = False) -> Trip[Cause] | None:
        """Count a failed call (``at_once``: open now, whatever the count); the new trip when
        this failure opened the breaker, else None (still closed, or already cooling off)."""
        with self._lock:
            self._failures += 1
            if not at_once and self._failures < self.threshold:
                return None
            now = self._clock()
            if self._trip is not None and now < self._trip.until:
                return None
            wall = self._wall_clock()
            self._trip = Trip(cause, wall, wall + self.cooloff, now + self.cooloff)
            return self._trip

    def answered(self) -> Trip[Cause] | None:
        """A call got through: the count starts again; the trip this closed, if it was open."""
        with self._lock:
            trip, self._trip, self._failures = self._trip, None, 0
        return trip
