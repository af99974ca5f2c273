"""The memory proxy as a service on one host: 1, 2 and 3 worker processes (`proxy --workers N`).

A real upstream on loopback (bench/proxy.py's, a subprocess answering at once) and a real
`memgraph-host proxy` (a temporary data dir, the hashing embedding profile); the client here
(httpx, one connection pool; with N > 1 the parent's front routes each request to its chat's
worker and closes the connection after the answer).

- **50 chats with think time**: each chat's first request brings a front end's existing chat
  (`PRELUDE` messages), then `TURNS` more turns, each after a person's think time (0.5-1.5 s,
  seeded), every request sending the whole history. Per process count: turns per second, added
  p50/p95 (proxy minus the same requests sent straight to the upstream), errors, and messages
  lost or stored twice (each chat's stored history against what the client sent).
- **20 concurrent chats** (bench/proxy.py's crowd: a 100-message history, then 5 requests each,
  no think time) through 1 and 2 processes: p50/p95 and requests per second.

Goals (issue 45): 20 concurrent chats p95 <= 1 s with 2 workers; throughput with 2 workers >=
1.7x one; 0 errors, 0 lost, 0 duplicated. The machine's cores are shared with whatever else
runs: the table says how many there are.

    python bench/service.py [--processes 1,2,3] [--chats 50] [--turns 6]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from common import start_server  # noqa: E402

PRELUDE = 10  # messages of a front end's existing chat in its first request
THINK_S = (0.5, 1.5)
CROWD_CHATS, CROWD_EACH, CROWD_HISTORY = 20, 5, 100
WORDS = ["harbour", "lantern", "Mira", "ferry", "Skyharbor", "market", "Juno", "tower", "bell",
         "quay", "compass", "storm"]  # fmt: skip


def message(i: int, chat: int = 0) -> dict[str, str]:
    role = "user" if i % 2 == 0 else "assistant"
    words = " ".join(WORDS[(i * 7 + k + chat) % len(WORDS)] for k in range(8))
    return {"role": role, "content": f"Message {i} of chat {chat}: {words}, number {i * 13 % 997}."}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) used so far by process `root` and its descendants (the
    proxy, its workers, their maintenance processes), from /proc; 0 where there is none."""
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        pid = int(entry.parent.name)
        parents[pid] = int(fields[1])
        used[pid] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += used.get(pid, 0.0)
        todo += [child for child, parent in parents.items() if parent == pid]
    return total


def start_proxy(upstream: str, data: str, processes: int) -> tuple[subprocess.Popen, str]:
    script = str(Path(sys.executable).with_name("memgraph-host"))
    workers = ["--workers", str(processes)] if processes > 1 else []
    proc, url = start_server([script, "--data-dir", data, "--set", "embedding_profile=hashing",
                              "proxy", "--upstream", upstream, "--port", "0", *workers])
    assert proc.stdout is not None
    for _ in range(2 if processes > 1 else 1):  # the token line, the workers' pids
        proc.stdout.readline()
    return proc, url


class Client:
    def __init__(self, proxy: str, upstream: str) -> None:
        self.proxy, self.upstream = proxy, upstream
        self.base = proxy[: -len("v1")]
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200)
        self.http = httpx.AsyncClient(timeout=600, limits=limits)
        self.errors: list[str] = []

    async def post(self, url: str, messages: list[dict], chat: str) -> float | None:
        started = time.perf_counter()
        try:
            answer = await self.http.post(url + "/chat/completions",
                                          json={"model": "m", "messages": messages},
                                          headers={"x-memgraph-chat": chat})  # fmt: skip
            answer.raise_for_status()
            reply = answer.json()["choices"][0]["message"]["content"]
        except Exception as exc:  # noqa: BLE001 - counted and shown
            self.errors.append(f"{chat}: {exc!r}")
            return None
        messages.append({"role": "assistant", "content": reply})
        return (time.perf_counter() - started) * 1000

    async def stored(self, chat: str) -> list[str]:
        answer = await self.http.get(self.base + f"api/chats/{chat}/history",
                                     params={"limit": 100000})  # fmt: skip
        return [m["text"] for m in answer.json()["messages"]]


async def chats_with_think_time(client: Client, url: str, chats: int, turns: int,
                                tag: str) -> dict[str, Any]:  # fmt: skip
    times: list[float] = []
    sent: dict[str, list[dict]] = {}

    async def one(c: int) -> None:
        chat = f"{tag}-{c}"
        rng = random.Random(c)
        history = [{"role": "system", "content": "You are a harbour guide."}]
        history += [message(i, c) for i in range(PRELUDE - 1)]
        sent[chat] = history
        await asyncio.sleep(rng.uniform(0, THINK_S[1]))  # people do not all start at once
        for turn in range(turns):
            if turn:
                history.append({"role": "user", "content": f"Chat {c} asks {turn}: where now?"})
            took = await client.post(url, history, chat)
            if took is None:
                history.pop()  # the client sends the turn again later
            else:
                times.append(took)
            await asyncio.sleep(rng.uniform(*THINK_S))

    started = time.perf_counter()
    await asyncio.gather(*(one(c) for c in range(chats)))
    wall = time.perf_counter() - started
    return {"times": times, "wall": wall, "sent": sent}


async def check_stored(client: Client, sent: dict[str, list[dict]]) -> tuple[int, int]:
    """(messages lost, messages stored twice) over every chat."""
    lost = twice = 0
    for chat, history in sent.items():
        want = [m["content"] for m in history if m["role"] != "system"]
        have = await client.stored(chat)
        for text in set(want):
            lost += max(0, want.count(text) - have.count(text))
            twice += max(0, have.count(text) - want.count(text))
    return lost, twice


async def crowd(client: Client, url: str, tag: str, server: int = 0) -> dict[str, Any]:
    times: list[float] = []

    async def one(c: int) -> None:
        history = [message(i, c) for i in range(CROWD_HISTORY)]
        for r in range(CROWD_EACH):
            history.append({"role": "user", "content": f"Question {r} of chat {c}?"})
            took = await client.post(url, history, f"{tag}-{c}")
            if took is not None:
                times.append(took)

    started, cpu = time.perf_counter(), tree_cpu_seconds(server) if server else 0.0
    await asyncio.gather(*(one(c) for c in range(CROWD_CHATS)))
    wall = time.perf_counter() - started
    return {"times": times, "wall": wall, "cpu": tree_cpu_seconds(server) - cpu if server else 0}


async def run(processes: list[int], chats: int, turns: int) -> None:
    console = Console()
    up, upstream = start_server([sys.executable, str(HERE / "proxy.py"), "--upstream-server"])
    rows: list[dict[str, Any]] = []
    try:
        direct_client = Client(upstream, upstream)
        direct = await chats_with_think_time(direct_client, upstream, chats, turns, "direct")
        direct_crowd = await crowd(direct_client, upstream, "direct-crowd")
        for count in processes:
            data = tempfile.mkdtemp(prefix="bench-service-")
            proc, url = start_proxy(upstream, data, count)
            try:
                client = Client(url, upstream)
                run_ = await chats_with_think_time(client, url, chats, turns, f"p{count}")
                lost, twice = await check_stored(client, run_["sent"])
                row = {"n": count, "run": run_, "lost": lost, "twice": twice}
                if count <= 2:
                    row["crowd"] = await crowd(client, url, f"crowd{count}", proc.pid)
                row["errors"] = len(client.errors)
                if client.errors:
                    console.print(f"{count} processes: first error: {client.errors[0]}")
                rows.append(row)
                console.print(f"{count} process(es) done")
            finally:
                proc.terminate()
                proc.wait(timeout=120)
                shutil.rmtree(data, ignore_errors=True)
    finally:
        up.terminate()
        up.wait(timeout=60)
    print_table(console, rows, direct, direct_crowd, chats, turns)


def print_table(console: Console, rows: list[dict[str, Any]], direct: dict[str, Any],
                direct_crowd: dict[str, Any], chats: int, turns: int) -> None:  # fmt: skip
    cores = os.cpu_count()
    table = Table(title=f"memory proxy on one host: {chats} chats x {turns} turns with think "
                        f"time, {cores} cores shared with other work")  # fmt: skip
    for col in ("processes", "turns/s", "added p50", "added p95", "errors", "lost / twice"):
        table.add_column(col, justify="right")
    d50, d95 = pct(direct["times"], 0.5), pct(direct["times"], 0.95)
    for row in rows:
        r = row["run"]
        added50, added95 = pct(r["times"], 0.5) - d50, pct(r["times"], 0.95) - d95
        table.add_row(str(row["n"]), f"{len(r['times']) / r['wall']:.1f}", f"{added50:.0f} ms",
                      f"{added95:.0f} ms", str(row["errors"]),
                      f"{row['lost']} / {row['twice']}")  # fmt: skip
    console.print(table)
    crowd_table = Table(title=f"{CROWD_CHATS} concurrent chats ({CROWD_HISTORY}-message history, "
                              f"{CROWD_EACH} requests each, no think time)")  # fmt: skip
    for col in ("processes", "p50", "p95", "requests/s", "CPU s", "goal", "status"):
        crowd_table.add_column(col)
    crowd_table.add_row("direct", f"{pct(direct_crowd['times'], 0.5):.0f} ms",
                        f"{pct(direct_crowd['times'], 0.95):.0f} ms",
                        f"{len(direct_crowd['times']) / direct_crowd['wall']:.1f}", "", "-", "")
    rates = {}
    for row in rows:
        if "crowd" not in row:
            continue
        c = row["crowd"]
        rates[row["n"]] = len(c["times"]) / c["wall"]
        p95 = pct(c["times"], 0.95)
        goal, ok = ("-", "")
        if row["n"] == 2:
            goal, ok = "p95 <= 1000 ms", "ok" if p95 <= 1000 else "OVER"
        crowd_table.add_row(str(row["n"]), f"{pct(c['times'], 0.5):.0f} ms", f"{p95:.0f} ms",
                            f"{rates[row['n']]:.1f}", f"{c['cpu']:.1f}", goal, ok)  # fmt: skip
    if 1 in rates and 2 in rates:
        ratio = rates[2] / rates[1]
        crowd_table.add_row("2 vs 1", "", "", f"{ratio:.2f}x", "", ">= 1.7x",
                            "ok" if ratio >= 1.7 else "OVER")  # fmt: skip
    console.print(crowd_table)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", default="1,2,3")
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--turns", type=int, default=6)
    args = parser.parse_args()
    counts = [int(p) for p in args.processes.split(",")]
    asyncio.run(run(counts, args.chats, args.turns))
