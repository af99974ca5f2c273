"""Whether the LLM server is worth calling: after ``llm_down_after`` consecutive calls that could
not reach it (refused, timed out), or one answer that the model does not exist, the provider
stops calling for ``llm_cooloff_s`` seconds and every hook answers offline at once. It says so
once (a warning when it stops, one when it calls again); the skipped calls are traced with the
reason ``server_down`` / ``model_not_found`` but not logged one by one."""

from __future__ import annotations

import logging
import threading
import time

from .provider import LlmError

log = logging.getLogger(__name__)


class LlmSkipped(LlmError):
    """A call not made: the server is cooling off after repeated failures (``quiet``: the
    warning was given once, when the calls stopped)."""

    quiet = True
    attempts = 0


class Availability:
    """Consecutive failures of one provider, and until when it is not called."""

    def __init__(self, name: str, *, down_after: int, cooloff_s: float) -> None:
        self.name = name
        self.down_after = max(1, down_after)
        self.cooloff_s = cooloff_s
        self._lock = threading.Lock()
        self._failures = 0
        self._until = 0.0
        self._why: LlmError | None = None

    def check(self) -> None:
        """Raise `LlmSkipped` while cooling off."""
        with self._lock:
            why, until = self._why, self._until
        if why is not None and time.monotonic() < until:
            left = until - time.monotonic()
            raise LlmSkipped(
                why.reason if why.reason == "model_not_found" else "server_down",
                f"not called for another {left:.0f} s after: {why} (extraction goes on offline)",
            )

    def failed(self, error: LlmError) -> None:
        """Count a call that could not reach the server; the model missing stops at once."""
        with self._lock:
            self._failures += 1
            stop = error.reason == "model_not_found" or self._failures >= self.down_after
            if not stop or (self._why is not None and time.monotonic() < self._until):
                return
            self._why, self._until = error, time.monotonic() + self.cooloff_s
            failures = self._failures
        if error.reason == "model_not_found":
            log.warning(
                "LLM %s: %s; not called for %g s (the offline defaults answer; check llm_model)",
                self.name, error, self.cooloff_s,
            )  # fmt: skip
        else:
            log.warning(
                "LLM %s: %d call(s) in a row failed (%s); not called for %g s, the offline "
                "defaults answer meanwhile",
                self.name, failures, error, self.cooloff_s,
            )  # fmt: skip

    def answered(self) -> None:
        """A call got through: the count starts again."""
        with self._lock:
            was_down = self._why is not None
            self._failures, self._why, self._until = 0, None, 0.0
        if was_down:
            log.warning("LLM %s: answering again", self.name)
