"""Calling collecting and first-result hooks with each plugin isolated.

pluggy stops at the first implementation that raises; recall must not. These helpers walk the
implementations in pluggy's call order, await async ones, and log a failure with the plugin's name.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

import attrs

log = logging.getLogger(__name__)


@attrs.frozen
class HookAnswer:
    """One implementation's answer (``error`` set when it raised)."""

    plugin: str
    value: Any = None
    error: BaseException | None = None


def _impls(host: Any, hook_name: str) -> list[Any]:
    caller = getattr(host.pm.hook, hook_name, None)
    if caller is None:
        return []
    return list(reversed(caller.get_hookimpls()))  # pluggy calls the last registered first


async def _call(impl: Any, hook_name: str, kwargs: dict[str, Any]) -> HookAnswer:
    args = {name: kwargs[name] for name in impl.argnames if name in kwargs}
    try:
        value = impl.function(**args)
        if inspect.isawaitable(value):
            value = await value
    except Exception as exc:
        log.warning("plugin %s failed in %s: %r", impl.plugin_name, hook_name, exc)
        return HookAnswer(impl.plugin_name, None, exc)
    return HookAnswer(impl.plugin_name, value)


async def collect(host: Any, hook_name: str, **kwargs: Any) -> list[HookAnswer]:
    """Every implementation's answer, in call order; ``None`` answers are kept out."""
    answers = []
    for impl in _impls(host, hook_name):
        answer = await _call(impl, hook_name, kwargs)
        if answer.error is not None or answer.value is not None:
            answers.append(answer)
    return answers


async def first(host: Any, hook_name: str, **kwargs: Any) -> tuple[HookAnswer | None, list]:
    """The first non-``None`` answer, plus the failures met before it."""
    failures: list[HookAnswer] = []
    for impl in _impls(host, hook_name):
        answer = await _call(impl, hook_name, kwargs)
        if answer.error is not None:
            failures.append(answer)
        elif answer.value is not None:
            return answer, failures
    return None, failures
