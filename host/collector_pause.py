"""`gc_paused()`: the cyclic garbage collector held off while a chat is bulk-loaded, one pause
for the whole process: the host's chat files and every plugin's stores (the memory graph's
loads use it through `memgraph_plugin.engine.load`).

Loading a chat allocates a few objects per message, node and edge (messages, records, frozen
field maps, index entries), none of them in reference cycles. With the collector on, those
allocations trigger collections that traverse everything allocated so far, again and again as
the heap grows: about half the CPU time of loading a 100k-node chat. Paused, the objects join
the old generation untraversed when the pause ends (`gc.freeze` then `gc.unfreeze`), where a
full collection is the first to walk them; any cyclic garbage made during the pause waits for
that one too, unless the block ended by an error (then the young generations are collected).
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
    when the first began; what the blocks made then joins the old generation unwalked, or,
    when the last block ended by an error or the process froze objects of its own
    (`gc.freeze`), the young and middle generations are collected)."""
    global _holders, _we_disabled
    with _lock:
        if _holders == 0:
            _we_disabled = gc.isenabled()
            if _we_disabled:
                gc.disable()
        _holders += 1
    failed = True
    try:
        yield
        failed = False
    finally:
        with _lock:
            _holders -= 1
            ended = _holders == 0 and _we_disabled
            unwalked = False
            if ended:
                _we_disabled = False
                # what the blocks made (young, or middle-aged) goes to the old generation as
                # it is, unwalked (`freeze` then `unfreeze`: two list splices, before the
                # collector is back on so no young collection comes first). Walking it took
                # 50-60 ms of a live 100k chat's open, on its first turn's path; left to the
                # collector, a young collection walked it, then a middle one again. Cyclic
                # garbage made meanwhile waits for the next full collection. Not when the
                # process froze objects of its own (`unfreeze` would thaw them too).
                unwalked = not failed and gc.get_freeze_count() == 0
                if unwalked:
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
        if ended and not unwalked:  # a failed load's cycles (a traceback's frames) freed now
            gc.collect(1)


def paused(build: Callable[[], T]) -> Callable[[], T]:
    """`build` run with the collector held off: for the indices a load leaves to their first
    read (`Deferred`), built in bulk from its columns on whatever thread reads them first."""

    def run() -> T:
        with gc_paused():
            return build()

    return run
