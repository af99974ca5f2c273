"""Turns while a chat re-embeds after the embedding profile changed, against steady turns.

A synthetic chat (``engine.build_chat``, default 100k nodes) is imported under the ``hashing``
profile (its vectors stored), then opened by a new host whose profile is another one (a
``hashing`` profile under a new name, given by a plugin): no stored vector is of it, so every
node is embedded again, in the background. ``--turns`` turns run back to back through the
pipeline meanwhile (a user message, the recall, an answer extracting one event); then, the
turns paused, the re-embedding ends, and when the vector search is settled (no LanceDB index
build in flight: ``turn._vectors_settled``) the same number of steady turns run. Goal: the
median turn during the re-embed <= 1.5x the median steady turn. The turns' CPU time on the event
loop's thread (``time.thread_time``) is printed beside the wall time.

    python bench/reembed.py [--size 100000] [--turns 30]
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

from host import Host, hookimpl  # noqa: E402
from memgraph_plugin.embedding.hashing import HashingProfile  # noqa: E402
from memgraph_plugin.service import memory_graph_for  # noqa: E402
from memgraph_plugin.turn import pipeline_for  # noqa: E402

sys.path.insert(0, str(HERE))
from common import sibling  # noqa: E402

CHAT = "bench"
GOAL = 1.5


class NewProfile:
    """A plugin offering the ``hashing`` profile under another name (a profile change)."""

    @hookimpl
    def memgraph_embedding_profiles(self) -> Any:
        return HashingProfile(name="hashing-new")


async def _imported(data_dir: Path, data: dict[str, Any]) -> None:
    host = Host(data_dir=data_dir, settings={"embedding_profile": "hashing"}, entry_points=False)
    await host.start()
    try:
        chat = host.chat(CHAT)
        with chat.batched_writes():
            for n in range(int(data.get("seqCounter") or 0)):
                chat.add_message("user", f"message {n}")
                chat.add_message("assistant", f"answer {n}")
        await memory_graph_for(host).import_graph(CHAT, data)
    finally:
        await host.stop()


async def measure(size: int, turns: int) -> dict[str, float]:
    engine = sibling("engine")
    turn_bench = sibling("turn")
    data = engine.build_chat(size)
    character = next(i for i, n in data["nodes"].items() if n["type"] == "character_sheet")
    words = list(engine._WORDS)
    rng = random.Random(size)
    with tempfile.TemporaryDirectory(prefix="reembed-bench-") as tmp:
        await _imported(Path(tmp), data)
        del data
        host = Host(
            data_dir=Path(tmp), settings={"embedding_profile": "hashing-new"}, entry_points=False
        )
        host.register_plugin(NewProfile(), name="new-profile")
        host.register_plugin(turn_bench.OneEvent(character), name="one-event")
        await host.start()
        try:
            service = memory_graph_for(host)
            pipeline = pipeline_for(host)
            await service.open_session(host.get_context(CHAT))

            async def one_turn() -> tuple[float, float, float]:
                a, b, c = rng.sample(words, 3)
                t0, c0 = time.perf_counter(), time.thread_time()
                await pipeline.add_user_message(CHAT, f"What happened with the {a} and the {b}?")
                t1 = time.perf_counter()
                await pipeline.recall(CHAT)
                t2 = time.perf_counter()
                await pipeline.add_assistant_message(CHAT, f"The {c} of the {a} was found.")
                return time.perf_counter() - t0, time.thread_time() - c0, t2 - t1

            def embedding() -> Any:
                chat = service.persistence.cached(CHAT)
                return None if chat is None else chat.embedding

            await one_turn()  # the first search starts the re-embedding
            task = embedding()
            started = time.perf_counter()
            during: list[tuple[float, float, float]] = []
            while task is not None and not task.done() and len(during) < turns:
                during.append(await one_turn())
            left_after = len(service.persistence.cached(CHAT).unembedded)
            busy = time.perf_counter() - started
            if task is not None:
                await task  # no turns meanwhile: the chat's turns paused
            took = time.perf_counter() - started
            await one_turn()
            while not turn_bench._vectors_settled(service):
                await asyncio.sleep(0.05)
            for _ in range(3):  # caches warm again after the index changed
                await one_turn()
            steady = [await one_turn() for _ in range(max(turns, 5))]
        finally:
            await host.stop()

    def p50(turns: list[tuple[float, float, float]], at: int) -> float:
        return statistics.median(t[at] for t in turns) if turns else float("nan")

    return {
        "re-embed s": took,
        "turns during": len(during),
        "turns s": busy,
        "left after turns": left_after,
        "during p50": p50(during, 0),
        "during cpu p50": p50(during, 1),
        "during recall p50": p50(during, 2),
        "steady p50": p50(steady, 0),
        "steady cpu p50": p50(steady, 1),
        "steady recall p50": p50(steady, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args(argv)
    r = asyncio.run(measure(args.size, args.turns))
    ratio = r["during p50"] / r["steady p50"]
    print(
        f"{args.size:,} nodes: {r['turns during']:.0f} turns back to back in "
        f"{r['turns s']:.1f} s during the re-embed ({r['left after turns']:,} nodes left), "
        f"re-embedded {r['re-embed s']:.1f} s after it started\n"
        f"turn p50 during the re-embed {r['during p50'] * 1000:.0f} ms "
        f"(loop CPU {r['during cpu p50'] * 1000:.0f} ms), "
        f"steady {r['steady p50'] * 1000:.0f} ms (loop CPU {r['steady cpu p50'] * 1000:.0f} ms)\n"
        f"of them the recall: {r['during recall p50'] * 1000:.0f} ms during, "
        f"{r['steady recall p50'] * 1000:.0f} ms steady\n"
        f"during / steady = {ratio:.2f} (goal <= {GOAL}: {'met' if ratio <= GOAL else 'MISSED'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
