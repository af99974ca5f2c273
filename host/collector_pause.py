"""`gc_paused()`: the cyclic garbage collector held off while a chat is bulk-loaded, one pause
for the whole process: the host's chat files and every plugin's stores (the memory graph's
loads use it through `memgraph_plugin.engine.load.gc_pause`).

Loading a chat allocates a few objects per message, node and edge (messages, records, frozen
field maps, index entries), none of them in reference cycles. With the collector on, those
allocations trigger collections that traverse everything allocated so far, again and again as
the heap grows: about half the CPU time of loading a 100k-node chat. Paused, the objects are
traversed once, by the first collection after the load.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["gc_paused", "paused"]

T = TypeVar("T")

_lock = threading.Lock()
_holders = 0  # gc_paused blocks running now (in any thread)
_we_disabled = False  # whether the first of them turned the collector off


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold off cyclic garbage collection for the block (reentrant and thread-safe: the
    collector is turned back on when the last overlapping block ends, and only if it was on
    when the first began; it then collects the young and middle generations once)."""
    global _holders, _we_disabled
    with _lock:
        if _holders == 0:
            _we_disabled = gc.isenabled()
            if _we_disabled:
                gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            ended = _holders == 0 and _we_disabled
            if ended:
                _we_disabled = False
                gc.enable()
        if ended:
            # what the blocks made (young, or middle-aged) is walked once, now, and moved to the
            # old generation: left to the collector, a young collection walked it, then a
            # middle one again (a live 100k chat's open: ~50 ms of each)
            gc.collect(1)


def paused(build: Callable[[], T]) -> Callable[[], T]:
    """`build` run with the collector held off: for the indices a load leaves to their first
    read (`Deferred`), built in bulk from its columns on whatever thread reads them first."""

    def run() -> T:
        with gc_paused():
            return build()

    return run
