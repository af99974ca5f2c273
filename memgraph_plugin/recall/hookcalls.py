"""Collecting and first-result hook calls for recall, each plugin isolated.

Built on the host's own helpers (`host.plugins.notify`): implementations run in pluggy's call order,
async ones are awaited, and one that raises becomes a `HookFailure` naming its plugin, logged
and recorded on its plugin record (`Host.record_failures`), without stopping the others. Calls
are guarded like the host's notifications (`host.plugins.hook_guard`): sync implementations run on
worker threads and each has a deadline; one past it is a `HookTimeout` failure, and the turn
goes on without it.
"""

from __future__ import annotations

import logging
from typing import Any

from host.plugins.hook_guard import Guard
from host.plugins.notify import (
    PLUGIN_FAILURES,
    HookFailure,
    HookResult,
    acall,
    failure,
    implementations,
)
from host.plugins.notify import invoke as invoke_impl

log = logging.getLogger(__name__)


def _guard(host: Any, hook_name: str) -> Guard:
    guard_for = getattr(host, "guard_for", None)
    guard = guard_for(hook_name) if guard_for is not None else None
    return guard if guard is not None else Guard.from_settings(getattr(host, "settings", None))


def report_failures(host: Any, failures: list[HookFailure]) -> None:
    """Log and record `failures` on their plugins' records (an answer that was junk, too)."""
    _report(host, failures)


def _report(host: Any, failures: list[HookFailure]) -> None:
    record = getattr(host, "record_failures", None)
    if record is not None:
        try:
            record(failures)
            return
        except Exception:  # reporting must never break a turn
            log.exception("recording hook failures failed")
    for item in failures:
        log.warning("%s", item.describe())


async def collect(host: Any, hook_name: str, **kwargs: Any) -> tuple[list[HookResult], list]:
    """Every implementation's non-``None`` answer, in call order, and the failures."""
    results, failures = await acall(host.pm, hook_name, kwargs, guard=_guard(host, hook_name))
    _report(host, failures)
    return results, failures


async def first(
    host: Any, hook_name: str, **kwargs: Any
) -> tuple[HookResult | None, list[HookFailure]]:
    """The first non-``None`` answer (a ``firstresult`` hook), plus the failures met before it."""
    failures: list[HookFailure] = []
    guard = _guard(host, hook_name)
    for impl in implementations(host.pm, hook_name):
        args = {name: kwargs[name] for name in impl.argnames if name in kwargs}
        try:
            value = await invoke_impl(host.pm, impl, hook_name, args, guard)
        except PLUGIN_FAILURES as exc:  # reported with the plugin's name; the next one answers
            failures.append(failure(impl.plugin_name, hook_name, exc))
            continue
        if value is not None:
            _report(host, failures)
            return HookResult(impl.plugin_name, value), failures
    _report(host, failures)
    return None, failures
