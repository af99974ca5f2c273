"""Scale ratios of storage (issue 16 items 2 and 3), each pair measured in one run:

- p99 / p50 of 1,000 one-op persisted writes spanning several maintenance cycles (target <= 10);
- p99 / p50 of writes to chat B while chat A is in maintenance (A's snapshot, pruning and the
  compaction of the tables that need it, in the maintenance process) (target <= 3);
- cold open of a 100k-node chat / a raw pyarrow read of its tables (target <= 1.5);
- first vector search after an open / one once everything is settled (target <= 2);
- with `--million`: open and first keyword search of a 1M-node chat (goals 5 s and 1 s);
- `--section 4`: the first turn after a start, imported and live-built chats at `--sizes`
  (`bench/first_turn.py`: open + first turn <= 1.5 s at 100k, 10 s at 1M with `--million`).

`rows(quick=...)` returns `(name, value, limit | None, note, unit)` rows for `bench/run.py` (the
`scale` section). Run alone: `python bench/scale.py [--quick] [--million] [--section N ...]`
(`--section 2`: only the writes to B during A's maintenance, ~1-2 min).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from common import hashing_host, sibling  # noqa: E402

from memgraph_plugin.storage import ChangeRecord, ChatState, VectorBlock  # noqa: E402
from memgraph_plugin.storage.database.escape import where_eq  # noqa: E402
from memgraph_plugin.storage.database.tables import SNAP_KEYWORDS  # noqa: E402
from memgraph_plugin.storage.format.graph_columns import empty_edges  # noqa: E402
from memgraph_plugin.storage.snapshots.snapshots import in_list, read_all  # noqa: E402
from tests.storage.node_tables import event_table  # noqa: E402

Row = tuple[str, float, float | None, str, str]
MB = 1 << 20
WORDS = [
    *("harbor", "guild", "storm", "betrayal", "garden", "picnic"),
    *("dragon", "castle", "river", "forest", "merchant", "gold"),
]


QUERY_WORDS = [
    *("healer", "ship", "spice", "winter", "letter", "sword", "bridge", "lantern"),
    *("wolf", "bakery", "tower", "oath", "rain", "market", "song", "island"),
]


_T0 = time.perf_counter()
SECTIONS = frozenset({1, 2, 3})
#: section 4 (only when asked): the first turn after a start of an imported and a live-built
#: chat, in fresh processes (`bench/first_turn.py`, issue 31)
FIRST_TURN = 4


def _phase(name: str) -> None:
    """A progress line on stderr (a full run takes minutes)."""
    print(f"[scale {time.perf_counter() - _T0:7.1f} s] {name}", file=sys.stderr, flush=True)


def _written(pid: int | None) -> int:
    """Bytes process `pid` (and its threads) has caused to be written to storage so far."""
    if pid is None:
        return 0
    try:
        text = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return 0
    fields = dict(line.split(": ") for line in text.splitlines())
    return int(fields.get("write_bytes", 0))


def _pct(times: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(times) * 1000.0, q))


def node_table(n: int, seed: int = 0) -> pa.Table:
    """A node state table of `n` event nodes with varied titles (built as columns, fast)."""
    rng = np.random.default_rng(seed)
    words = np.asarray(WORDS)
    picks = words[rng.integers(0, len(words), size=(n, 3))]
    titles = [" ".join(row) + f" {i}" for i, row in enumerate(picks.tolist())]
    ids = [f"n_{i}" for i in range(n)]
    fields = [f'{{"summary":"Mira at the {t}"}}' for t in titles]
    return event_table(ids, titles, fields, np.arange(n, dtype=np.int64) // 10)


def seed_chat(storage: Any, chat: str, n: int, profile: str | None = None) -> None:
    """A chat of `n` nodes as it is stored after its snapshots: one (empty) journal commit and a
    full columnar snapshot at that version, with random unit vectors of `profile` (384-d) when
    given (search cost does not depend on what the vectors are; embedding 1M texts would take
    the bench minutes)."""
    base = storage.latest_version_sync(chat)
    rec = storage.commit_sync(
        chat, ChangeRecord(node_seq=n, seq_counter=n // 10, kind="import"), base_version=base
    )
    nodes = node_table(n, seed=n)
    state = ChatState(
        chat, rec.version, nodes=nodes, edges=empty_edges(), node_seq=n, seq_counter=n // 10,
        seq=rec.seq,
    )
    vectors = None
    if profile is not None:
        m = np.random.default_rng(n).standard_normal((n, 384)).astype(np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        vectors = VectorBlock(profile, tuple(nodes["id"].to_pylist()), m)
    storage.checkpoint_sync(chat, state, vectors)


def raw_read(uri: str, chat: str, storage: Any, *, concurrent: bool = False) -> float:
    """Seconds to open the chat's snapshot tables on a fresh connection and read its rows
    (nodes, edges, keyword rows, vectors) into pyarrow, each in the faster of LanceDB's default
    batches and the large ones storage reads with: the floor a columnar open can reach.
    `concurrent`: the vectors on a thread of their own beside the other tables, as the open
    reads them (so the open's overlap is not counted as its own speed)."""
    head = storage._snaps.head(chat)
    chain = [int(v) for v in head["chain"]]
    best = float("inf")
    for read in (lambda q: q.to_arrow(), read_all):
        t0 = time.perf_counter()
        db = lancedb.connect(uri)
        where = f"{where_eq(chat_id=chat)} AND {in_list('snap', chain)}"
        vectors = None
        if head.get("vec_dim"):
            vwhere = f"{where_eq(chat_id=chat)} AND {in_list('ckpt_version', chain)}"
            vectors = db.open_table("nodes").search().where(vwhere).select(["id", "vector"])
            vectors = vectors.limit(None)
        beside = None
        if concurrent and vectors is not None:
            beside = threading.Thread(target=read, args=(vectors,))
            beside.start()
        for name in ("snap_nodes", "snap_edges", SNAP_KEYWORDS):
            read(db.open_table(name).search().where(where).limit(None))
        if beside is not None:
            beside.join()
        elif vectors is not None:
            read(vectors)
        best = min(best, time.perf_counter() - t0)
    return best


async def _bench(
    tmp: Path, *, quick: bool, million: bool, sections: frozenset[int] = SECTIONS
) -> list[Row]:
    out: list[Row] = []
    host, api, persistence = await hashing_host(tmp / "host")
    storage = persistence.storage

    if 1 in sections:
        out += await _one_op_writes(tmp, host, api, storage, quick=quick)
    if 2 in sections:
        out += await _writes_during_maintenance(host, api, storage, quick=quick)
    if 3 in sections:
        out += await _open_and_search(host, api, persistence, storage, quick=quick)
    if million:
        out += await _million(host, api, persistence, storage)
    _phase("done")
    await host.stop()
    return out


async def _one_op_writes(
    tmp: Path, host: Any, api: Any, storage: Any, *, quick: bool
) -> list[Row]:
    """Section 1: one-op persisted writes across maintenance cycles, interleaved in blocks of 50
    with the same writes on a second host whose maintenance never runs: the machine's own noise
    floor (a shared 2-core machine's p99 / p50 can pass 10 with no maintenance at all)."""
    from host import Host

    out: list[Row] = []
    _phase("one-op writes")
    writes = 300 if quick else 1000
    quiet_host = Host(
        data_dir=tmp / "quiet",
        settings={"embedding_profile": "hashing", "storage_optimize_every": 10**9,
                  "storage_checkpoint_every": 10**9, "storage_maintenance_seconds": 10**6},
        entry_points=False,
    )
    await quiet_host.start()
    quiet_api = quiet_host.registry.get("memory-graph")
    session = await api.open_session(host.get_context("writes"))
    quiet = await quiet_api.open_session(quiet_host.get_context("writes"))
    passes0 = storage.maintenance.passes
    times: list[float] = []
    floor: list[float] = []
    for block in range(0, writes, 50):
        for sample, target in ((times, session), (floor, quiet)):
            for i in range(block, min(block + 50, writes)):
                t0 = time.perf_counter()
                await target.create_node(
                    type="event", fields={"summary": f"Mira at the harbor {i}"}
                )
                sample.append(time.perf_counter() - t0)
    storage.maintenance.wait_idle(120)
    await quiet_host.stop()
    passes = storage.maintenance.passes - passes0
    p50, p99 = _pct(times, 50), _pct(times, 99)
    note = f"{writes} writes, {passes} maintenance passes (snapshot every 200, compact every 50)"
    out.append(("persisted 1-op write p50", p50, None, note, "ms"))
    out.append(("persisted 1-op write p99", p99, None, f"max {max(times) * 1000:.1f} ms", "ms"))
    out.append(("write p99 / p50", p99 / p50, 10.0, "across maintenance cycles", "x"))
    f50, f99 = _pct(floor, 50), _pct(floor, 99)
    out.append(("same writes, no maintenance at all: p99 / p50", f99 / f50, None,
                f"noise floor of this machine now (p50 {f50:.1f} ms, p99 {f99:.1f} ms)", "x"))
    return out


async def _writes_during_maintenance(
    host: Any, api: Any, storage: Any, *, quick: bool
) -> list[Row]:
    """Section 2: writes to chat B while chat A is in maintenance. A holds 100k nodes; each
    cycle puts `storage_checkpoint_every` commits on it, the last one making its snapshot due,
    and the maintenance process runs a pass (A's delta snapshot, pruning, compaction of the tables
    that need it) while B keeps writing; the writes that overlap a pass are the sample."""
    out: list[Row] = []
    size_a = 20_000 if quick else 100_000
    _phase(f"writes to B while A ({size_a:,} nodes) is in maintenance")
    seed_chat(storage, "A", size_a, "hashing")
    a = await api.open_session(host.get_context("A"))
    b = await api.open_session(host.get_context("B"))
    every = storage.settings.checkpoint_every
    during: list[float] = []
    baseline: list[float] = []
    maint_s = 0.0
    written = 0
    cycles = 3 if quick else 5
    for cycle in range(cycles):
        for i in range(every - 1):
            await a.create_node(type="event", fields={"summary": f"A {cycle} {i}"})
        storage.maintenance.wait_idle(300)
        for i in range(max(20, len(during) // max(cycle, 1))):  # as many as a pass overlaps
            t0 = time.perf_counter()
            await b.create_node(type="event", fields={"summary": f"quiet {cycle} {i}"})
            baseline.append(time.perf_counter() - t0)
        storage._commits_since_optimize = storage.settings.optimize_every  # compaction too
        await a.create_node(type="event", fields={"summary": f"A {cycle} due"})
        due = storage.latest_version_sync("A")
        pid = storage.maintenance.process_pid
        w0 = _written(pid)
        t_start = time.perf_counter()
        # until the pass holding A's snapshot (and the compaction after it) has answered; B's
        # own commits keep making passes due, so "no pass pending" may never come
        while storage.checkpointed_version("A") < due and time.perf_counter() - t_start < 600:
            t0 = time.perf_counter()
            await b.create_node(type="event", fields={"summary": f"during {len(during)}"})
            during.append(time.perf_counter() - t0)
        maint_s += time.perf_counter() - t_start
        if storage.maintenance.process_pid == pid:
            written += _written(pid) - w0
    p50, p99 = _pct(during, 50), _pct(during, 99)
    note = (
        f"{len(during)} writes to B over {maint_s:.1f} s of {cycles} passes (A's"
        f" {size_a // 1000}k-node chat: snapshot, pruning, compaction where needed)"
    )
    b50, b99 = _pct(baseline, 50), _pct(baseline, 99)
    out.append(("write to B, no maintenance running, p50", b50, None,
                f"{len(baseline)} writes between the passes", "ms"))
    out.append(("write to B, no maintenance running, p99 / p50", b99 / b50, None,
                "noise floor of this machine now", "x"))
    out.append(("write to B during A's maintenance p50", p50, None, note, "ms"))
    out.append(("write to B during A's maintenance p99", p99, None, "", "ms"))
    out.append(("B write p99 / p50 during A's maintenance", p99 / p50, 3.0, "", "x"))
    out.append((f"maintenance writes per pass, A at {size_a // 1000}k", written / cycles / MB,
                None, "the maintenance process's write_bytes (/proc), mean of the passes", "MB"))
    return out


async def _open_and_search(
    host: Any, api: Any, persistence: Any, storage: Any, *, quick: bool
) -> list[Row]:
    """Section 3: cold open of a 100k-node chat vs a raw pyarrow read of its tables; the first
    vector search after an open vs searches once everything is settled.

    The chat is seeded as the maintenance process leaves it: a full snapshot with its vector
    rows. A first search right after a cold open and a settled one (no build of LanceDB's vector
    index running) each ask a query never asked before, so both make the store records of their
    hits (the store makes records on first read, 64 rows at a time), as a turn's search does.
    Measured twice: through the session (what a caller sees) and the index search alone."""
    out: list[Row] = []
    size = 20_000 if quick else 100_000
    _phase(f"cold open of {size:,} nodes")
    seed_chat(storage, "big", size, "hashing")
    raws = [raw_read(storage.settings.uri, "big", storage) for _ in range(3)]
    overlapped = [
        raw_read(storage.settings.uri, "big", storage, concurrent=True) for _ in range(3)
    ]
    opens: list[float] = []
    firsts: list[float] = []  # through the session, right after a cold open
    settled: list[float] = []  # through the session, fresh queries once settled
    index_firsts: list[float] = []  # the index search alone, right after a cold open
    index_settled: list[float] = []
    modes: set[str] = set()
    fresh = iter(range(10**6))
    rng = np.random.default_rng(11)
    vocabulary = [*WORDS, *QUERY_WORDS]

    def query() -> str:  # never asked before (its hits' records are not made yet), and words
        n = next(fresh)  # drawn at random: its hits are not those of the last one
        return " ".join([*rng.choice(vocabulary, size=3, replace=False), str(n)])

    async def settle() -> None:  # no build of LanceDB's vector index running
        t_wait = time.perf_counter()
        while persistence._ann_build is not None and not persistence._ann_build.done():
            if time.perf_counter() - t_wait > 60:
                break
            await asyncio.sleep(0.05)

    for _round_no in range(3):
        persistence.forget("big")
        t0 = time.perf_counter()
        s = await api.open_session(host.get_context("big"))
        opens.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await s.vector_search(query=query(), k=20)
        firsts.append(time.perf_counter() - t0)
        modes.add(persistence.last_search_mode)
        await settle()
        for _ in range(8):
            t0 = time.perf_counter()
            await s.vector_search(query=query(), k=20)
            settled.append(time.perf_counter() - t0)
        persistence.forget("big")  # again, the index search alone
        await api.open_session(host.get_context("big"))
        t0 = time.perf_counter()
        await persistence.vector_search("big", query=query(), types=None, k=20)
        index_firsts.append(time.perf_counter() - t0)
        await settle()
        for _ in range(8):
            t0 = time.perf_counter()
            await persistence.vector_search("big", query=query(), types=None, k=20)
            index_settled.append(time.perf_counter() - t0)
    raw_ms, open_ms = statistics.median(raws) * 1000, statistics.median(opens) * 1000
    out.append((f"raw pyarrow read of a {size // 1000}k chat's tables", raw_ms, None,
                "nodes, edges, vectors", "ms"))
    out.append((f"cold open_session, {size // 1000}k nodes", open_ms, None,
                "store + vector index", "ms"))
    out.append(("open / raw read", open_ms / raw_ms, 1.5, "", "x"))
    both_ms = statistics.median(overlapped) * 1000
    out.append(("raw read, vectors beside the other tables", both_ms, None,
                "on two threads, as the open reads them", "ms"))
    out.append(("open / that read", open_ms / both_ms, None,
                "what the open adds beyond its reads' own overlap", "x"))
    first_ms, settled_ms = statistics.median(firsts) * 1000, statistics.median(settled) * 1000
    out.append(("first vector_search after open", first_ms, None,
                f"k=20, a new query, median of 3; searched as: {'/'.join(sorted(modes))}", "ms"))
    out.append(("vector_search once settled", settled_ms, None,
                "k=20, new queries, no vector-index build running", "ms"))
    out.append(("first / settled vector_search", first_ms / settled_ms, 2.0,
                "both make their hits' store records", "x"))
    i_first = statistics.median(index_firsts) * 1000
    i_settled = statistics.median(index_settled) * 1000
    out.append(("index search: first after open", i_first, None,
                "persistence.vector_search alone (no records)", "ms"))
    out.append(("index search: once settled", i_settled, None, "", "ms"))
    out.append(("index search: first / settled", i_first / i_settled, 2.0, "", "x"))
    return out


async def _million(host: Any, api: Any, persistence: Any, storage: Any) -> list[Row]:
    """With `--million`: open and first keyword search of a 1M-node chat."""
    out: list[Row] = []
    n = 1_000_000
    _phase("1M-node chat")
    seed_chat(storage, "million", n)
    persistence.forget("million")
    t0 = time.perf_counter()
    s = await api.open_session(host.get_context("million"))
    open_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    s.keyword_search(query="harbor guild betrayal", k=20)
    kw_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    s.keyword_search(query="dragon castle", k=20)
    kw2 = time.perf_counter() - t0
    out.append(("cold open_session, 1M nodes", open_s * 1000, 5000.0, "goal <= 5 s", "ms"))
    out.append(("first keyword_search, 1M nodes", kw_s * 1000, 1000.0, "goal <= 1 s", "ms"))
    out.append(("later keyword_search, 1M nodes", kw2 * 1000, None, "", "ms"))
    return out


def rows(
    *, quick: bool = False, million: bool = False, sections: frozenset[int] = SECTIONS
) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="memgraph-scale-") as tmp:
        return asyncio.run(_bench(Path(tmp), quick=quick, million=million, sections=sections))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller chats, fewer writes")
    parser.add_argument("--million", action="store_true", help="also a 1M-node chat (minutes)")
    parser.add_argument(
        "--section", type=int, action="append", choices=[*sorted(SECTIONS), FIRST_TURN],
        help="run only this section (1: writes across maintenance cycles, 2: writes to B during"
        " A's maintenance, 3: open and first search, 4: the first turn after a start of an"
        " imported and a live-built chat, bench/first_turn.py); repeatable; default 1-3",
    )
    parser.add_argument(
        "--sizes", default="10000,100000", help="section 4's chat sizes (10000,100000)"
    )
    args = parser.parse_args(argv)
    if args.section and FIRST_TURN in args.section:
        from rich.console import Console

        first_turn = sibling("first_turn", "first_turn")
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        sizes += [1_000_000] if args.million else []
        Console(width=160).print(first_turn.table(first_turn.run(sizes)))
        args.section = [s for s in args.section if s != FIRST_TURN]
        if not args.section:
            return
    sections = frozenset(args.section) if args.section else SECTIONS
    print(f"{'measure':<52} {'value':>10} {'unit':<4} {'target':>8}  note")
    table = rows(quick=args.quick, million=args.million, sections=sections)
    for name, value, limit, note, unit in table:
        lim = f"<= {limit:g}" if limit is not None else "-"
        flag = "" if limit is None or value <= limit else "  OVER"
        print(f"{name:<52} {value:>10.2f} {unit:<4} {lim:>8}  {note}{flag}")


if __name__ == "__main__":
    main()
