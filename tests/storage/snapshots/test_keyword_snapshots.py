"""The keyword index persisted with snapshots: a store loaded with a snapshot's keyword columns
searches exactly like one that tokenized every node's text, through full and delta snapshots and
journal rows after them (edits, deletes, new nodes), and falls back to text when the tokenizer or
the searchable fields differ (real LanceDB on disk)."""

from __future__ import annotations

import asyncio
import json

import attrs
import pytest

from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.keyword.keyword_index import keyword_fingerprint
from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA, extend_schema, load_schema
from memgraph_plugin.storage import ChangeRecord, LanceStorage, StorageSettings

from ..helpers import node

QUERIES = [
    "harbor guild",
    "storm betrayal at the harbor",
    "艾琳",
    "花园",
    "mira",
    "ledger 7",
    "character person",
    "nothing matches this",
    "old text",
    "new text lantern",
    "quest goal",
]
SCHEMA_TEXT = json.dumps(DEFAULT_SCHEMA.to_list())


def _storage(tmp_path, schema_text: str | None = SCHEMA_TEXT) -> LanceStorage:
    return LanceStorage(
        StorageSettings(
            uri=str(tmp_path / "db"), checkpoint_every=10_000, keyword_schema=schema_text
        )
    )


def _commit(storage: LanceStorage, *nodes: dict, removed: tuple[str, ...] = ()) -> None:
    base = storage.latest_version_sync("c")
    storage.commit_sync(
        "c",
        ChangeRecord(
            nodes=tuple(nodes),
            nodes_removed=removed,
            node_seq=100,
            seq_counter=10,
            applied=len(nodes) + len(removed),
        ),
        base_version=base,
    )


def _chat(storage: LanceStorage) -> None:
    """A chat written in three stretches: a full snapshot, a delta, then journal rows only."""
    words = ["harbor", "guild", "storm", "betrayal", "garden", "ledger"]
    first = [
        node(
            f"n_{i}",
            f"{words[i % 6]} {words[(i * 5) % 6]} {i % 7}",
            seq=i,
            type=["event", "character", "thread", "clue"][i % 4],
            fields={
                "summary": f"Mira at the {words[(i + 1) % 6]} old text {i}",
                "name": f"name {i}",
                "note": ["艾琳走进花园", i, None, True],
            },
        )
        for i in range(40)
    ]
    _commit(storage, *first[:25])
    _commit(storage, *first[25:])
    storage.checkpoint_sync("c", storage.load_sync("c"))  # full snapshot
    _commit(storage, node("n_3", "harbor harbor harbor new text lantern", seq=3))
    _commit(storage, removed=("n_4", "n_5"))
    _commit(storage, node("n_50", "guild 艾琳 new text", seq=50, type="character"))
    assert storage.snapshot_sync("c") is not None  # a delta on the full one
    _commit(storage, node("n_6", "storm lantern new text", seq=6))
    _commit(storage, removed=("n_7",))
    _commit(storage, node("n_4", "betrayal in the garden new text", seq=4))  # back again
    _commit(storage, node("n_60", "quest goal ledger 7", seq=60, type="thread"))


def _assert_same(a: Store, b: Store) -> None:
    ka, kb = a.keywords, b.keywords
    assert len(ka) == len(kb)
    order = a.pool_order()
    for q in QUERIES:
        assert ka.search(q, None) == kb.search(q, None), q
        assert ka.search(q, order, 5) == kb.search(q, order, 5), q
        ids = [n.id for n in a.iter_nodes()] + ["missing"]
        assert ka.score_of(q, ids) == kb.score_of(q, ids), q
    for n in a.iter_nodes():
        assert ka.tokens_of(n.id) == kb.tokens_of(n.id)
    for word in ("harbor", "lantern", "艾琳", "zzz", "old"):
        assert ka.knows(word) == kb.knows(word)


def _retitle_both(stores: tuple[Store, Store], titles: dict[str, str], removed: str) -> None:
    """The same writes on each store (new titles, one node removed, one transaction each);
    then the two stores' keyword answers are the same."""
    for store in stores:
        with store.transaction():
            for nid, title in titles.items():
                store.put_node(attrs.evolve(store.node(nid), title=title))
            store.remove_node(removed)
        store.take_changeset()
    _assert_same(*stores)


def _stores(state, schema=None) -> tuple[Store, Store]:
    args = (state.nodes, state.edges, state.node_seq, state.seq_counter)
    persisted = Store.from_columns(*args, schema=schema, keywords=state.keywords)
    return persisted, Store.from_columns(*args, schema=schema)


def test_index_from_snapshot_columns_equals_index_from_text(tmp_path) -> None:
    storage = _storage(tmp_path)
    _chat(storage)
    state = storage.load_sync("c")
    assert state.keywords is not None and len(state.keywords.vocab) == 2  # full + delta
    persisted, text = _stores(state)
    # only the nodes the journal changed after the delta are left to index from text
    assert set(persisted._kw_dirty) == {"n_6", "n_4", "n_60"}
    assert set(text._kw_dirty) == {n.id for n in text.iter_nodes()}
    _assert_same(persisted, text)
    assert persisted.keywords.search("harbor", None)[0][0] == "n_3"  # the edited node ranks
    assert "n_5" not in {nid for nid, _ in persisted.keywords.search("harbor guild", None)}

    # later writes on both stores (re-index, remove, add) keep them equal
    _retitle_both((persisted, text), {"n_9": "lantern harbor guild", "n_10": "guild"}, "n_11")

    # a full snapshot reuses the loaded token lists (renumbered), plus the journal's nodes
    storage.checkpoint_sync("c", state)
    again = storage.load_sync("c")
    assert again.keywords is not None and len(again.keywords.vocab) == 1
    assert not again.keywords.unknown_ids
    _assert_same(*_stores(again))


def test_the_adopted_index_shares_the_stores_id_map_until_it_is_written(tmp_path) -> None:
    """An open builds no second id -> slot map for the keyword base: it uses the store's loaded
    ids (read only) and copies them before its first write, leaving the store's map as it was."""
    storage = _storage(tmp_path)
    _chat(storage)
    storage.checkpoint_sync("c", storage.load_sync("c"))  # no journal rows after it
    state = storage.load_sync("c")
    persisted, text = _stores(state)
    index = persisted._keywords
    ids, row_of = persisted.column_ids()  # type: ignore[misc]
    index._slot_map()  # made by the first read (the base is built on a thread from the load on)
    assert index._slots_shared and index._slot_of is row_of and index._slot_ids is ids
    before = dict(row_of)
    _assert_same(persisted, text)  # reads only: still shared
    assert index._slot_of is row_of
    for store in (persisted, text):
        with store.transaction():
            store.put_node(attrs.evolve(store.node("n_9"), title="lantern harbor guild"))
            store.remove_node("n_11")
            store.put_node(Node(id="n_70", type="event", title="harbor lantern", seq_to=70))
        store.take_changeset()
    _assert_same(persisted, text)  # the writes reach the index by its next search
    assert not index._slots_shared and index._slot_of is not row_of
    assert row_of == before and "n_70" not in row_of  # the store's map was not written to


def test_fingerprint_mismatch_falls_back_to_text(tmp_path) -> None:
    storage = _storage(tmp_path)
    _chat(storage)
    state = storage.load_sync("c")
    # another schema: the event type reads other columns and keywords
    other = extend_schema(
        DEFAULT_SCHEMA, [{"id": "event", "tableColumns": ["name"], "keywords": ["happening"]}]
    )
    assert keyword_fingerprint(other) != state.keywords.fingerprint
    persisted, text = _stores(state, other)
    assert set(persisted._kw_dirty) == {n.id for n in persisted.iter_nodes()}  # all from text
    _assert_same(persisted, text)
    assert persisted.keywords.search("happening", None)  # the new keywords are searched

    # a writer with that schema makes its next snapshot a full one with its own fingerprint
    writer = _storage(tmp_path, json.dumps(other.to_list()))
    _commit(writer, node("n_70", "harbor", seq=70))
    writer.snapshot_sync("c")
    rewritten = writer.load_sync("c")
    assert rewritten.keywords.fingerprint == keyword_fingerprint(other)
    assert len(rewritten.keywords.vocab) == 1 and not rewritten.keywords.unknown_ids
    _assert_same(*_stores(rewritten, other))
    # and a reader with the default schema falls back to text again
    fallback, text = _stores(rewritten)
    assert len(fallback._kw_dirty) == len(fallback)
    _assert_same(fallback, text)


def test_snapshots_without_keyword_schema_carry_none(tmp_path) -> None:
    storage = _storage(tmp_path, None)
    _chat(storage)
    state = storage.load_sync("c")
    assert state.keywords is None
    persisted, text = _stores(state)
    _assert_same(persisted, text)


def test_fingerprint_survives_the_settings_round_trip() -> None:
    """What the maintenance process rebuilds from `keyword_schema` has the store's fingerprint."""
    assert keyword_fingerprint(load_schema(json.loads(SCHEMA_TEXT))) == keyword_fingerprint(
        DEFAULT_SCHEMA
    )


def test_a_host_opens_a_snapshotted_chat_with_its_keyword_columns(tmp_path) -> None:
    """The host's wiring: its storage writes keyword columns, its stores adopt them."""
    from host import Host
    from memgraph_plugin.service import memory_graph_for

    async def run() -> None:
        host = Host(
            data_dir=tmp_path / "h",
            entry_points=False,
            settings={"storage_maintenance_seconds": 10**6},
        )
        await host.start()
        api = host.registry.get("memory-graph")
        persistence = memory_graph_for(host).persistence
        session = await api.open_session(host.get_context("c"))
        for text in ["the harbor guild meets", "a storm at the harbor", "艾琳的花园"]:
            await session.create_node(type="event", fields={"summary": text})
        persistence.storage.snapshot_sync("c")
        await session.create_node(type="event", fields={"summary": "harbor lantern"})
        want = [(h.id, h.score) for h in session.keyword_search(query="harbor", k=10)]
        persistence.forget("c")
        reopened = await api.open_session(host.get_context("c"))
        store = reopened.store
        store._keywords._ready()  # built on a thread of its own from the open on: wait for it
        assert store._keywords._base is not None  # adopted: built from the columns
        assert len(store._kw_dirty) == 1  # the node written after the snapshot
        assert [(h.id, h.score) for h in reopened.keyword_search(query="harbor", k=10)] == want
        await host.stop()

    asyncio.run(run())


@pytest.mark.parametrize("bad", ["tids", "tfs"])
def test_damaged_columns_are_not_adopted(tmp_path, bad: str) -> None:
    storage = _storage(tmp_path)
    _chat(storage)
    state = storage.load_sync("c")
    cols = state.keywords
    import pyarrow as pa

    broken = pa.array([[10**6]] + [[1]] * (len(cols.ids) - 1), pa.list_(pa.int32()))
    damaged = attrs.evolve(cols, **{bad: broken})
    store = Store.from_columns(
        state.nodes, state.edges, state.node_seq, state.seq_counter, keywords=damaged
    )
    assert len(store._kw_dirty) == len(store)  # from text, as without columns
    _assert_same(store, _stores(state)[1])


def test_cli_storage_without_the_service_writes_keyword_columns(tmp_path) -> None:
    """`memgraph-host` commands on a host whose plugin has not started open their own storage;
    its snapshots carry keyword columns too (readers need not index text)."""
    from types import SimpleNamespace

    from memgraph_plugin.tools.graph_commands import open_storage

    host = SimpleNamespace(settings={}, data_dir=tmp_path / "h", registry=None)
    storage = open_storage(host)
    _chat(storage)
    storage.checkpoint_sync("c", storage.load_sync("c"))
    state = storage.load_sync("c")
    assert state.keywords is not None
    persisted, text = _stores(state)
    assert not persisted._kw_dirty or len(persisted._kw_dirty) < len(persisted)
    _assert_same(persisted, text)
    storage.close()


def test_a_base_with_textless_nodes_builds_its_map_from_the_stores(tmp_path) -> None:
    """Nodes with no token (a title of punctuation, no fields) hold no slot of the base: the
    first write's id -> slot map is the store's map copied without them (not rebuilt from the
    id column), the store's own map is left as it was, and searches equal the text index's
    through later writes, a textless node given words included."""
    storage = _storage(tmp_path)
    _chat(storage)
    textless = (node(f"n_{80 + i}", "…", seq=80 + i, type="scratch", fields={}) for i in range(3))
    _commit(storage, *textless)
    storage.checkpoint_sync("c", storage.load_sync("c"))
    state = storage.load_sync("c")
    persisted, text = _stores(state)
    index = persisted._keywords
    ids, row_of = persisted.column_ids()  # type: ignore[misc]
    before = dict(row_of)
    slot_of = index._slot_map()
    assert slot_of is not row_of and not index._slots_shared
    assert {"n_80", "n_81", "n_82"}.isdisjoint(slot_of)
    assert all(slot_of[nid] == row_of[nid] for nid in slot_of)
    assert len(slot_of) == len(row_of) - 3
    _assert_same(persisted, text)
    _retitle_both(
        (persisted, text), {"n_81": "lantern in the storm", "n_9": "guild lantern"}, "n_12"
    )
    assert row_of == before
