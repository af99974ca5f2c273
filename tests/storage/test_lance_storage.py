"""LanceStorage against a real LanceDB folder: journal, load, conflicts, history, rollback."""

from __future__ import annotations

import numpy as np
import pytest

from memgraph_plugin.storage import (
    ConflictError,
    LanceStorage,
    StorageError,
    StorageSettings,
    VectorBlock,
    where_eq,
)
from tests.storage.helpers import change, edge, node


@pytest.fixture
def storage(target):
    """Every test using it runs on a local folder and on the S3 server (`target`)."""
    return target.storage(checkpoint_every=1000)


def test_fresh_chat_is_empty_version_zero(storage):
    state = storage.load_sync("nobody")
    assert state.version == 0
    assert state.data == {"nodes": {}, "edges": [], "nodeSeq": 0, "seqCounter": 0}


def test_commit_then_load_replays_journal(storage):
    r1 = storage.commit_sync("c1", change(node("n_1"), node_seq=1, seq=1), base_version=0)
    r2 = storage.commit_sync(
        "c1",
        change(node("n_2"), edges=[edge("n_1", "n_2")], node_seq=2, seq=2),
        base_version=1,
    )
    assert (r1.version, r2.version) == (1, 2)
    assert r2.applied == 2
    state = LanceStorage(storage.settings).load_sync("c1")  # a fresh handle: from disk
    assert state.version == 2
    assert set(state.data["nodes"]) == {"n_1", "n_2"}
    assert state.data["edges"] == [{"from": "n_1", "to": "n_2", "type": "related"}]
    assert (state.data["nodeSeq"], state.data["seqCounter"]) == (2, 2)


def test_edges_removed_and_node_replaced(storage):
    storage.commit_sync(
        "c", change(node("a"), node("b"), edges=[edge("a", "b")], node_seq=2), base_version=0
    )
    storage.commit_sync(
        "c",
        change(node("a", "renamed"), removed=[("a", "related", "b")], node_seq=2),
        base_version=1,
    )
    state = storage.load_sync("c")
    assert state.data["edges"] == []
    assert state.data["nodes"]["a"]["title"] == "renamed"


@pytest.mark.parametrize(
    "evil",
    ["x' OR '1'='1", "x' OR 1=1 --", "a\\b", "a\\'b", "'", "\\", 'q"uote', "é中文🙂", "x%", "x_"],
)
def test_chat_ids_are_escaped_and_isolated(storage, evil):
    storage.commit_sync("x", change(node("secret"), node_seq=1), base_version=0)
    storage.commit_sync("xx", change(node("other"), node_seq=1), base_version=0)
    assert storage.load_sync(evil).version == 0
    assert storage.history_sync(evil) == ()
    storage.commit_sync(evil, change(node(evil + "-node"), node_seq=1), base_version=0)
    state = storage.load_sync(evil)
    assert list(state.data["nodes"]) == [evil + "-node"]
    assert list(storage.load_sync("x").data["nodes"]) == ["secret"]
    assert evil in storage.chats_sync()


def test_node_ids_with_quotes_survive(storage):
    ids = ["it's", 'say "hi"', "back\\slash", "ünï©ødé"]
    storage.commit_sync("c", change(*(node(i) for i in ids), node_seq=4), base_version=0)
    assert sorted(storage.load_sync("c").data["nodes"]) == sorted(ids)


def test_where_eq_rejects_non_values():
    with pytest.raises(TypeError):
        where_eq(chat_id=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        where_eq(chat_id="a\x00b")


def test_bad_chat_id_is_a_clear_error(storage):
    """A storage that is an entry point for chat ids is given the host's rule."""
    from host.chats.chat_ids import chat_id_problem

    storage = LanceStorage(storage.settings, chat_id_rule=chat_id_problem)
    with pytest.raises(StorageError) as info:
        storage.load_sync("")
    assert info.value.code == "BAD_ARGS"


def test_stale_base_version_raises_conflict_and_keeps_the_winner(storage):
    storage.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    other = LanceStorage(storage.settings)
    other.commit_sync("c", change(node("b"), node_seq=2), base_version=1)
    with pytest.raises(ConflictError) as info:
        storage.commit_sync("c", change(node("loser"), node_seq=2), base_version=1)
    assert info.value.code == "CONFLICT"
    assert info.value.latest_version == 2
    state = storage.load_sync("c")
    assert set(state.data["nodes"]) == {"a", "b"}
    # the loser's row was removed, history stays linear
    assert [r.version for r in storage.history_sync("c")] == [1, 2]
    assert storage.commit_sync("c", change(node("c"), node_seq=3), base_version=2).version == 3


def test_has_changed_sees_another_handles_commit(storage):
    storage.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    assert storage.load_sync("c").version == 1
    assert storage.has_changed_sync("c", 1) is False
    LanceStorage(storage.settings).commit_sync("c", change(node("b"), node_seq=2), base_version=1)
    assert storage.has_changed_sync("c", 1) is True
    assert storage.has_changed_sync("c", 2) is False
    # a commit to another chat changes the table but not this chat
    LanceStorage(storage.settings).commit_sync("d", change(node("z")), base_version=0)
    assert storage.has_changed_sync("c", 2) is False


def test_history_and_rollback_by_version_and_seq(storage):
    for i in range(1, 6):
        storage.commit_sync(
            "c",
            change(
                node(f"n_{i}", seq=i),
                edges=[edge("n_1", f"n_{i}")] if i > 1 else [],
                node_seq=i,
                seq=i * 10,
            ),
            base_version=i - 1,
        )
    hist = storage.history_sync("c")
    assert [(r.version, r.seq) for r in hist] == [(1, 10), (2, 20), (3, 30), (4, 40), (5, 50)]
    assert storage.history_sync("c", limit=2)[0].version == 4

    # by message seq: state after the newest commit with seq <= 35 -> version 3
    rec = storage.rollback_sync("c", seq=35)
    assert rec.version == 6 and rec.kind == "rollback" and rec.seq == 30
    assert set(storage.load_sync("c").data["nodes"]) == {"n_1", "n_2", "n_3"}

    storage.rollback_sync("c", version=2)
    state = storage.load_sync("c")
    assert set(state.data["nodes"]) == {"n_1", "n_2"}
    assert state.data["edges"] == [edge("n_1", "n_2")]
    assert (state.data["nodeSeq"], state.data["seqCounter"]) == (2, 20)
    # seq counts along the current (linear) timeline: the rollback commit carries seq 20
    storage.rollback_sync("c", seq=35)
    assert set(storage.load_sync("c").data["nodes"]) == {"n_1", "n_2"}
    # rolling back is itself history: the rolled-back versions stay reachable
    storage.rollback_sync("c", version=5)
    assert len(storage.load_sync("c").data["nodes"]) == 5
    assert [r.kind for r in storage.history_sync("c")][-4:] == ["rollback"] * 4

    with pytest.raises(StorageError):
        storage.rollback_sync("c", version=99)
    with pytest.raises(StorageError):
        storage.rollback_sync("c", version=1, seq=1)
    with pytest.raises(ConflictError):
        storage.rollback_sync("c", version=1, base_version=3)


def test_rollback_to_zero_empties_the_chat(storage):
    storage.commit_sync("c", change(node("a"), node_seq=1, seq=1), base_version=0)
    storage.rollback_sync("c", seq=0)
    state = storage.load_sync("c")
    assert state.version == 2 and state.data["nodes"] == {}


def test_import_replaces_and_export_roundtrips(storage):
    storage.commit_sync("c", change(node("old")), base_version=0)
    data = {
        "nodes": {"n_1": node("n_1"), "n_2": node("n_2")},
        "edges": [edge("n_1", "n_2", "mentions")],
        "nodeSeq": 2,
        "seqCounter": 7,
    }
    rec = storage.import_sync("c", data)
    assert rec.kind == "import" and rec.version == 2
    assert storage.load_sync("c").data == data
    # importing the same graph again changes nothing but is still a commit
    assert storage.import_sync("c", data).applied == 0


def test_checkpoints_make_load_equal_and_are_pruned(target):
    st = target.storage(checkpoint_every=5, keep_checkpoints=2)
    for i in range(1, 23):
        st.commit_sync(
            "c",
            change(node(f"n_{i}"), edges=[edge("n_1", f"n_{i}")] if i > 1 else [], node_seq=i),
            base_version=i - 1,
        )
        assert st.maintenance.wait_idle()  # the background snapshot of a due chat
    state = st.load_sync("c")
    assert state.version == 22
    assert state.checkpoint_version == 20
    assert len(state.data["nodes"]) == 22 and len(state.data["edges"]) == 21
    heads = st._snaps.heads.search().select(["version", "chain"]).limit(None).to_arrow()
    assert sorted(heads.column("version").to_pylist()) == [15, 20]
    assert max(len(c) for c in heads.column("chain").to_pylist()) == 4  # a full one, 3 deltas
    assert st.stats_sync()["snap_nodes"]["rows"] == 20  # each node once, no full copy per snapshot
    # an older state still comes from checkpoint + journal
    assert len(st.state_at_sync("c", version=12).data["nodes"]) == 12


def test_vectors_are_stored_with_commits_and_checkpoints(target):
    st = target.storage(checkpoint_every=3)
    rng = np.random.default_rng(0)
    expected = {}
    for i in range(1, 6):
        vec = rng.standard_normal((1, 8)).astype(np.float32)
        expected[f"n_{i}"] = vec[0]
        ch = change(node(f"n_{i}"), node_seq=i)
        import attrs

        ch = attrs.evolve(ch, vectors=VectorBlock("p", (f"n_{i}",), vec))
        st.commit_sync("c", ch, base_version=i - 1)
        assert st.maintenance.wait_idle()
    state = st.load_sync("c")
    assert state.checkpoint_version == 3  # nodes 1..3 from the nodes_d8 table, 4..5 from journal
    block = LanceStorage(st.settings).load_vectors_sync("c", state)
    assert block is not None and block.profile == "p"
    got = dict(zip(block.ids, block.matrix, strict=True))
    assert set(got) == set(expected)
    for nid, vec in expected.items():
        np.testing.assert_allclose(got[nid], vec)
    assert st.load_vectors_sync("c", state, profile="other") is None


def test_a_checkpoint_never_mixes_vectors_of_two_profiles(tmp_path):
    """The profile changed between commits (same dimension): the automatic checkpoint keeps only
    the newest profile's vectors, and a profile's vectors are always the ones it made."""
    import attrs

    st = LanceStorage(StorageSettings(uri=str(tmp_path / "db"), checkpoint_every=4))
    rng = np.random.default_rng(1)
    made: dict[str, dict[str, np.ndarray]] = {"a": {}, "b": {}}
    for i, profile in enumerate(["a", "a", "b", "b"], start=1):
        vec = rng.standard_normal((1, 8)).astype(np.float32)
        made[profile][f"n_{i}"] = vec[0]
        ch = attrs.evolve(
            change(node(f"n_{i}"), node_seq=i), vectors=VectorBlock(profile, (f"n_{i}",), vec)
        )
        st.commit_sync("c", ch, base_version=i - 1)
        assert st.maintenance.wait_idle()
    state = st.load_sync("c")
    assert state.checkpoint_version == 4
    fresh = LanceStorage(st.settings)
    for profile in ("a", "b"):
        block = fresh.load_vectors_sync("c", state, profile=profile)
        got = {} if block is None else dict(zip(block.ids, block.matrix, strict=True))
        assert set(got) <= set(made[profile])
        for nid, vec in got.items():
            np.testing.assert_allclose(vec, made[profile][nid])
    newest = fresh.load_vectors_sync("c", state, profile="b")
    assert newest is not None and set(newest.ids) == {"n_3", "n_4"}
    anyone = fresh.load_vectors_sync("c", state)
    assert anyone is not None and anyone.profile == "b" and set(anyone.ids) == {"n_3", "n_4"}


def test_a_vector_never_outlives_its_nodes_text(storage):
    """A node changed by a writer without a profile loses its stored vector (it is re-embedded
    by the next reader with one) instead of keeping the vector of its old text."""
    import attrs

    vec = np.ones((1, 8), dtype=np.float32) / np.sqrt(8)
    first = change(node("n_1", "old text"), node("n_2"), node_seq=2)
    block = VectorBlock("p", ("n_1", "n_2"), np.vstack([vec, vec]))
    storage.commit_sync("c", attrs.evolve(first, vectors=block), base_version=0)
    storage.commit_sync("c", change(node("n_1", "new text"), node_seq=2), base_version=1)
    got = storage.load_vectors_sync("c", storage.load_sync("c"), profile="p")
    assert got is not None and got.ids == ("n_2",)


def _files_on_disk(uri, table: str) -> int:
    """Data, deletion and manifest files of one LanceDB table folder."""
    root = uri / f"{table}.lance"
    return sum(1 for p in root.rglob("*") if p.is_file())


@pytest.mark.slow
def test_fragments_versions_and_files_stay_bounded_as_chats_grow(tmp_path):
    """Many commits to two chats, with vectors and checkpoints: fragments, table versions and
    files on disk of every table stay under one bound all along (they do not grow with the
    number of commits: a chat with 10k commits does not hold 10k fragments)."""
    import attrs

    uri = tmp_path / "db"
    every = 10
    st = LanceStorage(
        StorageSettings(
            uri=str(uri),
            optimize_every=every,
            checkpoint_every=25,
            keep_checkpoints=2,
            retention_seconds=0,
        )
    )
    vec = np.ones((1, 8), dtype=np.float32) / np.sqrt(8)
    samples: list[dict[str, tuple[int, int, int]]] = []
    total = 360
    for i in range(1, total + 1):
        chat, n = ("a", (i + 1) // 2) if i % 2 else ("b", i // 2)
        ch = attrs.evolve(
            change(node(f"{chat}_{n}"), node_seq=n), vectors=VectorBlock("p", (f"{chat}_{n}",), vec)
        )
        st.commit_sync(chat, ch, base_version=n - 1)
        assert st.maintenance.wait_idle()
        if i % 23 == 0:  # at varying points of the optimize cycle
            stats = st.stats_sync()
            samples.append(
                {
                    name: (s["fragments"], s["versions"], _files_on_disk(uri, name))
                    for name, s in stats.items()
                }
            )
    assert {"commits", "snapshots", "snap_nodes", "snap_edges", "nodes_d8"} <= set(samples[-1])
    bound_fragments, bound_versions, bound_files = every + 2, 3 * every, 8 * every
    for sample in samples:
        for name, (fragments, versions, files) in sample.items():
            assert fragments <= bound_fragments, (name, sample)
            assert versions <= bound_versions, (name, sample)
            assert files <= bound_files, (name, sample)
    assert st.stats_sync()["commits"]["rows"] == total
    assert len(LanceStorage(st.settings).load_sync("a").data["nodes"]) == total // 2
    block = st.load_vectors_sync("b", st.load_sync("b"), profile="p")
    assert block is not None and len(block.ids) == total // 2


def test_optimize_indexes_chat_id_and_queries_still_see_every_row(target):
    """Compaction adds a BTREE index on `chat_id` to each table (queries filter by chat); rows
    written after it (not yet indexed) are found too, and chats stay apart."""
    st = target.storage(optimize_every=4, checkpoint_every=3)
    vec = np.ones((1, 8), dtype=np.float32) / np.sqrt(8)
    import attrs

    for i in range(1, 8):  # 14 commits: optimized after 4, 8 and 12
        for chat in ("a", "a'"):
            nid = f"{chat}{i}"
            ch = attrs.evolve(change(node(nid), node_seq=i), vectors=VectorBlock("p", (nid,), vec))
            st.commit_sync(chat, ch, base_version=i - 1)
            assert st.maintenance.wait_idle()
    for table in (st._commits, st._snaps.heads, st._snaps.nodes, st._nodes_table(8)):
        assert any(list(ix.columns) == ["chat_id"] for ix in table.list_indices()), table.name
    unindexed = st._commits.index_stats("chat_id_idx").num_unindexed_rows
    assert unindexed > 0  # commits after the last optimize: the unindexed tail
    for chat in ("a", "a'"):
        state = LanceStorage(st.settings).load_sync(chat)
        assert state.version == 7
        assert sorted(state.data["nodes"]) == [f"{chat}{i}" for i in range(1, 8)]
        assert [r.version for r in st.history_sync(chat)] == list(range(1, 8))
        block = st.load_vectors_sync(chat, state, profile="p")
        assert block is not None and len(block.ids) == 7
    with pytest.raises(ConflictError):  # the read-back after a commit sees the tail too
        LanceStorage(st.settings).commit_sync("a", change(node("late")), base_version=6)


def test_history_retention_prunes_the_journal_but_never_the_current_state(target):
    import attrs

    st = target.storage(checkpoint_every=5, keep_checkpoints=2, history_seconds=0)
    for i in range(1, 23):
        st.commit_sync("c", change(node(f"n_{i}"), node_seq=i, seq=i * 10), base_version=i - 1)
        assert st.maintenance.wait_idle()
    st.commit_sync("other", change(node("o")), base_version=0)
    fresh = LanceStorage(st.settings)
    state = fresh.load_sync("c")
    assert state.version == 22 and len(state.data["nodes"]) == 22
    assert [r.version for r in fresh.history_sync("c")] == list(range(15, 23))  # 15: a snapshot
    assert len(fresh.state_at_sync("c", version=17).data["nodes"]) == 17
    assert len(fresh.state_at_sync("c", version=15).data["nodes"]) == 15  # from the snapshot
    with pytest.raises(StorageError, match="pruned"):
        fresh.state_at_sync("c", version=9)
    # a message seq at the oldest kept snapshot: that state; before it: a clear error
    assert len(fresh.state_at_sync("c", seq=155).data["nodes"]) == 15
    with pytest.raises(StorageError, match="pruned"):
        fresh.rollback_sync("c", seq=35)  # never "before the first commit": that would empty it
    assert len(fresh.load_sync("c").data["nodes"]) == 22
    assert fresh.history_sync("other")[0].version == 1  # other chats keep theirs
    one = LanceStorage(attrs.evolve(st.settings, keep_checkpoints=1))
    for i in range(23, 26):  # a snapshot at 25, the newest commit: its row stays
        one.commit_sync("c", change(node(f"n_{i}"), node_seq=i, seq=i * 10), base_version=i - 1)
        assert one.maintenance.wait_idle()
    assert [r.version for r in one.history_sync("c")] == [25]
    assert one.latest_version_sync("c") == 25 and "c" in one.chats_sync()


def test_a_rollback_whose_embedding_fails_still_commits(tmp_path, caplog):
    def broken(nodes):
        raise RuntimeError("model crashed")

    st = LanceStorage(StorageSettings(uri=str(tmp_path / "db")), embedder=broken)
    st.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    st.commit_sync("c", change(node("a", "renamed"), node_seq=1), base_version=1)
    assert st.rollback_sync("c", version=1).version == 3
    assert st.load_sync("c").data["nodes"]["a"]["title"] == "a"
    assert "embedding failed; chat 'c' commits without vectors" in caplog.text


def test_import_and_rollback_without_a_base_retry_when_another_writer_got_in(tmp_path):
    """The CLI's import and rollback name no base version: a commit of another writer landing
    between their load and their commit makes them recompute and commit, not fail."""
    st = LanceStorage(StorageSettings(uri=str(tmp_path / "db")))
    other = LanceStorage(st.settings)
    st.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    real = st.commit_sync
    raced: list[int] = []

    def racing(chat_id, ch, *, base_version):
        if len(raced) < 2:  # two conflicts in a row, then it goes through
            raced.append(base_version)
            other.load_sync("c")
            other.commit_sync(
                "c", change(node(f"b{base_version}"), node_seq=1), base_version=base_version
            )
        return real(chat_id, ch, base_version=base_version)

    st.commit_sync = racing
    data = {"nodes": {"x": node("x")}, "edges": [], "nodeSeq": 1, "seqCounter": 0}
    rec = st.import_sync("c", data)
    assert raced == [1, 2] and rec.version == 4 and rec.kind == "import"
    assert list(st.load_sync("c").data["nodes"]) == ["x"]
    # the import's snapshot is the one written for version 4 (the lost attempts' rows: orphans)
    assert int(st._snaps.head("c")["version"]) == 4 and st.load_sync("c").checkpoint_version == 4
    raced.clear()
    rec = st.rollback_sync("c", version=1)
    assert rec.version == 7 and list(st.load_sync("c").data["nodes"]) == ["a"]
    with pytest.raises(ConflictError):  # a caller that names its base still gets CONFLICT
        st.rollback_sync("c", version=1, base_version=2)
