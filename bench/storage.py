"""Storage, session and vector-search timings (the storage section of the bench table).

`rows(quick=...)` returns `(name, p50_ms, limit_ms | None, note)` tuples; `bench/run.py` prints
them with the engine's rows. Run alone: `python bench/storage.py [--quick]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import hashing_host  # noqa: E402

from memgraph_plugin.embedding import HashingProfile, VectorIndex  # noqa: E402
from memgraph_plugin.storage import (  # noqa: E402
    ChangeRecord,
    LanceStorage,
    StorageSettings,
    VectorBlock,
)

Row = tuple[str, float, float | None, str]
DIM = 384


def _p50(fn: Callable[[], Any], n: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000.0


def _node(i: int) -> dict[str, Any]:
    return {
        "id": f"n_{i}",
        "type": "event",
        "level": "semantic",
        "title": f"event {i}",
        "fields": {"summary": f"Mira meets the guild at the harbor, scene {i}"},
        "parentId": "",
        "childrenIds": [],
        "seqTo": i // 10,
        "semanticDepth": 0,
        "semanticRollup": False,
        "archived": False,
    }


def _json_node(i: int) -> str:
    return json.dumps(_node(i), separators=(",", ":"))


def _unit_matrix(n: int, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def _chat_data(n: int) -> dict[str, Any]:
    """A store dict of `n` event nodes in the original's JSON shape."""
    return {
        "nodes": {f"n_{i}": _node(i) for i in range(n)},
        "edges": [],
        "nodeSeq": n,
        "seqCounter": n // 10,
    }


def _big_chat(st: LanceStorage, chat: str, n: int) -> None:
    """A chat of `n` nodes: one import commit plus a checkpoint with vectors."""
    data = _chat_data(n)
    st.import_sync(chat, data)
    state = st.load_sync(chat)
    block = VectorBlock("hashing", tuple(data["nodes"]), _unit_matrix(n, seed=n))
    st.checkpoint_sync(chat, state, block)


def storage_rows(tmp: Path, *, quick: bool) -> list[Row]:
    """Journal-level figures (no engine): commit, load, raw LanceDB and numpy search."""
    out: list[Row] = []
    reps = 30 if quick else 100
    st = LanceStorage(StorageSettings(uri=str(tmp / "db"), checkpoint_every=10_000))
    profile = HashingProfile()
    version = [0]

    def one_op() -> None:
        i = version[0] + 1
        node = _node(i)
        vec = profile.embed([node["title"] + " " + node["fields"]["summary"]])
        change = ChangeRecord(
            nodes=(node,),
            node_seq=i,
            seq_counter=i,
            applied=1,
            vectors=VectorBlock("hashing", (node["id"],), vec),
        )
        version[0] = st.commit_sync("w", change, base_version=version[0]).version

    out.append(("storage: journal commit, 1 op (+embed)", _p50(one_op, reps), 15.0, "LanceStorage"))

    def hundred_ops() -> None:
        base = version[0]
        nodes = tuple(_node(base * 1000 + j) for j in range(100))
        vecs = profile.embed([n["fields"]["summary"] for n in nodes])
        change = ChangeRecord(
            nodes=nodes,
            node_seq=base,
            seq_counter=base,
            applied=100,
            vectors=VectorBlock("hashing", tuple(n["id"] for n in nodes), vecs),
        )
        version[0] = st.commit_sync("w", change, base_version=base).version

    out.append(("storage: journal commit, 100 ops", _p50(hundred_ops, reps // 3), 60.0, ""))

    other = LanceStorage(st.settings)  # another writer (as another process would be)
    other_version = [0]
    times: list[float] = []
    for _ in range(reps // 3 + 2):
        other_version[0] = other.commit_sync(
            "other", ChangeRecord(nodes=(_node(0),)), base_version=other_version[0]
        ).version
        t0 = time.perf_counter()
        one_op()
        times.append(time.perf_counter() - t0)
    out.append(
        (
            "storage: journal commit, 1 op, after another writer",
            statistics.median(times[2:]) * 1000.0,
            None,
            "reads its row back",
        )
    )

    sizes = [10_000] if quick else [10_000, 100_000]
    for n in sizes:
        _big_chat(st, f"big{n}", n)
        fresh = LanceStorage(st.settings)
        ms = _p50(lambda n=n, fresh=fresh: fresh.load_sync(f"big{n}"), 3, warmup=1)
        limit = 300.0 if n == 10_000 else 3000.0
        out.append((f"storage: load chat dict, {n // 1000}k nodes", ms, limit, "ckpt + journal"))

    # search over the same 100k x 384 matrix three ways
    n = 20_000 if quick else 100_000
    matrix = _unit_matrix(n, seed=1)
    ids = [f"n_{i}" for i in range(n)]
    queries = _unit_matrix(20, seed=2)
    qi = [0]

    def next_q() -> np.ndarray:
        qi[0] = (qi[0] + 1) % len(queries)
        return queries[qi[0]]

    def numpy_brute() -> None:
        q = next_q()
        scores = matrix @ q
        top = np.argpartition(-scores, 20)[:20]
        top[np.argsort(-scores[top])]

    out.append(
        (
            f"numpy brute force top-20, {n // 1000}k x {DIM}",
            _p50(numpy_brute, 20),
            None,
            "reference",
        )
    )
    index = VectorIndex(DIM, "hashing")
    index.upsert(ids, matrix, ["event"] * n, [True] * n)
    out.append(
        (
            f"VectorIndex.search k=20, {n // 1000}k x {DIM}",
            _p50(lambda: index.search(next_q(), k=20), 20),
            20.0,
            "exact",
        )
    )
    emb_ms = _p50(lambda: profile.embed(["who betrayed the harbor guild"]), 20)
    out.append(("hashing profile: embed a query", emb_ms, None, ""))

    raw = st._db.create_table(
        "bench_raw",
        pa.table(
            {
                "id": ids,
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), DIM),
            }
        ),
        mode="overwrite",
    )
    out.append(
        (
            f"raw LanceDB flat search k=20, {n // 1000}k x {DIM}",
            _p50(lambda: raw.search(next_q()).metric("cosine").limit(20).to_arrow(), 10, warmup=1),
            None,
            "reference",
        )
    )
    one = pa.table(
        {"id": ["x"], "vector": pa.FixedSizeListArray.from_arrays(pa.array(queries[0]), DIM)}
    )
    out.append(("raw LanceDB single-row add", _p50(lambda: raw.add(one), reps), None, "reference"))
    hundred = pa.table(
        {
            "id": [f"b_{j}" for j in range(100)],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix[:100].reshape(-1)), DIM),
        }
    )
    out.append(
        ("raw LanceDB 100-row add", _p50(lambda: raw.add(hundred), reps // 3), None, "reference")
    )
    out.append(
        (
            "raw LanceDB latest-version check",
            _p50(lambda: st._commits.version, 200),
            None,
            "reference for warm open",
        )
    )
    for size in sizes:
        rows_table = st._db.create_table(
            f"bench_rows_{size}",
            pa.table(
                {
                    "id": [f"n_{i}" for i in range(size)],
                    "data": [_json_node(i) for i in range(size)],
                }
            ),
            mode="overwrite",
        )
        fresh_db = lancedb.connect(st.settings.uri)
        out.append(
            (
                f"raw LanceDB open + read {size // 1000}k node rows (JSON)",
                _p50(
                    lambda size=size, db=fresh_db: (
                        db.open_table(f"bench_rows_{size}").to_arrow().num_rows
                    ),
                    3,
                    warmup=1,
                ),
                None,
                "reference for cold open",
            )
        )
        del rows_table
    return out


def session_rows(tmp: Path, *, quick: bool) -> list[Row]:
    """Figures through the plugin's session (engine + LanceDB persistence + embeddings)."""
    import asyncio

    return asyncio.run(_session_rows(tmp, quick=quick))


async def _ap50(fn: Callable[[], Any], n: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        await fn()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000.0


async def _session_rows(tmp: Path, *, quick: bool) -> list[Row]:
    out: list[Row] = []
    host, api, persistence = await hashing_host(tmp / "host")
    session = await api.open_session(host.get_context("bench-writes"))
    counter = [0]

    async def one_op() -> None:
        counter[0] += 1
        await session.create_node(
            type="event",
            fields={"summary": f"Mira meets the guild at the harbor, scene {counter[0]}"},
        )

    reps = 30 if quick else 100
    out.append(
        (
            "session: persisted 1-op write (create_node)",
            await _ap50(one_op, reps),
            15.0,
            "journal row + vectors",
        )
    )

    async def batch() -> None:
        counter[0] += 1
        ops = [
            {
                "op": "create",
                "type": "event",
                "fields": {"summary": f"batch {counter[0]} item {j} at the harbor"},
            }
            for j in range(100)
        ]
        await session.apply_extraction_batch(ops=ops)

    out.append(("session: persisted 100-op batch", await _ap50(batch, max(5, reps // 5)), 60.0, ""))

    storage = persistence.storage
    saved, storage.embedder = storage.embedder, None  # vectors come from reindex below
    sizes = [10_000] if quick else [10_000, 100_000]
    for n in sizes:
        chat = f"bench-{n}"
        storage.import_sync(chat, _chat_data(n))
        storage.checkpoint_sync(chat, storage.load_sync(chat))

        async def cold(chat: str = chat) -> None:
            persistence.forget(chat)
            await api.open_session(host.get_context(chat))

        limit = 300.0 if n == 10_000 else 3000.0
        out.append(
            (
                f"session: cold open_session, {n // 1000}k nodes",
                await _ap50(cold, 3, warmup=1),
                limit,
                "LanceDB + Store.from_dict",
            )
        )
        ctx = host.get_context(chat)
        out.append(
            (
                f"session: warm open_session, {n // 1000}k nodes",
                await _ap50(lambda ctx=ctx: api.open_session(ctx), 200),
                1.0,
                "cached",
            )
        )
    storage.embedder = saved

    n = sizes[-1]
    chat = f"bench-{n}"
    t0 = time.perf_counter()
    await persistence.reindex(chat)
    embed_s = time.perf_counter() - t0
    persistence.forget(chat)
    s = await api.open_session(host.get_context(chat))
    t0 = time.perf_counter()
    await s.vector_search(query="harbor guild", k=20)
    first_ms = (time.perf_counter() - t0) * 1000
    queries = ["who met the guild", "scene at the harbor", "Mira", "storm over the sea"]
    qi = [0]

    async def search() -> None:
        qi[0] += 1
        await s.vector_search(query=queries[qi[0] % len(queries)], k=20)

    out.append(
        (
            f"session: vector_search k=20, {n // 1000}k x {DIM}",
            await _ap50(search, 20),
            20.0,
            "exact numpy, hashing profile",
        )
    )
    out.append(
        (
            f"session: first vector_search (load vectors), {n // 1000}k",
            first_ms,
            None,
            "once per loaded chat",
        )
    )
    out.append(
        (
            f"reindex {n // 1000}k nodes (embed + checkpoint)",
            embed_s * 1000,
            None,
            "hashing profile",
        )
    )
    await host.stop()
    return out


def rows(*, quick: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="memgraph-bench-") as tmp:
        out = storage_rows(Path(tmp), quick=quick)
        out += session_rows(Path(tmp), quick=quick)
    return out


def print_rows(table: list[Row]) -> None:
    print(f"{'measure':<52} {'p50 ms':>10} {'limit':>8}  note")
    for name, ms, limit, note in table:
        lim = f"{limit:g}" if limit is not None else "-"
        flag = "" if limit is None or ms <= limit else "  OVER"
        print(f"{name:<52} {ms:>10.2f} {lim:>8}  {note}{flag}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller data, fewer repetitions")
    args = parser.parse_args(argv)
    print_rows(rows(quick=args.quick))


if __name__ == "__main__":
    main()
