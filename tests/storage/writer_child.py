"""A child process that writes batches to one chat in a loop (used by crash and concurrency tests).

Usage: python -m tests.storage.writer_child URI CHAT COUNT NODES_PER_BATCH [TAG]
Prints `ready` once, then `ok <version> <tag>` after each commit returned; conflicts are
retried after reloading the chat (`conflict` is printed).
"""

from __future__ import annotations

import sys

from memgraph_plugin.storage import ChangeRecord, ConflictError, LanceStorage
from tests.storage.targets import target_from_env


def main() -> None:
    uri, chat, count, per_batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    tag = sys.argv[5] if len(sys.argv) > 5 else "w"
    target = target_from_env(uri)  # an S3 target's storage options come in the environment
    st = LanceStorage(
        target.settings(checkpoint_every=7, optimize_every=5, retention_seconds=1)
    )
    print("ready", flush=True)
    done = 0
    while done < count:
        state = st.load_sync(chat)
        batch = f"{tag}{done}"
        nodes = tuple(
            {"id": f"{batch}_{j}", "type": "event", "title": batch, "fields": {"batch": batch}}
            for j in range(per_batch)
        )
        edges = tuple(
            {"from": f"{batch}_0", "to": f"{batch}_{j}", "type": "related"}
            for j in range(1, per_batch)
        )
        change = ChangeRecord(
            nodes=nodes,
            edges_added=edges,
            node_seq=state.data["nodeSeq"] + per_batch,
            seq_counter=state.version + 1,
            applied=per_batch,
        )
        try:
            rec = st.commit_sync(chat, change, base_version=state.version)
        except ConflictError:
            print("conflict", flush=True)
            continue
        print(f"ok {rec.version} {batch}", flush=True)
        done += 1


if __name__ == "__main__":
    main()
