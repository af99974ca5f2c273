"""The first turn of a big chat after a start (issue 31), for an imported chat and for one built
by live commits, with the goal beside each number.

Per size (default 10k and 100k nodes, about 3 edges a node: ``engine.build_chat``):

- **imported**: the graph imported with ``MemoryGraph.import_graph`` (what ``memgraph-host
  import`` runs), timed (and, of it, the embedding of its nodes), against a raw LanceDB write
  of the same rows: every row the import stored (its one journal row pointing at its
  snapshot, the snapshot's node, edge and keyword rows, its vector rows; goal: at
  most 2x), and, for reference, the node and edge state rows alone. Nothing is deferred: the
  import embeds every node before its commit, and the table says how many nodes were left
  without a stored vector (embedded later, in the background, by every open until a snapshot
  stores them). Beside it, the path a person runs: ``memgraph-host import`` in a new process
  (interpreter and host start, reading the store file, its checks) under the hashing profile
  and under the default one (WordLlama), for reference (no goal of its own);
- from 1M nodes (``--million``), one chat seeded with pyarrow the way an import stores it
  (``build_seeded``), since building and importing 1M nodes as Python dicts takes most of an
  hour;
- **live**: the same graph committed the way a long-lived chat grows (journal rows of 1,000
  nodes each, one per append, with their vectors), snapshotted by the maintenance path
  (``snapshot_sync``), with the chat's messages up to the graph's seq (a live chat has them:
  without them the first answer reads as an edit and rolls the graph back), then 20 small
  commits after the snapshot, as turns leave them; and the extractor's word counts of the
  messages as the turns would have kept them (``extraction/vocabulary_file.py``, written every
  ``SAVE_EVERY`` messages: the bench writes them ``SAVE_EVERY - 1`` messages before the end,
  the most a live chat's first message after a start counts again).

Then, for each, a fresh process (``--child``; ``--runs`` of them, 3 by default, each on a copy
of the chat as built, the median run's numbers shown with every run's open + first turn): host
start, ``open_session``, the first ``add_user_message`` (of it, the look for the newest message
event: the imported chat, anchored to its empty message list, has every event at seq 0) and the
first ``recall`` (the offline extractor, ``embedding_profile`` hashing), then five steady turns;
a second cold open in the same process (the modules imported); whether LanceDB was imported by
the open and by the first turn (reads and appends go through pylance,
``storage/database/table_reads.py``: no row for a wait on LanceDB's import any more); and a raw
pyarrow read of the chat's tables (``scale.raw_read``, in a process of its own on the chat as built,
best of three after a first). Goals: open + first turn <= 1.5 s at 100k (10 s at 1M) and <= 3x
the raw read; the first turn <= 3x a steady turn plus the open. Then, on the chat that run left,
a second fresh process (``--regenerate``) whose first turn is a regenerate of the last answer
(what the proxy makes of a chat app's swipe: the answer and what the graph learnt from it
undone, the new answer extracted), against steady regenerates in that process: the same goal as
the first turn's (after a start, the commits to undo are not the process's own, so storage says
what they replaced: ``storage/journal/restored_values.py``). The project's modules are compiled to
bytecode first, as an installed package has them (``compiled``). Ratios are measured within one
run, so a shared machine slows both sides alike; the open and first turn's CPU seconds
(``time.process_time``: every thread of the process, LanceDB's decoding threads included) are
printed beside their wall time, as the machine's load cannot inflate them.

    python bench/first_turn.py [--sizes 10000,100000] [--million]

``bench/scale.py --section 4`` and ``bench/turn.py --first-turn`` run it too.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [folder for folder in (str(HERE), str(ROOT)) if folder not in sys.path]
from common import sibling  # noqa: E402

CHAT = "big"
SETTINGS = {"embedding_profile": "hashing"}
BLOCK = 1000  # nodes per journal row of the live-built chat
STEADY_TURNS = 5
QUESTIONS = [
    "What happened with the harbor and the storm?",
    "Who spoke at the guild about the oath?",
    "Where did the dragon fly after the siege?",
    "What did the healer find in the market?",
    "Who carried the lantern over the bridge?",
    "Why did the captain leave the tavern?",
]


def _phase(text: str) -> None:
    print(f"[first_turn {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# -- building the two chats -----------------------------------------------------------------------


async def _with_host(data_dir: Path, work: Any) -> Any:
    from host import Host
    from memgraph_plugin.service import memory_graph_for

    host = Host(data_dir=data_dir, settings=SETTINGS, entry_points=False)
    await host.start()
    try:
        return await work(host, memory_graph_for(host))
    finally:
        await host.stop()


def build_imported(data_dir: Path, data: dict[str, Any]) -> tuple[float, float, str, int, float]:
    """Import `data` into a new host folder: seconds the import took, of them the seconds
    spent embedding its nodes (the profile's own work, timed around the storage's embedder),
    the LanceDB folder, how many nodes it left without a stored vector (deferred), and the
    CPU seconds of the import (`time.process_time`: every thread of the process, which a
    shared machine's load does not inflate)."""

    async def work(host: Any, service: Any) -> tuple[float, float, str, int, float]:
        from memgraph_plugin.embedding.embedder import NodeEmbedder

        storage = service.persistence.storage
        embedder = storage.embedder
        spent = [0.0]

        class Timed(NodeEmbedder):
            """The storage's embedder, timed (still a `NodeEmbedder`: the import hands it
            the nodes as they are, where it copies them for any other callable)."""

            def __call__(self, nodes: Any) -> Any:
                t = time.perf_counter()
                try:
                    return super().__call__(nodes)
                finally:
                    spent[0] += time.perf_counter() - t

        if isinstance(embedder, NodeEmbedder):
            timed = Timed(embedder.profile)
            timed.columns = embedder.columns
            storage.embedder = timed
        await storage.latest_version(CHAT)  # LanceDB imported and connected: not the import's
        t0, c0 = time.perf_counter(), time.process_time()
        await service.import_graph(CHAT, data)
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
        storage.embedder = embedder
        state, vectors = storage.load_with_vectors_sync(CHAT, profile=embedder.name)
        stored = 0 if vectors is None else len(vectors.ids)
        return took, spent[0], storage.settings.uri, state.nodes.num_rows - stored, cpu

    took, embedding, uri, missing, cpu = asyncio.run(_with_host(data_dir, work))
    return float(took), float(embedding), str(uri), int(missing), float(cpu)


def cli_import(data_dir: Path, data: dict[str, Any], profile: str | None) -> float:
    """Seconds `memgraph-host import` takes, as a person runs it: a new process (interpreter
    and host start included) reading the graph as a store file (the original's JSON shape)
    into a new data folder, under embedding profile `profile` (None: the default profile)."""
    from memgraph_plugin import Store

    data_dir.mkdir(parents=True, exist_ok=True)
    store_file = data_dir.parent / f"{data_dir.name}.json"
    store_file.write_text(json.dumps(Store.from_dict(data).to_dict()), encoding="utf-8")
    argv = [sys.executable, "-m", "host", "--data-dir", str(data_dir), "import", CHAT]
    if profile is not None:
        argv[3:3] = ["--set", f"embedding_profile={profile}"]
    t0 = time.perf_counter()
    proc = subprocess.run([*argv, str(store_file)], capture_output=True, text=True, check=False)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"memgraph-host import failed: {proc.stderr[-3000:]}")
    store_file.unlink()
    return took


def build_live(data_dir: Path, data: dict[str, Any]) -> None:
    """The same graph as a long-lived chat stores it: journal rows of `BLOCK` nodes (with their
    vectors), a snapshot by the maintenance path, then 20 small commits after it."""
    from memgraph_plugin.storage import ChangeRecord

    async def work(host: Any, service: Any) -> None:
        persistence = service.persistence
        storage = persistence.storage
        embedder = persistence.embedder
        nodes = list(data["nodes"].values())
        edges = list(data["edges"])
        version = storage.latest_version_sync(CHAT)
        seq = int(data.get("seqCounter") or 0)
        for lo in range(0, len(nodes), BLOCK):
            part = nodes[lo : lo + BLOCK]
            last = lo + BLOCK >= len(nodes)
            change = ChangeRecord(
                nodes=tuple(part),
                edges_added=tuple(edges) if last else (),
                node_seq=int(data.get("nodeSeq") or len(nodes)),
                seq_counter=seq,
                applied=len(part),
                vectors=embedder(part),
            )
            version = storage.commit_sync(CHAT, change, base_version=version).version
        storage.snapshot_sync(CHAT)
        converse(host, seq)
        session = await service.open_session(host.get_context(CHAT))
        for i in range(20):  # the turns after the newest snapshot
            await session.create_node(type="event", fields={"summary": f"a later turn {i}"})
        persistence.forget(CHAT)

    asyncio.run(_with_host(data_dir, work))


def converse(host: Any, seq: int) -> None:
    """The conversation that left a graph at seq `seq`, written to the chat: without it the
    child's first answer (seq 1) looked like an edit of an answer the graph holds, and the
    pipeline rolled the chat back (at 100k the steady turns and the second open then measured
    an emptied graph; at 1M the rollback took minutes). Then what a live chat's turns leave in
    its data folder: the extractor's word counts (`extraction/vocabulary_file.py`) as of their
    last write, at worst SAVE_EVERY - 1 messages before the end (the child's first message
    counts those)."""
    from memgraph_plugin.extraction.vocabulary import SAVE_EVERY, words_for

    chat = host.chat(CHAT)
    with chat.batched_writes():
        for i in range(seq):
            chat.add_message("user", f"question {i}")
            chat.add_message("assistant", f"answer {i}")
    log = chat.view()
    words_for(host, CHAT).feed_until(log, max(0, len(log) - (SAVE_EVERY - 1)))


def raw_write(data: dict[str, Any]) -> float:
    """Seconds LanceDB takes to write the same node and edge rows (as columns) to new tables."""
    import lancedb

    from memgraph_plugin.storage.format.graph_columns import state_tables

    nodes, edges = state_tables(data)
    best = float("inf")
    for _ in range(2):
        with tempfile.TemporaryDirectory(prefix="first-turn-raw-") as tmp:
            t0 = time.perf_counter()
            db = lancedb.connect(tmp)
            db.create_table("nodes", nodes)
            db.create_table("edges", edges)
            best = min(best, time.perf_counter() - t0)
    return best


def raw_write_all(uri: str) -> float:
    """Seconds LanceDB takes to write every row the import stored (journal rows with their
    JSON and vectors, snapshot node, edge and keyword rows, vector rows), read
    back from its folder `uri`, to new tables: the same rows, vectors included."""
    import lancedb

    source = lancedb.connect(uri)
    names = source.list_tables()
    names = getattr(names, "tables", names)
    tables = {name: source.open_table(name).to_arrow() for name in names}
    best = float("inf")
    for _ in range(2):
        with tempfile.TemporaryDirectory(prefix="first-turn-raw-") as tmp:
            t0 = time.perf_counter()
            db = lancedb.connect(tmp)
            for name, rows in tables.items():
                if rows.num_rows:
                    db.create_table(name, rows)
            best = min(best, time.perf_counter() - t0)
    return best


# -- the child: one fresh process's first turn ----------------------------------------------------


async def _first_turn(data_dir: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    from host import Host
    from memgraph_plugin.service import memory_graph_for
    from memgraph_plugin.turn import pipeline_for

    host = Host(data_dir=data_dir, settings=SETTINGS, entry_points=False)
    await host.start()
    out: dict[str, float] = {"host start": time.perf_counter() - t0}
    newest = _timed_newest_leaf()
    try:
        service = memory_graph_for(host)
        pipeline = pipeline_for(host)
        t, cpu = time.perf_counter(), time.process_time()
        await service.open_session(host.get_context(CHAT))
        out["open"] = time.perf_counter() - t
        out["open cpu"] = time.process_time() - cpu
        # the open reads through pylance; LanceDB is imported only by what needs it
        out["lancedb at open end"] = float("lancedb" in sys.modules)
        t, cpu = time.perf_counter(), time.process_time()
        await pipeline.add_user_message(CHAT, QUESTIONS[0])
        out["first user message"] = time.perf_counter() - t
        out["newest event in it"] = newest[0]
        t = time.perf_counter()
        await pipeline.recall(CHAT)
        out["first recall"] = time.perf_counter() - t
        out["first turn cpu"] = time.process_time() - cpu
        out["lancedb after first turn"] = float("lancedb" in sys.modules)
        await pipeline.add_assistant_message(CHAT, "The storm broke the harbor wall.")
        steady: list[float] = []
        for i in range(STEADY_TURNS):
            t = time.perf_counter()
            await pipeline.add_user_message(CHAT, QUESTIONS[1 + i % (len(QUESTIONS) - 1)])
            await pipeline.recall(CHAT)
            steady.append(time.perf_counter() - t)
            await pipeline.add_assistant_message(CHAT, f"Turn {i} ended at the gate.")
        out["steady turn"] = statistics.median(steady)
        left = pipeline.catch_up.pending(CHAT)
        out["catch-up groups left"] = float(left)
        pipeline.catch_up.stop()  # then a second cold open, with everything imported
        service.persistence.forget(CHAT)
        t = time.perf_counter()
        await service.open_session(host.get_context(CHAT))
        out["second open"] = time.perf_counter() - t
        storage = service.persistence.storage
        scale = sibling("scale")
        out["raw read after"] = min(
            scale.raw_read(storage.settings.uri, CHAT, storage) for _ in range(2)
        )
    finally:
        await host.stop()
    return out


def _timed_newest_leaf() -> list[float]:
    """Time `Store.newest_leaf` from now on (the newest message event, which the first user
    message looks for: after an import into an empty chat, every event sits at one seq): a
    list whose one item adds up the seconds of its calls."""
    from memgraph_plugin.engine.graph.store import Store

    spent = [0.0]
    plain = Store.newest_leaf

    def newest_leaf(self: Any, type_id: str, field: str) -> Any:
        t = time.perf_counter()
        try:
            return plain(self, type_id, field)
        finally:
            spent[0] += time.perf_counter() - t

    Store.newest_leaf = newest_leaf  # type: ignore[method-assign]
    return spent


async def _regenerate(data_dir: Path) -> dict[str, float]:
    """A second start on the chat a run left (its turns made in an earlier process): the first
    turn a regenerate of the last answer, as the proxy makes it when a chat app swipes (the
    answer forgotten with what the graph learnt from it, then the new answer extracted), then
    steady regenerates, each of the answer of a new turn."""
    from memgraph_plugin.turn import pipeline_for

    async def work(host: Any, service: Any) -> dict[str, float]:
        out: dict[str, float] = {}
        pipeline = pipeline_for(host)
        t = time.perf_counter()
        store = (await service.open_session(host.get_context(CHAT))).store
        out["regenerate open"] = time.perf_counter() - t

        async def regenerate(text: str) -> float:
            t = time.perf_counter()
            await pipeline.forget_messages_from(CHAT, len(host.chat(CHAT).messages) - 1)
            await pipeline.add_assistant_message(CHAT, text)
            return time.perf_counter() - t

        out["first regenerate"] = await regenerate("The storm spared the harbor wall.")
        session = await service.open_session(host.get_context(CHAT))
        out["first regenerate reloaded"] = float(session.store is not store)
        steady: list[float] = []
        for i in range(3):
            await pipeline.add_user_message(CHAT, QUESTIONS[1 + i % (len(QUESTIONS) - 1)])
            await pipeline.recall(CHAT)
            await pipeline.add_assistant_message(CHAT, f"Turn {i} ended at the gate.")
            steady.append(await regenerate(f"Turn {i} ended at the pier instead."))
        out["steady regenerate"] = statistics.median(steady)
        pipeline.catch_up.stop()
        return out

    return dict(await _with_host(data_dir, work))


def compiled() -> None:
    """The project's modules compiled to bytecode once, as an installed package has them (pip
    compiles on install): a shell with ``PYTHONDONTWRITEBYTECODE`` set (this one has) would
    otherwise compile every module again in each fresh process, inside the timed open."""
    import compileall

    for package in ("host", "memgraph_plugin", "extension_registry", "sample_plugins"):
        compileall.compile_dir(str(ROOT / package), quiet=1)


def children(data_dir: Path, runs: int) -> dict[str, float]:
    """`child` on `runs` copies of `data_dir` as it was built (a run's turns change the chat),
    one after the other: the numbers of the run whose open + first turn is the median (one
    run's numbers, so its ratios hold together), with every run's open + first turn beside
    them, and the raw read of the chat as built (`raw_read_alone`). On this shared 2-core
    machine one run's open + first turn varies by 0.1-0.3 s."""
    raw = raw_read_alone(data_dir)
    if runs <= 1:
        out = child(data_dir)
        out.update(_in_new_process("--regenerate", data_dir))
        out["runs"] = [out["open"] + out["first user message"] + out["first recall"]]
        return {**out, "raw read": raw}
    results = []
    for i in range(runs):
        copy = data_dir.with_name(f"{data_dir.name}-run{i}")
        shutil.copytree(data_dir, copy, symlinks=True)
        try:
            results.append(child(copy))
            results[-1].update(_in_new_process("--regenerate", copy))
        finally:
            shutil.rmtree(copy, ignore_errors=True)
    totals = [r["open"] + r["first user message"] + r["first recall"] for r in results]
    middle = sorted(range(runs), key=totals.__getitem__)[runs // 2]
    after = min(r["raw read after"] for r in results)
    return {**results[middle], "runs": totals, "raw read": raw, "raw read after": after}


async def _raw_read(data_dir: Path) -> float:
    """The fastest of three raw reads of the chat's tables (`scale.raw_read`) in this process,
    after one that imports LanceDB and warms the files."""
    from host import Host
    from memgraph_plugin.service import memory_graph_for

    host = Host(data_dir=data_dir, settings=SETTINGS, entry_points=False)
    await host.start()
    try:
        storage = memory_graph_for(host).persistence.storage
        scale = sibling("scale")
        scale.raw_read(storage.settings.uri, CHAT, storage)
        return min(scale.raw_read(storage.settings.uri, CHAT, storage) for _ in range(3))
    finally:
        await host.stop()


def raw_read_alone(data_dir: Path) -> float:
    """`_raw_read` of the chat as built, in a process of its own (``--raw``), before any run
    changed it: the floor the open + first turn is compared with. Read at the end of a run's
    own process instead (``raw read after``), after its turns and second open, it took
    0.42 s where a process of its own took 0.25-0.30 s for the live-built 100k chat."""
    return float(_in_new_process("--raw", data_dir))


def child(data_dir: Path) -> dict[str, float]:
    """Run `_first_turn` in a new interpreter (a real start: nothing imported or cached)."""
    return dict(_in_new_process("--child", data_dir))


def _in_new_process(mode: str, data_dir: Path) -> Any:
    """What this script prints last (JSON) when run as ``mode data_dir`` in a new interpreter."""
    proc = subprocess.run(
        [sys.executable, str(Path(__file__)), mode, str(data_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the table ------------------------------------------------------------------------------------


def build_seeded(data_dir: Path, size: int) -> None:
    """A chat of `size` nodes stored as an import leaves it (one `import` commit and a full
    snapshot with keyword rows and vectors), its rows made with pyarrow (`scale.seed_chat`:
    events without edges, random unit vectors), and the conversation that reached its seq
    (`converse`): the 1M case, where building the graph as Python dicts and importing it
    would take the bench most of an hour."""

    async def work(host: Any, service: Any) -> None:
        sibling("scale").seed_chat(service.persistence.storage, CHAT, size, "hashing")
        converse(host, size // 10)  # the seed's seq counter (`scale.seed_chat`)

    asyncio.run(_with_host(data_dir, work))


def measure(size: int, runs: int = 3) -> dict[str, dict[str, float]]:
    """Both chats of `size` nodes: their first-turn numbers (and the import's), each the
    median of `runs` fresh processes (`children`). From 1M nodes: one chat, seeded with
    pyarrow as an import stores it (`build_seeded`), and one run (a copy is gigabytes)."""
    if size >= 1_000_000:
        with tempfile.TemporaryDirectory(prefix="first-turn-") as tmp:
            _phase(f"{size:,}: seeding")
            seeded = Path(tmp) / "seeded"
            build_seeded(seeded, size)
            _phase(f"{size:,}: first turn of the seeded chat")
            return {"seeded": children(seeded, 1)}
    engine = sibling("engine")
    data = engine.build_chat(size)
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="first-turn-") as tmp:
        _phase(f"{size:,}: import")
        imported = Path(tmp) / "imported"
        import_s, embedding_s, uri, unembedded, import_cpu = build_imported(imported, data)
        raw_w, raw_all = raw_write(data), raw_write_all(uri)
        _phase(f"{size:,}: memgraph-host import (hashing, then the default profile)")
        cli_hashing = cli_import(Path(tmp) / "cli-hashing", data, "hashing")
        cli_default = cli_import(Path(tmp) / "cli-default", data, None)
        _phase(f"{size:,}: live-built chat")
        live = Path(tmp) / "live"
        build_live(live, data)
        # the children run with the graph's Python dicts freed: held by this process, they
        # made a child's raw read of the chat's tables 1.3-1.5x slower here
        del data
        gc.collect()
        _phase(f"{size:,}: first turn of the imported chat")
        out["imported"] = {
            **children(imported, runs),
            "import": import_s,
            "import cpu": import_cpu,
            "import embedding": embedding_s,
            "import unembedded": unembedded,
            "raw write": raw_w,
            "raw write all": raw_all,
            "cli import": cli_hashing,
            "cli import default": cli_default,
        }
        _phase(f"{size:,}: first turn of the live-built chat")
        out["live"] = children(live, runs)
    return out


def table(results: dict[int, dict[str, dict[str, float]]]) -> Any:
    """One column per chat (size, imported or live), one row per measure, the goal first."""
    from rich.table import Table

    grid = Table(title="first turn after a start (s; ratios x)")
    grid.add_column("measure")
    grid.add_column("goal")
    cols = [(size, path, r) for size, paths in results.items() for path, r in paths.items()]
    for size, path, _ in cols:
        grid.add_column(f"{size // 1000}k {path}", justify="right")

    def row(name: str, goal: str, cell: Any) -> None:
        grid.add_row(name, goal, *(cell(size, r) for size, _, r in cols))

    def turn(r: dict[str, float]) -> float:
        return r["first user message"] + r["first recall"]

    def mark(value: float, limit: float | None, text: str) -> str:
        if limit is None:
            return text
        return f"[green]{text}[/]" if value <= limit else f"[red]{text}[/]"

    row("host start", "", lambda n, r: f"{r['host start']:.2f}")
    row("open_session", "", lambda n, r: f"{r['open']:.2f}")
    row("first add_user_message", "", lambda n, r: f"{r['first user message']:.2f}")
    row(
        "  of it: the newest message event (an index query)",
        "",
        lambda n, r: f"{r['newest event in it']:.3f}" if "newest event in it" in r else "-",
    )
    row("first recall", "", lambda n, r: f"{r['first recall']:.2f}")
    row(
        "LanceDB imported by the open / the first turn",
        "no / no",
        lambda n, r: " / ".join(
            "-" if key not in r else "yes" if r[key] else "no"
            for key in ("lancedb at open end", "lancedb after first turn")
        ),
    )
    row(
        "open + first turn",
        "<= 1.5 (100k), 10 (1M)",
        lambda n, r: mark(r["open"] + turn(r), _goal(n), f"{r['open'] + turn(r):.2f}"),
    )
    row(
        "  CPU s of it (all threads)",
        "",
        lambda n, r: f"{r['open cpu'] + r['first turn cpu']:.2f}" if "open cpu" in r else "-",
    )
    row(
        "  each run's (the median run's numbers shown)",
        "",
        lambda n, r: " ".join(f"{x:.2f}" for x in sorted(r.get("runs", []))) or "-",
    )
    row("raw pyarrow read (own process)", "", lambda n, r: f"{r['raw read']:.3f}")
    row(
        "  the same, at the end of a run (fastest)",
        "",
        lambda n, r: f"{r['raw read after']:.3f}" if "raw read after" in r else "-",
    )
    row(
        "cold open again, same process",
        "",
        lambda n, r: f"{r['second open']:.2f}" if "second open" in r else "-",
    )
    row(
        "open + first turn / raw read",
        "<= 3 (100k, 1M)",
        lambda n, r: mark((r["open"] + turn(r)) / r["raw read"], 3.0 if _goal(n) else None,
                          f"{(r['open'] + turn(r)) / r['raw read']:.1f}"),
    )  # fmt: skip
    row("steady turn (user + recall)", "", lambda n, r: f"{r['steady turn']:.3f}")
    row(
        "first turn / (3 x steady + open)",
        "<= 1",
        lambda n, r: mark(turn(r) / (3 * r["steady turn"] + r["open"]), 1.0,
                          f"{turn(r) / (3 * r['steady turn'] + r['open']):.2f}"),
    )  # fmt: skip
    row(
        "first turn a regenerate, after a start (undo + answer)",
        "",
        lambda n, r: (
            f"{r['first regenerate']:.2f}"
            + (" (reloaded)" if r["first regenerate reloaded"] else "")
        ),
    )
    row("steady regenerate", "", lambda n, r: f"{r['steady regenerate']:.3f}")
    row(
        "first regenerate / (3 x steady + open)",
        "<= 1",
        lambda n, r: mark(
            r["first regenerate"] / (3 * r["steady regenerate"] + r["regenerate open"]), 1.0,
            f"{r['first regenerate'] / (3 * r['steady regenerate'] + r['regenerate open']):.2f}",
        ),
    )  # fmt: skip

    def num(key: str, digits: int = 2) -> Any:
        return lambda n, r: f"{r[key]:.{digits}f}" if key in r else "-"

    def ratio(top: str, bottom: str, goal: float | None) -> Any:
        return lambda n, r: (
            mark(r[top] / r[bottom], goal, f"{r[top] / r[bottom]:.1f}") if top in r else "-"
        )

    row("import", "", num("import"))
    row("  CPU s of it (all threads)", "", num("import cpu"))
    row("  of it embedding (hashing)", "", num("import embedding"))
    row("  nodes left without a stored vector (deferred)", "", num("import unembedded", 0))
    row("memgraph-host import, new process: hashing", "", num("cli import"))
    row("  the same, default profile (WordLlama)", "", num("cli import default"))
    row("raw LanceDB write: node + edge state rows", "", num("raw write"))
    row("raw LanceDB write: every row the import stored", "", num("raw write all"))
    row("import / raw write (state rows)", "", ratio("import", "raw write", None))
    row("import / raw write (every row)", "<= 2", ratio("import", "raw write all", 2.0))
    row(
        "catch-up groups left after the turns",
        "",
        lambda n, r: f"{r['catch-up groups left']:.0f}",
    )
    return grid


def _goal(size: int) -> float | None:
    """The open + first turn goal in seconds (none below 100k nodes)."""
    return 10.0 if size >= 1_000_000 else 1.5 if size >= 100_000 else None


def run(sizes: list[int], runs: int = 3) -> dict[int, dict[str, dict[str, float]]]:
    compiled()
    return {size: measure(size, runs) for size in sizes}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--million", action="store_true", help="also 1M nodes (long)")
    parser.add_argument(
        "--runs", type=int, default=3, help="fresh processes per chat below 1M (median shown)"
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--raw", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--regenerate", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(asyncio.run(_first_turn(args.child))))
        return 0
    if args.regenerate is not None:
        print(json.dumps(asyncio.run(_regenerate(args.regenerate))))
        return 0
    if args.raw is not None:
        print(json.dumps(asyncio.run(_raw_read(args.raw))))
        return 0
    from rich.console import Console

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.million:
        sizes.append(1_000_000)
    Console(width=160).print(table(run(sizes, args.runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
