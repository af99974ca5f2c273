"""Calling hooks so that one failing plugin never stops the others (pluggy#419).

pluggy stops at the first exception; for notifications the host walks ``hook.get_hookimpls()``
itself, in pluggy's call order, awaits implementations that return awaitables (``acall``), and
turns every exception into a `HookFailure`. ``SystemExit`` raised by a plugin is a failure of
that plugin too (a plugin must not end the host); ``KeyboardInterrupt`` and the other
``BaseException``s (cancellation included) propagate at once.
Wrappers (``wrapper=True`` / ``hookwrapper=True``) are not called: notifications have no result
to wrap. `acall` with a `Guard` (`host.plugins.hook_guard`) runs sync implementations off the event
loop
and bounds every call by a deadline.
"""

from __future__ import annotations

import asyncio
import inspect
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import pluggy

from host.plugins.hook_guard import Guard, guarded_call
from host.plugins.pluggy_internals import call_order

#: What a hook implementation may raise without ending the caller: every ``Exception``, and
#: ``SystemExit`` (a plugin calling ``sys.exit()`` fails alone, as it does at import).
PLUGIN_FAILURES: tuple[type[BaseException], ...] = (Exception, SystemExit)


@attrs.frozen
class HookFailure:
    """One implementation of one hook raised: who, which hook, what, and the traceback text."""

    plugin: str
    hook: str
    exception: BaseException = attrs.field(eq=False)
    traceback: str = attrs.field(eq=False, repr=False)

    def describe(self) -> str:
        return f"plugin {self.plugin!r}: {self.hook} raised {summary(self.exception)}"


@attrs.frozen
class HookResult:
    """One implementation's return value, with the plugin it came from."""

    plugin: str
    value: object


def summary(exc: BaseException) -> str:
    """``TypeName: message`` on one line (multi-line messages joined with `` | ``)."""
    text = " | ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def failure(plugin: str, hook: str, exc: BaseException) -> HookFailure:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return HookFailure(plugin, hook, exc, text)


def implementations(pm: pluggy.PluginManager, hook_name: str) -> list[Any]:
    """The non-wrapper implementations of ``hook_name`` in the order pluggy would call them."""
    caller = getattr(pm.hook, hook_name, None)
    if not isinstance(caller, pluggy.HookCaller):
        return []
    return [i for i in call_order(caller) if not (i.wrapper or i.hookwrapper)]


def _arguments(impl: Any, hook_name: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    missing = [name for name in impl.argnames if name not in kwargs]
    if missing:
        raise TypeError(f"{hook_name} called without argument(s) {', '.join(missing)}")
    names = list(impl.argnames) + [n for n in getattr(impl, "kwargnames", ()) if n in kwargs]
    return {name: kwargs[name] for name in names}


def call(
    pm: pluggy.PluginManager,
    hook_name: str,
    kwargs: Mapping[str, Any],
    *,
    on_awaitable: Callable[[str, Awaitable[Any]], Any] | None = None,
) -> tuple[list[HookResult], list[HookFailure]]:
    """Call every implementation; results (``None`` left out) and failures, in call order.

    An awaitable result is handed to ``on_awaitable(plugin, awaitable)``, whose return value
    becomes the result (``None`` leaves it out).
    """
    results: list[HookResult] = []
    failures: list[HookFailure] = []
    for impl in implementations(pm, hook_name):
        if not pm.is_registered(impl.plugin):  # unregistered by an earlier implementation
            continue
        try:
            value = impl.function(**_arguments(impl, hook_name, kwargs))
        except PLUGIN_FAILURES as exc:  # noqa: BLE001 - collected, logged and recorded by the host
            failures.append(failure(impl.plugin_name, hook_name, exc))
            continue
        if inspect.isawaitable(value) and on_awaitable is not None:
            value = on_awaitable(impl.plugin_name, value)
        if value is not None:
            results.append(HookResult(impl.plugin_name, value))
    return results, failures


async def invoke(
    pm: pluggy.PluginManager,
    impl: Any,
    hook_name: str,
    kwargs: Mapping[str, Any],
    guard: Guard | None = None,
) -> Any:
    """Call one implementation and await what it returns; under a `Guard`, a sync one runs on a
    worker thread and the call is bounded by the hook's deadline (`HookTimeout`)."""
    arguments = _arguments(impl, hook_name, kwargs)
    if guard is not None:
        return await guarded_call(pm, impl.plugin_name, hook_name, impl.function, arguments, guard)
    value = impl.function(**arguments)
    if inspect.isawaitable(value):
        value = await value
    return value


async def acall(
    pm: pluggy.PluginManager,
    hook_name: str,
    kwargs: Mapping[str, Any],
    *,
    guard: Guard | None = None,
) -> tuple[list[HookResult], list[HookFailure]]:
    """Like `call`, awaiting each awaitable result before the next implementation runs; with a
    `guard`, each implementation is called through it (`invoke`)."""
    results: list[HookResult] = []
    failures: list[HookFailure] = []
    for impl in implementations(pm, hook_name):
        if not pm.is_registered(impl.plugin):
            continue
        try:
            value = await invoke(pm, impl, hook_name, kwargs, guard)
        except PLUGIN_FAILURES as exc:  # noqa: BLE001 - collected, logged and recorded by the host
            failures.append(failure(impl.plugin_name, hook_name, exc))
            continue
        if value is not None:
            results.append(HookResult(impl.plugin_name, value))
    return results, failures


def run_awaitable(
    awaitable: Awaitable[Any],
    on_failure: Callable[[BaseException], None],
    pending: set[asyncio.Task] | None = None,
) -> object | None:
    """Settle an awaitable a sync notification got: run it to completion when no event loop runs
    in this thread, else schedule it as a task (its failure reported when it ends). A scheduled
    task stays in ``pending`` until it ends (the loop itself keeps only a weak reference)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None

    async def settle() -> Any:
        try:
            return await awaitable
        except SystemExit as exc:  # asyncio would re-raise it out of the loop
            on_failure(exc)
            return None

    if loop is None:
        try:
            return asyncio.run(settle())
        except PLUGIN_FAILURES as exc:  # noqa: BLE001 - reported by the caller
            on_failure(exc)
            return None
    task = loop.create_task(settle())
    if pending is not None:
        pending.add(task)
        task.add_done_callback(pending.discard)

    def done(t: asyncio.Task) -> None:
        if not t.cancelled() and t.exception() is not None:
            on_failure(t.exception())  # type: ignore[arg-type]

    task.add_done_callback(done)
    return task
