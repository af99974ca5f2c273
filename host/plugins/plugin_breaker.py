"""The circuit breaker of guarded hook calls: a plugin whose call ran past its deadline is *stuck*,
and every guarded call of that plugin (any hook) is skipped at once for a cool-off period
(setting ``hook_cooloff_seconds``); then it is called again: an answer in time clears it, another
timeout trips it again. So a hung plugin costs one deadline per cool-off, not one per call.

The state is kept per plugin manager (one host), read by the ``plugins`` listing (when, which
hook, why, retried when).
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any

import attrs

from host.settings.settings_schema import Kind, declare

COOLOFF_SETTING = "hook_cooloff_seconds"
#: Seconds a plugin that timed out is skipped before it is called again.
DEFAULT_COOLOFF = 60.0

declare(
    COOLOFF_SETTING,
    Kind.NUMBER,
    DEFAULT_COOLOFF,
    "Seconds a plugin whose hook ran past its deadline is skipped (marked stuck in `plugins`) "
    "before it is called again.",
    minimum=0,
)


@attrs.frozen
class Stuck:
    """Why and since when a plugin is skipped, and when it is called again."""

    plugin: str
    hook: str
    reason: str
    since: float  # time.time() of the timeout
    retry_at: float  # time.time() after which it is called again
    retry_monotonic: float = attrs.field(eq=False, repr=False)

    def describe(self) -> str:
        since = time.strftime("%H:%M:%S", time.localtime(self.since))
        retry = time.strftime("%H:%M:%S", time.localtime(self.retry_at))
        return f"stuck since {since} ({self.hook} {self.reason}); skipped until {retry}"

    def to_json(self) -> dict[str, Any]:
        return {
            "hook": self.hook,
            "reason": self.reason,
            "since": self.since,
            "retry_at": self.retry_at,
        }


_lock = threading.Lock()
_STATE: weakref.WeakKeyDictionary[Any, dict[str, Stuck]] = weakref.WeakKeyDictionary()


def trip(owner: Any, plugin: str, hook: str, reason: str, cooloff: float) -> Stuck:
    """Mark `plugin` stuck (its `hook` call `reason`) for `cooloff` seconds."""
    now, mono = time.time(), time.monotonic()
    stuck = Stuck(plugin, hook, reason, now, now + cooloff, mono + cooloff)
    with _lock:
        _STATE.setdefault(owner, {})[plugin] = stuck
    return stuck


def cooling(owner: Any, plugin: str) -> Stuck | None:
    """The stuck state of `plugin` while its cool-off lasts (None: call it)."""
    with _lock:
        stuck = _STATE.get(owner, {}).get(plugin)
    if stuck is None or time.monotonic() >= stuck.retry_monotonic:
        return None
    return stuck


def stuck_state(owner: Any, plugin: str) -> Stuck | None:
    """The last trip of `plugin`, cooling off or waiting for its retry (None: not stuck)."""
    with _lock:
        return _STATE.get(owner, {}).get(plugin)


def clear(owner: Any, plugin: str) -> None:
    """`plugin` answered in time: no longer stuck."""
    with _lock:
        state = _STATE.get(owner)
        if state is not None:
            state.pop(plugin, None)
