"""How the sample plugins reach the memory graph: through the host's registry, and nothing else.

`MemoryAccess` opens a session with ``host.get_extension_api("memory-graph").open_session(ctx)`` and
logs once (per plugin and host) when the graph is missing or disabled, until it comes back.
`attach_worker` / `detach_worker` give a module plugin a per-host worker object that receives
hooks with no host argument (``memgraph_commit``, ``memgraph_injection_changed``).
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

MEMORY_GRAPH = "memory-graph"


class MemoryAccess:
    """Opens memory-graph sessions for one plugin on one host; a miss is logged once."""

    def __init__(self, host: Any, plugin: str, log: logging.Logger) -> None:
        self.host = host
        self.plugin = plugin
        self.log = log
        self._warned = False

    def context(self, chat: Any) -> Any:
        """A chat context from a context, a chat id, or ``None``."""
        if chat is None or not isinstance(chat, str):
            return chat
        return self.host.get_context(chat)

    async def open(self, chat: Any) -> Any | None:
        """A session for ``chat`` (context or chat id), or ``None`` when memory is unavailable."""
        api = self.host.get_extension_api(MEMORY_GRAPH)
        opener = getattr(api, "open_session", None)
        if opener is None:
            self._miss("memory-graph is not registered")
            return None
        try:
            session = opener(self.context(chat))
            if inspect.isawaitable(session):
                session = await session
        except Exception as exc:  # a broken provider must not take the plugin down
            self._miss(f"open_session failed: {exc!r}")
            return None
        if session is None:
            self._miss("memory-graph gave no session (disabled, or no chat target)")
            return None
        self._warned = False
        return session

    def _miss(self, why: str) -> None:
        if not self._warned:
            self._warned = True
            self.log.info("%s: memory graph unavailable (%s); doing nothing", self.plugin, why)


def chat_of(ctx: Any) -> str | None:
    """The chat id of a context or a chat id."""
    if ctx is None or isinstance(ctx, str):
        return ctx
    return getattr(ctx, "chat_id", None)


def attach_worker(
    host: Any, worker: Any, *, name: str, api_name: str, version: str, module: str
) -> None:
    """Register ``worker`` as the host's plugin ``name`` and publish it as ``api_name``.

    A worker left over from an earlier start is replaced, and the worker leaves with its plugin
    module (``module``: the module's ``__name__``) when that is unloaded or reloaded.
    """
    detach_worker(host, name=name)
    host.register_plugin(worker, name=name)
    host.registry.register(api_name, worker, owner=name, version=version)
    on_unload = getattr(host, "on_unload", None)
    if on_unload is not None:
        on_unload(module, lambda: detach_worker(host, name=name))


def detach_worker(host: Any, *, name: str) -> None:
    """Unregister the worker plugin ``name`` (and what it published), if it is there."""
    if host.pm.get_plugin(name) is not None:
        host.unregister_plugin(name)


def run_soon(coro: Any, tasks: set[Any]) -> Any:
    """Start ``coro`` for a hook that may be called from async or sync code.

    In a running loop it becomes a task (kept in ``tasks`` until done) that is returned, so a
    host that awaits hook results waits for it. On the worker thread a guarded hook call runs
    sync implementations on (`host.plugins.hook_guard`), it starts on the caller's loop and a
    future of it
    is returned. Without a loop it is closed and ``None`` returned.
    """
    import asyncio

    from host.plugins.hook_guard import caller_loop

    loop = caller_loop()
    if loop is None:
        coro.close()
        return None
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is not loop:  # a worker thread: hand the coroutine to the caller's loop
        future = asyncio.run_coroutine_threadsafe(_tracked(coro, tasks), loop)
        return future
    task = loop.create_task(coro)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task


async def _tracked(coro: Any, tasks: set[Any]) -> Any:
    """Await `coro` as a task kept in `tasks` (so a worker's ``drain`` waits for it)."""
    import asyncio

    task = asyncio.ensure_future(coro)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return await task
