"""How much a recall reads: each node's keyword score is computed once per recall, each rollup
drilled at most once, and the fused ranking is read only as far as the selection needs, with the
same selection as reading it whole. Real hosts, real LanceDB, real pluggy hook calls."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from host import Host
from memgraph_plugin.engine.keyword.keyword_index import KeywordIndex
from memgraph_plugin.recall import hybrid_router as router_module
from memgraph_plugin.recall.hybrid_router import _Turn
from memgraph_plugin.service import memory_graph_for
from memgraph_plugin.turn import pipeline_for

CHAT = "w1"
WORDS = ["harbor", "market", "lantern", "ledger", "storm", "tower", "bridge", "garden"]
QUESTION = "What did Quill do at the harbor market with the lantern?"


def _chat() -> dict[str, Any]:
    """Quill (a character) tied to leaves and rollups of 12 three-leaf groups, and loose
    events: every group's summary and most leaves share words with the question."""
    nodes: dict[str, dict[str, Any]] = {
        "n_1": {"id": "n_1", "type": "character_sheet", "title": "Quill", "seqTo": 1,
                "fields": {"title": "Quill", "identity": "archivist"}},
    }  # fmt: skip
    edges: list[dict[str, str]] = []
    n = 1
    for group in range(12):
        kids = []
        for j in range(3):
            n += 1
            words = f"{WORDS[(group + j) % 8]} {WORDS[(group * 3 + j) % 8]}"
            nodes[f"n_{n}"] = {"id": f"n_{n}", "type": "event", "title": "", "seqTo": n,
                               "fields": {"summary": f"Quill at the {words} again"}}  # fmt: skip
            kids.append(f"n_{n}")
        n += 1
        rid = f"n_{n}"
        summary = f"{WORDS[group % 8]} {WORDS[(group + 1) % 8]} {WORDS[(group + 2) % 8]} days"
        nodes[rid] = {"id": rid, "type": "event", "title": f"event Summary L1 #{group}",
                      "seqTo": n, "semanticRollup": True, "semanticDepth": 1,
                      "childrenIds": kids, "fields": {"summary": summary}}  # fmt: skip
        for kid in kids:
            nodes[kid]["parentId"] = rid
            edges += [
                {"from": rid, "to": kid, "type": t} for t in ("contains", "semantic_contains")
            ]
        edges.append({"from": "n_1", "to": rid, "type": "involved_in"})
        edges.append({"from": "n_1", "to": kids[group % 3], "type": "involved_in"})
    for i in range(20):
        n += 1
        nodes[f"n_{n}"] = {"id": f"n_{n}", "type": "event", "title": "", "seqTo": n,
                           "fields": {"summary": f"the {WORDS[i % 8]} at night"}}  # fmt: skip
    return {"nodes": nodes, "edges": edges, "nodeSeq": n, "seqCounter": n}


async def _recall(tmp_path, spies: Any = (), **settings: Any) -> Any:
    """The recall of `QUESTION` after a warm-up recall; `spies` are emptied in between."""
    graph = _chat()
    # 40 candidates a signal: the chat is sized so that some nodes only the graph walk finds
    settings = {
        "recall_recent_window": 0, "recall_pinned_per_type": 0, "recall_candidates": 40,
        **settings,
    }  # fmt: skip
    host = Host(data_dir=tmp_path / "data", entry_points=False, settings=settings)
    await host.start()
    try:
        chat = host.chat(CHAT)
        for i in range(graph["seqCounter"]):
            chat.add_message("user", f"message {i}")
            chat.add_message("assistant", f"answer {i}")
        await memory_graph_for(host).import_graph(CHAT, graph)
        pipeline = pipeline_for(host)
        await pipeline.add_user_message(CHAT, "warm up")
        await pipeline.recall(CHAT)  # the first recall embeds the chat
        for spy in spies:
            spy.clear()
        await pipeline.add_user_message(CHAT, QUESTION)
        return await pipeline.recall(CHAT)
    finally:
        await host.stop()


async def test_each_node_is_scored_once_per_recall(tmp_path, monkeypatch):
    """The neighbour context and every level of every drill share one score per node."""
    scored: list[tuple[str, str]] = []
    original = KeywordIndex.score_of

    def spy(self: KeywordIndex, query: str, node_ids: Any) -> dict[str, float]:
        ids = list(node_ids)
        scored.extend((query, i) for i in ids)
        return original(self, query, ids)

    monkeypatch.setattr(KeywordIndex, "score_of", spy)
    outcome = await _recall(tmp_path, [scored])
    assert any(i.why == "drill_down" for i in outcome.route.selected)
    counts = Counter(scored)
    assert len(counts) > 20  # the neighbour context and the drills scored many nodes
    twice = {key: c for key, c in counts.items() if c > 1}
    assert not twice, f"scored more than once in one recall: {sorted(twice)[:5]}"


async def test_each_rollup_is_drilled_at_most_once_per_recall(tmp_path, monkeypatch):
    drilled: list[str] = []
    original = router_module.drill_down

    def spy(session: Any, rollup_id: str, *args: Any, **kwargs: Any) -> list[str]:
        drilled.append(rollup_id)
        return original(session, rollup_id, *args, **kwargs)

    monkeypatch.setattr(router_module, "drill_down", spy)
    outcome = await _recall(tmp_path, [drilled])
    assert drilled and outcome.route.error is None
    assert max(Counter(drilled).values()) == 1


@pytest.mark.parametrize("top_k, max_expanded", [(3, 1), (32, 8)])
async def test_the_selection_is_the_cut_of_the_whole_fused_ranking(
    tmp_path, monkeypatch, top_k, max_expanded
):
    """Read lazily, the fused ranking gives the selection reading it whole gives: the first
    `max_expanded` nodes only the graph found join the baseline, the first `top_k` are kept.
    With a small `top_k` rollups low in the ranking are never drilled."""
    rankings: list[list[Any]] = []
    rollups: set[str] = set()  # the rollups in the fused lists of the second recall
    drilled: list[str] = []
    ranked, fuse, drill = _Turn.ranked, router_module.fuse, router_module.drill_down

    def whole(self: _Turn, lists: Any, graph: Any = None) -> Any:
        rankings.append(list(ranked(self, lists, graph)))  # what reading it whole gives
        return ranked(self, lists, graph)  # the router reads this one as it does

    def fuse_spy(lists: Any, **kwargs: Any) -> Any:
        out = fuse(lists, **kwargs)
        node = kwargs["store"].node
        rollups.update(f.id for f in out if node(f.id).semantic_rollup)
        return out

    def drill_spy(session: Any, rollup_id: str, *args: Any, **kwargs: Any) -> list[str]:
        drilled.append(rollup_id)
        return drill(session, rollup_id, *args, **kwargs)

    monkeypatch.setattr(_Turn, "ranked", whole)
    outcome = await _recall(tmp_path, recall_top_k=top_k, recall_max_expanded=max_expanded)
    monkeypatch.setattr(router_module, "fuse", fuse_spy)
    monkeypatch.setattr(router_module, "drill_down", drill_spy)
    base, fused = rankings[-2], rankings[-1]  # this recall's baseline and fused rankings
    expansion = [i for i in fused if i.why == "graph_expansion"][:max_expanded]
    keep = {i.id for i in base} | {i.id for i in expansion}
    expected = [i for i in fused if i.id in keep][:top_k]
    assert outcome.route.error is None and outcome.route.mode == "canary"
    assert expansion and any(i.why == "drill_down" for i in fused)
    assert list(outcome.route.selected) == expected

    rankings.clear()
    monkeypatch.setattr(_Turn, "ranked", ranked)
    again = await _recall(
        tmp_path / "again", [drilled, rollups], recall_top_k=top_k, recall_max_expanded=max_expanded
    )
    assert list(again.route.selected) == expected
    assert drilled and set(drilled) <= rollups
    if top_k == 3:
        assert len(set(drilled)) < len(rollups)  # the ranking's tail was never drilled
