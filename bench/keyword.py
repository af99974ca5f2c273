"""Keyword search against LanceDB's native full-text index and `bm25s`, on the same texts.

The chat is the engine bench's synthetic one (`engine.build_chat`); every system indexes the
text `keyword_search` reads of each node (`keyword.node_text`). Figures are medians of wall time,
the systems interleaved query by query so the shared machine's noise hits them alike:

- ``memgraph keyword_search``: the read API (BM25 over the candidate pool, k = 20);
- ``LanceDB FTS``: ``table.search(q, query_type="fts").limit(20)`` on a native FTS index;
- ``bm25s``: ``BM25.retrieve`` (k = 20) on the same tokens as ours.

First search after load: a store opened from a LanceDB snapshot builds its index from the
snapshot's keyword columns (the figure); the note gives the same on a store from a JSON dict,
which tokenizes every node's text.

Writes: ours re-indexes one changed node (the index is incremental); LanceDB appends a row (its
FTS index then misses it until ``optimize()`` folds it in, timed apart); bm25s has no update, so
a write is a full rebuild.

    python bench/keyword.py [--size 100000]        (also a section of bench/run.py)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import sibling  # noqa: E402

QUERIES = (
    "sword fight in the inn", "艾琳", "betrayal at the harbor", "guild seal debt", "公会的印章",
    "winter siege of the tower", "healer poison cure", "the captain's secret letter",
)
Row = tuple[str, float, float | None, str]  # name, ms, limit ms, note


def _ms(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def measure(size: int, *, repeat: int = 5) -> list[Row]:
    """Search and write figures of the three systems on one synthetic chat of `size` nodes."""
    import attrs
    import bm25s
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    from memgraph_plugin import Store, get_read_api
    from memgraph_plugin.engine.keyword.keyword_index import node_text, tokenize

    data = sibling("engine", "memgraph_bench_engine_kw").build_chat(size)
    store = Store.from_dict(data)
    api = get_read_api(store, None)
    t0 = time.perf_counter()
    api.keyword_search(query="warm up", k=20)  # the load marks every node: the first search
    text_first_ms = (time.perf_counter() - t0) * 1000  # indexes them all from their text
    snap_api, first_ms, build_ms = _from_snapshot(data)

    ids, texts = [], []
    for node in store.iter_nodes():
        ids.append(node.id)
        texts.append(node_text(node, store.schema.get(node.type)))
    tokens = [tokenize(t) for t in texts]

    folder = tempfile.TemporaryDirectory(prefix="memgraph-bench-kw-")
    db = lancedb.connect(folder.name)
    table = db.create_table("nodes", pa.table({"id": ids, "text": texts}))
    t0 = time.perf_counter()
    table.create_index("text", config=FTS(with_position=False))
    lance_build_ms = (time.perf_counter() - t0) * 1000

    def lance_search(q: str) -> Any:
        return table.search(q, query_type="fts").limit(20).select(["id", "_score"]).to_arrow()

    t0 = time.perf_counter()
    bm = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    bm.index(tokens, show_progress=False)
    bm25s_build_ms = (time.perf_counter() - t0) * 1000
    vocab = bm.vocab_dict

    def bm25s_search(q: str) -> Any:
        toks = [t for t in tokenize(q) if t in vocab]
        if not toks:
            return None
        return bm.retrieve([toks], k=20, show_progress=False, n_threads=1)

    ours: list[float] = []
    ours_snap: list[float] = []
    lance: list[float] = []
    bms: list[float] = []
    for _ in range(repeat):
        for q in QUERIES:
            ours.append(_ms(lambda q=q: api.keyword_search(query=q, k=20)))
            ours_snap.append(_ms(lambda q=q: snap_api.keyword_search(query=q, k=20)))
            lance.append(_ms(lambda q=q: lance_search(q)))
            bms.append(_ms(lambda q=q: bm25s_search(q)))

    # writes: one node's text changes, then the next search must see it
    rng_threads = [n for n in store.iter_nodes() if n.type == "thread"][:50]
    our_writes = []
    for i, t in enumerate(rng_threads):
        node = attrs.evolve(t, title=f"{t.title} lantern{i}")
        t0 = time.perf_counter()
        with store.transaction():
            store.put_node(node)
        store.keywords  # noqa: B018 - the upkeep the next search pays
        our_writes.append((time.perf_counter() - t0) * 1000)
    store.take_changeset()
    lance_writes = []
    for i in range(20):
        row = pa.table({"id": [f"w{i}"], "text": [f"new lantern{i} text"]})
        lance_writes.append(_ms(lambda row=row: table.add(row)))
    lance_tail = _median([_ms(lambda q=q: lance_search(q)) for q in QUERIES])
    lance_opt_ms = _ms(table.optimize)
    folder.cleanup()

    lance_p50 = _median(lance)
    where = f"@{size // 1000}k nodes"
    return [
        (f"keyword search: memgraph BM25 {where}", _median(ours), lance_p50,
         f"p95 {statistics.quantiles(ours, n=20)[-1]:.2f} ms; target <= LanceDB FTS"),
        (f"keyword search: LanceDB native FTS {where}", lance_p50, None,
         f"index build {lance_build_ms:.0f} ms"),
        (f"keyword search: memgraph BM25, index from a snapshot {where}", _median(ours_snap),
         lance_p50, "the index a chat opened from storage has; target <= LanceDB FTS"),
        (f"keyword search: bm25s {where}", _median(bms), None,
         f"index build {bm25s_build_ms:.0f} ms"),
        (f"keyword write: memgraph (1 node re-indexed) {where}", _median(our_writes), None,
         "incremental"),
        (f"first keyword search after load: memgraph {where}", first_ms, None,
         f"index built from the snapshot's keyword columns as the store loads (store from"
         f" columns {build_ms:.0f} ms; ties broken by recency read from the load's arrays);"
         f" from node text: {text_first_ms:.0f} ms"),
        (f"keyword write: LanceDB add 1 row {where}", _median(lance_writes), None,
         f"unindexed tail: search {lance_tail:.2f} ms; optimize() {lance_opt_ms:.0f} ms"),
        (f"keyword write: bm25s (full rebuild) {where}", bm25s_build_ms, None,
         "no incremental update"),
    ]


def _from_snapshot(data: dict[str, Any]) -> tuple[Any, float, float]:
    """The read API of a store opened from a LanceDB snapshot of the chat (its keyword index
    built from the snapshot's keyword columns as it loads, no tokenizing), its first search's
    ms and the ms of building the store from the columns (the keyword index included)."""
    import json

    from memgraph_plugin import Store, get_read_api
    from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA
    from memgraph_plugin.storage import ChangeRecord, ChatState, LanceStorage, StorageSettings

    with tempfile.TemporaryDirectory(prefix="memgraph-bench-kwsnap-") as folder:
        storage = LanceStorage(StorageSettings(
            uri=folder, keyword_schema=json.dumps(DEFAULT_SCHEMA.to_list())
        ))
        rec = storage.commit_sync("kw", ChangeRecord(kind="import"), base_version=0)
        storage.checkpoint_sync("kw", ChatState("kw", rec.version, data=data, seq=rec.seq))
        state = storage.load_sync("kw")
        storage.close()
    t0 = time.perf_counter()
    store = Store.from_columns(state.nodes, state.edges, state.node_seq, state.seq_counter,
                               keywords=state.keywords)
    build_ms = (time.perf_counter() - t0) * 1000
    api = get_read_api(store, None)
    return api, _ms(lambda: api.keyword_search(query="warm up", k=20)), build_ms


def rows(quick: bool = False) -> list[Row]:
    """The section for `bench/run.py`: 100k nodes (10k with --quick)."""
    return measure(10_000 if quick else 100_000, repeat=3 if quick else 5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="nodes in the chat")
    parser.add_argument("--repeat", type=int, default=5, help="rounds over the queries")
    args = parser.parse_args(argv)
    root = str(HERE.parent)
    if root not in sys.path:
        sys.path.insert(0, root)
    print("| measure | ms | limit | status | note |")
    print("|---|---:|---|---|---|")
    for name, ms, limit, note in measure(args.size, repeat=args.repeat):
        status = "" if limit is None else ("ok" if ms <= limit else "OVER")
        shown = "-" if limit is None else f"<= {limit:.2f}"
        print(f"| {name} | {ms:.2f} | {shown} | {status} | {note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
