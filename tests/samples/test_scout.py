"""The scout alone on a real host: its policy, the loop tools, exclusion of injected nodes."""

from __future__ import annotations

import logging

from memgraph_plugin.api.external import record_injected_node_ids
from sample_plugins import scout
from sample_plugins.scout import ToolError

from .conftest import CHAT, event, link, open_session, person, place, settle

STORY_OPS = [
    event("Raid on the market", "Juno Kade raids the Lantern Market; Pim helps Ilya escape.", "e1"),
    person("Ilya Renn", "c_ilya", aliases=["伊利亚"]),
    person("Juno Kade", "c_juno", aliases=["the Knife"]),
    person("Pim", "c_pim", aliases=["the runner"]),
    place("Lantern Market", "l_market", aliases=["灯市"]),
    link("c_ilya", "e1", "involved_in"),
    link("c_juno", "e1", "involved_in"),
    link("c_pim", "e1", "involved_in"),
    link("e1", "l_market", "occurred_at"),
]


async def _seed(host) -> dict[str, str]:
    session = await open_session(host)
    result = await session.apply_extraction_batch(ops=STORY_OPS, max_seq=1)
    assert not result.rejected
    return {n.title: n.id for n in session.list_visible_candidates()}


async def test_scout_rebuilds_router_input_and_ranks_by_names(make_host) -> None:
    host = await make_host(scout, settings={"scout_on_recall": False})
    ids = await _seed(host)
    host.chat(CHAT).add_message("user", "Where did Pim run off to after the raid at 灯市?")
    report = await host.registry.get("scout").scout(CHAT)
    session = await open_session(host)
    specs = session.get_schema().types
    assert [row["id"] for row in report.schema_overview] == [s.type for s in specs]
    docs_keys = "table_name table_columns required_columns force_update always_inject editable"
    for row, spec in zip(report.schema_overview, specs, strict=True):
        # the worked example's block: every key it names, list values as lists, nothing else
        assert set(row) == {"id", "compression_mode", *docs_keys.split()}
        assert row["table_columns"] == list(spec.table_columns)
        assert row["compression_mode"] == spec.compression_mode
        assert all(row[k] == getattr(spec, k) for k in ("force_update", "always_inject"))
    rows = scout.Scout.candidate_rows(session)
    assert [r.id for r in rows] == [v.id for v in session.list_visible_candidates()]
    assert report.candidate_count == len(session.list_visible_candidates())
    picked = [p.id for p in report.picks]
    # both named (Pim, 灯市) come first; the tie is broken by degree, then id
    assert set(picked[:2]) == {ids["Pim"], ids["Lantern Market"]}
    assert any(r.startswith("named:") for r in report.picks[0].reasons)
    assert host.registry.get("scout").last_report(CHAT) is report


async def test_tools_never_return_injected_nodes(make_host) -> None:
    host = await make_host(scout, settings={"scout_on_recall": False})
    ids = await _seed(host)
    tools = host.registry.get("orchestrator")
    ctx = host.get_context(CHAT)

    found = await tools.memory_search({"query": "Juno Kade raid"}, ctx)
    assert ids["Juno Kade"] in [n["id"] for n in found["nodes"]]

    record_injected_node_ids(
        ctx, always_inject_ids=[ids["Raid on the market"]], recall_selected_ids=[ids["Juno Kade"]]
    )
    injected = {ids["Raid on the market"], ids["Juno Kade"]}
    found = await tools.memory_search({"query": "Juno Kade raid"}, ctx)
    assert not injected & {n["id"] for n in found["nodes"]}
    recent = await tools.memory_list_recent({"limit": 50}, ctx)
    assert recent["nodes"] and not injected & {n["id"] for n in recent["nodes"]}
    refused = await tools.memory_get({"id": ids["Juno Kade"]}, ctx)
    assert isinstance(refused, ToolError) and refused.code == "ALREADY_INJECTED"
    got = await tools.memory_get({"id": ids["Pim"]}, ctx)
    assert got["node"]["id"] == ids["Pim"]
    assert not injected & {n["id"] for n in got["neighbors"]}

    # the hook keeps the set current: a new state releases the old ids
    record_injected_node_ids(ctx, always_inject_ids=[], recall_selected_ids=[])
    found = await tools.memory_search({"query": "Juno Kade raid"}, ctx)
    assert ids["Juno Kade"] in [n["id"] for n in found["nodes"]]


async def test_scout_runs_on_injection_change_and_excludes(make_host) -> None:
    host = await make_host(scout)
    ids = await _seed(host)
    chat = host.chat(CHAT)
    chat.add_message("user", "Hello.")
    chat.add_message("assistant", "The market is loud tonight.")  # seq 1: what _seed wrote
    chat.add_message("user", "What about Pim and Juno Kade at the Lantern Market?")
    record_injected_node_ids(
        host.get_context(CHAT), always_inject_ids=[], recall_selected_ids=[ids["Pim"]]
    )
    # this turn's extraction lands before the scout's task gets to read: it must not leak in
    session = await open_session(host)
    result = await session.apply_extraction_batch(
        ops=[person("Juno Kade of the Lantern Market", "c_j2")], max_seq=2
    )
    assert not result.rejected
    await settle(host)
    report = host.registry.get("scout").last_report(CHAT)
    assert report is not None and report.excluded == {ids["Pim"]}
    assert report.query.startswith("What about Pim")
    picked = [p.title for p in report.picks]
    assert set(picked[:2]) == {"Lantern Market", "Juno Kade"}  # both named
    assert "Pim" not in picked  # injected
    assert "Juno Kade of the Lantern Market" not in picked  # written after the recall


async def test_tools_answer_memory_disabled_without_memory_graph(make_host, caplog) -> None:
    host = await make_host(scout, builtins=False)
    tools = host.registry.get("orchestrator")
    ctx = host.get_context(CHAT)
    with caplog.at_level(logging.INFO, logger="sample_plugins.scout"):
        for call, args in (
            (tools.memory_search, {"query": "Pim"}),
            (tools.memory_list_recent, {}),
            (tools.memory_get, {"id": "n_1"}),
        ):
            answer = await call(args, ctx)
            assert isinstance(answer, ToolError) and answer.code == "MEMORY_DISABLED"
        report = await host.registry.get("scout").scout(ctx, query="Pim")
    assert report.skipped and report.picks == ()
    assert len([r for r in caplog.records if "unavailable" in r.getMessage()]) == 1


async def test_bad_tool_args_are_named(make_host) -> None:
    host = await make_host(scout)
    tools = host.registry.get("orchestrator")
    ctx = host.get_context(CHAT)
    answer = await tools.memory_get({}, ctx)
    assert isinstance(answer, ToolError) and answer.code == "BAD_ARGS" and "id" in answer.message
    missing = await tools.memory_get({"id": "n_999"}, ctx)
    assert isinstance(missing, ToolError) and missing.code == "NOT_FOUND"
    assert await tools.memory_search({"query": "  "}, ctx) == {"nodes": []}


class _Without:
    """A session without the method `missing`."""

    def __init__(self, session, missing: str) -> None:
        self._session = session
        self._missing = missing

    def __getattr__(self, name: str):
        if name == self._missing:
            raise AttributeError(name)
        return getattr(self._session, name)


def _one_by_one(session) -> _Without:
    """A session without ``get_node_briefs`` (the documented facade only)."""
    return _Without(session, "get_node_briefs")


async def test_candidate_rows_are_the_same_brief_by_brief(make_host) -> None:
    from sample_plugins.scout import Scout

    host = await make_host(scout, settings={"scout_on_recall": False})
    await _seed(host)
    session = await open_session(host)
    rows = Scout.candidate_rows(session)
    assert len(rows) == len(session.list_visible_candidates()) == 5
    assert Scout.candidate_rows(_one_by_one(session)) == rows
    assert all(row.edge_summary is not None for row in rows)


async def test_no_chat_target_is_memory_disabled(make_host) -> None:
    host = await make_host(scout)
    answer = await host.registry.get("orchestrator").memory_list_recent({}, None)
    assert isinstance(answer, ToolError) and answer.code == "MEMORY_DISABLED"


async def test_the_exclusion_set_comes_from_the_injection_hook(make_host, monkeypatch) -> None:
    from sample_plugins._registry_access import MemoryAccess

    host = await make_host(scout, settings={"scout_on_recall": False})
    ids = await _seed(host)
    opened = MemoryAccess.open

    async def without_state(self, chat):
        session = await opened(self, chat)  # not telling its injection state: only the hook can
        return None if session is None else _Without(session, "get_injection_state")

    monkeypatch.setattr(MemoryAccess, "open", without_state)
    tools = host.registry.get("orchestrator")
    ctx = host.get_context(CHAT)
    everything = {n["id"] for n in (await tools.memory_list_recent({"limit": 50}, ctx))["nodes"]}
    assert {ids["Pim"], ids["Juno Kade"]} <= everything
    for always, selected in (([ids["Pim"]], [ids["Juno Kade"]]), ([], [ids["Pim"]])):
        record_injected_node_ids(ctx, always_inject_ids=always, recall_selected_ids=selected)
        await host.drain()  # the injection hook is delivered by a task in a running loop
        listed = {n["id"] for n in (await tools.memory_list_recent({"limit": 50}, ctx))["nodes"]}
        assert listed == everything - {*always, *selected}


async def test_candidate_rows_are_the_worked_example_after_a_recall(make_host) -> None:
    """Once a recall has recorded the chat's visible set (the router's pool, without the recent
    window), the rows still equal the docs' worked example call for call."""
    from memgraph_plugin.turn import pipeline_for

    host = await make_host(scout, settings={"scout_on_recall": False})
    pipeline = pipeline_for(host)
    chat = host.chat(CHAT)
    chat.add_message("user", "Hello.")
    ids = await _seed(host)  # the first answer's writes (seq 1)
    chat.add_message("assistant", "The market is loud tonight.")
    chat.add_message("user", "Who else?")
    session = await open_session(host)
    to_pim = {"target_node_id": ids["Pim"], "relation": "related", "direction": "outgoing"}
    later = [
        person("Sefa Anwar", "c_sefa"),
        {"op": "link_upsert", "source_ref": "c_sefa", "links": [to_pim]},
    ]
    written = await session.apply_extraction_batch(ops=later, max_seq=2)
    assert not written.rejected
    sefa = written.refs["c_sefa"]
    chat.add_message("assistant", "A spice merchant watches Pim.")  # seq 2: Sefa
    await pipeline.add_user_message(CHAT, "What about Pim?")
    await pipeline.recall(CHAT)
    session = await open_session(host)
    recorded = session.get_injection_state().visible_ids
    candidates = session.list_visible_candidates()
    # the recorded visible set: the candidates recall ranked (bounded, never the whole pool),
    # outside the recent window
    assert recorded and recorded <= {v.id for v in candidates} - {sefa}
    example = [
        session.get_node_brief(v.id, include_edge_summary=True, edge_summary_limit=8)
        for v in candidates
    ]
    assert scout.Scout.candidate_rows(session) == example
    assert scout.Scout.candidate_rows(_one_by_one(session)) == example


async def test_a_long_chat_briefs_a_bounded_pool_and_still_finds_the_named(make_host) -> None:
    """Past ``scout_pool_size`` candidates a run briefs the newest few plus the keyword hits,
    not the whole pool, and an old node the message names is still picked."""
    host = await make_host(scout, settings={"scout_on_recall": False, "scout_pool_size": 8})
    ids = await _seed(host)
    session = await open_session(host)
    filler = [event(f"Quiet day {i}", f"Nothing happens on quiet day {i}.") for i in range(40)]
    result = await session.apply_extraction_batch(ops=filler, max_seq=2)
    assert not result.rejected
    total = len(session.list_visible_candidates())
    assert total > 40

    host.chat(CHAT).add_message("user", "Is Pim still hiding near the Lantern Market?")
    report = await host.registry.get("scout").scout(CHAT)
    assert report.candidate_count <= 8 // 4 + 8 < total
    assert {ids["Pim"], ids["Lantern Market"]} <= {p.id for p in report.picks[:2]}

    small = await make_host(scout, settings={"scout_on_recall": False, "scout_pool_size": 64})
    await _seed(small)
    small.chat(CHAT).add_message("user", "Is Pim still hiding near the Lantern Market?")
    whole = await small.registry.get("scout").scout(CHAT)
    assert whole.candidate_count == len((await open_session(small)).list_visible_candidates())
