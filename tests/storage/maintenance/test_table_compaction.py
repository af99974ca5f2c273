"""Compaction policy of background passes (`table_compaction.py`): a table that needs no
compaction is not rewritten (a delta snapshot of a big chat leaves its snapshot and vector
fragments alone), small fragments or versions piling up make it compacted, and what is loaded
stays exactly what was committed."""

from __future__ import annotations

from pathlib import Path

import attrs
import lancedb
import numpy as np
import pyarrow as pa

from memgraph_plugin.storage import LanceStorage, StorageSettings, VectorBlock
from memgraph_plugin.storage.database.tables import TABLE_OPTIONS
from memgraph_plugin.storage.maintenance.table_compaction import SMALL_FRAGMENTS, Compactor
from tests.storage.helpers import change, node


def _data_files(uri: Path, table: str) -> set[str]:
    return {p.name for p in (uri / f"{table}.lance" / "data").glob("*.lance")}


def _tables(st: LanceStorage) -> dict[str, object]:
    return {
        "commits": st.journal.table,
        "snap_nodes": st._snaps.nodes,
        "nodes_d8": st.vectors.all()[8],
    }


def test_a_delta_snapshot_pass_rewrites_no_big_fragment_until_small_ones_pile_up(tmp_path):
    uri = tmp_path / "db"
    st = LanceStorage(
        StorageSettings(
            uri=str(uri), checkpoint_every=10**6, optimize_every=10**6,
            maintenance_seconds=3600, snapshot_chain=100,
        )
    )
    try:
        n = 2000
        ids = [f"n_{i}" for i in range(n)]
        vec = np.ones((n, 8), np.float32) / np.sqrt(8)
        big = attrs.evolve(
            change(*(node(i) for i in ids), node_seq=n), vectors=VectorBlock("p", tuple(ids), vec)
        )
        version = st.commit_sync("big", big, base_version=0).version
        st.snapshot_sync("big")
        assert set(st.optimize_sync()) >= {"commits", "snap_nodes", "nodes_d8"}  # explicit: all

        def delta(k: int) -> None:
            nonlocal version
            one = attrs.evolve(
                change(node(f"x_{k}"), node_seq=n + k + 1),
                vectors=VectorBlock("p", (f"x_{k}",), vec[:1]),
            )
            version = st.commit_sync("big", one, base_version=version).version
            st.snapshot_sync("big")  # a delta: one small fragment in each snapshot table

        delta(0)
        other = 0
        for k in range(SMALL_FRAGMENTS):  # the journal gets a fragment per commit
            other = st.commit_sync("other", change(node(f"o_{k}"), node_seq=k + 1),
                                   base_version=other).version
        tables = _tables(st)
        before = {name: (_data_files(uri, name), t.version) for name, t in tables.items()}

        compacted = st.optimize_sync(force=False)

        assert "commits" in compacted
        for name in ("snap_nodes", "nodes_d8"):
            assert name not in compacted, compacted
            files, table_version = before[name]
            assert _data_files(uri, name) == files, name  # not one fragment rewritten
            assert tables[name].version == table_version, name
        assert _data_files(uri, "commits") - before["commits"][0]  # the journal was

        for k in range(1, SMALL_FRAGMENTS):
            delta(k)
        fragments = tables["snap_nodes"].stats()["fragment_stats"]["num_fragments"]
        assert fragments >= SMALL_FRAGMENTS
        compacted = st.optimize_sync(force=False)
        assert {"snap_nodes", "nodes_d8"} <= set(compacted), compacted
        # the small fragments merged (LanceDB keeps the indexed big one apart until the next)
        assert tables["snap_nodes"].stats()["fragment_stats"]["num_fragments"] <= 2

        fresh = LanceStorage(st.settings)
        state = fresh.load_sync("big")
        assert len(state.data["nodes"]) == n + SMALL_FRAGMENTS
        block = fresh.load_vectors_sync("big", state, profile="p")
        assert block is not None and len(block.ids) == n + SMALL_FRAGMENTS
    finally:
        st.close()


def test_versions_piling_up_make_a_table_with_few_fragments_compacted(tmp_path):
    """A table whose fragments stay few (rows deleted, one row added at a time and pruned)
    still gets its old versions cleaned up: after `versions` versions it is compacted."""
    db = lancedb.connect(str(tmp_path))
    schema = pa.schema([("chat_id", pa.string()), ("v", pa.int64())])
    table = db.create_table("heads", schema=schema, storage_options=TABLE_OPTIONS)
    table.add(pa.table({"chat_id": ["a"] * 10, "v": list(range(10))}, schema=schema))
    compactor = Compactor(0, small_fragments=50, versions=6)
    assert compactor.compact([table]) == []  # first seen: counts from its version now
    for v in range(5):
        table.delete(f"v = {v}")
    assert compactor.compact([table]) == []  # 5 versions since
    table.delete("v = 5")
    assert compactor.compact([table]) == ["heads"]
    assert compactor.compact([table]) == []  # counts again from the compaction
    assert table.count_rows() == 4


def test_a_bigger_table_takes_more_small_fragments_before_it_is_rewritten(tmp_path):
    """The thresholds grow with the table's bytes: a table 3 size units big is compacted at 3x
    the small fragments (bytes rewritten per small append stay bounded); a small one at 1x."""
    db = lancedb.connect(str(tmp_path))
    schema = pa.schema([("chat_id", pa.string()), ("text", pa.string())])
    big = db.create_table("big", schema=schema, storage_options=TABLE_OPTIONS)
    rng = np.random.default_rng(0)
    words = [rng.bytes(48).hex() for _ in range(4000)]
    big.add(pa.table({"chat_id": ["a"] * len(words), "text": words}, schema=schema))
    unit = int(big.stats()["total_bytes"]) // 3
    scaled = Compactor(0, small_fragments=2, versions=1000, scale_bytes=unit)
    plain = Compactor(0, small_fragments=2, versions=1000, scale_bytes=1 << 40)
    for compactor in (scaled, plain):
        compactor.needs(big)  # first seen
    one = pa.table({"chat_id": ["a"], "text": ["x"]}, schema=schema)
    big.add(one)  # 2 small fragments: the big one (under LanceDB's 100k rows) and this
    assert plain.needs(big)
    for _ in range(4):  # 2 .. 5 small fragments
        assert not scaled.needs(big)
        big.add(one)
    assert scaled.needs(big)  # 6 small fragments = 2 x 3
    assert scaled.compact([big]) == ["big"]
    assert big.count_rows() == len(words) + 5
