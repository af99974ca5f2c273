"""Guarded hook calls: no plugin can stall the event loop, other chats or its caller for long.

A guarded call runs a sync implementation on a daemon worker thread (never on the event loop)
and waits for any implementation at most its deadline; past it the caller goes on without it and
gets a `HookTimeout` failure naming the plugin. A sync call still running past its deadline is
"stuck": the next calls of that plugin's hook are skipped (reported the same way) until it
returns, so a hung plugin holds at most one thread per hook. An async implementation past its
deadline is cancelled.

Deadlines are settings: ``hook_deadline_seconds`` (default `DEFAULT_DEADLINE`) for every guarded
hook, ``hook_deadlines`` (a table hook name -> seconds) per hook; `DEFAULT_DEADLINES` gives the
hooks that usually wait on a language model more time.

An implementation marked `inline` (a pure computation that never waits, like the built-in offline
extractor) is called on the loop in the caller's task: no thread hop, task or timer per call.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import queue
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

import attrs

from host.plugins.circuit_breaker import CircuitBreaker, Trip
from host.settings.settings_schema import Table, setting, settings_room

DEADLINE_SETTING = "hook_deadline_seconds"
DEADLINES_SETTING = "hook_deadlines"
COOLOFF_SETTING = "hook_cooloff_seconds"
#: Seconds a plugin that timed out is skipped before it is called again.
DEFAULT_COOLOFF = 60.0
#: Seconds a guarded hook implementation may take (setting ``hook_deadline_seconds``).
DEFAULT_DEADLINE = 30.0
#: Per-hook defaults (setting ``hook_deadlines`` overrides): extraction and summaries may wait on
#: a language model.
DEFAULT_DEADLINES: Mapping[str, float] = {"memgraph_extract": 120.0, "memgraph_summarise": 120.0}


@settings_room
class HookGuardKeys:
    hook_deadline_seconds: float = setting(
        DEFAULT_DEADLINE,
        "Seconds a guarded hook implementation may take before it is reported (HookTimeout) and "
        "skipped.",
        minimum=0,
    )
    hook_deadlines: Table = setting(
        dict(DEFAULT_DEADLINES),
        "Per-hook deadlines in seconds, a table hook name -> seconds (overrides "
        "hook_deadline_seconds for those hooks).",
    )
    hook_cooloff_seconds: float = setting(
        DEFAULT_COOLOFF,
        "Seconds a plugin whose hook ran past its deadline is skipped (marked stuck in `plugins`) "
        "before it is called again.",
        minimum=0,
    )


INLINE = "__hook_inline__"


def inline(function: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a hook implementation as a pure computation that never waits: a guarded call runs it
    on the event loop in the caller's task, with no worker thread, task or deadline timer. A
    deadline could not stop it anyway: it holds the loop until it returns either way. Its
    failures are reported like any other's (for the built-in offline extractor and summariser;
    a plugin that awaits I/O must not use it)."""
    setattr(function, INLINE, True)
    return function


class HookTimeout(Exception):
    """A hook implementation did not finish within its deadline (the caller went on)."""


class PluginStuck(HookTimeout):
    """A call skipped at once: its plugin timed out and its circuit breaker is open."""


@attrs.frozen
class StuckCall:
    """The call that made a plugin stuck (opened its breaker): its hook and why."""

    hook: str
    reason: str


@attrs.frozen
class Guard:
    """How guarded calls run: sync implementations off the loop, each hook with its deadline."""

    deadline: float | None = DEFAULT_DEADLINE
    per_hook: Mapping[str, float] = attrs.field(factory=lambda: dict(DEFAULT_DEADLINES))
    cooloff: float = DEFAULT_COOLOFF  # seconds a plugin that timed out is skipped

    def deadline_of(self, hook_name: str) -> float | None:
        return self.per_hook.get(hook_name, self.deadline)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> Guard:
        """The guard the settings ask for (a bad value: the default, never an error here; the
        settings schema reports it)."""
        settings = settings or {}
        deadline = _seconds(settings.get(DEADLINE_SETTING), DEFAULT_DEADLINE)
        per_hook = dict(DEFAULT_DEADLINES)
        table = settings.get(DEADLINES_SETTING)
        if isinstance(table, Mapping):
            for name, value in table.items():
                per_hook[str(name)] = _seconds(value, deadline)
        cooloff = settings.get(COOLOFF_SETTING, DEFAULT_COOLOFF)
        if isinstance(cooloff, bool) or not isinstance(cooloff, (int, float)) or cooloff < 0:
            cooloff = DEFAULT_COOLOFF
        return cls(deadline, per_hook, float(cooloff))


def _seconds(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        return default
    return float(value)


class DaemonWorkers:
    """Daemon threads for sync hook implementations: one that never returns blocks neither the
    caller, nor the others, nor the process's exit. Idle threads are reused."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Future, Callable[[], Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, function: Callable[..., Any], kwargs: Mapping[str, Any]) -> Future:
        future: Future = Future()
        context = contextvars.copy_context()
        self._queue.put((future, lambda: context.run(function, **kwargs)))
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1  # that idle thread takes this item
        if spawn:
            threading.Thread(target=self._work, name="hook-worker", daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            future, run = self._queue.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(run())
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    future.set_exception(exc)
            del future, run
            with self._lock:
                self._idle += 1


WORKERS = DaemonWorkers()
_STUCK: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], Future]] = weakref.WeakKeyDictionary()
_ABANDONED: set[asyncio.Task] = set()  # cancelled hung coroutines, kept until they end
#: each plugin's circuit breaker, per plugin manager (one host): one timeout opens it
_BREAKERS: weakref.WeakKeyDictionary[Any, dict[str, CircuitBreaker[StuckCall]]] = (
    weakref.WeakKeyDictionary()
)
_BREAKERS_LOCK = threading.Lock()


def _breaker(owner: Any, plugin: str) -> CircuitBreaker[StuckCall] | None:
    with _BREAKERS_LOCK:
        return _BREAKERS.get(owner, {}).get(plugin)


def stuck_state(owner: Any, plugin: str) -> Trip[StuckCall] | None:
    """Why and since when `plugin` is stuck (cooling off, or waiting for its next call to
    answer in time); None: not stuck. For the ``plugins`` listing."""
    breaker = _breaker(owner, plugin)
    return None if breaker is None else breaker.trip


def _timeout(owner: Any, plugin: str, hook_name: str, deadline: float, guard: Guard) -> HookTimeout:
    """The failure of a call past its deadline; the plugin is marked stuck (cool-off)."""
    with _BREAKERS_LOCK:
        breaker = _BREAKERS.setdefault(owner, {}).setdefault(
            plugin, CircuitBreaker(cooloff=guard.cooloff)
        )
    breaker.cooloff = guard.cooloff  # the setting now
    breaker.failed(StuckCall(hook_name, f"did not finish within {deadline:g} s"))
    return HookTimeout(
        f"did not finish within its deadline of {deadline:g} s (setting {DEADLINE_SETTING}); "
        f"the caller went on without it; the plugin is skipped for {guard.cooloff:g} s "
        f"(setting {COOLOFF_SETTING})"
    )


_CALLER_LOOP: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "hook_caller_loop", default=None
)


def caller_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, else the loop of the guarded hook call this worker
    thread runs for (schedule onto it with ``asyncio.run_coroutine_threadsafe``); else None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return _CALLER_LOOP.get()


async def guarded_call(
    owner: Any,
    plugin: str,
    hook_name: str,
    function: Callable[..., Any],
    kwargs: Mapping[str, Any],
    guard: Guard,
) -> Any:
    """Call one implementation under `guard`; its value (awaited), or raises what it raised or
    `HookTimeout`. `owner` (the plugin manager) scopes the stuck-call bookkeeping."""
    deadline = guard.deadline_of(hook_name)
    breaker = _breaker(owner, plugin)
    cooling = None if breaker is None else breaker.blocking()
    if cooling is not None:
        raise PluginStuck(f"skipped: {describe_stuck(cooling)}")
    key = (plugin, hook_name)
    stuck = _STUCK.setdefault(owner, {})
    running = stuck.get(key)
    if running is not None and not running.done():
        raise PluginStuck(
            f"skipped: its previous call is still running past its deadline of {deadline:g} s "
            f"(setting {DEADLINE_SETTING})"
        )
    if getattr(function, INLINE, False):  # `inline`: nothing a deadline could stop
        value = function(**kwargs)
        return await value if inspect.isawaitable(value) else value
    if inspect.iscoroutinefunction(function):
        value = function(**kwargs)
    else:
        token = _CALLER_LOOP.set(asyncio.get_running_loop())  # copied into the worker's context
        try:
            future = WORKERS.submit(function, kwargs)
        finally:
            _CALLER_LOOP.reset(token)
        waiter = asyncio.wrap_future(future)
        done, _pending = await asyncio.wait({waiter}, timeout=deadline)
        if not done:
            stuck[key] = future
            future.add_done_callback(lambda f: stuck.get(key) is f and stuck.pop(key, None))
            waiter.cancel()
            raise _timeout(owner, plugin, hook_name, deadline or 0.0, guard)
        value = waiter.result()
    if isinstance(value, Future):  # e.g. run_coroutine_threadsafe from the worker thread
        value = asyncio.wrap_future(value)
    if not inspect.isawaitable(value):
        _answered(owner, plugin)
        return value
    task = asyncio.ensure_future(_contained(value))
    try:
        done, _pending = await asyncio.wait({task}, timeout=deadline)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        _ABANDONED.add(task)
        task.add_done_callback(_forget)
        raise _timeout(owner, plugin, hook_name, deadline or 0.0, guard)
    _answered(owner, plugin)
    result = task.result()
    if isinstance(result, _Exit):  # raised here, in the caller, where it is that plugin's failure
        raise result.exit
    return result


def describe_stuck(trip: Trip[StuckCall]) -> str:
    """``stuck since HH:MM:SS (hook reason); skipped until HH:MM:SS`` (local times)."""
    since = time.strftime("%H:%M:%S", time.localtime(trip.since))
    retry = time.strftime("%H:%M:%S", time.localtime(trip.retry_at))
    return f"stuck since {since} ({trip.cause.hook} {trip.cause.reason}); skipped until {retry}"


def _answered(owner: Any, plugin: str) -> None:
    """A call of `plugin` finished in time: a stuck mark from an earlier timeout goes."""
    breaker = _breaker(owner, plugin)
    if breaker is not None:
        breaker.answered()


class _Exit:
    """A `SystemExit` a hook's coroutine raised, carried out of its task (asyncio would re-raise
    it out of the event loop)."""

    def __init__(self, exit: SystemExit) -> None:
        self.exit = exit


async def _contained(awaitable: Any) -> Any:
    try:
        return await awaitable
    except SystemExit as exc:
        return _Exit(exc)


def _forget(task: asyncio.Task) -> None:
    _ABANDONED.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: no "never retrieved" warning
