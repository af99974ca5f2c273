"""A child process writing batches through a real Host session (crash and concurrency tests).

Usage: python -m tests.storage.session_child DATA_DIR CHAT COUNT PER_BATCH TAG
Prints `ready`, then `ok <version> <batch>` after each `apply_extraction_batch` returned; a
conflict (another writer got there first) prints `conflict`, reopens the session and retries.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from host import Host
from memgraph_plugin import MemoryGraphError
from tests.storage.targets import target_from_env


def batch_ops(batch: str, per_batch: int) -> list[dict]:
    ops: list[dict] = [
        {"op": "create", "type": "event", "ref": f"r{j}", "fields": {"summary": f"{batch} {j}"}}
        for j in range(per_batch)
    ]
    ops += [
        {
            "op": "link_upsert",
            "source_ref": "r0",
            "links": [{"target_ref": f"r{j}", "relation": "related", "direction": "outgoing"}],
        }
        for j in range(1, per_batch)
    ]
    return ops


async def main() -> None:
    data_dir, chat, count, per_batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    tag = sys.argv[5]
    target = target_from_env(str(Path(data_dir) / "lancedb"))
    host = Host(
        data_dir=data_dir,
        settings={
            **target.host_settings(),
            "storage_checkpoint_every": 7,
            "storage_optimize_every": 5,
            "storage_retention_seconds": 1,
            "embedding_profile": "hashing",  # commits and checkpoints carry vectors too
        },
        entry_points=False,
    )
    await host.start()
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context(chat))
    print("ready", flush=True)
    done = 0
    while done < count:
        batch = f"{tag}{done}"
        try:
            result = await session.apply_extraction_batch(ops=batch_ops(batch, per_batch))
        except MemoryGraphError as exc:
            if exc.code != "CONFLICT":
                raise
            print("conflict", flush=True)
            session = await api.open_session(host.get_context(chat))
            continue
        assert not result.rejected, result.rejected
        print(f"ok {session.last_commit.version} {batch}", flush=True)
        done += 1
    await host.stop()


if __name__ == "__main__":
    asyncio.run(main())
