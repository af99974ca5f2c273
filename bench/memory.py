"""Resident memory of loaded chats (the memory section of the bench table).

- MB per 1k nodes of one loaded chat (the bench's synthetic chat, 3 edges a node), measured with
  `tracemalloc` from the chat's JSON text to a finished recall turn: decoded strings, the store and
  its indices, the views and edge summaries a turn builds, the keyword index, the name index.
  Vectors are a row of their own (an embedding profile's matrix, float32, 384 dimensions).
- A host serving many chats of 1k nodes under `memory_budget_mb`: every chat is opened through a
  real session and given a turn, least-recently-used chats are evicted; the Python heap the host
  holds afterwards (traced) and its peak are compared with the budget.

`rows(quick=...)` returns `(name, value, unit, limit | None, note)`; `bench/run.py` prints them.
Run alone: `python bench/memory.py [--quick] [--sizes 10000,100000] [--chats 1000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for path in (ROOT, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from engine import build_chat  # noqa: E402

Row = tuple[str, str, str, float | None, str]
MB = 1 << 20
TARGET_MB_PER_1K = 3.0
DIM = 384


def _turn(store: Any) -> None:
    """What one recall turn builds on a loaded chat: the candidate list, briefs of (up to 2000
    of) the candidates, a keyword search, a name lookup."""
    from memgraph_plugin import get_read_api

    api = get_read_api(store, None)
    pool = [v.id for v in api.list_visible_candidates()]
    sample = pool if len(pool) <= 2000 else pool[:: max(1, len(pool) // 2000)]
    for nid in sample:
        api.get_node_brief(nid)
    api.keyword_search(query="betrayal at the harbor", k=20)
    store.name_index()


def chat_mb(size: int) -> dict[str, float]:
    """MB held by one loaded chat of `size` nodes: after the load, and after a turn."""
    from memgraph_plugin import Store

    text = json.dumps(build_chat(size))
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        store = Store.from_dict(json.loads(text))
        gc.collect()
        loaded = tracemalloc.get_traced_memory()[0] - base
        _turn(store)
        gc.collect()
        turned = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    del store
    return {"load": loaded / MB, "turn": turned / MB}


def size_rows(sizes: list[int]) -> list[Row]:
    out: list[Row] = []
    for size in sizes:
        per = size / 1000
        figures = chat_mb(size)
        where = f"@{size // 1000}k nodes/{3 * size // 1000}k edges"
        out.append((f"memory per 1k nodes, loaded {where}", f"{figures['load'] / per:.2f}",
                    "MB", None, "store + indices after Store.from_dict(JSON)"))
        out.append((f"memory per 1k nodes, after a turn {where}", f"{figures['turn'] / per:.2f}",
                    "MB", TARGET_MB_PER_1K, "+ views, summaries, keyword and name index"))
    out.append(("vectors per 1k nodes (384 x float32)", f"{1000 * DIM * 4 / MB:.2f}", "MB", None,
                "only with an embedding profile"))
    return out


async def _serve(tmp: Path, chats: int, budget_mb: int) -> dict[str, float]:
    from host import Host
    from memgraph_plugin.service import memory_graph_for
    from memgraph_plugin.storage import LanceStorage, StorageSettings

    uri = str(tmp / "lancedb")
    data = build_chat(1000)
    st = LanceStorage(StorageSettings(uri=uri, optimize_every=10_000, checkpoint_every=10_000))
    t0 = time.perf_counter()
    for i in range(chats):
        st.import_sync(f"chat-{i}", data)
    setup_s = time.perf_counter() - t0
    st.close()
    host = Host(
        data_dir=tmp,
        settings={"storage_uri": uri, "memory_budget_mb": budget_mb},
        entry_points=False,
    )
    await host.start()
    api = host.registry.get("memory-graph")
    persisted = memory_graph_for(host).persistence
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    for i in range(chats):
        session = await api.open_session(host.get_context(f"chat-{i}"))
        _turn(session.store)
        del session
    serve_s = time.perf_counter() - t0
    gc.collect()
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    budget = persisted.budget
    out = {
        "setup_s": setup_s,
        "serve_ms_per_chat": serve_s / chats * 1000,
        "held_mb": (held - base) / MB,
        "peak_mb": (peak - base) / MB,
        "loaded": float(len(budget)),
        "estimate_mb": budget.total / MB,
        "evictions": float(budget.evictions),
    }
    await host.stop()
    return out


def chats_rows(chats: int, budget_mb: int) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="memgraph-bench-mem-") as tmp:
        f = asyncio.run(_serve(Path(tmp), chats, budget_mb))
    where = f"{chats} chats x 1k nodes, memory_budget_mb={budget_mb}"
    return [
        (f"host heap held after serving {where}", f"{f['held_mb']:.0f}", "MB", float(budget_mb),
         f"{f['loaded']:.0f} chats loaded, {f['evictions']:.0f} evicted (tracemalloc)"),
        (f"host heap peak while serving {where}", f"{f['peak_mb']:.0f}", "MB", None,
         "one chat loading on top of a full budget"),
        (f"budget estimate of the loaded chats, {where}", f"{f['estimate_mb']:.0f}", "MB",
         float(budget_mb), "what eviction goes by"),
        (f"open + turn per chat, {where}", f"{f['serve_ms_per_chat']:.1f}", "ms", None,
         f"cold open each (setup {f['setup_s']:.0f} s)"),
    ]


def rows(*, quick: bool = False, sizes: list[int] | None = None,
         chats: int | None = None, budget_mb: int = 256) -> list[Row]:
    sizes = sizes or ([10_000] if quick else [10_000, 100_000])
    out = size_rows(sizes)
    out += chats_rows(chats or (200 if quick else 1000), budget_mb)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10k only, 200 chats")
    parser.add_argument("--sizes", default=None, help="chat sizes (default 10000,100000)")
    parser.add_argument("--chats", type=int, default=None, help="chats served (default 1000)")
    parser.add_argument("--budget-mb", type=int, default=256, help="memory_budget_mb")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    table = rows(quick=args.quick, sizes=sizes, chats=args.chats, budget_mb=args.budget_mb)
    print("| measure | value | unit | target | status | note |")
    print("|---|---:|---|---|---|---|")
    for name, value, unit, limit, note in table:
        status = "" if limit is None else ("ok" if float(value) <= limit else "OVER")
        target = "-" if limit is None else f"<= {limit:g}"
        print(f"| {name} | {value} | {unit} | {target} | {status} | {note} |")


if __name__ == "__main__":
    main()
