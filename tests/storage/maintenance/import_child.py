"""A child process that imports a large store into one chat (used by the import crash test).

Usage: python -m tests.storage.maintenance.import_child URI CHAT NODES [--hold-head]
Prints `ready` once the storage is open, then `ok <version>` when the import returned. With
`--hold-head` it stops between the import's journal row and its snapshot's head row (prints
`committed` there and waits to be killed).
"""

from __future__ import annotations

import sys
import time

from memgraph_plugin.embedding import HashingProfile, NodeEmbedder
from memgraph_plugin.engine.load.store_import import normalised_store
from memgraph_plugin.storage import LanceStorage


def big_store(nodes: int, tag: str) -> dict:
    """`nodes` events in a chain (`nodes - 1` edges), every title and field tagged `tag`."""
    return {
        "nodes": {
            f"n_{i}": {
                "id": f"n_{i}",
                "type": "event",
                "title": f"{tag} {i}",
                "fields": {"summary": f"{tag} event {i} at the harbor"},
                "seqTo": i,
            }
            for i in range(1, nodes + 1)
        },
        "edges": [
            {"from": f"n_{i}", "to": f"n_{i + 1}", "type": "follows"} for i in range(1, nodes)
        ],
        "nodeSeq": nodes,
        "seqCounter": nodes,
    }


def main() -> None:
    uri, chat, nodes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    storage = LanceStorage(uri, embedder=NodeEmbedder(HashingProfile()))
    storage.latest_version_sync(chat)
    if "--hold-head" in sys.argv:

        def hold(chat_id: str, head: dict) -> None:
            print("committed", flush=True)
            time.sleep(600)  # the parent kills us here

        storage.checkpoints.finish = hold  # type: ignore[method-assign]
    data = normalised_store(big_store(nodes, "new"))
    print("ready", flush=True)
    record = storage.import_sync(chat, data)
    print(f"ok {record.version}", flush=True)
    storage.close()


if __name__ == "__main__":
    main()
