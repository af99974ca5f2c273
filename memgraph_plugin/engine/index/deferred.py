"""`Deferred`: a store attribute that a bulk load leaves to its first read.

A columnar open computes its indices as arrays; turning them into the Python containers the
store keeps (sets and dicts of every id) costs more than the rest of the open, and many opens
read a few nodes and leave. The load hands each such attribute a builder instead; the first
read builds it and stores it in the instance, so every later read is a plain attribute read.
`build_soon` and `started` run builds ahead of that read on a small thread pool.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["Deferred", "build_soon", "build_threads", "defer", "realize_all", "started"]

log = logging.getLogger(__name__)

#: the threads that build a loaded chat's indices ahead of their first read: its name index
#: (`started`), its first turn's indices (`build_soon`) and its keyword base
#: (`KeywordIndex.adopt`), one each as an open starts them
build_threads = ThreadPoolExecutor(max_workers=3, thread_name_prefix="index build")


class Deferred:
    """A non-data descriptor: the instance's own value once set; before that, the value its
    pending builder (in the instance's ``_deferred`` dict) makes, stored on first read."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        # one build of this attribute at a time; a reader of another one does not wait for it
        # (an open builds the name index on a build thread while the first turn reads pools).
        # A builder may read other deferred attributes: their builders never read back.
        self._lock = threading.RLock()

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        with self._lock:
            values = obj.__dict__
            if self.name in values:  # built by another thread meanwhile
                return values[self.name]
            build = obj._deferred.pop(self.name, None)
            if build is None:
                raise AttributeError(self.name)
            try:
                value = values[self.name] = build()
            except BaseException:  # kept for the next read (a failed build is not the value)
                obj._deferred[self.name] = build
                raise
            return value


def defer(obj: Any, **builders: Callable[[], Any]) -> None:
    """Replace the given attributes of `obj` (each a `Deferred` of its class) by builders."""
    values = obj.__dict__
    for name, build in builders.items():
        values.pop(name, None)
        obj._deferred[name] = build


def realize_all(obj: Any) -> None:
    """Build every deferred attribute of `obj` now (dropping builders of attributes that were
    set meanwhile)."""
    for name in list(obj._deferred):
        if name in obj.__dict__:
            obj._deferred.pop(name, None)
        else:
            getattr(obj, name)


def build_soon(obj: Any, *names: str) -> Future[None] | None:
    """Build the given deferred attributes of `obj` on the build threads (None: none is
    pending). A reader meanwhile waits for the build (the lock above) instead of starting it,
    so an index a chat's first turn needs (the name index) is built while the open ends and
    the person types, not on that turn. Builders read only what the load computed."""
    deferred = getattr(obj, "_deferred", {})
    pending = [name for name in names if name in deferred and name not in obj.__dict__]
    if not pending:
        return None

    def build() -> None:
        for name in pending:
            try:
                getattr(obj, name)
            except Exception:  # the reader that needs it builds it again and sees the error
                log.debug("background build of %s failed", name, exc_info=True)

    return build_threads.submit(build)


def started(build: Callable[[], Any]) -> Callable[[], Any]:
    """Start `build` on the build threads now; the returned call answers its value, waiting
    for it if it runs, running it itself if it has not started yet (so a reader never waits
    behind queued builds), and running it again if it failed there (the reader then sees the
    error). A load hands that call to `defer` as the attribute's builder when the index needs
    only what is loaded so far: its Python work then runs beside the rest of the load's numpy
    and pyarrow calls, which release the GIL."""
    future = build_threads.submit(build)

    def result() -> Any:
        if future.cancel():
            return build()
        try:
            return future.result()
        except Exception:
            log.debug("early build failed (its reader builds it again)", exc_info=True)
            return build()

    return result
