"""Question-aware recall: the budget at two graph sizes, entities over edges, rollup drill-down,
time cues and the reasons in the trace. Real hosts, real LanceDB, real pluggy hook calls."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from host import Host, hookimpl
from memgraph_plugin.recall.query import time_cue
from memgraph_plugin.service import memory_graph_for
from memgraph_plugin.settings_keys import RECALL
from memgraph_plugin.turn import pipeline_for

CHAT = "r1"
WORDS = ["harbor", "lantern", "ledger", "storm", "tower", "market", "bridge", "garden", "wolf",
         "crown", "river", "mine"]  # fmt: skip


def _event(i: int, text: str, **fields: Any) -> dict[str, Any]:
    return {"id": f"n_{i}", "type": "event", "title": f"Event {i}", "seqTo": i,
            "fields": {"summary": text, **fields}}  # fmt: skip


def _graph(nodes: list[dict[str, Any]], edges: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A chat in the contract's JSON shape (what `import_graph` takes)."""
    return {
        "nodes": {n["id"]: n for n in nodes},
        "edges": [{"from": a, "to": b, "type": t} for a, t, b in edges],
        "nodeSeq": max(int(n["id"][2:]) for n in nodes),
        "seqCounter": max(n.get("seqTo") or 0 for n in nodes),
    }


async def _host(tmp_path, graph: dict[str, Any], **settings: Any) -> tuple[Host, Any]:
    host = Host(data_dir=tmp_path / "data", settings=settings, entry_points=False)
    await host.start()
    chat = host.chat(CHAT)  # the chat's messages up to the graph's sequence counter first:
    for n in range(graph["seqCounter"]):  # an import is anchored to the newest message seq
        chat.add_message("user", f"message {n}")
        chat.add_message("assistant", f"answer {n}")
    await memory_graph_for(host).import_graph(CHAT, graph)
    return host, pipeline_for(host)


async def _ask(host: Host, pipeline: Any, question: str) -> Any:
    await pipeline.add_user_message(CHAT, question)
    return await pipeline.recall(CHAT)


def _many_events(n: int) -> dict[str, Any]:
    """`n` events, each naming three story words; no rollups (compaction is the pipeline's)."""
    nodes = [
        _event(i, f"{WORDS[i % 12]} {WORDS[(i * 5) % 12]} {WORDS[(i * 7) % 12]} " + "x" * 300)
        for i in range(1, n + 1)
    ]
    return _graph(nodes, [])


@pytest.mark.slow
@pytest.mark.parametrize("size", [60, 600])
async def test_the_injection_never_exceeds_its_budget(tmp_path, size):
    budget = 2500
    host, pipeline = await _host(
        tmp_path, _many_events(size), recall_budget_chars=budget, recall_recent_window=0
    )
    try:
        for question in ("the harbor and the lantern", "storm tower market bridge", "wolf"):
            outcome = await _ask(host, pipeline, question)
            assert 0 < len(outcome.prompt) <= budget
            assert outcome.trace.injected_chars == len(outcome.prompt)
            assert outcome.trace.budget_chars == budget
            assert outcome.recalled and len(outcome.pinned) <= 3  # pinned: newest 3 events
            assert outcome.trace.cut  # more matched than fits: the rest is named as cut
            for node in outcome.injected:
                assert f"| {node.id} |" in outcome.prompt
    finally:
        await host.stop()


@pytest.mark.slow
async def test_injected_size_does_not_grow_with_the_graph(tmp_path):
    sizes = []
    for size in (60, 600):
        host, pipeline = await _host(tmp_path / str(size), _many_events(size))
        try:
            outcome = await _ask(host, pipeline, "harbor lantern ledger storm tower market")
            sizes.append(len(outcome.prompt))
        finally:
            await host.stop()
    small, large = sizes
    assert large <= 6000 and abs(large - small) <= 0.25 * small  # bounded, not 10x


async def test_a_named_character_reaches_its_events_over_edges(tmp_path):
    """The events never say 'Quill'; they are joined to her by involved_in / mentions."""
    nodes = [
        {
            "id": "n_1",
            "type": "character_sheet",
            "title": "Quill",
            "seqTo": 1,
            "fields": {"title": "Quill", "identity": "archivist"},
        },  # fmt: skip
        _event(2, "She burns the forged ledger in the tower stove."),
        _event(3, "A storm closes the harbor for a week."),
        _event(4, "She hides a key under the garden bridge."),
        *[_event(i, f"The market sells {WORDS[i % 12]} charms.") for i in range(5, 25)],
    ]
    edges = [("n_1", "involved_in", "n_2"), ("n_4", "mentions", "n_1")]
    host, pipeline = await _host(tmp_path, _graph(nodes, edges), recall_recent_window=0,
                                 recall_pinned_per_type=0)  # fmt: skip
    try:
        outcome = await _ask(host, pipeline, "What has Quill been doing?")
    finally:
        await host.stop()
    why = outcome.why
    recalled = [n.id for n in outcome.recalled]
    assert {"n_2", "n_4"} <= set(recalled)
    assert (why["n_2"].via, why["n_2"].edge_type) == ("n_1", "involved_in")
    assert (why["n_4"].via, why["n_4"].edge_type) == ("n_1", "mentions")
    assert "n_3" not in recalled  # not joined to Quill, shares no word with the question


async def test_a_rollup_hit_drills_down_to_its_best_leaf(tmp_path):
    """The rollup's summary matches; the injected item is the leaf under it that holds the
    question's words, not the rollup nor its other leaves."""
    leaves = [
        _event(1, "Mara counts crates at dawn."),
        _event(2, "Mara trades the silver compass for a map of the reef."),
        _event(3, "Mara sleeps below deck."),
    ]
    for leaf in leaves:
        leaf["parentId"] = "n_4"
    summary = "Mara's days aboard: crates, a silver compass, sleep"
    rollup = {"id": "n_4", "type": "event", "title": "event Summary L1 #4", "seqTo": 3,
              "semanticRollup": True, "semanticDepth": 1, "childrenIds": ["n_1", "n_2", "n_3"],
              "fields": {"summary": summary}}  # fmt: skip
    others = [_event(i, f"Juno patrols the {WORDS[i % 12]}.") for i in range(5, 12)]
    edges = [("n_4", "contains", c) for c in ("n_1", "n_2", "n_3")]
    edges += [("n_4", "semantic_contains", c) for c in ("n_1", "n_2", "n_3")]
    host, pipeline = await _host(tmp_path, _graph([*leaves, rollup, *others], edges),
                                 recall_recent_window=0, recall_pinned_per_type=0)  # fmt: skip
    try:
        outcome = await _ask(host, pipeline, "What happened to the silver compass?")
    finally:
        await host.stop()
    first = outcome.recalled[0]
    assert first.id == "n_2"
    inc = outcome.why["n_2"]
    assert (inc.why, inc.via) == ("drill_down", "n_4")
    assert "n_4" not in {n.id for n in outcome.recalled}


async def test_a_time_cue_prefers_events_of_that_time(tmp_path):
    base = dt.datetime(2023, 5, 1)
    weekly = [(base + dt.timedelta(days=7 * i)).isoformat() for i in range(1, 6)]
    nodes = [
        _event(i, "Caroline went to the support meeting.", time=weekly[i - 1]) for i in range(1, 6)
    ]
    host, pipeline = await _host(tmp_path, _graph(nodes, []), recall_recent_window=0,
                                 recall_pinned_per_type=0)  # fmt: skip
    try:
        dated = await _ask(host, pipeline, "What support meeting was on 15 May 2023?")
        relative = await _ask(host, pipeline, "Which support meeting was last week?")
    finally:
        await host.stop()
    assert dated.recalled[0].id == "n_2"  # 1 May + 14 days
    assert "in time range" in dated.why["n_2"].detail
    # the newest event is 5 June; "last week" counts back from it (the last two weeks)
    order = [n.id for n in relative.recalled]
    assert order[0] in {"n_3", "n_4", "n_5"} and order.index("n_1") > order.index(order[0])
    assert "in time range" in relative.why[order[0]].detail


def test_time_cues_are_parsed():
    now = dt.datetime(2023, 6, 5, 12)
    assert time_cue("on 8 May, 2023", None).start == dt.datetime(2023, 5, 8)
    assert time_cue("in May 2023", None).end.day == 31
    assert time_cue("what about 2023-05-08", None).start.day == 8
    assert time_cue("in 2022", None).start.year == 2022
    week = time_cue("last week", now)
    assert week is not None and week.start < now - dt.timedelta(days=7) < week.end
    assert time_cue("two days ago", now).contains(now - dt.timedelta(days=2))
    assert time_cue("last week", None) is None and time_cue("the harbor", now) is None


async def test_the_trace_says_why_each_item_was_chosen(tmp_path):
    host, pipeline = await _host(tmp_path, _many_events(40), recall_recent_window=0)
    try:
        outcome = await _ask(host, pipeline, "harbor lantern")
        trace = pipeline.traces.read(CHAT)[-1]
    finally:
        await host.stop()
    assert [i.id for i in trace.selected] == [n.id for n in outcome.recalled]
    for inc in trace.selected:
        assert inc.why in {"seed", "baseline", "drill_down", "graph_expansion"}
        assert "keyword #" in inc.detail or inc.why == "graph_expansion"
    assert trace.injected_chars == len(outcome.prompt) <= trace.budget_chars


class Reranker:
    """A router plugin that reverses the built-in ranking it is offered (RouteRequest.ranked)."""

    def __init__(self) -> None:
        self.offered: list[str] = []
        self.pool_read = False

    @hookimpl
    def memgraph_route(self, request):
        self.offered = [i.id for i in request.ranked]
        return {"selected": list(reversed(self.offered))}


async def test_a_router_plugin_reranks_the_bounded_fused_list(tmp_path):
    host, pipeline = await _host(tmp_path, _many_events(200), recall_recent_window=0)
    reranker = Reranker()
    host.register_plugin(reranker, name="reranker")
    try:
        outcome = await _ask(host, pipeline, "harbor lantern")
    finally:
        await host.stop()
    # recall_candidates + expansions, never the pool
    assert 0 < len(reranker.offered) <= RECALL.recall_candidates.default + 8 < 200
    assert outcome.route.router == "reranker"
    assert [n.id for n in outcome.recalled] == [
        i for i in reversed(reranker.offered) if i in {n.id for n in outcome.recalled}
    ]


def test_word_variants_are_the_forms_the_chat_uses():
    from memgraph_plugin.recall.query import expand_terms, word_variants

    known = {"painted", "painting", "paints", "researching", "research"}.__contains__
    assert word_variants("paint", known) == ["painted", "painting", "paints"]
    assert word_variants("researched", known) == ["research", "researching"]
    assert word_variants("艾琳", known) == [] and word_variants("cat", known) == []
    assert expand_terms(["paint", "lake"], known) == [
        "paint",
        "lake",
        "painted",
        "painting",
        "paints",
    ]
