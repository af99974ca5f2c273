"""What the plainer load paths would cost: a chat (``engine.build_chat``, about 3 edges a
node) opened from its state columns as the store does it (lazy), then, timed one by one after
it, what a plain open would add:

- every `Node` made (the node map as a plain dict filled once: `LazyNodes.materialize`);
- the edge map and both adjacency maps made whole as plain dicts, in C loops (`eager_edges`);
- every deferred index built (`realize_all`: visible set, pools, anchors, name index);
- all of it again with the cyclic collector left on (the load's pauses turned off).

Medians of ``--runs`` (5), in one process; ``docs/architecture.md`` (the load path) quotes
them. Ratios hold on a shared machine; absolute times do not.

    python bench/load_path.py [--size 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import build_chat  # noqa: E402

from host import collector_pause  # noqa: E402
from memgraph_plugin.engine.graph.store import Store  # noqa: E402
from memgraph_plugin.engine.index.deferred import realize_all  # noqa: E402
from memgraph_plugin.engine.load import store_loading  # noqa: E402
from memgraph_plugin.engine.load.lazy_edges import EdgeArrays  # noqa: E402
from memgraph_plugin.engine.model.models import EdgeKey  # noqa: E402
from memgraph_plugin.storage.format.graph_columns import state_tables  # noqa: E402


def eager_edges(arrays: EdgeArrays) -> tuple[dict[Any, Any], dict[str, Any], dict[str, Any]]:
    """The edge map and the out and in adjacency of the loaded edges, as plain dicts."""
    ids = np.empty(len(arrays.ids), dtype=object)
    ids[:] = arrays.ids
    types = np.empty(len(arrays.types), dtype=object)
    types[:] = arrays.types
    src, dst = ids[arrays.src].tolist(), ids[arrays.dst].tolist()
    kind = types[arrays.code].tolist()
    seq = np.where(arrays.has_seq, arrays.seq, None).tolist()
    recs = list(zip(src, dst, kind, seq, range(len(src)), strict=True))
    keys = map(functools.partial(tuple.__new__, EdgeKey), zip(src, kind, dst, strict=True))
    table = dict(zip(keys, recs, strict=True))

    def adjacency(ptr: np.ndarray, idx: np.ndarray) -> dict[str, Any]:
        grouped = [recs[i] for i in idx.tolist()]
        starts, ends = ptr[:-1].tolist(), ptr[1:].tolist()
        return {
            arrays.ids[r]: grouped[starts[r] : ends[r]]
            for r in np.flatnonzero(np.diff(ptr)).tolist()
        }

    return table, adjacency(arrays.out_ptr, arrays.out_idx), adjacency(arrays.in_ptr, arrays.in_idx)


def one_run(nodes: Any, edges: Any, data: dict[str, Any], *, paused: bool) -> list[float]:
    """Seconds of the lazy open, then of each plainer step after it, then of all together."""
    store_loading.gc_paused = collector_pause.gc_paused if paused else contextlib.nullcontext
    store_loading.paused = collector_pause.paused if paused else (lambda build: build)
    whole = collector_pause.gc_paused() if paused else contextlib.nullcontext()
    with whole:
        t0 = time.perf_counter()
        store = Store.from_columns(nodes, edges, data["nodeSeq"], data["seqCounter"])
        t1 = time.perf_counter()
        store._nodes.materialize()
        t2 = time.perf_counter()
        eager_edges(store._edges._arrays)
        t3 = time.perf_counter()
        realize_all(store)
        t4 = time.perf_counter()
    return [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    data = build_chat(args.size)
    nodes, edges = state_tables(data)
    paused = [one_run(nodes, edges, data, paused=True) for _ in range(args.runs)]
    left_on = [one_run(nodes, edges, data, paused=False)[-1] for _ in range(args.runs)]
    names = ["open (lazy)", "+ every Node", "+ edge maps whole", "+ every deferred index"]
    print(f"{args.size:,} nodes, {edges.num_rows:,} edges; medians of {args.runs}")
    for i, name in enumerate(names):
        print(f"{name:32s} {statistics.median(r[i] for r in paused) * 1000:8.0f} ms")
    whole = statistics.median(r[-1] for r in paused)
    print(f"{'all, collector paused':32s} {whole * 1000:8.0f} ms")
    print(f"{'all, collector left on':32s} {statistics.median(left_on) * 1000:8.0f} ms")


if __name__ == "__main__":
    main()
