"""Hosts over one bucket: three `memgraph-host proxy` processes on moto's S3 and DynamoDB.

moto's server runs as a child process on loopback (`tests/proxy/moto_process.py`, which counts
the requests it serves from its request log); three proxies (separate data dirs, one database in
the bucket, chat leases in one DynamoDB table, `docs/deploy.md`) sit in front of a loopback
upstream that answers at once. `--chats` chats take `--turns` turns each, a person's think time
(`THINK_S`) between two turns of a chat, every turn routed to a host at random; each request is
also sent straight to the upstream, so the proxy's added time is measured per turn. The first
`WARM` turns of each chat are the warm-up (a chat's first turn creates its rows and objects);
the rest are the steady turns the figures are for:

- added p50 / p95 per turn (proxy minus direct);
- S3 and DynamoDB requests per steady turn (all hosts' requests over the steady phase, their
  maintenance included, over the steady turns);
- bytes in the bucket per turn at the end (database and message files).

With ``--sticky`` each chat's turns all go to one host (a load balancer routing by chat id):
a host then never reloads a chat another host wrote, which is most of the random run's reads.

Goal: at most 10 S3 requests per steady turn.

    python bench/service_s3.py [--chats 12] [--turns 6] [--sticky]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memgraph_plugin.hosts.aws_clients import make_client  # noqa: E402
from memgraph_plugin.hosts.chat_lease import create_table  # noqa: E402
from tests.proxy.moto_process import MotoProcess  # noqa: E402
from tests.proxy.proxy_process import ProxyProcess  # noqa: E402
from tests.proxy.upstream import Upstream  # noqa: E402

THINK_S = 0.5
WARM = 2
HOSTS = 3


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def post(client: httpx.Client, url: str, body: dict[str, Any], chat: str) -> float:
    started = time.perf_counter()
    answer = client.post(
        url + "/chat/completions", json=body,
        headers={"X-Memgraph-Chat": chat, "Authorization": "Bearer sk-bench"},
    )  # fmt: skip
    answer.raise_for_status()
    return time.perf_counter() - started


def main(chats: int, turns: int, sticky: bool = False) -> None:
    moto = MotoProcess()
    upstream = Upstream()
    upstream.behaviour.echo = True
    target = moto.target()
    table = f"leases-{uuid.uuid4().hex[:8]}"
    create_table(make_client("dynamodb", moto.options, moto.endpoint), table)
    options = "{" + ", ".join(f'{k} = "{v}"' for k, v in target.options.items()) + "}"
    settings = {
        "storage_uri": target.uri, "storage_options": options, "chat_lease_table": table,
        "chat_lease_endpoint": moto.endpoint, "chat_lease_seconds": 20,
    }  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="bench-s3-"))
    hosts = [ProxyProcess(work / f"host{n}", upstream.url, **settings) for n in range(HOSTS)]
    pick = random.Random(45)
    added: list[float] = []
    errors = 0

    def run(chat: str, first: int, last: int, histories: dict[str, list[dict[str, str]]]) -> None:
        nonlocal errors
        history = histories[chat]
        with httpx.Client(timeout=120) as client:
            for turn in range(first, last):
                text = f"{chat}: line {turn} about the harbour lantern"
                body = {"model": "tiny", "messages": [*history, {"role": "user", "content": text}]}
                direct = post(client, upstream.url, body, chat)
                host = hosts[names.index(chat) % HOSTS] if sticky else pick.choice(hosts)
                try:
                    proxied = post(client, host.url, body, chat)
                except httpx.HTTPError:
                    errors += 1
                    continue
                if turn >= WARM:
                    added.append(proxied - direct)
                history += [body["messages"][-1], {"role": "assistant", "content": "echo: " + text}]
                time.sleep(THINK_S)

    names = [f"bench chat {n}" for n in range(chats)]
    histories = {c: [{"role": "system", "content": f"You narrate story {c}."}] for c in names}
    try:
        with ThreadPoolExecutor(max_workers=chats) as pool:
            list(pool.map(lambda c: run(c, 0, WARM, histories), names))
        before = moto.counts()
        kinds_before = moto.kinds()
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=chats) as pool:
            list(pool.map(lambda c: run(c, WARM, turns, histories), names))
        for host in hosts:  # the last answers stored, the leases given back
            host.stop()
        elapsed = time.perf_counter() - started
        after = moto.counts()
        kinds = moto.kinds()
    finally:
        for host in hosts:
            host.stop()
    steady = chats * (turns - WARM)
    s3 = make_client("s3", moto.options)
    prefix = target.uri.removeprefix("s3://memgraph-test/") + "/"
    size = sum(
        row["Size"]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket="memgraph-test",
                                                                Prefix=prefix)  # fmt: skip
        for row in page.get("Contents", ())
    )
    moto.stop()
    upstream.stop()
    s3_per = (after["s3"] - before["s3"]) / steady
    ddb_per = (after["dynamodb"] - before["dynamodb"]) / steady
    routing = "each chat on one host" if sticky else "turns routed at random"
    print(f"{HOSTS} hosts over one moto bucket, {routing}, {chats} chats x {turns} turns "
          f"({steady} steady turns in {elapsed:.1f} s, think time {THINK_S} s)")  # fmt: skip
    print(f"added per turn: p50 {statistics.median(added) * 1000:.0f} ms, "
          f"p95 {pct(added, 0.95) * 1000:.0f} ms; errors {errors}")  # fmt: skip
    print(f"requests per steady turn: S3 {s3_per:.1f}, DynamoDB {ddb_per:.1f} "
          f"(goal: S3 <= 10)")  # fmt: skip
    for kind, count in (kinds - kinds_before).most_common(12):
        print(f"  {count / steady:5.1f} per turn  {kind}")
    print(f"bucket bytes per turn: {size / (chats * turns) / 1024:.1f} KiB "
          f"({size / 1024 / 1024:.1f} MiB for {chats * turns} turns)")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chats", type=int, default=12)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--sticky", action="store_true", help="each chat's turns to one host")
    args = parser.parse_args()
    main(args.chats, args.turns, args.sticky)
