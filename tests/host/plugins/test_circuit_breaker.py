"""The one circuit breaker (plugins past their deadline, an LLM server down), on a stepped clock:
it opens after `threshold` failures in a row (or at once), stays open for its cool-off, lets a
probe through after it, and an answer closes it."""

from __future__ import annotations

from host.plugins.circuit_breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_it_opens_after_threshold_failures_and_lets_a_probe_through_after_its_cooloff():
    clock, wall = Clock(), Clock()
    breaker: CircuitBreaker[str] = CircuitBreaker(
        cooloff=30, threshold=3, clock=clock, wall_clock=wall
    )
    assert breaker.failed("a") is None and breaker.failed("b") is None
    assert breaker.blocking() is None  # two failures: still called
    trip = breaker.failed("c")
    assert trip is not None and trip.cause == "c" and trip.retry_at == trip.since + 30
    assert breaker.blocking() == trip and breaker.seconds_left(trip) == 30
    assert breaker.failed("d") is None  # already open: the trip stays the first one
    clock.now += 29.9
    assert breaker.blocking() == trip
    clock.now += 0.2
    assert breaker.blocking() is None and breaker.trip == trip  # the probe may go
    again = breaker.failed("e")  # the probe failed: open again at once
    assert again is not None and again.cause == "e" and breaker.blocking() == again
    clock.now += 31
    assert breaker.answered() == again  # the probe answered: closed, the count starts again
    assert breaker.trip is None and breaker.answered() is None
    assert breaker.failed("f") is None and breaker.failures == 1


def test_a_failure_at_once_opens_it_whatever_the_count_and_no_cooloff_never_blocks():
    clock = Clock()
    breaker: CircuitBreaker[str] = CircuitBreaker(cooloff=5, threshold=10, clock=clock)
    assert breaker.failed("missing", at_once=True) is not None
    assert breaker.blocking() is not None
    never: CircuitBreaker[str] = CircuitBreaker(cooloff=0, clock=clock)
    assert never.failed("x") is not None and never.blocking() is None
