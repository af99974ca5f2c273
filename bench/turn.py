"""A chat turn at 1k / 10k / 100k nodes: recall time, whole-turn time and injected characters.

Each size is a synthetic chat (``engine.build_chat``: events rolled up in threes, characters,
places, threads, about 3 edges a node) imported into a real host (LanceDB in a temporary
folder). Then ``TURNS`` turns run through the pipeline: a user message naming a few story
words, the recall, and an answer whose extraction writes one event linked to a character (one
persisted batch, compaction as shipped). Printed per size: recall p50/p95, whole turn p50/p95,
injected characters p50/max, and the ratios the scale issue asks for (recall p50 at 100k <= 1.5x
that at 10k; injected characters equal at both sizes).

    python bench/turn.py [--sizes 1000,10000,100000] [--turns 40]

Also a section of ``bench/run.py`` (``rows``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
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

from host import Host, hookimpl  # noqa: E402
from memgraph_plugin.recall import pipeline_for  # noqa: E402
from memgraph_plugin.service import memory_graph_for  # noqa: E402

TURNS = 40
CHAT = "bench"


def _engine() -> Any:
    spec = importlib.util.spec_from_file_location("memgraph_bench_engine", HERE / "engine.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


async def measure(size: int, turns: int = TURNS) -> dict[str, float]:
    engine = _engine()
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
            recall_ms: list[float] = []
            turn_ms: list[float] = []
            chars: list[float] = []
            for i in range(turns + 3):  # the first three warm caches up and are not counted
                a, b, c = rng.sample(words, 3)
                t0 = time.perf_counter()
                await pipeline.add_user_message(CHAT, f"What happened with the {a} and the {b}?")
                t1 = time.perf_counter()
                outcome = await pipeline.recall(CHAT)
                t2 = time.perf_counter()
                await pipeline.add_assistant_message(CHAT, f"The {c} of the {a} was found.")
                t3 = time.perf_counter()
                if i >= 3 and outcome is not None:
                    recall_ms.append((t2 - t1) * 1000)
                    turn_ms.append((t3 - t0) * 1000)
                    chars.append(len(outcome.prompt))
        finally:
            await host.stop()
    return {
        "recall p50": statistics.median(recall_ms),
        "recall p95": _pct(recall_ms, 0.95),
        "turn p50": statistics.median(turn_ms),
        "turn p95": _pct(turn_ms, 0.95),
        "chars p50": statistics.median(chars),
        "chars max": max(chars),
    }


def table(results: dict[int, dict[str, float]]) -> str:
    head = ["nodes", "recall p50 ms", "recall p95 ms", "turn p50 ms", "turn p95 ms",
            "injected chars p50", "injected chars max"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for size, r in results.items():
        lines.append(
            f"| {size:,} | {r['recall p50']:.1f} | {r['recall p95']:.1f} | {r['turn p50']:.1f} | "
            f"{r['turn p95']:.1f} | {r['chars p50']:.0f} | {r['chars max']:.0f} |"
        )
    if 10_000 in results and 100_000 in results:
        a, b = results[10_000], results[100_000]
        lines.append("")
        lines.append(
            f"recall p50 100k/10k = {b['recall p50'] / a['recall p50']:.2f} (goal <= 1.5); "
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
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--turns", type=int, default=TURNS)
    args = parser.parse_args(argv)
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
