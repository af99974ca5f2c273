"""Offline transcript ingest: messages per second and cost per message at 1k and 10k messages.

Each run ingests into a fresh chat on a fresh host (real LanceDB in a temporary folder, the
built-in offline extractor, compaction by the pipeline's rules, the host's default embedding
profile unless ``--embedding`` names one) through `memgraph_plugin.ingest.ingest_messages`, the
function behind ``memgraph-host ingest``. Two transcripts:

- ``synthetic``: two speakers talking about people, places, numbers and dates (seeded);
- ``locomo``: the turns of ``../shared/data/locomo-dev.json`` (when present), conversation after
  conversation, cycled to the size.

Goals: >= 1,000 messages/s; the cost per message at 10k within 1.5x of 1k (and the last 1k
messages of the 10k run, which see the biggest graph). The machine is shared: each run also
reports the process's CPU time (every thread: LanceDB's, the tokenizer's) as messages per
CPU-second, and the load average before and after, so a slow wall clock can be told from a busy
machine.

    python bench/ingest.py [--sizes 1000,10000] [--data ../shared/data/locomo-dev.json]
    (also the ``ingest`` section of bench/run.py)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LOCOMO = ROOT.parent / "shared" / "data" / "locomo-dev.json"
Row = tuple[str, str, str, str, str, str]  # measure, value, unit, target, status, note

_PEOPLE = ["Melanie", "Caroline", "Jon", "Gina", "Ilya Renn", "Juno Kade", "Mara", "Pim", "Oscar"]
_PLACES = ["Boston", "the Lantern Market", "Skyharbor", "Cape Cod", "Lake Tahoe", "Paris"]
_THINGS = ["pottery class", "support group", "camping trip", "violin", "new job", "dog", "book"]
_TEMPLATES = [
    "Hey {a}! I went to {place} with {b} last {day} and we talked about the {thing}.",
    "That sounds great. {b}'s {thing} cost {n} dollars, can you believe it?",
    "Yesterday {a} told me about the {thing}; it was {n} years ago in {place}.",
    "I'm so proud of you. How is {b} doing after the {thing}?",
    "We moved to {place} in {year}. {a} still misses the old {thing}.",
    "Thanks! {b} and I are planning a trip to {place} on {day}.",
]
_DAYS = ["Monday", "Tuesday", "Friday", "Sunday", "weekend"]


def synthetic(count: int, seed: int = 7) -> Iterator[Any]:
    """`count` messages between two speakers, seeded."""
    from memgraph_plugin.ingest import TranscriptMessage

    rng = random.Random(seed)
    speakers = ("Caroline", "Melanie")
    for i in range(count):
        text = rng.choice(_TEMPLATES).format(
            a=rng.choice(_PEOPLE), b=rng.choice(_PEOPLE), place=rng.choice(_PLACES),
            thing=rng.choice(_THINGS), day=rng.choice(_DAYS), n=rng.randint(2, 900),
            year=rng.randint(1990, 2023),
        )
        role = "user" if i % 2 == 0 else "assistant"
        yield TranscriptMessage(role, text, speakers[i % 2], f"day {i // 40 + 1}", f"syn:{i}")


def locomo_turns(path: Path) -> list[tuple[str, str, str]]:
    """(speaker, text, session date) of every turn of every conversation, in order."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    out: list[tuple[str, str, str]] = []
    for sample in samples:
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            date = conv.get(f"session_{n}_date_time", "")
            for turn in conv[f"session_{n}"]:
                out.append((turn["speaker"], turn["text"], date))
            n += 1
    return out


def locomo(count: int, turns: list[tuple[str, str, str]]) -> Iterator[Any]:
    """`count` LoCoMo turns (cycled); the first speaker of each pair is the user."""
    from memgraph_plugin.ingest import TranscriptMessage

    for i in range(count):
        speaker, text, date = turns[i % len(turns)]
        role = "user" if i % 2 == 0 else "assistant"
        yield TranscriptMessage(role, text or "(photo)", speaker, date, f"locomo:{i}")


async def _ingest(messages: Iterator[Any], count: int, settings: dict[str, Any]) -> dict[str, Any]:
    from host import Host
    from memgraph_plugin.ingest import ingest_messages

    folder = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    marks: list[float] = []
    try:
        host = Host(data_dir=folder, settings=settings, entry_points=False)
        await host.start()
        try:
            started = time.perf_counter()
            cpu_started = time.process_time()

            def progress(done: int) -> None:
                if done % 1000 == 0 or done == count:
                    marks.append(time.perf_counter())

            report = await ingest_messages(host, "bench", messages, progress=progress)
            seconds = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
        finally:
            await host.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    last = marks[-1] - marks[-2] if len(marks) >= 2 else seconds
    last_count = count - 1000 * (len(marks) - 2) if len(marks) >= 2 else count
    return {
        "messages": report.ingested,
        "seconds": seconds,
        "per_s": report.ingested / seconds,
        "per_cpu_s": report.ingested / max(cpu, 1e-9),
        "cpu_us": cpu / max(1, report.ingested) * 1e6,
        "us": seconds / max(1, report.ingested) * 1e6,
        "last_us": last / max(1, min(1000, last_count)) * 1e6,
        "nodes": sum(report.nodes_by_type.values()),
        "events": report.nodes_by_type.get("event", 0),
        "people": report.nodes_by_type.get("character_sheet", 0),
        "edges": report.edges,
        "error": report.error,
    }


def measure(sizes: list[int], data: Path | None, embedding: str | None) -> list[Row]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    settings: dict[str, Any] = {}
    if embedding:
        settings["embedding_profile"] = embedding
    sources: dict[str, Any] = {"synthetic": lambda n: synthetic(n)}
    path = data or LOCOMO
    if path.exists():
        turns = locomo_turns(path)
        sources["locomo"] = lambda n: locomo(n, turns)
    else:
        print(f"[bench] ingest: {path} missing, LoCoMo skipped", file=sys.stderr)
    rows: list[Row] = []
    profile = embedding or "host default"
    for name, make in sources.items():
        base_us: float | None = None
        base_cpu_us: float | None = None
        for size in sizes:
            t0 = time.perf_counter()
            load_before = os.getloadavg()[0]
            got = asyncio.run(_ingest(make(size), size, settings))
            load = f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} (2 cores)"
            print(f"[bench] ingest {name} {size:,}: {time.perf_counter() - t0:.1f}s",
                  file=sys.stderr)
            if got["error"] is not None:
                rows.append((f"ingest {name} @{size:,}", "error", "", "-", "", str(got["error"])))
                continue
            shape = (f"{got['events']} events, {got['people']} people, {got['nodes']} nodes, "
                     f"{got['edges']} edges; embedding: {profile}")
            rate = f"{got['per_s']:.0f}"
            rows.append((f"ingest {name} @{size:,} msgs", rate, "messages/s", ">= 1000",
                         "ok" if got["per_s"] >= 1000 else "UNDER", shape))
            rows.append((f"ingest {name} @{size:,} CPU", f"{got['per_cpu_s']:.0f}",
                         "messages/CPU-s", "-", "", load))
            rows.append((f"ingest {name} @{size:,} cost", f"{got['us']:.0f}", "µs/message", "-",
                         "", f"last 1k messages: {got['last_us']:.0f} µs/message"))
            if base_us is None or base_cpu_us is None:
                base_us, base_cpu_us = got["us"], got["cpu_us"]
            else:
                ratio = got["us"] / base_us
                rows.append((f"ingest {name} cost @{size:,} / @{sizes[0]:,}", f"{ratio:.2f}",
                             "x", "<= 1.5", "ok" if ratio <= 1.5 else "OVER",
                             f"last 1k of {size:,}: {got['last_us'] / base_us:.2f}x"))
                cpu_ratio = got["cpu_us"] / base_cpu_us
                rows.append((f"ingest {name} CPU cost @{size:,} / @{sizes[0]:,}",
                             f"{cpu_ratio:.2f}", "x", "<= 1.5",
                             "ok" if cpu_ratio <= 1.5 else "OVER",
                             "CPU time per message: what the machine's load cannot skew"))
    return rows


def table_rows(quick: bool = False) -> list[Row]:
    """The section for `bench/run.py` (1k and 10k messages; 1k only with --quick)."""
    return measure([1000] if quick else [1000, 10_000], None, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="messages per run")
    parser.add_argument("--data", type=Path, default=None, help="locomo-dev.json path")
    parser.add_argument("--embedding", default=None, help="embedding profile (default: host's)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    rows = measure(sizes, args.data, args.embedding)
    print("| measure | value | unit | target | status | note |")
    print("|---|---:|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
