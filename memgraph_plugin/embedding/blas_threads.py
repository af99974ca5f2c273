"""`one_blas_thread`: run matrix products on the calling thread only, for background work.

The coarse lists of a snapshot (k-means and assignment: `coarse.py`) run on a thread beside
the import's or maintenance's Python work. OpenBLAS hands each product to its own threads,
which on a small, busy machine compete with that work and spin while waiting: at 100k rows the
lists cost about twice the CPU seconds (and far more wall time) than with one thread. Lists
are made the same either way (the products are the same per row; only who computes them
changes).

The limit is process-wide (OpenBLAS keeps one setting), so it is counted: the first thread
to enter sets one thread, the last to leave puts back what was there before. threadpoolctl lets
only one live thread set OpenBLAS's limit (the first that did); the threads here (a snapshot's
thread, the maintenance thread) take that role over while they set or restore it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["one_blas_thread"]

_lock = threading.Lock()
_inside = 0
_restore: Any = None  # the limiter of the first thread in (None: nothing to put back)
_controller: Any = None  # threadpoolctl's view of the loaded BLAS libraries, made once


def _limit_to_one() -> Any:
    """Set every loaded BLAS to one thread; returns what restores the previous setting."""
    global _controller
    from threadpoolctl import ThreadpoolController  # noqa: PLC0415 - first use only

    if _controller is None:
        _controller = ThreadpoolController()
    _take_control(_controller)
    return _controller.limit(limits=1, user_api="blas")


def _take_control(controller: Any) -> None:
    """Make this thread the one threadpoolctl lets set OpenBLAS's limit (see module doc)."""
    for lib in controller.lib_controllers:
        clear = getattr(lib, "clear_controlling_thread", None)
        if clear is not None:
            clear(force=True)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within the block, BLAS products run on the thread that calls them (see module doc)."""
    global _inside, _restore
    with _lock:
        if _inside == 0:
            try:
                _restore = _limit_to_one()
            except Exception:  # no threadpoolctl view of the BLAS: run as configured
                _restore = None
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _restore is not None:
                _take_control(_controller)
                _restore.restore_original_limits()
                _restore = None
