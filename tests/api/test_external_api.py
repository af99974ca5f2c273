"""The legacy external API: injected ids, lexical search, recent nodes, node by id."""

from __future__ import annotations

import attrs
import pytest

from extension_registry import ExtensionRegistry
from memgraph_plugin.api.external import (
    get_currently_injected_node_ids,
    get_node_by_id,
    list_recent_nodes,
    record_injected_node_ids,
    search_nodes_lexical,
)
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.views import InjectionState, NodeView
from memgraph_plugin.engine.write.batch import apply_batch
from memgraph_plugin.errors import MemoryGraphError
from memgraph_plugin.service import SERVICE_NAME, MemoryGraph


class Host:
    """A host stand-in on which a `MemoryGraph` is published (the legacy functions, handed only
    a context, reach the chat's hub through the host's registry)."""

    def __init__(self) -> None:
        self.registry = ExtensionRegistry()
        self.registry.register(SERVICE_NAME, MemoryGraph(self, settings={}))


@attrs.frozen
class Ctx:
    chat_id: str | None
    host: object = None


@pytest.fixture
def store():
    s = Store()
    apply_batch(
        s,
        [
            {"op": "create", "type": "event", "title": "Autumn fair", "fields": {"summary": "x"}},
            {
                "op": "create",
                "type": "character_sheet",
                "title": "Eileen",
                "fields": {"aliases": ["the Autumn witch"], "goal": "autumn? not searched"},
            },
            {"op": "create", "type": "event", "title": "Gone", "fields": {"summary": "autumn"}},
            {
                "op": "create",
                "type": "location_state",
                "title": "Garden",
                "fields": {"state": "A" * 400},
            },
        ],
        max_seq=1,
    )
    apply_batch(s, [{"op": "edit", "node_id": "n_2", "set_fields": {"goal": "g"}}], max_seq=2)
    apply_batch(s, [{"op": "delete", "node_id": "n_3"}], max_seq=3)
    apply_batch(
        s,
        [
            {
                "op": "link_upsert",
                "source_node_id": "n_2",
                "links": [
                    {"target_node_id": "n_1", "relation": "involved_in", "direction": "outgoing"}
                ],
            },
            {"op": "create", "type": "event", "title": "sub", "fields": {"summary": "s"}},
        ],
        max_seq=3,
    )
    return s


def test_injected_ids_are_defensive_copies_and_per_chat():
    host = Host()
    a, b = Ctx("chat-a", host), Ctx("chat-b", host)
    state = record_injected_node_ids(
        a, always_inject_ids=["n_1"], recall_selected_ids=["n_2"], visible_ids=["n_1", "n_2"]
    )
    assert state == InjectionState({"n_1"}, {"n_2"}, {"n_1", "n_2"})
    got = get_currently_injected_node_ids(a)
    assert got.always_inject_ids == {"n_1"} and got.recall_selected_ids == {"n_2"}
    got.always_inject_ids.add("mutated")
    got.recall_selected_ids.clear()
    again = get_currently_injected_node_ids(a)
    assert again.always_inject_ids == {"n_1"} and again.recall_selected_ids == {"n_2"}
    other = get_currently_injected_node_ids(b)
    assert other.always_inject_ids == set() and other.recall_selected_ids == set()
    assert get_currently_injected_node_ids(None).always_inject_ids == set()


def test_record_notifies_listeners():
    from memgraph_plugin.api.injection import hub_for

    ctx = Ctx("chat-listen", Host())
    seen = []
    hub_for(ctx).subscribe(seen.append)
    record_injected_node_ids(ctx, always_inject_ids=[], recall_selected_ids=["n_7"])
    assert [s.recall_selected_ids for s in seen] == [frozenset({"n_7"})]


def test_search_nodes_lexical(store):
    result = search_nodes_lexical(store, "AUTUMN")
    ids = [row["id"] for row in result["nodes"]]
    # title or aliases match; `goal` is not a lexical field; archived n_3 is skipped
    assert ids == ["n_2", "n_1"]  # newest first
    row = result["nodes"][0]
    assert row["type"] == "character_sheet" and row["time"] == 2
    assert "Eileen" in row["preview"]
    assert search_nodes_lexical(store, "autumn", limit=1)["nodes"][0]["id"] == "n_2"
    assert [
        r["id"] for r in search_nodes_lexical(store, "autumn", exclude_ids={"n_2"})["nodes"]
    ] == ["n_1"]
    assert [
        r["id"] for r in search_nodes_lexical(store, "autumn", exclude_ids=iter(["n_1"]))["nodes"]
    ] == ["n_2"]
    long = search_nodes_lexical(store, "garden")["nodes"][0]
    assert len(long["preview"]) == 300


def test_search_and_list_degrade_gracefully():
    assert search_nodes_lexical(None, "x") == {"nodes": []}
    assert search_nodes_lexical(Store(), "") == {"nodes": []}
    assert search_nodes_lexical(Store(), "   ") == {"nodes": []}
    assert list_recent_nodes(None) == {"nodes": []}
    assert get_node_by_id(None, "n_1") is None
    assert get_node_by_id(Store(), "n_1") is None
    assert get_node_by_id(Store(), "") is None


def test_list_recent_nodes(store):
    rows = list_recent_nodes(store)["nodes"]
    ids = [r["id"] for r in rows]
    assert "n_3" not in ids
    assert ids == ["n_5", "n_2", "n_4", "n_1"]
    assert [r["id"] for r in list_recent_nodes(store, limit=2)["nodes"]] == ["n_5", "n_2"]
    assert [r["id"] for r in list_recent_nodes(store, exclude_ids=["n_5"])["nodes"]][0] == "n_2"
    many = Store()
    apply_batch(
        many,
        [
            {"op": "create", "type": "event", "title": f"e{i}", "fields": {"summary": "s"}}
            for i in range(15)
        ],
    )
    assert len(list_recent_nodes(many)["nodes"]) == 10


def test_get_node_by_id(store):
    got = get_node_by_id(store, "n_2")
    assert isinstance(got["node"], NodeView) and got["node"].title == "Eileen"
    assert got["neighbors"] == [
        {"id": "n_1", "edge_type": "involved_in", "relation": "involved_in"}
    ]
    assert get_node_by_id(store, "n_1")["neighbors"][0]["id"] == "n_2"
    assert get_node_by_id(store, "n_2", include_neighbors=False)["neighbors"] == []
    assert get_node_by_id(store, "n_404") is None
    # archived nodes can still be dereferenced by id
    assert get_node_by_id(store, "n_3")["node"].archived is True


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda s: search_nodes_lexical({"nodes": 5}, "x"), "store"),  # a dict, but no store
        (lambda s: search_nodes_lexical(s, 42), "query"),
        (lambda s: search_nodes_lexical(s, "x", limit=-1), "limit"),
        (lambda s: search_nodes_lexical(s, "x", limit="5"), "limit"),
        (lambda s: search_nodes_lexical(s, "x", exclude_ids=[1, 2]), "exclude_ids"),
        (lambda s: list_recent_nodes(s, limit=2.5), "limit"),
        (lambda s: list_recent_nodes(s, exclude_ids=7), "exclude_ids"),
        (lambda s: list_recent_nodes("store"), "store"),
        (lambda s: get_node_by_id(s, 5), "id"),
        (lambda s: get_node_by_id(s, "n_1", include_neighbors="yes"), "include_neighbors"),
        (lambda s: record_injected_node_ids(None, always_inject_ids=5, recall_selected_ids=[]),
         "always_inject_ids"),
        (lambda s: record_injected_node_ids(None, always_inject_ids=[], recall_selected_ids="n_1"),
         "recall_selected_ids"),
    ],
)
def test_wrong_kinds_of_argument_are_bad_args_naming_it(store, call, argument):
    with pytest.raises(MemoryGraphError) as err:
        call(store)
    assert err.value.code == "BAD_ARGS" and err.value.message.startswith(argument)


def test_absent_arguments_still_degrade_gracefully(store):
    assert search_nodes_lexical(store, None) == {"nodes": []}
    assert get_node_by_id(store, None) is None
    assert len(list_recent_nodes(store, limit=None)["nodes"]) == 4  # None: the default 10
    assert list_recent_nodes(store, exclude_ids="n_5")["nodes"][0]["id"] == "n_2"
