"""Collecting and first-result hook calls for recall, each plugin isolated.

Built on the host's own helpers (`host.notify`): implementations run in pluggy's call order,
async ones are awaited, and one that raises becomes a `HookFailure` naming its plugin, logged
here, without stopping the others.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from host.notify import HookFailure, HookResult, acall, failure, implementations

log = logging.getLogger(__name__)


def _log(failures: list[HookFailure]) -> None:
    for item in failures:
        log.warning("%s", item.describe())


async def collect(host: Any, hook_name: str, **kwargs: Any) -> tuple[list[HookResult], list]:
    """Every implementation's non-``None`` answer, in call order, and the failures."""
    results, failures = await acall(host.pm, hook_name, kwargs)
    _log(failures)
    return results, failures


async def first(
    host: Any, hook_name: str, **kwargs: Any
) -> tuple[HookResult | None, list[HookFailure]]:
    """The first non-``None`` answer (a ``firstresult`` hook), plus the failures met before it."""
    failures: list[HookFailure] = []
    for impl in implementations(host.pm, hook_name):
        args = {name: kwargs[name] for name in impl.argnames if name in kwargs}
        try:
            value = impl.function(**args)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:  # reported with the plugin's name; the next one answers
            failures.append(failure(impl.plugin_name, hook_name, exc))
            continue
        if value is not None:
            _log(failures)
            return HookResult(impl.plugin_name, value), failures
    _log(failures)
    return None, failures
