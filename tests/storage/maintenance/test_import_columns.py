"""The column-at-a-time paths an import takes give what the row-at-a-time ones gave:
state tables of a plain store, keyword tokens of plain node rows, the journal payload, the diff
from an empty chat, and the hashing profile's batch embedding (bit for bit)."""

from __future__ import annotations

import json
import random

import numpy as np
import pyarrow as pa
import pytest

from memgraph_plugin.embedding import HashingProfile, hashing
from memgraph_plugin.engine.keyword.keyword_text import tokenize, tokenize_many
from memgraph_plugin.engine.model.frozen import deep_freeze
from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA
from memgraph_plugin.storage.format import graph_columns, keyword_rows
from memgraph_plugin.storage.journal import change_codec
from memgraph_plugin.storage.persistence import ChangeRecord

WORDS = ["harbor", "storm", "Guild", "oath", "dragon", "x", "7", "a1", "café", "艾琳", "花园"]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + rng.choice(["", ".", "!", "\n"])


def _store(n: int = 60, seed: int = 5) -> dict:
    rng = random.Random(seed)
    nodes = {}
    for i in range(1, n + 1):
        nid = f"n_{i}"
        kind = rng.choice(["event", "character_sheet", "location_state", "thread", "custom"])
        nodes[nid] = {
            "id": nid,
            "type": kind,
            "level": "semantic",
            "title": _text(rng, 2) if rng.random() < 0.7 else "",
            "fields": {"summary": _text(rng, 6), "aliases": [_text(rng, 1)], "n": i, "f": 0.5},
            "parentId": "",
            "childrenIds": [],
            "seqTo": rng.choice([None, i]),
            "semanticDepth": 0,
            "semanticRollup": False,
            "archived": rng.random() < 0.1,
        }
        if rng.random() < 0.1:
            nodes[nid]["supersededBy"] = "n_1"
    edges = [
        {"from": f"n_{i}", "to": f"n_{i + 1}", "type": "related"} | ({"seqTo": i} if i % 3 else {})
        for i in range(1, n)
    ]
    return {"nodes": nodes, "edges": edges, "nodeSeq": n, "seqCounter": n}


def _row_by_row(data: dict) -> tuple:
    builder = graph_columns.DeltaBuilder()
    for node in data["nodes"].values():
        builder._put(builder.nodes, node["id"], node)
    for edge in data["edges"]:
        builder._put(builder.edges, graph_columns.edge_key(edge), edge)
    return builder.tables()


def test_a_plain_stores_tables_are_built_column_by_column_as_row_by_row():
    data = _store()
    assert graph_columns._plain_state_tables(data) is not None
    nodes, edges = graph_columns.state_tables(data)
    slow_nodes, slow_edges = _row_by_row(data)
    assert nodes.equals(slow_nodes) and edges.equals(slow_edges)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["nodes"]["n_3"].update(pinned=True),  # not the plain shape
        lambda d: d["edges"].append(dict(d["edges"][0])),  # a repeated edge key
        lambda d: d["nodes"]["n_4"].update(seqTo=True),  # kept as raw JSON
    ],
)
def test_other_stores_take_the_row_builder(change):
    data = _store()
    change(data)
    assert graph_columns._plain_state_tables(data) is None
    nodes, edges = graph_columns.state_tables(data)
    assert nodes.num_rows == len(data["nodes"])


def test_plain_rows_are_tokenized_as_a_store_loaded_from_them_reads_them():
    nodes, _ = graph_columns.state_tables(_store(200))
    quick = keyword_rows.node_tokens(nodes, DEFAULT_SCHEMA)
    assert quick == keyword_rows._store_tokens(nodes, DEFAULT_SCHEMA)
    assert any(len(t) > 3 for t in quick if t)  # something was read


def test_many_texts_tokenize_as_one_by_one():
    rng = random.Random(3)
    texts = [_text(rng, rng.randint(0, 12)) for _ in range(500)]
    texts += ["", "A", "AB-cd_EF 12 3 x9", "naïve café", "龙之谷 的 背叛 dragon", "\x00ab\tcd"]
    assert tokenize_many(texts) == [tokenize(t) for t in texts]


def test_the_journal_payload_is_the_thawed_json():
    data = _store(20)
    frozen = [deep_freeze(n) for n in data["nodes"].values()]
    change = ChangeRecord(
        nodes=(*data["nodes"].values(), *frozen),
        edges_added=tuple(data["edges"]),
        edges_removed=(("n_1", "related", "n_2"),),
        node_seq=3,
        seq_counter=4,
        note="from a file",
    )
    expected = json.dumps(
        {
            "nodes": [change_codec.thaw(n) for n in change.nodes],
            "nodesRemoved": [],
            "edgesAdded": [change_codec.thaw(e) for e in change.edges_added],
            "edgesRemoved": [["n_1", "related", "n_2"]],
            "nodeSeq": 3,
            "seqCounter": 4,
            "note": "from a file",
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )
    assert change_codec.change_payload(change) == expected


def test_the_diff_from_an_empty_chat_is_the_whole_target():
    data = _store(30)
    data["edges"].append({"from": "n_1", "to": "n_2", "type": "related", "seqTo": None})
    quick = change_codec.diff_states(change_codec.empty_state(), data, kind="import")
    slow = change_codec.diff_states({"nodes": {"x": {"id": "x"}}, "edges": []}, data, kind="import")
    assert quick.nodes == slow.nodes and quick.edges_added == slow.edges_added
    assert (quick.node_seq, quick.seq_counter) == (slow.node_seq, slow.seq_counter)
    assert quick.nodes_removed == () and quick.applied == len(quick.nodes) + len(quick.edges_added)


def test_hashing_embeds_a_batch_bit_for_bit_as_one_by_one(monkeypatch):
    rng = random.Random(9)
    texts = [_text(rng, rng.randint(0, 15)) for _ in range(300)]
    monkeypatch.setattr(hashing, "BATCH", 64)  # several batches
    texts += ["", "a", "the the the", "Hello, WORLD!! hello", "龙之谷 的 背叛"]
    # words pyarrow cuts (ASCII texts) beside those `re` does (others): underscores, digits,
    # a Kelvin sign (lower-cases to ASCII), a dotted capital I, superscripts, Arabic digits
    texts += ["a__b _x_ 9_", "KELVIN \u212a", "İstanbul x_y", "\u00b2 \u0661\u0662", "naïve_café"]
    batch = HashingProfile().embed(texts)
    single = HashingProfile()
    assert np.array_equal(batch, np.stack([single.embed_one(t) for t in texts]))
    assert HashingProfile().embed([]).shape == (0, 384)


def test_a_full_row_sets_vocabulary_is_sorted_as_python_sorts():
    tokens = [
        [("harbor", 2), ("艾琳", 1), ("zz", 1)],
        None,
        [],
        [("Ab", 1), ("harbor", 1), ("é9", 3)],
    ]
    rows = keyword_rows._sorted_rows(tokens, "fp")
    terms = sorted({w for t in tokens if t for w, _ in t})
    ids = {w: i for i, w in enumerate(terms)}
    assert rows.terms.to_pylist() == terms
    assert rows.counts.tolist() == [3, -1, 0, 3]
    assert rows.tids.tolist() == [ids[w] for t in tokens if t for w, _ in t]
    assert rows.tfs.tolist() == [2, 1, 1, 1, 1, 3]
    assert rows.tids.dtype == np.int32 and rows.tfs.dtype == np.int32


def test_a_full_row_set_counts_plain_rows_as_token_by_token():
    nodes, _ = graph_columns.state_tables(_store(300, seed=8))
    removed = nodes["removed"].to_pylist()
    removed[5] = removed[17] = True  # removed rows: unknown (-1)
    nodes = nodes.set_column(nodes.schema.get_field_index("removed"), "removed", pa.array(removed))
    fast = keyword_rows.full_rows(nodes, None, DEFAULT_SCHEMA, "fp")
    slow = keyword_rows._sorted_rows(keyword_rows._store_tokens(nodes, DEFAULT_SCHEMA), "fp")
    assert fast.terms.equals(slow.terms)
    for name in ("counts", "tids", "tfs"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert fast.counts[5] == -1 and fast.counts[17] == -1
    empty = keyword_rows._counted_rows([[], []], [False, True], "fp")
    assert empty.counts.tolist() == [0, -1] and len(empty.terms) == 0


def _import_store(data: dict):
    """`data` as an import hands it to storage: checked, normalised and anchored in one pass
    (a `PlainStore`)."""
    from memgraph_plugin.engine.load.import_pass import checked_normal_store
    from memgraph_plugin.engine.load.store_import import anchored_store

    store = checked_normal_store(data)
    assert store is not None
    return anchored_store(store, 10**6)


def test_an_imports_plain_store_is_taken_without_testing_each_row_again(monkeypatch):
    data = _import_store(_store(80, seed=11))
    assert data.plain
    expected = graph_columns.state_tables(dict(data))  # a plain dict: every row tested
    calls: list[int] = []
    monkeypatch.setattr(graph_columns, "_plain_node", lambda n: calls.append(1) or True)
    nodes, edges = graph_columns.state_tables(data)
    assert calls == []
    assert nodes.equals(expected[0]) and edges.equals(expected[1])
    quick = change_codec.diff_states(change_codec.empty_state(), data, kind="import")
    slow = change_codec.diff_states(change_codec.empty_state(), dict(data), kind="import")
    assert quick == slow and quick.edges_added == tuple(data["edges"])


@pytest.mark.parametrize("seq", [10**6, 0, 20])
def test_an_imports_edge_columns_are_its_edges_anchored_or_not(seq):
    """The node and edge columns the import's check made (`PlainStore.node_columns`,
    `.edge_columns`), moved with the nodes and edges when anchoring moves their seqTo, give
    the same state tables as the dicts."""
    from memgraph_plugin.engine.load.import_pass import checked_normal_store
    from memgraph_plugin.engine.load.store_import import anchored_store

    raw = _store(90, seed=15)
    raw["edges"].append({"from": "n_9", "to": "n_3", "type": "allied_with", "seqTo": 40})
    data = anchored_store(checked_normal_store(raw), seq)
    assert data.edge_columns is not None and data.node_columns is not None
    assert data["edges"][-1]["from"] == "n_3"  # turned into id order
    if seq == 0:
        assert {e.get("seqTo") for e in data["edges"]} == {None, 0}  # all moved to 0
    elif seq == 20:
        assert {0, 19} <= {e.get("seqTo") for e in data["edges"]}  # moved back by 70
    nodes, edges = graph_columns.state_tables(data)
    expected = graph_columns.state_tables(dict(data))  # a plain dict: from the edge dicts
    assert nodes.equals(expected[0]) and edges.equals(expected[1])
    assert edges.num_rows == len(raw["edges"])


def test_moved_message_indices_drop_the_node_columns():
    from memgraph_plugin.engine.load.import_pass import checked_normal_store
    from memgraph_plugin.engine.load.store_import import anchored_store

    raw = _store(30, seed=16)
    raw["nodes"]["n_4"]["fields"]["message"] = 12
    store = checked_normal_store(raw)
    assert store.node_columns is not None
    data = anchored_store(store, 10**6, 5)  # five messages: index 12 moves back to 4
    assert data["nodes"]["n_4"]["fields"]["message"] == 4 and data.node_columns is None
    nodes, _ = graph_columns.state_tables(data)
    assert nodes.equals(graph_columns.state_tables(dict(data))[0])


def test_a_pinned_node_keeps_the_row_builder_for_an_import():
    raw = _store(40, seed=12)
    raw["nodes"]["n_3"]["pinned"] = True
    data = _import_store(raw)
    assert not data.plain
    assert graph_columns._plain_state_tables(data) is None  # tested, and found not plain
    nodes, _ = graph_columns.state_tables(data)
    assert nodes.num_rows == 40


def test_a_full_row_set_of_an_import_reads_the_fields_it_was_given():
    data = _import_store(_store(120, seed=13))
    nodes, _ = graph_columns.state_tables(data)
    fields = [n["fields"] for n in data["nodes"].values()]
    given = keyword_rows.full_rows(nodes, None, DEFAULT_SCHEMA, "fp", fields)
    parsed = keyword_rows.full_rows(nodes, None, DEFAULT_SCHEMA, "fp")
    slow = keyword_rows._sorted_rows(keyword_rows._store_tokens(nodes, DEFAULT_SCHEMA), "fp")
    for rows in (given, parsed):
        assert rows.terms.equals(slow.terms)
        for name in ("counts", "tids", "tfs"):
            assert np.array_equal(getattr(rows, name), getattr(slow, name)), name


def test_an_imports_fields_without_floats_are_written_byte_for_byte_by_orjson(monkeypatch):
    """No float in any node's fields (`PlainStore.float_free`): the fields column is written
    by orjson, byte for byte what the json encoder writes (nested values, non-ASCII text,
    control characters, 64-bit ints); one float anywhere keeps the json encoder."""
    raw = _store(60, seed=14)
    for i, node in enumerate(raw["nodes"].values()):
        node["fields"] = {
            "summary": f"艾琳 \u2028 \x01 tab\t{i}",
            "aliases": ["a", {"deep": [None, True, -(2**63)]}],
            "n": 2**63 - 1,
        }
    data = _import_store(raw)
    assert data.plain and data.float_free
    calls: list[int] = []
    real = graph_columns._orjson_text
    monkeypatch.setattr(graph_columns, "_orjson_text", lambda v: calls.append(1) or real(v))
    nodes, edges = graph_columns.state_tables(data)
    expected = graph_columns.state_tables(dict(data))  # a plain dict: the json encoder
    assert len(calls) == 60
    assert nodes.equals(expected[0]) and edges.equals(expected[1])
    raw["nodes"]["n_7"]["fields"]["aliases"][1]["deep"].append(0.1)
    assert not _import_store(raw).float_free


@pytest.mark.parametrize(("seq", "messages"), [(0, None), (5, None), (5, 3), (100, 50)])
def test_plain_fields_taken_from_the_checks_columns_are_the_nodes_fields(seq, messages):
    from memgraph_plugin.engine.load.import_pass import checked_normal_store
    from memgraph_plugin.engine.load.store_import import anchored_store
    from memgraph_plugin.engine.model.values import Limits
    from memgraph_plugin.storage.maintenance.checkpoints import _plain_fields
    from memgraph_plugin.storage.persistence import ChatState

    data = _store(80, seed=9)
    for i, node in enumerate(data["nodes"].values()):
        if i % 4 == 0:
            node["fields"] = {**node["fields"], "message": i}  # anchoring may move these
    store = anchored_store(checked_normal_store(data, Limits()), seq, messages)
    assert store.plain
    # the columns are kept unless anchoring moved message indices (then the nodes are read)
    assert (store.node_columns is not None) == (messages is None or messages > 60)
    state = ChatState("c", 1, store)
    expected = [node["fields"] for node in store["nodes"].values()]
    assert _plain_fields(state) == expected
