"""Read API: the docs' examples for every method, defaults, orders, filters, bad arguments,
and the worked example (schema_overview + candidateRows rebuilt through the API)."""

from __future__ import annotations

from typing import Any

import pytest

from memgraph_plugin import InjectionState, MemoryGraphError, Node, ReadApi, Store, get_read_api
from memgraph_plugin.api.injection import InjectionHub
from tests.engine.read.test_projection import as_dict, ref_summary
from tests.story_graph import build_store, node

POOL = ["n_10", "n_9", "n_8", "n_4", "n_11", "n_2", "n_1", "n_3"]


@pytest.fixture
def hub() -> InjectionHub:
    return InjectionHub("chat")


@pytest.fixture
def api(story: Store, hub: InjectionHub) -> ReadApi:
    return ReadApi(story, None, injection_hub=hub)


def ids(views: Any) -> list[str]:
    return [v.id for v in views]


# -- layer A ------------------------------------------------------------------------------------


def test_list_nodes_defaults_timeline_order_active_only(api: ReadApi) -> None:
    got = ids(api.list_nodes())
    # seq ascending, id tiebreak; archived n_12 and diagnostic n_13 left out
    assert got == ["n_5", "n_1", "n_3", "n_6", "n_11", "n_2", "n_7", "n_14", "n_4", "n_8",
                   "n_9", "n_10"]
    everything = ids(api.list_nodes(active_only=False))
    assert "n_12" in everything and "n_13" in everything and len(everything) == 14


def test_list_nodes_docs_example_and_filters(api: ReadApi) -> None:
    # the docs: listNodes({ types: ['event'], seqRange: { from: 100 } })
    assert ids(api.list_nodes(types=["event"], seq_range=(5, None))) == ["n_8", "n_9", "n_10"]
    assert ids(api.list_nodes(types=["EVENT"], seq_range=(None, 1))) == ["n_5"]
    assert ids(api.list_nodes(seq_range=(2, 2))) == ["n_1", "n_3", "n_6"]
    assert ids(api.list_nodes(levels=["episodic"])) == ["n_14"]
    assert ids(api.list_nodes(types=["thread", "location_state"])) == ["n_3", "n_4"]


def test_list_nodes_missing_seq_sorts_last() -> None:
    api = get_read_api(build_store([node("b", "event"), node("a", "event", seq=9)]), None)
    assert ids(api.list_nodes()) == ["a", "b"]
    assert ids(api.list_nodes(seq_range=(0, None))) == ["a"]


def test_get_node(api: ReadApi) -> None:
    n = api.get_node("n_1")
    assert n is not None and (n.type, n.title) == ("character_sheet", "Eileen")
    archived = api.get_node("n_12")
    assert archived is not None and archived.archived
    assert api.get_node("missing") is None
    assert api.get_node("") is None and api.get_node("   ") is None


def test_list_edges(api: ReadApi, story: Store) -> None:
    all_edges = api.list_edges()
    assert len(all_edges) == story.edge_count
    assert all(e.weight is None for e in all_edges)
    # the docs: listEdges({ types: ['mentions'], excludeInternal: true })
    mentions = api.list_edges(types=["mentions"], exclude_internal=True)
    assert [(e.source, e.target) for e in mentions] == [("n_1", "n_12"), ("n_9", "n_1")]
    semantic = api.list_edges(exclude_internal=True)
    assert not any(e.type in ("contains", "semantic_contains") for e in semantic)
    assert len(semantic) == len(all_edges) - 6
    assert [(e.type, e.target) for e in api.list_edges(source="n_8")] == [
        ("involved_in", "n_2"), ("advances", "n_4")]
    assert [e.source for e in api.list_edges(target="n_2")] == ["n_5", "n_7", "n_8", "n_1"]
    assert [e.type for e in api.list_edges(source="n_11", target="n_5")] == [
        "contains", "semantic_contains"]


def test_get_schema_docs_example(api: ReadApi) -> None:
    schema = api.get_schema()
    assert [s.type for s in schema.types] == [
        "event", "character_sheet", "location_state", "thread"]
    tables = {s.type: (s.table_name, list(s.table_columns)) for s in schema.types}
    assert tables["thread"] == ("thread_table", ["title", "status", "note"])
    assert isinstance(schema.types[0].table_columns, tuple)


def test_schema_argument_replaces_the_schema(story: Store) -> None:
    api = get_read_api(story, None, schema=[{"id": "Faction", "tableColumns": ["title"]}])
    assert [s.type for s in api.get_schema().types] == ["faction"]


# -- layer B ------------------------------------------------------------------------------------


def test_get_neighbors_raw_default(api: ReadApi) -> None:
    ring = api.get_neighbors("n_1")
    got = [(n.node.id, n.edge_type, n.direction) for n in ring]
    # n_12 (archived) is filtered; store order
    assert got == [("n_5", "involved_in", "in"), ("n_2", "allied_with", "out"),
                   ("n_9", "mentions", "in"), ("n_4", "related", "in")]
    assert [n.node.id for n in api.get_neighbors("n_1", direction="out")] == ["n_2"]


def test_get_neighbors_docs_example_projected(api: ReadApi) -> None:
    ring = api.get_neighbors("n_1", edge_types=["mentions", "related"], direction="both",
                             project_to="visible")
    assert [(n.node.id, n.edge_type, n.direction) for n in ring] == [
        ("n_9", "mentions", "in"), ("n_4", "related", "in")]
    lifted = api.get_neighbors("n_2", project_to="visible")
    # n_5 and n_7 (under the rollup) both become n_11: deduplicated
    assert [(n.node.id, n.edge_type) for n in lifted] == [
        ("n_11", "involved_in"), ("n_8", "involved_in"), ("n_1", "allied_with")]
    only = api.get_neighbors("n_2", project_to=["n_8"])
    assert [n.node.id for n in only] == ["n_8"]


def test_get_ancestor(api: ReadApi, story: Store) -> None:
    parent = api.get_ancestor("n_5")
    assert parent is not None and parent.id == "n_11"
    assert api.get_ancestor("n_11") is None  # never the node itself
    # the docs: getAncestor('event_99', { predicate: n => n.level === 'semantic' && ... })
    hit = api.get_ancestor("n_5", predicate=lambda n: n.level == "semantic" and n.type == "event")
    assert hit is not None and hit.id == "n_11"
    assert api.get_ancestor("n_5", predicate=lambda n: n.type == "thread") is None
    archived = build_store([node("top", "event", archived=True),
                            node("leaf", "event", parentId="top")])
    a = get_read_api(archived, None)
    assert a.get_ancestor("leaf") is None
    got = a.get_ancestor("leaf", active_only=False)
    assert got is not None and got.id == "top"
    loop = get_read_api(build_store([node("x", "event", parentId="y"),
                                     node("y", "event", parentId="x")]), None)
    assert loop.get_ancestor("x", predicate=lambda n: False) is None


def test_get_descendants_bfs() -> None:
    store = build_store([
        node("r", "event", childrenIds=["a", "b"]),
        node("a", "event", parentId="r", childrenIds=["a1"]),
        node("b", "event", parentId="r", childrenIds=["b1"], archived=True),
        node("a1", "event", parentId="a", childrenIds=["a2"]),
        node("b1", "event", parentId="b"),
        node("a2", "event", parentId="a1", childrenIds=["r"]),  # a cycle back to the root
    ])
    api = get_read_api(store, None)
    assert ids(api.get_descendants("r")) == ["a", "a1", "a2"]
    assert ids(api.get_descendants("r", active_only=False)) == ["a", "b", "a1", "b1", "a2"]
    # the docs: getDescendants('character_sheet_alice', { maxDepth: 2 })
    assert ids(api.get_descendants("r", max_depth=2)) == ["a", "a1"]
    assert ids(api.get_descendants("r", max_depth=0)) == []
    assert api.get_descendants("nope") == ()


def test_get_nearest_visible_ancestor_docs_example(api: ReadApi) -> None:
    visible = {v.id for v in api.list_visible_candidates()}
    rollup = api.get_nearest_visible_ancestor("n_5", visible_node_ids=visible)
    assert rollup is not None and rollup.id == "n_11"
    itself = api.get_nearest_visible_ancestor("n_1", visible_node_ids=visible)
    assert itself is not None and itself.id == "n_1"
    assert api.get_nearest_visible_ancestor("n_5", visible_node_ids=["n_1"]) is None


def test_project_edges_docs_example(api: ReadApi) -> None:
    visible = {v.id for v in api.list_visible_candidates()}
    projected = api.project_edges(visible_node_ids=visible, edge_types=["mentions", "related"])
    assert [(e.source, e.target, e.type, e.weight) for e in projected] == [
        ("n_9", "n_1", "mentions", 1), ("n_4", "n_1", "related", 1)]
    everything = api.project_edges(visible_node_ids=visible)
    involved = [(e.source, e.target, e.weight) for e in everything if e.type == "involved_in"]
    assert involved == [("n_11", "n_1", 1), ("n_11", "n_2", 2), ("n_8", "n_2", 1)]
    assert all(e.weight is not None and e.weight >= 1 for e in everything)


# -- layer C ------------------------------------------------------------------------------------


def test_list_visible_candidates_default_pool(api: ReadApi) -> None:
    assert ids(api.list_visible_candidates()) == POOL


def test_list_visible_candidates_filters(api: ReadApi, story: Store) -> None:
    assert story.seq_counter == 7
    # N = 2: drop seq_to >= 7 - 2 + 1 = 6
    assert ids(api.list_visible_candidates(exclude_recent_messages=2)) == POOL[2:]
    assert ids(api.list_visible_candidates(types=["character_sheet"], limit=20)) == ["n_2", "n_1"]
    assert ids(api.list_visible_candidates(types=["Event", "THREAD"])) == [
        "n_10", "n_9", "n_8", "n_4", "n_11"]
    assert ids(api.list_visible_candidates(seq_window=(3, 5))) == ["n_8", "n_4", "n_11", "n_2"]
    assert ids(api.list_visible_candidates(seq_window=(None, 2))) == ["n_1", "n_3"]
    assert ids(api.list_visible_candidates(seq_window={"from": 6})) == ["n_10", "n_9"]
    assert ids(api.list_visible_candidates(limit=3)) == POOL[:3]
    assert ids(api.list_visible_candidates(limit=0)) == []
    combo = api.list_visible_candidates(types=["event"], seq_window=(1, 6),
                                        exclude_recent_messages=2)
    assert ids(combo) == ["n_8", "n_11"]


def test_candidates_depth_breaks_seq_ties_and_missing_seq_is_last() -> None:
    store = build_store([
        node("a", "event", seq=4), node("r", "event", seq=4, semanticDepth=1),
        node("none", "thread"), node("b", "event", seq=4),
    ], seq_counter=4)
    api = get_read_api(store, None)
    assert ids(api.list_visible_candidates()) == ["r", "a", "b", "none"]
    assert ids(api.list_visible_candidates(exclude_recent_messages=1)) == ["none"]
    assert ids(api.list_visible_candidates(seq_window=(0, None))) == ["r", "a", "b"]
    assert ids(api.list_visible_candidates(exclude_recent_messages=50)) == ["none"]


def test_episodic_and_diagnostic_nodes_never_in_the_pool(api: ReadApi) -> None:
    got = ids(api.list_visible_candidates())
    assert "n_14" not in got and "n_13" not in got
    assert api.get_node_exposure("n_14") == "full"


def test_get_node_exposure(api: ReadApi) -> None:
    assert api.get_node_exposure("n_11") == "high_only"  # semantic, hierarchical type
    assert api.get_node_exposure("n_8") == "high_only"
    assert api.get_node_exposure("n_1") == "full"
    assert api.get_node_exposure("n_13") == "full"  # type not in the schema
    assert api.get_node_exposure("n_12") is None  # archived
    assert api.get_node_exposure("nope") is None


def test_get_edge_summary_defaults_and_docs_example(api: ReadApi, story: Store,
                                                     hub: InjectionHub) -> None:
    # no visible set anywhere yet: the candidate pool is used
    s = api.get_edge_summary("n_1", limit=6)
    assert as_dict(s) == ref_summary(story, "n_1", set(POOL), limit=6)
    assert s.degree == 4 and len(s.sample_neighbors) == 4
    assert api.get_edge_summary("nope").degree == 0
    assert api.get_edge_summary("n_1", limit=1).sample_neighbors[0].id == "n_9"
    only = api.get_edge_summary("n_1", edge_types=["allied_with"])
    assert [(r.relation, r.direction, r.count) for r in only.relations] == [
        ("allied_with", "out", 1)]
    # once the injection state has a visible set, it is the default
    hub.set(visible_ids={"n_1", "n_2"})
    s2 = api.get_edge_summary("n_1")
    assert [n.id for n in s2.sample_neighbors] == ["n_2"] and s2.degree == 1


def test_get_node_brief_docs_example(api: ReadApi, hub: InjectionHub) -> None:
    visible = {v.id for v in api.list_visible_candidates()}
    hub.set(always_inject_ids={"n_4"})
    brief = api.get_node_brief("n_1", visible_node_ids=visible, edge_summary_limit=8)
    assert brief is not None
    assert (brief.id, brief.level, brief.type, brief.table_name, brief.title) == (
        "n_1", "semantic", "character_sheet", "character_table", "Eileen")
    assert dict(brief.key_values) == {"title": "Eileen", "aliases": ("艾琳", "the healer")}
    assert dict(brief.row_values) == {"traits": "kind, stubborn", "goal": "find the lost seal"}
    assert brief.summary == "traits: kind, stubborn; goal: find the lost seal"
    assert (brief.to_seq, brief.child_count, brief.exposure, brief.always_inject) == (
        2, 0, "full", False)
    assert brief.edge_summary is not None and brief.edge_summary.degree == 4
    thread = api.get_node_brief("n_4")
    assert thread is not None and thread.always_inject is True
    assert api.get_node_brief("n_1", include_edge_summary=False).edge_summary is None  # type: ignore[union-attr]
    assert api.get_node_brief("n_12") is None and api.get_node_brief("nope") is None


def test_brief_of_a_rollup_counts_active_children(api: ReadApi, story: Store) -> None:
    leaf = story.node("n_7")
    assert leaf is not None
    story.put_node(Node(**{**{a: getattr(leaf, a) for a in (
        "id", "type", "level", "title", "fields", "parent_id", "children_ids", "seq_to")},
        "archived": True}))
    brief = api.get_node_brief("n_11")
    assert brief is not None
    assert brief.child_count == 2  # n_7 archived
    assert brief.summary == "Eileen and Bram meet; a fight at the inn"
    assert dict(brief.key_values) == {} and list(brief.row_values) == ["summary"]
    assert brief.exposure == "high_only"


def test_expand_from_seeds_docs_example(api: ReadApi) -> None:
    # the docs: expandFromSeeds(['character_sheet_alice'], { hops: 2, includeChildren: true })
    one = ids(api.expand_from_seeds(["n_1"]))
    assert one[0] == "n_1"
    assert set(one) == {"n_1", "n_11", "n_9", "n_4"}  # allied_with is no drill edge type
    two = ids(api.expand_from_seeds(["n_1"], hops=2, include_children=True))
    assert set(two) >= set(one) | {"n_5", "n_6", "n_7", "n_2", "n_3", "n_8"}
    assert ids(api.expand_from_seeds(["n_1"], hops=0)) == ["n_1"]
    no_kids = ids(api.expand_from_seeds(["n_11"], include_children=False))
    assert "n_5" not in no_kids and "n_1" in no_kids


def test_expand_project_to_raw_and_internal_edges(api: ReadApi) -> None:
    raw = ids(api.expand_from_seeds(["n_5"], project_to="raw", include_children=False))
    assert raw == ["n_5", "n_11", "n_1", "n_2"]  # contains edge participates by default
    no_internal = ids(api.expand_from_seeds(["n_5"], project_to="raw", include_children=False,
                                            exclude_internal=True))
    assert no_internal == ["n_5", "n_1", "n_2"]
    inside = ids(api.expand_from_seeds(["n_5"], project_to=["n_1"], include_children=False))
    assert inside == ["n_5", "n_1"]  # seed always admitted; only n_1 is inside the set


def test_exclude_internal_drops_the_hierarchy_children_too(api: ReadApi) -> None:
    # the original's own test: a rollup seed drilled with exclude_internal keeps only the seed
    # and its non-internal neighbours; its hierarchy children come only without it
    kids = {"n_5", "n_6", "n_7"} & set(ids(api.expand_from_seeds(["n_11"], project_to="raw")))
    assert kids
    flat = ids(api.expand_from_seeds(["n_11"], project_to="raw", include_children=True,
                                     exclude_internal=True))
    assert flat == ["n_11"]  # its own edges are all internal
    lifted = ids(api.expand_from_seeds(["n_11"], exclude_internal=True))
    assert lifted[0] == "n_11" and not kids & set(lifted)
    assert {"n_1", "n_2"} <= set(lifted)  # its children's people, projected onto the rollup


def test_keyword_search_docs_example(api: ReadApi) -> None:
    hits = api.keyword_search(query="Eileen", types=["character_sheet"])
    assert [(h.id, h.score_mode) for h in hits] == [("n_1", "keyword")]
    assert 0.0 < hits[0].score <= 1.0  # BM25 over the query's best possible score
    assert hits[0].title == "Eileen" and hits[0].fields["aliases"] == ("艾琳", "the healer")
    assert api.keyword_search(query="   ") == () and api.keyword_search(query="") == ()


def test_keyword_search_ranks_the_pool(api: ReadApi) -> None:
    hits = api.keyword_search(query="sword fight inn")
    # n_7 (sword fight) sits under the rollup: not in the pool; n_11's summary has "fight", "inn"
    assert [h.id for h in hits] == ["n_11"]
    # "sword" (the rarest word of the three) is missing: well below a full match
    assert 0.0 < hits[0].score < 0.5
    garden = api.keyword_search(query="艾琳 garden")
    # BM25: n_3 says "garden" twice in the shortest text; n_10 twice in a longer one; n_1 has
    # 艾琳 once (in the pool order all three would be n_10, n_1, n_3)
    assert [h.id for h in garden] == ["n_3", "n_10", "n_1"]
    assert garden[0].score > garden[1].score > garden[2].score
    assert [h.id for h in api.keyword_search(query="艾琳 garden", k=1)] == ["n_3"]
    assert [h.id for h in api.keyword_search(query="花园")] == ["n_3"]
    assert api.keyword_search(query="Ghost") == ()  # archived


def test_find_by_name_docs_example(api: ReadApi) -> None:
    assert ids(api.find_by_name(query="艾琳", types=["character_sheet"]).matches) == ["n_1"]
    assert ids(api.find_by_name(query="bramWELL").matches) == ["n_2"]
    assert ids(api.find_by_name(query="e").matches)[:2] == ["n_5", "n_1"]  # timeline order
    assert ids(api.find_by_name(query="garden").matches) == ["n_3", "n_6", "n_10"]
    assert api.find_by_name(query="  ").matches == ()
    assert api.find_by_name(query="ghost").matches == ()  # archived


def _events(n: int, **extra: Any) -> Store:
    return build_store([node(f"e{i}", "event", seq=i, **extra) for i in range(1, n + 1)],
                       seq_counter=n)


def test_compaction_candidates() -> None:
    api = get_read_api(_events(9), None)
    got = api.compaction_candidates(type="event")
    assert [(g.depth, g.child_ids, g.fan_in) for g in got.groups] == [
        (1, ("e1", "e2", "e3"), 3), (1, ("e4", "e5", "e6"), 3)]  # newest 3 held back
    eight = get_read_api(_events(8), None).compaction_candidates(type="EVENT")
    assert [g.child_ids for g in eight.groups] == [("e1", "e2", "e3")]  # partial group dropped
    assert get_read_api(_events(7), None).compaction_candidates(type="event").groups == ()
    assert api.compaction_candidates(type="character_sheet").groups == ()
    assert api.compaction_candidates(type="unknown").groups == ()
    assert api.compaction_candidates(type="event", depth=10).groups == ()
    assert api.compaction_candidates(type="event", depth=1).groups == ()


def test_compaction_candidates_at_depth_one_and_parents() -> None:
    nodes = [node(f"r{i}", "event", seq=i, semanticDepth=1) for i in range(1, 6)]
    nodes.append(node("leaf", "event", seq=1, parentId="r1"))
    api = get_read_api(build_store(nodes), None)
    got = api.compaction_candidates(type="event", depth=1)
    assert [(g.depth, g.child_ids) for g in got.groups] == [(2, ("r1", "r2", "r3"))]
    assert api.compaction_candidates(type="event").groups == ()  # the leaf has a parent


def test_compaction_due_counts_what_compaction_candidates_gives() -> None:
    """The turn's "is compaction due?" check counts from the pool's keys: the same number of
    groups, with no record made on a store opened from columns."""
    from memgraph_plugin.storage.format.graph_columns import state_tables

    for n in (5, 7, 8, 9, 16, 30):
        store = _events(n)
        api = get_read_api(store, None)
        for depth in (0, 1, 10):
            for kind in ("event", "EVENT", "character_sheet", "unknown"):
                want = len(api.compaction_candidates(type=kind, depth=depth).groups)
                assert api.compaction_due(type=kind, depth=depth) == want, (n, kind, depth)
        nodes, edges = state_tables(store.to_dict())
        opened = Store.from_columns(nodes, edges, store.node_seq, store.seq_counter)
        due = get_read_api(opened, None).compaction_due(type="event")
        assert due == len(api.compaction_candidates(type="event").groups)
        assert dict.__len__(opened.internals()[0]) == 0  # counted without a record
    nodes = [node(f"r{i}", "event", seq=i, semanticDepth=1) for i in range(1, 6)]
    nodes.append(node("leaf", "event", seq=1, parentId="r1"))
    api = get_read_api(build_store(nodes), None)
    assert api.compaction_due(type="event", depth=1) == 1
    assert api.compaction_due(type="event") == 0  # the leaf has a parent

def test_compaction_candidates_with_a_limit_are_the_oldest_groups() -> None:
    """A chunk of catch-up asks for the oldest groups only: read from the pool's keys, they
    are the first groups of the full answer (same seq: by id; no seq: last; other depths and
    archived nodes left out)."""
    nodes = [node(f"e{i:02d}", "event", seq=(i // 3) or None) for i in range(1, 40)]
    nodes += [node(f"d{i}", "event", seq=i, semanticDepth=1) for i in range(1, 5)]
    nodes += [node("gone", "event", seq=1, archived=True)]
    api = get_read_api(build_store(nodes, seq_counter=20), None)
    full = api.compaction_candidates(type="event").groups
    assert len(full) >= 4
    for limit in (0, 1, 2, 5, len(full), len(full) + 3):
        got = api.compaction_candidates(type="event", limit=limit).groups
        assert got == full[:limit], limit
    depth1 = api.compaction_candidates(type="event", depth=1)
    assert api.compaction_candidates(type="event", depth=1, limit=9) == depth1
    with pytest.raises(MemoryGraphError):
        api.compaction_candidates(type="event", limit=-1)


def _timeline_groups(store: Store, depth: int) -> list[tuple[str, ...]]:
    """The event groups at `depth` by the definition: every root (active, this depth, no
    parent of its type) sorted by `timeline_key`, the newest `keep_recent_leaves` held back at
    depth 0, then groups of `fan_in` (what the answer was computed as before it was read from
    the pool's keys)."""
    from memgraph_plugin.engine.index.candidate_pool import timeline_key

    comp = store.schema.get("event").compression  # type: ignore[union-attr]
    roots = [
        n
        for n in store.iter_nodes()
        if n.type == "event" and not n.archived and n.semantic_depth == depth
        and not (n.parent_id and (p := store.node(n.parent_id)) is not None and p.type == "event")
    ]
    roots.sort(key=timeline_key)
    if depth == 0 and comp.keep_recent_leaves:
        roots = roots[: max(0, len(roots) - comp.keep_recent_leaves)]
    if len(roots) < comp.threshold:
        return []
    fan = comp.fan_in
    return [tuple(n.id for n in roots[i : i + fan]) for i in range(0, len(roots) - fan + 1, fan)]


def test_compaction_candidates_are_the_timeline_groups_read_from_the_pool_keys() -> None:
    """With no limit too (the turn's inline compaction), the groups of a pooled type are read
    from its pool's keys, with no record made on a store opened from columns: the same groups
    as sorting every root (ties by id, no seq last, parents, archived nodes, other depths)."""
    from memgraph_plugin.storage.format.graph_columns import state_tables

    nodes = [node(f"e{i:02d}", "event", seq=(i // 3) or None) for i in range(1, 40)]
    nodes += [node(f"d{i}", "event", seq=i % 3 or None, semanticDepth=1) for i in range(1, 11)]
    nodes += [node("gone", "event", seq=1, archived=True)]
    nodes += [node("kid", "event", seq=2, parentId="p1"), node("p1", "event", seq=30)]
    store = build_store(nodes, seq_counter=40)
    nodes_t, edges_t = state_tables(store.to_dict())
    opened = Store.from_columns(nodes_t, edges_t, store.node_seq, store.seq_counter)
    for depth in (0, 1):
        want = _timeline_groups(store, depth)
        assert want, depth
        for s in (store, opened):
            got = get_read_api(s, None).compaction_candidates(type="event", depth=depth).groups
            assert [g.child_ids for g in got] == want, depth
    assert dict.__len__(opened.internals()[0]) == 0  # no record made



# -- layer D ------------------------------------------------------------------------------------


def test_injection_state_and_listeners(api: ReadApi, hub: InjectionHub) -> None:
    assert api.get_injection_state() == InjectionState()
    seen: list[InjectionState] = []
    order: list[str] = []

    def boom(state: InjectionState) -> None:
        order.append("boom")
        raise RuntimeError("listener failure")

    unsubscribe = api.on_injection_changed(seen.append)
    api.on_injection_changed(boom)
    api.on_injection_changed(lambda s: order.append("last"))
    hub.set(always_inject_ids={"n_4"}, recall_selected_ids=["n_1"], visible_ids=POOL)
    assert len(seen) == 1 and seen[0] is api.get_injection_state()
    assert seen[0].recall_selected_ids == frozenset({"n_1"})
    assert order == ["boom", "last"]
    unsubscribe()
    unsubscribe()  # idempotent
    hub.set(recall_selected_ids=[])
    assert len(seen) == 1


def test_factory_without_context_has_its_own_state(story: Store) -> None:
    a, b = get_read_api(story, None), get_read_api(story, None)
    assert a.get_injection_state() == InjectionState()
    calls: list[Any] = []
    a.on_injection_changed(calls.append)
    assert b.get_injection_state().visible_ids == frozenset()


def test_none_store_reads_empty() -> None:
    api = get_read_api(None, None)
    assert api.list_nodes() == () and api.list_visible_candidates() == ()
    assert api.keyword_search(query="x") == ()
    assert api.get_edge_summary("x").degree == 0


# -- the worked example -------------------------------------------------------------------------

EXPECTED_SCHEMA_OVERVIEW = [
    {"id": "event", "table_name": "event_table", "table_columns": ["summary"],
     "required_columns": ["summary"], "force_update": True, "always_inject": True,
     "editable": False, "compression_mode": "hierarchical"},
    {"id": "character_sheet", "table_name": "character_table",
     "table_columns": ["title", "aliases", "traits", "identity", "goal", "inventory",
                       "language_sample", "addressing_user"],
     "required_columns": ["title"], "force_update": False, "always_inject": False,
     "editable": True, "compression_mode": "none"},
    {"id": "location_state", "table_name": "location_table",
     "table_columns": ["title", "aliases", "controller", "danger", "resources", "state"],
     "required_columns": ["title"], "force_update": False, "always_inject": False,
     "editable": True, "compression_mode": "none"},
    {"id": "thread", "table_name": "thread_table", "table_columns": ["title", "status", "note"],
     "required_columns": ["title", "status", "note"], "force_update": False,
     "always_inject": True, "editable": True, "compression_mode": "none"},
]


def schema_overview(api: Any) -> list[dict[str, Any]]:
    """The router's schema_overview block, built as the docs' worked example does."""
    return [
        {
            "id": spec.type,
            "table_name": spec.table_name,
            "table_columns": list(spec.table_columns),
            "required_columns": list(spec.required_columns),
            "force_update": spec.force_update,
            "always_inject": spec.always_inject,
            "editable": spec.editable,
            "compression_mode": spec.compression_mode,
        }
        for spec in api.get_schema().types
    ]


def test_worked_example_schema_overview_and_candidate_rows(story: Store,
                                                          hub: InjectionHub) -> None:
    api = ReadApi(story, None, injection_hub=hub)
    always = {"n_4", "n_8", "n_9", "n_10", "n_11"}
    hub.set(always_inject_ids=always)
    assert schema_overview(api) == EXPECTED_SCHEMA_OVERVIEW

    candidates = api.list_visible_candidates()
    rows = [api.get_node_brief(v.id, include_edge_summary=True, edge_summary_limit=8)
            for v in candidates]
    assert [r.id for r in rows] == POOL  # type: ignore[union-attr]
    tables = {s["id"]: s["table_name"] for s in EXPECTED_SCHEMA_OVERVIEW}
    for row in rows:
        assert row is not None
        n = story.node(row.id)
        assert n is not None
        assert (row.type, row.title, row.level, row.to_seq) == (n.type, n.title, n.level, n.seq_to)
        assert row.table_name == tables[n.type]
        assert row.child_count == sum(
            1 for c in n.children_ids if not story.node(c).archived)  # type: ignore[union-attr]
        assert row.exposure == ("high_only" if n.type == "event" else "full")
        assert row.always_inject is (row.id in always)
        assert row.edge_summary is not None
        assert as_dict(row.edge_summary) == ref_summary(story, row.id, set(POOL), limit=8)
        if n.type == "event":
            assert row.summary == n.fields["summary"] and dict(row.key_values) == {}
    # hand-checked rows
    by_id = {r.id: r for r in rows}  # type: ignore[union-attr]
    assert by_id["n_11"].child_count == 3 and by_id["n_11"].edge_summary.degree == 4  # type: ignore[union-attr]
    assert dict(by_id["n_4"].key_values) == {"title": "Find the lost seal"}
    assert dict(by_id["n_4"].row_values) == {"status": "open", "note": "Bram knows more"}
    assert [n.id for n in by_id["n_2"].edge_summary.sample_neighbors] == [  # type: ignore[union-attr]
        "n_8", "n_1", "n_11"]
    # get_node_briefs builds the same block in one call
    assert api.get_node_briefs([v.id for v in candidates]) == tuple(rows)


# -- bad arguments ------------------------------------------------------------------------------

BAD_CALLS = [
    ("list_nodes", (), {"types": "event"}, "types"),
    ("list_nodes", (), {"types": [1]}, "types"),
    ("list_nodes", (), {"levels": "semantic"}, "levels"),
    ("list_nodes", (), {"active_only": 1}, "active_only"),
    ("list_nodes", (), {"seq_range": (1, 2, 3)}, "seq_range"),
    ("list_nodes", (), {"seq_range": ("a", None)}, "seq_range"),
    ("get_node", (5,), {}, "id"),
    ("list_edges", (), {"source": 1}, "source"),
    ("list_edges", (), {"exclude_internal": "yes"}, "exclude_internal"),
    ("get_neighbors", ("n_1",), {"direction": "up"}, "direction"),
    ("get_neighbors", ("n_1",), {"project_to": "everything"}, "project_to"),
    ("get_neighbors", ("n_1",), {"project_to": [1]}, "project_to"),
    ("get_neighbors", (None,), {}, "id"),
    ("get_ancestor", ("n_1",), {"predicate": "x"}, "predicate"),
    ("get_descendants", ("n_1",), {"max_depth": -1}, "max_depth"),
    ("get_descendants", ("n_1",), {"max_depth": 1.5}, "max_depth"),
    ("get_nearest_visible_ancestor", ("n_1",), {"visible_node_ids": None}, "visible_node_ids"),
    ("get_nearest_visible_ancestor", ("n_1",), {"visible_node_ids": "n_1"}, "visible_node_ids"),
    ("project_edges", (), {"visible_node_ids": None}, "visible_node_ids"),
    ("project_edges", (), {"visible_node_ids": [], "edge_types": "x"}, "edge_types"),
    ("list_visible_candidates", (), {"types": "event"}, "types"),
    ("list_visible_candidates", (), {"exclude_recent_messages": -1}, "exclude_recent_messages"),
    ("list_visible_candidates", (), {"limit": "3"}, "limit"),
    ("list_visible_candidates", (), {"seq_window": 5}, "seq_window"),
    ("get_node_exposure", (1,), {}, "id"),
    ("get_edge_summary", ("n_1",), {"limit": -1}, "limit"),
    ("get_edge_summary", ("n_1",), {"visible_node_ids": 3}, "visible_node_ids"),
    ("get_node_brief", ("n_1",), {"edge_summary_limit": True}, "edge_summary_limit"),
    ("get_node_brief", ("n_1",), {"include_edge_summary": None}, "include_edge_summary"),
    ("expand_from_seeds", ("n_1",), {}, "seed_ids"),
    ("expand_from_seeds", (["n_1"],), {"hops": -1}, "hops"),
    ("expand_from_seeds", (["n_1"],), {"project_to": 7}, "project_to"),
    ("keyword_search", (), {"query": None}, "query"),
    ("keyword_search", (), {"query": "x", "k": 0}, "k"),
    ("keyword_search", (), {"query": "x", "k": "5"}, "k"),
    ("find_by_name", (), {"query": 3}, "query"),
    ("compaction_candidates", (), {"type": None}, "type"),
    ("compaction_candidates", (), {"type": "event", "depth": -1}, "depth"),
    ("on_injection_changed", (None,), {}, "callback"),
]


@pytest.mark.parametrize(("method", "args", "kwargs", "named"), BAD_CALLS)
def test_bad_arguments_raise_bad_args_naming_the_argument(
    api: ReadApi, method: str, args: tuple, kwargs: dict, named: str
) -> None:
    with pytest.raises(MemoryGraphError) as info:
        getattr(api, method)(*args, **kwargs)
    assert info.value.code == "BAD_ARGS"
    assert info.value.message.split(":")[0] == named


def test_bad_store_argument() -> None:
    with pytest.raises(MemoryGraphError) as info:
        get_read_api({"nodes": {}}, None)  # type: ignore[arg-type]
    assert info.value.code == "BAD_ARGS" and "store" in info.value.message


def test_per_turn_paths_never_scan_the_whole_graph(
    story: Store, hub: InjectionHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-turn reads work from indices: a full node or edge scan would raise here."""
    api = ReadApi(story, None, injection_hub=hub)

    def no_scan(self: Store) -> None:
        raise AssertionError("a per-turn path scanned the whole store")

    monkeypatch.setattr(Store, "iter_edges", no_scan)
    monkeypatch.setattr(Store, "iter_nodes", no_scan)
    pool = api.list_visible_candidates(exclude_recent_messages=1, types=["event", "thread"])
    assert ids(pool) == ["n_9", "n_8", "n_4", "n_11"]
    for view in api.list_visible_candidates():
        brief = api.get_node_brief(view.id)
        assert brief is not None and brief.edge_summary is not None
        api.get_edge_summary(view.id, limit=3)
    assert api.keyword_search(query="Eileen")
    assert api.expand_from_seeds(["n_11"], hops=2)
    assert api.get_neighbors("n_2", project_to="visible")
