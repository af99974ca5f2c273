"""A writer whose background maintenance runs all the time (crash and contention tests).

Usage: python -m tests.storage.maintenance.maintenance_child URI CHAT COUNT TAG
Commits batches of 3 nodes + 2 edges (one node of the previous batch is renamed and one of its
edges removed, so snapshots hold replacements and removals); prints `ok <version> <batch>` after
each commit returned and `maint <pid> <what>` when a maintenance step starts in the maintenance
process `pid` (snapshot, compaction), and `error <text>` when a pass failed.
Snapshots are due every 3 commits, compaction every 4; conflicts are retried after a reload.
"""

from __future__ import annotations

import logging
import os
import sys

from memgraph_plugin.storage import ChangeRecord, ConflictError, LanceStorage, StorageSettings


def say(line: str) -> None:
    """One whole line per write (two threads print: `print` may interleave them)."""
    os.write(1, (line + "\n").encode())


def main() -> None:
    uri, chat, count, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    st = LanceStorage(
        StorageSettings(
            uri=uri,
            checkpoint_every=3,
            optimize_every=4,
            retention_seconds=1,
            keep_checkpoints=2,
            snapshot_chain=3,
            maintenance_seconds=0.2,
        )
    )
    st.maintenance.on_step = lambda what, pid: say(f"maint {pid} {what}")
    st.maintenance.start(wait=True)  # writing starts once maintenance can keep up
    say("ready")
    done = 0
    reported: str | None = None
    while done < count:
        state = st.load_sync(chat)
        batch = f"{tag}{done}"
        nodes = [
            {"id": f"{batch}_{j}", "type": "event", "title": batch, "fields": {"batch": batch}}
            for j in range(3)
        ]
        removed: list[tuple[str, str, str]] = []
        if done:
            prev = f"{tag}{done - 1}"
            if f"{prev}_1" in state.data["nodes"]:
                renamed = dict(state.data["nodes"][f"{prev}_1"], title=f"{prev} renamed")
                nodes.append(renamed)
                removed.append((f"{prev}_0", "related", f"{prev}_2"))
        change = ChangeRecord(
            nodes=tuple(nodes),
            edges_added=tuple(
                {"from": f"{batch}_0", "to": f"{batch}_{j}", "type": "related"} for j in (1, 2)
            ),
            edges_removed=tuple(removed),
            node_seq=state.data["nodeSeq"] + 3,
            seq_counter=state.version + 1,
            applied=len(nodes) + 2,
        )
        try:
            rec = st.commit_sync(chat, change, base_version=state.version)
        except ConflictError:
            continue
        say(f"ok {rec.version} {batch}")
        done += 1
        error = st.maintenance.last_error
        if error is not None and error != reported:
            reported = error
            say(f"error {error}")
    st.close()


if __name__ == "__main__":
    main()
