"""The memory proxy's added latency: proxy vs direct requests to the same loopback upstream.

A real `memgraph-host proxy` (subprocess, a temporary data dir, the hashing embedding profile)
in front of a real upstream (subprocess: Starlette on uvicorn answering a fixed completion at
once), the client here (httpx). For chats of 100, 1k and 10k messages: the chat is sent once
(its messages stored and extracted, in blocks; the bench then waits for the background compaction
this brings, and prints how long it took), then `--requests` requests each send the whole
history plus a new user message, as a front end does; the same bodies go straight to the
upstream. Before each timed request the bench waits until the chat's previous answer is stored
(`GET /api/chats/ID/history` waits for the chat's lock), then 0.5 s more: a person reads and
types between turns, and the memory's work after a commit (notifications) is done by then. Streamed
requests give the time to the first byte. Then 20 chats at once (100 messages each, 5 requests
each): errors, requests forwarded without memory (their ``X-Memgraph-Warning``) and p95.

Goals (issue 26): added p50 <= 25 ms at 10k; added time to first byte <= 30 ms; added p50 at 10k
<= 1.5x that at 1k; 20 concurrent chats with no error and no request without memory (p95
reported).

    python bench/proxy.py [--sizes 100,1000,10000] [--requests 30] [--context-tokens N]

With ``--context-tokens N`` the proxy runs under that context budget (``proxy_context_tokens``):
the same goals hold, and the table adds the tokens forwarded of each chat's whole history.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import start_server  # noqa: E402

THINK_S = 0.5  # seconds between an answer and the next request (a person reads and types)
ANSWER = "The lighthouse keeper is Mira; the lantern stays in the harbour tower."
WORDS = [
    "harbour",
    "lantern",
    "Mira",
    "ferry",
    "Skyharbor",
    "market",
    "Juno",
    "tower",
    "bell",
    "quay",
    "compass",
    "storm",
]


# ------------------------------------------------------------------ the upstream


def upstream_app() -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    async def completions(request: Request) -> Any:
        body = json.loads(await request.body())
        if body.get("stream"):

            async def events() -> Any:
                for part in ANSWER.split(" "):
                    chunk = {"choices": [{"index": 0, "delta": {"content": part + " "}}]}
                    yield f"data: {json.dumps(chunk)}\n\n"
                yield 'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
                yield "data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")
        choice = {"index": 0, "finish_reason": "stop",
                  "message": {"role": "assistant", "content": ANSWER}}  # fmt: skip
        return JSONResponse({"id": "c", "object": "chat.completion", "choices": [choice]})

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


def run_upstream() -> None:
    import uvicorn

    from memgraph_plugin.web.server import bind, url_of

    sock = bind("127.0.0.1", 0)
    print(url_of(sock) + "v1", flush=True)
    config = uvicorn.Config(upstream_app(), log_level="warning", access_log=False, lifespan="off")
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


# ------------------------------------------------------------------ the bench


def message(i: int) -> dict[str, str]:
    role = "user" if i % 2 == 0 else "assistant"
    words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(8))
    return {"role": role, "content": f"Message {i}: {words} and the number {i * 13 % 997}."}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Bench:
    def __init__(self, proxy: str, upstream: str, data: str) -> None:
        self.proxy = proxy  # .../v1
        self.base = proxy[: -len("v1")]
        self.upstream = upstream
        self.data = data  # the proxy's data dir
        self.client = httpx.AsyncClient(timeout=600)
        self.without_memory: list[str] = []  # X-Memgraph-Warning of the proxied requests
        self.context: dict[str, str] = {}  # chat -> its newest X-Memgraph-Context (a budget)

    async def caught_up(self, chat: str) -> float:
        """Seconds until the proxy has no catch-up work left on the chat (the background
        compaction of the history its first request brought: `memgraph-host status` shows it).
        The timed requests measure a chat in its steady state, as most turns of a user are."""
        from memgraph_plugin.chats.pending_work import read_pending

        started = time.perf_counter()
        while (pending := read_pending(self.data, chat)) is not None and pending.alive:
            await asyncio.sleep(0.2)
        return time.perf_counter() - started

    async def idle(self, chat: str) -> None:
        """The chat's previous answer stored (its lock free), then a person's think time: the
        memory's work after a commit (notifications, the next injection) is done by then, as it
        is between the turns of a real chat."""
        await self.client.get(self.base + f"api/chats/{chat}/history", params={"limit": 1})
        await asyncio.sleep(THINK_S)

    async def post(self, url: str, body: dict, chat: str) -> float:
        started = time.perf_counter()
        answer = await self.client.post(
            url + "/chat/completions", json=body, headers={"x-memgraph-chat": chat}
        )
        answer.raise_for_status()
        if "x-memgraph-warning" in answer.headers:  # forwarded without memory
            self.without_memory.append(answer.headers["x-memgraph-warning"])
        if "x-memgraph-context" in answer.headers:  # the context budget cut the history
            self.context[chat] = answer.headers["x-memgraph-context"]
        return (time.perf_counter() - started) * 1000

    async def first_byte(self, url: str, body: dict, chat: str) -> float:
        started = time.perf_counter()
        async with self.client.stream("POST", url + "/chat/completions", json=body,
                                      headers={"x-memgraph-chat": chat}) as answer:  # fmt: skip
            chunks = answer.aiter_raw()
            await chunks.__anext__()
            elapsed = (time.perf_counter() - started) * 1000
            async for _ in chunks:
                pass
        return elapsed

    async def size(self, n: int, requests: int) -> dict[str, Any]:
        chat = f"bench-{n}"
        history = [{"role": "system", "content": "You are a harbour guide."}]
        history += [message(i) for i in range(n - 1)]  # ends with a user message
        started = time.perf_counter()
        await self.post(self.proxy, {"model": "m", "messages": history}, chat)
        history.append({"role": "assistant", "content": ANSWER})
        await self.idle(chat)
        prep = time.perf_counter() - started
        catch_up = await self.caught_up(chat)
        proxied, direct, ttfb_p, ttfb_d = [], [], [], []
        for r in range(requests):
            history.append({"role": "user", "content": f"Where is the {WORDS[r % 12]} now? ({r})"})
            body = {"model": "m", "messages": history}
            stream = r % 3 == 2
            await self.idle(chat)
            if stream:
                ttfb_p.append(await self.first_byte(self.proxy, {**body, "stream": True}, chat))
                ttfb_d.append(await self.first_byte(self.upstream, {**body, "stream": True}, chat))
            else:
                proxied.append(await self.post(self.proxy, body, chat))
                direct.append(await self.post(self.upstream, body, chat))
            history.append({"role": "assistant", "content": ANSWER.strip()})
        return {
            "n": n, "prep_s": prep, "catch_up_s": catch_up,
            "proxy_p50": statistics.median(proxied), "direct_p50": statistics.median(direct),
            "proxy_p95": pct(proxied, 0.95),
            "ttfb_added": statistics.median(ttfb_p) - statistics.median(ttfb_d),
        }  # fmt: skip

    async def crowd(self, chats: int = 20, each: int = 5) -> dict[str, Any]:
        errors: list[str] = []
        times: list[float] = []
        warned = len(self.without_memory)

        async def one(c: int) -> None:
            chat = f"crowd-{c}"
            history = [message(i) for i in range(100)]
            for r in range(each):
                history.append({"role": "user", "content": f"Question {r} of chat {c}?"})
                try:
                    times.append(await self.post(self.proxy, {"model": "m", "messages": history},
                                                 chat))  # fmt: skip
                except Exception as exc:
                    errors.append(repr(exc))
                history.append({"role": "assistant", "content": ANSWER})

        await asyncio.gather(*(one(c) for c in range(chats)))
        if errors:
            Console().print(f"crowd errors, first: {errors[0]}")
        without = self.without_memory[warned:]
        if without:
            Console().print(f"crowd requests without memory, first: {without[0]}")
        return {"errors": len(errors), "p50": statistics.median(times), "p95": pct(times, 0.95),
                "requests": len(times) + len(errors), "without_memory": len(without)}  # fmt: skip


async def main(sizes: list[int], requests: int, context_tokens: int = 0) -> None:
    console = Console()
    procs = []
    data = ""
    try:
        up, upstream = start_server([sys.executable, __file__, "--upstream-server"])
        procs.append(up)
        data = tempfile.mkdtemp(prefix="bench-proxy-")
        script = str(Path(sys.executable).with_name("memgraph-host"))
        budget = ["--set", f"proxy_context_tokens={context_tokens}"] if context_tokens else []
        px, proxy = start_server([script, "--data-dir", data, "--set", "embedding_profile=hashing",
                                  *budget, "proxy", "--upstream", upstream, "--port", "0"])
        procs.append(px)
        bench = Bench(proxy, upstream, data)
        rows = []
        for n in sizes:
            rows.append(await bench.size(n, requests))
            row = rows[-1]
            console.print(
                f"{n} messages done (chat prepared in {row['prep_s']:.1f} s, "
                f"its catch-up compaction done {row['catch_up_s']:.1f} s later)"
            )
        crowd = await bench.crowd()
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=60)
        if data:
            shutil.rmtree(data, ignore_errors=True)
    title = f"memory proxy vs direct, loopback upstream ({requests} requests/size)"
    if context_tokens:
        title += f", context budget {context_tokens} tokens"
    table = Table(title=title)
    for col in ("measure", "value", "goal", "status"):
        table.add_column(col, justify="right" if col == "value" else "left")
    by = {r["n"]: r for r in rows}
    for r in rows:
        added = r["proxy_p50"] - r["direct_p50"]
        goal = "<= 25 ms" if r["n"] == 10000 else "-"
        ok = "" if goal == "-" else ("ok" if added <= 25 else "OVER")
        table.add_row(f"added p50 @{r['n']} msgs", f"{added:.1f} ms", goal, ok)
        table.add_row(f"proxy p50 / p95 @{r['n']}",
                      f"{r['proxy_p50']:.1f} / {r['proxy_p95']:.1f} ms", "-", "")  # fmt: skip
        table.add_row(f"direct p50 @{r['n']}", f"{r['direct_p50']:.1f} ms", "-", "")
        ok = "ok" if r["ttfb_added"] <= 30 else "OVER"
        table.add_row(f"added first byte @{r['n']}", f"{r['ttfb_added']:.1f} ms", "<= 30 ms", ok)
        cut = bench.context.get(f"bench-{r['n']}")
        if cut is not None:  # what the budget forwarded of the whole history
            parts = dict(p.split("=", 1) for p in cut.split("; "))
            sent, saved = int(parts["tokens"]), int(parts["saved"])
            table.add_row(f"tokens forwarded @{r['n']} (block not counted)",
                          f"{sent} of {sent + saved}", "-", "")  # fmt: skip
    if 1000 in by and 10000 in by:
        a1 = by[1000]["proxy_p50"] - by[1000]["direct_p50"]
        a10 = by[10000]["proxy_p50"] - by[10000]["direct_p50"]
        ratio = a10 / a1 if a1 > 0 else float("inf")
        table.add_row(
            "added p50 10k / 1k", f"{ratio:.2f}", "<= 1.5", "ok" if ratio <= 1.5 else "OVER"
        )
    table.add_row("20 concurrent chats: errors", str(crowd["errors"]), "0",
                  "ok" if crowd["errors"] == 0 else "OVER")  # fmt: skip
    table.add_row("20 concurrent chats: requests without memory",
                  f"{crowd['without_memory']} of {crowd['requests']}", "0",
                  "ok" if crowd["without_memory"] == 0 else "OVER")  # fmt: skip
    table.add_row("all requests without memory", str(len(bench.without_memory)), "0",
                  "ok" if not bench.without_memory else "OVER")  # fmt: skip
    table.add_row("20 concurrent chats: p50 / p95",
                  f"{crowd['p50']:.1f} / {crowd['p95']:.1f} ms", "reported", "")  # fmt: skip
    console.print(table)


if __name__ == "__main__":
    if "--upstream-server" in sys.argv:
        run_upstream()
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--context-tokens", type=int, default=0,
                        help="run the proxy with proxy_context_tokens set to this")  # fmt: skip
    args = parser.parse_args()
    if args.requests < 3:  # every third request streams: fewer would time no first byte
        parser.error("--requests must be at least 3 (every third request is streamed)")
    sizes = [int(s) for s in args.sizes.split(",")]
    asyncio.run(main(sizes, args.requests, args.context_tokens))
