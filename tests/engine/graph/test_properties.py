"""Property tests: random op batches and random arguments thrown at the engine.

After every batch the graph invariants hold: no dangling or self edges, parents and children
agree, ids unique, nothing archived in the candidate pool or the lexical listings; a rejected op
changes nothing, and a batch that fails midway leaves ``to_dict()`` exactly as before.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memgraph_plugin.api.external import list_recent_nodes, search_nodes_lexical
from memgraph_plugin.api.read import get_read_api
from memgraph_plugin.api.write import get_write_api
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.schema import INTERNAL_EDGE_TYPES
from memgraph_plugin.engine.read.projection import nearest_visible_ancestor_id
from memgraph_plugin.engine.write.batch import apply_batch
from memgraph_plugin.engine.write.ops import REJECTION_CODES
from memgraph_plugin.errors import ERROR_CODES, MemoryGraphError

VALID_TYPES = ["event", "character_sheet", "location_state", "thread"]
TYPES = [*VALID_TYPES, "unknown", "EVENT", ""]
NAMES = ["Eileen", "eileen", "Bob", "艾琳", "Qel", "qel; Skyharbor", "", "Mara|玛拉"]
VALID_RELATIONS = ["related", "Mentions", "allied_with", "involved_in", "HOSTILE_TO"]
RELATIONS = [*VALID_RELATIONS, "contains", ""]
DIRECTIONS = ["outgoing", "incoming", "bidirectional", None, "sideways"]


def mostly(valid: Any, invalid: Any) -> Any:
    """Valid values seven times in eight."""
    return weighted((7, valid), (1, invalid))


def weighted(*choices: tuple[int, Any]) -> Any:
    """Pick a strategy with the given weights (`one_of` merges duplicate branches)."""
    table = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(table) - 1).flatmap(lambda i: table[i])


good_ids = st.sampled_from([f"n_{i}" for i in range(1, 13)])  # n_9 on: made by a batch
ids = mostly(good_ids, st.one_of(st.just("nope"), st.none(), st.integers()))
refs = st.sampled_from(["a", "b", "c", "d"])
values = st.one_of(
    st.sampled_from(NAMES), st.lists(st.sampled_from(NAMES), max_size=3), st.integers(), st.none()
)
good_fields = st.fixed_dictionaries(
    {
        "summary": st.sampled_from(["s", "it happened"]),
        "status": st.just("open"),
        "note": st.just("n"),
    },
    optional={"aliases": values, "goal": values, "state": values, "title": values},
)
fields = mostly(
    good_fields,
    st.dictionaries(st.sampled_from(["summary", "status", "aliases", "goal"]), values, max_size=3),
)
link = mostly(
    st.one_of(
        st.fixed_dictionaries(
            {
                "target_node_id": ids,
                "relation": mostly(st.sampled_from(VALID_RELATIONS), st.sampled_from(RELATIONS)),
            },
            optional={"direction": st.sampled_from(DIRECTIONS)},
        ),
        st.fixed_dictionaries(
            {"targetRef": refs, "relation": st.sampled_from(VALID_RELATIONS)},
            optional={"direction": st.sampled_from(DIRECTIONS)},
        ),
    ),
    st.fixed_dictionaries({}, optional={"relation": st.sampled_from(RELATIONS)}),
)
links = st.lists(link, max_size=3)
create = st.fixed_dictionaries(
    {
        "op": st.just("create"),
        "type": mostly(st.sampled_from(VALID_TYPES), st.sampled_from(TYPES)),
        "title": mostly(st.sampled_from(NAMES), st.one_of(st.none(), st.integers())),
        "fields": mostly(fields, st.just("bad")),
    },
    optional={
        "ref": refs,
        "links": links,
        "parent_id": weighted((1, ids), (3, st.none())),
        "parent_ref": weighted((1, refs), (3, st.none())),
    },
)
edit = st.fixed_dictionaries(
    {"op": st.just("edit"), "node_id": ids},
    optional={
        "setFields": mostly(fields, st.just(["bad"])),
        "clear_fields": st.lists(st.sampled_from(["summary", "status", "aliases", "goal"])),
        "title": st.one_of(st.sampled_from(NAMES), st.none()),
        "type": st.sampled_from(TYPES),
    },
)
delete = st.fixed_dictionaries({"op": st.just("delete"), "node_id": ids})
link_upsert = st.one_of(
    st.fixed_dictionaries(
        {
            "op": st.just("link_upsert"),
            "source_node_id": ids,
            "links": st.lists(link, min_size=1, max_size=3),
        }
    ),
    st.fixed_dictionaries(
        {
            "op": st.just("link_upsert"),
            "sourceRef": refs,
            "links": st.lists(link, min_size=1, max_size=3),
        }
    ),
    st.fixed_dictionaries({"op": st.just("link_upsert")}, optional={"links": st.just("x")}),
)
link_delete = st.fixed_dictionaries(
    {
        "op": st.just("link_delete"),
        "source_node_id": ids,
        "targetNodeId": ids,
        "relation": st.sampled_from(RELATIONS),
    },
    optional={"direction": st.sampled_from(DIRECTIONS)},
)
junk = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=5),
    st.fixed_dictionaries({"op": st.text(max_size=6)}),
)
op = weighted((4, create), (2, edit), (1, delete), (3, link_upsert), (1, link_delete), (1, junk))
batches = st.lists(st.lists(op, max_size=10), min_size=1, max_size=5)


SEED_OPS = [
    {"op": "create", "type": "event", "title": "e1", "fields": {"summary": "s"}},
    {"op": "create", "type": "event", "title": "e2", "fields": {"summary": "s"}},
    {"op": "create", "type": "character_sheet", "title": "Eileen", "fields": {"aliases": "艾琳"}},
    {"op": "create", "type": "character_sheet", "title": "Bob"},
    {"op": "create", "type": "location_state", "title": "Qel"},
    {"op": "create", "type": "thread", "title": "Quest", "fields": {"status": "o", "note": "n"}},
    {
        "op": "create",
        "type": "event",
        "title": "e3",
        "fields": {"summary": "s"},
        "parent_id": "n_1",
    },
    {"op": "create", "type": "event", "title": "e4", "fields": {"summary": "s"}},
]


def seeded() -> Store:
    store = Store()
    result = apply_batch(store, SEED_OPS, max_seq=1)
    assert not result.rejected
    return store


def link_part(rejection: Any) -> bool:
    """A rejection of the links of an applied create (the node itself was made)."""
    return isinstance(rejection.op, dict) and "from_op" in rejection.op


def check_invariants(store: Store) -> None:
    nodes = {n.id: n for n in store.iter_nodes()}
    assert len(nodes) == len(list(store.iter_nodes()))  # ids unique
    keys = set()
    for edge in store.iter_edges():
        assert edge.source != edge.target, "self edge"
        assert edge.source in nodes and edge.target in nodes, "dangling edge"
        assert edge.key not in keys
        keys.add(edge.key)
        assert edge.type == edge.type.lower()
        if edge.type in INTERNAL_EDGE_TYPES:  # hierarchy edges only from the current parent
            assert nodes[edge.target].parent_id == edge.source, f"stale {edge.type} edge"
    for node in nodes.values():
        if node.parent_id:
            parent = nodes.get(node.parent_id)
            assert parent is not None, "dangling parent"
            assert node.id in parent.children_ids, "parent does not list its child"
            assert store.edge((parent.id, "contains", node.id)) is not None
        for child_id in node.children_ids:
            assert nodes[child_id].parent_id == node.id, "child does not point back"
        assert len(set(node.children_ids)) == len(node.children_ids)
    for node in store.candidate_pool():
        assert not node.archived
    read = get_read_api(store, None)
    for view in read.list_visible_candidates():
        assert not view.archived
    for view in read.list_nodes():
        assert not view.archived
    for row in list_recent_nodes(store, limit=None)["nodes"]:
        assert not nodes[row["id"]].archived
    for row in search_nodes_lexical(store, "e")["nodes"]:
        assert not nodes[row["id"]].archived
    for ranked in read.keyword_search(query="eileen qel summary s e1 bob", k=50):
        assert not ranked.archived
    for match in read.find_by_name(query="e").matches:
        assert not match.archived
    seeds = [n for n in nodes if not nodes[n].archived][:3]
    for view in read.expand_from_seeds(seeds, hops=2, project_to="raw"):
        assert not view.archived or view.id in seeds
    for seed in seeds:
        for view in read.get_descendants(seed):
            assert not view.archived
    for edge in read.list_edges(exclude_internal=True):
        assert edge.type not in INTERNAL_EDGE_TYPES
    # the indices kept current write by write equal a fresh build from the same data
    fresh = Store.from_dict(store.to_dict())
    assert store.candidate_keys() == fresh.candidate_keys()
    assert store.visible_ids() == fresh.visible_ids()
    for t in ("event", "character_sheet", "location_state", "thread"):
        assert store.type_pool(t).keys == fresh.type_pool(t).keys
    assert store.name_index().ids == fresh.name_index().ids
    pool = store.pool_rank()
    walked = {nid: nearest_visible_ancestor_id(store, nid, pool) for nid in nodes}
    assert dict(store.pool_anchors()) == walked == dict(fresh.pool_anchors())
    query = "eileen qel summary bob 艾琳"
    assert store.keywords.search(query, store.pool_rank()) == fresh.keywords.search(
        query, fresh.pool_rank()
    )


@pytest.mark.slow
@given(batches=batches, seqs=st.lists(st.one_of(st.none(), st.integers(0, 20)), min_size=5))
def test_random_batches_keep_the_invariants(batches, seqs):
    store = seeded()
    for batch, seq in zip(batches, seqs, strict=False):
        before = copy.deepcopy(store.to_dict())
        store.take_changeset()
        result = apply_batch(store, batch, max_seq=seq)
        changes = store.take_changeset()
        for edge in changes.edges_added if changes else ():
            if edge.type not in INTERNAL_EDGE_TYPES:  # links see the nodes after every delete
                ends = (store.node(edge.source), store.node(edge.target))
                assert not any(n.archived for n in ends), f"link to an archived node: {edge}"
        assert len(result.applied) + len([r for r in result.rejected if not link_part(r)]) == len(
            batch
        )
        if not result.applied and (seq is None or seq <= before["seqCounter"]):
            assert store.to_dict() == before, "a batch of rejected ops changed the store"
        check_invariants(store)
        for rejection in result.rejected:
            assert rejection.error.code in REJECTION_CODES and rejection.error.message
        # a rejected op applied alone changes nothing
        for rejection in result.rejected[:2]:
            if link_part(rejection):
                continue
            snapshot = copy.deepcopy(store.to_dict())
            again = apply_batch(store, [rejection.op])
            if not again.applied:
                assert store.to_dict() == snapshot


@pytest.mark.slow
@given(batch=st.lists(op, min_size=1, max_size=10), fail_at=st.integers(1, 6))
def test_failure_midway_restores_to_dict_exactly(batch, fail_at):
    store = Store()
    apply_batch(
        store,
        [
            {"op": "create", "type": "event", "title": "a", "fields": {"summary": "s"}},
            {"op": "create", "type": "character_sheet", "title": "Eileen"},
            {"op": "create", "type": "location_state", "title": "Qel"},
        ],
        max_seq=1,
    )
    before = copy.deepcopy(store.to_dict())
    version = store.version
    real = store.put_node
    calls = {"n": 0}

    def flaky(node):
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise RuntimeError("boom")
        return real(node)

    store.put_node = flaky  # type: ignore[method-assign]
    try:
        apply_batch(store, batch, max_seq=5)
    except MemoryGraphError as exc:
        assert exc.code == "OP_FAILED"
        assert store.to_dict() == before
        assert store.version == version
    finally:
        del store.put_node
    check_invariants(store)


write_calls = st.one_of(
    st.tuples(
        st.just("create_node"),
        st.fixed_dictionaries(
            {"type": st.one_of(st.sampled_from(TYPES), st.none(), st.integers())},
            optional={"title": st.one_of(st.sampled_from(NAMES), st.integers()), "fields": fields},
        ),
    ),
    st.tuples(
        st.just("edit_node"),
        st.fixed_dictionaries(
            {"id": st.one_of(ids, st.integers())},
            optional={"set_fields": fields, "title": st.sampled_from(NAMES)},
        ),
    ),
    st.tuples(st.just("delete_node"), st.fixed_dictionaries({"id": st.one_of(ids, st.integers())})),
    st.tuples(
        st.just("upsert_links"),
        st.fixed_dictionaries(
            {
                "source": st.one_of(st.fixed_dictionaries({"id": ids}), st.none(), st.text()),
                "links": st.one_of(
                    st.lists(
                        st.fixed_dictionaries(
                            {
                                "target": st.fixed_dictionaries({"id": ids}),
                                "relation": st.sampled_from(RELATIONS),
                            }
                        ),
                        max_size=3,
                    ),
                    st.none(),
                ),
            }
        ),
    ),
    st.tuples(
        st.just("delete_links"),
        st.fixed_dictionaries(
            {
                "source": st.fixed_dictionaries({"id": ids}),
                "target": st.fixed_dictionaries({"id": ids}),
                "relation": st.sampled_from(RELATIONS),
            }
        ),
    ),
    st.tuples(
        st.just("compact_nodes"),
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(TYPES),
                "child_ids": st.lists(ids, max_size=4),
                "summary": st.sampled_from(["", "s", None]),
            }
        ),
    ),
)


@pytest.mark.slow
@given(calls=st.lists(write_calls, min_size=1, max_size=12))
def test_random_write_api_arguments_raise_only_memory_graph_errors(calls):
    store = seeded()
    commits: list[int] = []
    api = get_write_api(store, None, on_commit=lambda s: commits.append(s.version))

    async def run() -> None:
        for name, kwargs in calls:
            before = copy.deepcopy(store.to_dict())
            version = store.version
            try:
                await getattr(api, name)(**kwargs)
            except MemoryGraphError as exc:
                assert exc.code in ERROR_CODES and exc.message
                assert store.to_dict() == before, f"{name} raised {exc.code} but changed the store"
            else:
                changed = store.version != version
                assert (commits[-1] == store.version) if changed else True
            check_invariants(store)

    asyncio.run(run())
    assert commits == sorted(set(commits))


def test_every_rejection_code_is_an_error_code():
    assert REJECTION_CODES <= ERROR_CODES


@pytest.mark.parametrize("bad", [None, 3, "ops", {"op": "create"}])
def test_bad_ops_container_is_bad_args(bad):
    with pytest.raises(MemoryGraphError) as err:
        apply_batch(Store(), bad)
    assert err.value.code == "BAD_ARGS"


junk = st.one_of(
    st.none(), st.integers(-3, 3), st.text(max_size=4), st.just(["x", 1]), st.just({"a": 1}),
    st.booleans(), st.just(1.5),
)
any_ids = st.one_of(good_ids, junk)
id_sets = st.one_of(st.lists(good_ids, max_size=4), st.frozensets(good_ids, max_size=4), junk)
type_lists = st.one_of(st.none(), st.lists(st.sampled_from(TYPES), max_size=3), junk)
edge_type_lists = st.one_of(st.none(), st.lists(st.sampled_from(RELATIONS), max_size=3), junk)
ranges = st.one_of(
    st.none(), st.tuples(st.one_of(st.none(), st.integers(-1, 9)), st.one_of(st.none(),
                                                                           st.integers(-1, 9))),
    junk,
)
small_ints = st.one_of(st.integers(-2, 5), st.none(), junk)
flags = st.one_of(st.booleans(), junk)

#: method -> (positional argument strategies, keyword argument strategies)
READ_CALLS: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "list_nodes": ([], {"types": type_lists, "levels": type_lists, "active_only": flags,
                        "seq_range": ranges}),
    "get_node": ([any_ids], {}),
    "list_edges": ([], {"source": any_ids, "target": any_ids, "types": edge_type_lists,
                        "exclude_internal": flags}),
    "get_neighbors": ([any_ids], {"edge_types": edge_type_lists,
                                  "direction": st.sampled_from(["in", "out", "both", "up", 3]),
                                  "project_to": st.one_of(st.sampled_from(["raw", "visible"]),
                                                          id_sets)}),
    "get_ancestor": ([any_ids], {"active_only": flags}),
    "get_descendants": ([any_ids], {"active_only": flags, "max_depth": small_ints}),
    "get_nearest_visible_ancestor": ([any_ids], {"visible_node_ids": id_sets}),
    "project_edges": ([], {"visible_node_ids": id_sets, "edge_types": edge_type_lists,
                           "exclude_internal": flags}),
    "list_visible_candidates": ([], {"types": type_lists, "seq_window": ranges,
                                     "exclude_recent_messages": small_ints, "limit": small_ints}),
    "get_node_exposure": ([any_ids], {}),
    "get_edge_summary": ([any_ids], {"visible_node_ids": st.one_of(st.none(), id_sets),
                                     "edge_types": edge_type_lists, "limit": small_ints}),
    "get_node_brief": ([any_ids], {"visible_node_ids": st.one_of(st.none(), id_sets),
                                   "include_edge_summary": flags,
                                   "edge_summary_limit": small_ints}),
    "expand_from_seeds": ([st.one_of(st.lists(good_ids, max_size=3), junk)],
                          {"hops": small_ints, "edge_types": edge_type_lists,
                           "project_to": st.one_of(st.sampled_from(["raw", "visible", "x"]),
                                                   id_sets),
                           "include_children": flags, "exclude_internal": flags}),
    "keyword_search": ([], {"query": st.one_of(st.sampled_from(NAMES), junk),
                            "types": type_lists, "k": small_ints}),
    "find_by_name": ([], {"query": st.one_of(st.sampled_from(NAMES), junk),
                          "types": type_lists}),
    "compaction_candidates": ([], {"type": st.one_of(st.sampled_from(TYPES), junk),
                                   "depth": small_ints}),
}


#: keyword-only arguments without a default (leaving one out is Python's TypeError, not ours)
REQUIRED = {
    "get_nearest_visible_ancestor": {"visible_node_ids"},
    "project_edges": {"visible_node_ids"},
    "keyword_search": {"query"},
    "find_by_name": {"query"},
    "compaction_candidates": {"type"},
}


def read_call(name: str) -> Any:
    positional, keywords = READ_CALLS[name]
    required = REQUIRED.get(name, set())
    return st.tuples(
        st.just(name),
        st.tuples(*positional) if positional else st.just(()),
        st.fixed_dictionaries(
            {k: v for k, v in keywords.items() if k in required},
            optional={k: v for k, v in keywords.items() if k not in required},
        ),
    )


@given(calls=st.lists(st.one_of(*[read_call(n) for n in READ_CALLS]), min_size=1, max_size=10))
def test_random_read_api_arguments_raise_only_bad_args_naming_the_argument(calls):
    store = seeded()
    read = get_read_api(store, None)
    before = copy.deepcopy(store.to_dict())
    version = store.version
    for name, args, kwargs in calls:
        try:
            result = getattr(read, name)(*args, **kwargs)
        except MemoryGraphError as exc:
            assert exc.code == "BAD_ARGS", (name, exc.code, exc.message)
            named = [*kwargs, *(["id"] if name != "expand_from_seeds" else ["seed_ids"])]
            assert any(arg in exc.message for arg in named), (name, exc.message)
        else:
            if isinstance(result, tuple):
                for item in result:
                    assert not isinstance(item, (dict, list, set))
        assert store.version == version
    assert store.to_dict() == before
