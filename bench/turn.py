"""A chat turn at 1k / 10k / 100k nodes: recall time, whole-turn time and injected characters.

Each size is a synthetic chat (``engine.build_chat``: events rolled up in threes, characters,
places, threads, about 3 edges a node) imported into a real host (LanceDB in a temporary
folder). Then ``TURNS`` turns run through the pipeline: a user message naming a few story
words, the recall, and an answer whose extraction writes one event linked to a character (one
persisted batch, compaction as shipped). Printed per size: recall p50/p95, whole turn p50/p95,
injected characters p50/max, and the ratios the scale issue asks for (recall p50 at 100k <= 1.5x
that at 10k; injected characters equal at both sizes).

The turns right after the import are measured apart, in a second table, and are not in the
first: the first recall (it embeds the imported nodes) and the turns until the vector search is
in its steady state (past ``vector_ann_threshold`` rows, until LanceDB's vector index is built;
at least two turns either way). The vector search is exact (one numpy product over the chat's
vectors) below ``vector_ann_threshold``, so at 10k and 100k it reads every row.

"recall CPU" is the recall's own thread's CPU time: where the wall time is well above it, the
recall waited for a core (on a shared machine: other programs, or the maintenance process, whose
passes during the measured turns are counted), not for work of its own.

    python bench/turn.py [--sizes 1000,10000,100000] [--turns 40]
    python bench/turn.py --first-turn --sizes 10000,100000   # bench/first_turn.py

Also a section of ``bench/run.py`` (``rows``).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
from common import sibling  # noqa: E402

from host import Host, hookimpl  # noqa: E402
from memgraph_plugin.service import memory_graph_for  # noqa: E402
from memgraph_plugin.turn import pipeline_for  # noqa: E402

TURNS = 40
CHAT = "bench"


class OneEvent:
    """Extraction for the bench: each answer writes one event, involving one character."""

    def __init__(self, character: str) -> None:
        self.character = character

    @hookimpl
    def memgraph_extract(self, chat_id: str, message: Any, context: Any) -> list | None:
        if message.role != "assistant":
            return None
        return [
            {"op": "create", "type": "event", "fields": {"summary": message.text}, "ref": "e"},
            {
                "op": "link_upsert",
                "source_ref": "e",
                "links": [
                    {
                        "target_node_id": self.character,
                        "relation": "involved_in",
                        "direction": "incoming",
                    }
                ],
            },
        ]


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def _vectors_settled(service: Any) -> bool:
    """Whether the chat's vector search is in its steady state: no build of LanceDB's vector
    index in flight (started past ``vector_ann_threshold``; searches are exact meanwhile)."""
    build = getattr(getattr(service, "persistence", None), "_ann_build", None)
    return build is None or build.done()


async def measure(size: int, turns: int = TURNS) -> dict[str, float]:
    engine = sibling("engine", "memgraph_bench_engine")
    data = engine.build_chat(size)
    rng = random.Random(size)
    words = list(engine._WORDS)
    character = next(i for i, n in data["nodes"].items() if n["type"] == "character_sheet")
    with tempfile.TemporaryDirectory(prefix="turn-bench-") as tmp:
        host = Host(data_dir=Path(tmp), entry_points=False)
        host.register_plugin(OneEvent(character), name="one-event")
        await host.start()
        try:
            service = memory_graph_for(host)
            assert service is not None
            # the chat's messages up to the graph's sequence counter first (an import is
            # anchored to the newest message seq; the next answer then has the next seq)
            chat = host.chat(CHAT)
            for n in range(int(data.get("seqCounter") or 0)):
                chat.add_message("user", f"message {n}")
                chat.add_message("assistant", f"answer {n}")
            await service.import_graph(CHAT, data)
            pipeline = pipeline_for(host)

            cpu_ms: list[float] = []

            async def one_turn() -> tuple[float, float, int]:
                a, b, c = rng.sample(words, 3)
                t0 = time.perf_counter()
                await pipeline.add_user_message(CHAT, f"What happened with the {a} and the {b}?")
                t1, c1 = time.perf_counter(), time.thread_time()
                outcome = await pipeline.recall(CHAT)
                t2, c2 = time.perf_counter(), time.thread_time()
                cpu_ms.append((c2 - c1) * 1000)
                await pipeline.add_assistant_message(CHAT, f"The {c} of the {a} was found.")
                t3 = time.perf_counter()
                assert outcome is not None
                return (t2 - t1) * 1000, (t3 - t0) * 1000, len(outcome.prompt)

            # the first turns after the import, reported on their own: the first recall embeds
            # the imported nodes; past `vector_ann_threshold`, until LanceDB's vector index is
            # built (in the background) searches are exact and share the CPU with the build.
            # At least three turns warm caches up.
            first, _, _ = await one_turn()
            early: list[float] = []
            while len(early) < 2 or not _vectors_settled(service):
                early.append((await one_turn())[0])
                if len(early) >= 400:
                    break
            recall_ms: list[float] = []
            turn_ms: list[float] = []
            chars: list[float] = []
            cpu_ms.clear()
            maintenance = getattr(
                getattr(service.persistence, "storage", None), "maintenance", None
            )
            passes = getattr(maintenance, "passes", 0)
            for _ in range(turns):
                recall, whole, size_chars = await one_turn()
                recall_ms.append(recall)
                turn_ms.append(whole)
                chars.append(size_chars)
            passes = getattr(maintenance, "passes", 0) - passes
        finally:
            await host.stop()
    return {
        "recall p50": statistics.median(recall_ms),
        "recall p95": _pct(recall_ms, 0.95),
        "cpu p50": statistics.median(cpu_ms),
        "cpu p95": _pct(cpu_ms, 0.95),
        "maintenance passes": passes,
        "turn p50": statistics.median(turn_ms),
        "turn p95": _pct(turn_ms, 0.95),
        "chars p50": statistics.median(chars),
        "chars max": max(chars),
        "first recall": first,
        "early turns": len(early),
        "early p50": statistics.median(early),
        "early max": max(early),
    }


def table(results: dict[int, dict[str, float]]) -> str:
    head = ["nodes", "recall p50 ms", "recall p95 ms", "recall CPU p50 ms", "recall CPU p95 ms",
            "turn p50 ms", "turn p95 ms", "injected chars p50", "injected chars max",
            "maintenance passes"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for size, r in results.items():
        lines.append(
            f"| {size:,} | {r['recall p50']:.1f} | {r['recall p95']:.1f} | {r['cpu p50']:.1f} | "
            f"{r['cpu p95']:.1f} | {r['turn p50']:.1f} | {r['turn p95']:.1f} | "
            f"{r['chars p50']:.0f} | {r['chars max']:.0f} | {r['maintenance passes']:.0f} |"
        )
    lines.append("")
    lines.append("The first turns after the import (before the rows above; not in them):")
    lines.append("")
    head = ["nodes", "first recall ms", "turns until the vectors were settled",
            "their recall p50 ms", "their recall max ms"]  # fmt: skip
    lines += ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for size, r in results.items():
        lines.append(
            f"| {size:,} | {r['first recall']:.0f} | {r['early turns']:.0f} | "
            f"{r['early p50']:.1f} | {r['early max']:.1f} |"
        )
    if 10_000 in results and 100_000 in results:
        a, b = results[10_000], results[100_000]
        lines.append("")
        lines.append(
            f"recall p50 100k/10k = {b['recall p50'] / a['recall p50']:.2f} (goal <= 1.5; "
            f"CPU {b['cpu p50'] / a['cpu p50']:.2f}); "
            f"injected chars p50 10k {a['chars p50']:.0f}, 100k {b['chars p50']:.0f}"
        )
    return "\n".join(lines)


def rows(*, quick: bool = False) -> list[tuple[str, float, float | None, str]]:
    """``bench/run.py`` section: recall and turn p50 per size (quick: 1k and 10k)."""
    sizes = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    out: list[tuple[str, float, float | None, str]] = []
    results = {n: asyncio.run(measure(n, 20 if quick else TURNS)) for n in sizes}
    base = results[10_000]["recall p50"]
    for n, r in results.items():
        note = f"p95 {r['recall p95']:.1f} ms; injected chars p50 {r['chars p50']:.0f}"
        limit = 1.5 * base if n == 100_000 else None
        out.append((f"recall turn @{n // 1000}k nodes", r["recall p50"], limit, note))
        out.append(
            (f"whole turn @{n // 1000}k nodes", r["turn p50"], None, f"p95 {r['turn p95']:.1f} ms")
        )
        out.append(
            (
                f"first recall after import @{n // 1000}k",
                r["first recall"],
                None,
                "embeds the imported nodes",
            )  # fmt: skip
        )
        out.append(
            (
                f"recall until vectors settled @{n // 1000}k",
                r["early p50"],
                None,
                f"{r['early turns']:.0f} turns, max {r['early max']:.1f} ms",
            )  # fmt: skip
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument(
        "--first-turn",
        action="store_true",
        help="instead: the first turn after a fresh start of an imported and a live-built chat"
        " at --sizes (bench/first_turn.py)",
    )
    args = parser.parse_args(argv)
    if args.first_turn:
        from rich.console import Console

        first_turn = sibling("first_turn", "first_turn")
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        Console(width=160).print(first_turn.table(first_turn.run(sizes)))
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    results = {}
    for size in sizes:
        t0 = time.perf_counter()
        results[size] = asyncio.run(measure(size, args.turns))
        print(f"[turn] {size:,} nodes: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
