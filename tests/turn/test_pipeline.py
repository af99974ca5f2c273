"""The turn pipeline on a real host with real LanceDB: extraction, recall, injection, reuse."""

from __future__ import annotations

from collections import Counter

import pytest

from host import Host, hookimpl
from memgraph_plugin.recall import HybridRouter, Inclusion
from memgraph_plugin.service import memory_graph_for
from memgraph_plugin.turn import pipeline_for
from tests.spies import CommitSpy
from tests.story_hosts import CHAT, fixture_data, fixture_story, make_host


def _expected_counts(turns) -> Counter:
    """Node counts by type from the story: every event create is new, others merge by title."""
    titles: dict[str, set[str]] = {}
    events = 0
    for turn in turns:
        for op in turn["ops"]:
            if op["op"] != "create":
                continue
            if op["type"] == "event":
                events += 1
            else:
                titles.setdefault(op["type"], set()).add(op["title"])
    counts = Counter({t: len(v) for t, v in titles.items()})
    counts["event"] = events
    return counts


async def test_story_turns_extract_recall_and_notify_in_order(started):
    host, companion, pipeline = started
    story = fixture_story()
    outcomes = []
    for number, turn in enumerate(story.turns, 1):
        out = await pipeline.run_turn(CHAT, turn.user, turn.assistant)
        outcomes.append(out)
        assert out.extraction.seq == number
        assert out.extraction.rejected == ()
        assert out.extraction.applied == len(turn.ops)
        assert out.recall.anchor == (2 * (number - 1), number)
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    nodes = session.list_visible_candidates()
    assert Counter(n.type for n in nodes) == _expected_counts(fixture_data()["turns"])

    # pinned before answer k: the newest events of the earlier turns and the newest threads,
    # at most recall_pinned_per_type (3) of each
    for number, out in enumerate(outcomes, 1):
        pinned_types = Counter(n.type for n in out.recall.pinned)
        earlier = fixture_data()["turns"][: number - 1]
        expected = _expected_counts(earlier)
        capped = {t: min(3, expected[t]) for t in ("event", "thread") if expected[t]}
        assert pinned_types == Counter(capped)
        state_ids = set(out.recall.recall_selected_ids)
        assert state_ids <= set(out.recall.visible_ids)
        assert not state_ids & set(out.recall.always_inject_ids)

    # the companion saw one change per fresh recall, in order, equal to what recall recorded
    mine = [s for chat, s in companion.seen if chat == CHAT]
    assert len(mine) == len(outcomes)
    for state, out in zip(mine, outcomes, strict=True):
        assert state.always_inject_ids == frozenset(out.recall.always_inject_ids)
        assert state.recall_selected_ids == frozenset(out.recall.recall_selected_ids)
        assert state.visible_ids == frozenset(out.recall.visible_ids)

    # the prompt: recalled (most relevant first), then the pinned scene; one table per type
    last = outcomes[-1].recall
    assert last.prompt.startswith("## Recalled memory") and "\n## Pinned memory" in last.prompt
    assert "### event_table" in last.prompt and "### thread_table" in last.prompt
    for node in last.pinned:
        assert f"| {node.id} |" in last.prompt
    # every recall left a trace
    assert [t.seq for t in pipeline.traces.read(CHAT)] == [1, 2, 3, 4]


async def test_regenerate_and_swipe_reuse_the_last_result(started):
    host, companion, pipeline = started
    story = fixture_story()
    for turn in story.turns[:2]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await pipeline.add_user_message(CHAT, story.turns[2].user)
    first = await pipeline.recall(CHAT)
    fired = len(companion.seen)
    swipe = await pipeline.recall(CHAT)  # a swipe asks again before any answer
    assert swipe.reused and swipe.recall_selected_ids == first.recall_selected_ids
    await pipeline.add_assistant_message(CHAT, story.turns[2].assistant)
    chat = host.chat(CHAT)
    assert chat.truncate(len(host.get_context(CHAT).messages) - 2) == 1  # regenerate
    regen = await pipeline.recall(CHAT)
    assert regen.reused and regen.anchor == first.anchor
    assert regen.always_inject_ids == first.always_inject_ids
    assert len(companion.seen) == fired  # no second hook fire
    traces = pipeline.traces.read(CHAT)
    assert [t.reused for t in traces[-3:]] == [False, True, True]
    await pipeline.add_user_message(CHAT, "And then?")
    fresh = await pipeline.recall(CHAT)
    assert not fresh.reused and len(companion.seen) == fired + 1


async def test_an_edited_user_message_is_recalled_afresh(started):
    """Same anchor, different user message (edited, not regenerated): a new recall, a new
    hook call, and the recall answers the new text."""
    host, companion, pipeline = started
    story = fixture_story()
    for turn in story.turns[:3]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await pipeline.add_user_message(CHAT, "Tell me about the weather")
    first = await pipeline.recall(CHAT)
    fired = len(companion.seen)
    chat = host.chat(CHAT)
    assert chat.truncate(len(host.get_context(CHAT).messages) - 2) == 1  # drop the user message
    await pipeline.add_user_message(CHAT, "Mara the smuggler at the Lantern Market")
    edited = await pipeline.recall(CHAT)
    assert edited.anchor == first.anchor
    assert not edited.reused and len(companion.seen) == fired + 1
    assert edited.query.startswith("Mara the smuggler")
    assert edited.recall_selected_ids != first.recall_selected_ids
    assert not pipeline.traces.read(CHAT)[-1].reused


async def _recall_after_three_turns(tmp_path, query="smuggler", **settings):
    """Three story turns, then a user message and its recall: (outcome, candidates, companion)."""
    host, companion = await make_host(tmp_path, **settings)
    pipeline = pipeline_for(host)
    for turn in fixture_story().turns[:3]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await pipeline.add_user_message(CHAT, query)
    outcome = await pipeline.recall(CHAT)
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    candidates = session.list_visible_candidates()
    await host.stop()
    return outcome, candidates, companion


async def _smuggler_recall(tmp_path, **settings):
    settings.setdefault("recall_recent_window", 0)
    outcome, candidates, _ = await _recall_after_three_turns(tmp_path, **settings)
    return outcome, {n.id: n.title for n in candidates}


async def test_canary_expands_from_seeds_with_provenance(tmp_path):
    outcome, titles = await _smuggler_recall(tmp_path)
    route = outcome.route
    assert route.mode == "canary" and route.fallback_reason is None
    mara = next(i for i, t in titles.items() if t == "Mara")
    assert mara in route.seeds
    expanded = {titles[i.id]: i for i in route.selected if i.why == "graph_expansion"}
    assert {"Lantern Market", "Ilya Renn"} <= set(expanded)
    for inc in expanded.values():
        assert inc.via in route.seeds and inc.hops == 1 and inc.edge_type
    # Mara -[related]- Lantern Market; Ilya is reached through the rumour event (involved_in):
    # allied_with is not among the drill's default edge types
    assert (expanded["Lantern Market"].via, expanded["Lantern Market"].edge_type) == (
        mara,
        "related",
    )
    assert expanded["Ilya Renn"].edge_type == "involved_in"
    assert titles[expanded["Ilya Renn"].via] == "Rumour of Mara"
    assert set(i.id for i in outcome.trace.selected) == set(outcome.recall_selected_ids)


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        ({"recall_rollout": "off"}, "rollout_off"),
        ({"recall_graph_expansion": False}, "feature_flag_disabled"),
    ],
)
async def test_off_and_flag_answer_the_baseline(tmp_path, settings, reason):
    outcome, _ = await _smuggler_recall(tmp_path, **settings)
    assert outcome.route.fallback_reason == reason
    assert outcome.route.shadow == ()
    assert all(i.why != "graph_expansion" for i in outcome.route.selected)
    assert outcome.trace.fallback_reason == reason


async def test_shadow_computes_expansion_but_returns_baseline(tmp_path):
    canary, _ = await _smuggler_recall(tmp_path / "a")
    shadow, _ = await _smuggler_recall(tmp_path / "b", recall_rollout="shadow")
    assert shadow.route.fallback_reason == "shadow_mode"
    applied = [i for i in canary.route.selected if i.why == "graph_expansion"]
    assert [i.id for i in shadow.route.shadow] == [i.id for i in applied]
    baseline = [i.id for i in canary.route.selected if i.why != "graph_expansion"]
    assert list(shadow.recall_selected_ids) == baseline


class RaisingExpansion:
    """A router plugin that is the built-in router with a graph walk that fails."""

    @hookimpl
    async def memgraph_route(self, request):
        def boom(session, seed, hops, visible):
            raise RuntimeError("graph store unreachable")

        return await HybridRouter(expander=boom).route(request)


async def test_expansion_error_falls_back_to_baseline_with_reason(tmp_path):
    canary, _ = await _smuggler_recall(tmp_path / "a")
    host, _ = await make_host(tmp_path / "b", recall_recent_window=0)
    host.register_plugin(RaisingExpansion(), name="raising-expansion")
    pipeline = pipeline_for(host)
    for turn in fixture_story().turns[:3]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await pipeline.add_user_message(CHAT, "smuggler")
    outcome = await pipeline.recall(CHAT)
    await host.stop()
    assert outcome.route.fallback_reason == "graph_expansion_error"
    assert "graph store unreachable" in outcome.route.error
    baseline = [i.id for i in canary.route.selected if i.why != "graph_expansion"]
    assert list(outcome.recall_selected_ids) == baseline
    trace = pipeline.traces.read(CHAT)[-1]
    assert trace.fallback_reason == "graph_expansion_error"


class IdsRouter:
    @hookimpl
    def memgraph_route(self, request):
        return [c.id for c in request.candidates if c.type == "location_state"]


class BrokenRouter:
    @hookimpl
    def memgraph_route(self, request):
        raise ValueError("router model offline")


async def test_plugin_router_wins_and_broken_router_falls_back(tmp_path):
    host, _ = await make_host(tmp_path, recall_recent_window=0)
    pipeline = pipeline_for(host)
    for turn in fixture_story().turns[:2]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    host.register_plugin(IdsRouter(), name="ids-router")
    await pipeline.add_user_message(CHAT, "where now?")
    picked = await pipeline.recall(CHAT)
    assert picked.route.router == "ids-router"
    assert {n.type for n in picked.recalled} == {"location_state"} and len(picked.recalled) == 2
    host.unregister_plugin("ids-router")
    host.register_plugin(BrokenRouter(), name="broken-router")
    await pipeline.add_user_message(CHAT, "smuggler")
    fallback = await pipeline.recall(CHAT)
    await host.stop()
    assert fallback.route.router == "builtin-hybrid"
    assert (
        "broken-router" in fallback.route.error and "router model offline" in fallback.route.error
    )


class DrillingRouter:
    """Picks nothing itself but asks to dig into the node named Mara (the route LLM's drill)."""

    def __init__(self, answer=None) -> None:
        self.answer = answer

    @hookimpl
    def memgraph_route(self, request):
        if self.answer is not None:
            return self.answer
        mara = [c.id for c in request.candidates if c.title == "Mara"]
        return {"selected": [], "drill": mara}


async def _drilled_recall(tmp_path, router, pipeline_router=None, **settings):
    from memgraph_plugin.turn import TurnPipeline

    host, _ = await make_host(tmp_path, recall_recent_window=0, **settings)
    host.register_plugin(router, name="drilling-router")
    pipeline = (
        TurnPipeline(host, memory_graph_for(host), router=pipeline_router)
        if pipeline_router
        else pipeline_for(host)
    )
    for turn in fixture_story().turns[:3]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await pipeline.add_user_message(CHAT, "what next?")
    outcome = await pipeline.recall(CHAT)
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    titles = {n.id: n.title for n in session.list_visible_candidates()}
    trace = pipeline.traces.read(CHAT)[-1]
    await host.stop()
    return outcome, titles, trace


async def test_a_router_plugin_asks_for_drill_expansion_from_its_seeds(tmp_path):
    """The router picks seeds; the pipeline drills from them: each reached node says from
    which seed, over which relation, how many hops; rollout modes and failures apply alike."""
    canary, titles, trace = await _drilled_recall(tmp_path / "a", DrillingRouter())
    mara = next(i for i, t in titles.items() if t == "Mara")
    route = canary.route
    assert route.router == "drilling-router" and route.seeds == (mara,)
    assert route.mode == "canary" and route.fallback_reason is None
    assert route.selected[0] == Inclusion(mara, "seed")
    drilled = {titles[i.id]: i for i in route.selected if i.why == "graph_expansion"}
    assert drilled["Lantern Market"] == Inclusion(
        drilled["Lantern Market"].id, "graph_expansion", 0.0, mara, "related", 1
    )
    assert set(canary.recall_selected_ids) == {i.id for i in route.selected}
    assert {i.id for i in trace.selected} == set(canary.recall_selected_ids)

    off, _, _ = await _drilled_recall(tmp_path / "b", DrillingRouter(), recall_rollout="off")
    assert off.recall_selected_ids == (mara,) and off.route.fallback_reason == "rollout_off"
    shadow, _, _ = await _drilled_recall(tmp_path / "c", DrillingRouter(), recall_rollout="shadow")
    assert shadow.recall_selected_ids == (mara,) and shadow.route.fallback_reason == "shadow_mode"
    assert [i.id for i in shadow.route.shadow] == [
        i.id for i in route.selected if i.why == "graph_expansion"
    ]

    def boom(session, seed, hops, visible):
        raise RuntimeError("graph store unreachable")

    failed, _, trace = await _drilled_recall(
        tmp_path / "d", DrillingRouter(), pipeline_router=HybridRouter(expander=boom)
    )
    assert failed.recall_selected_ids == (mara,)
    assert failed.route.fallback_reason == trace.fallback_reason == "graph_expansion_error"
    assert "graph store unreachable" in failed.route.error


async def test_a_malformed_drill_answer_is_named_and_the_builtin_router_answers(tmp_path):
    bad = DrillingRouter({"selected": [], "drill": "n_1"})
    outcome, _, trace = await _drilled_recall(tmp_path, bad)
    assert outcome.route.router == "builtin-hybrid"
    assert "drilling-router" in trace.error and "'drill'" in trace.error
    unknown = DrillingRouter({"pick": ["n_1"]})
    outcome, _, _ = await _drilled_recall(tmp_path / "u", unknown)
    assert outcome.route.router == "builtin-hybrid" and "pick" in outcome.route.error


class DeferringRouter:
    def __init__(self) -> None:
        self.asked = 0

    @hookimpl
    def memgraph_route(self, request):
        self.asked += 1
        return None  # no opinion: the next router answers


class ThreadsRouter:
    @hookimpl
    def memgraph_route(self, request):
        return [c.id for c in request.candidates if c.type == "thread"]


async def test_route_is_a_first_result_hook(tmp_path):
    """The first router (pluggy order: the last registered first) that answers wins; one that
    defers with None passes on; with nobody answering the built-in router does."""
    host, _ = await make_host(tmp_path, recall_recent_window=0)
    assert host.pm.hook.memgraph_route.spec.opts["firstresult"]
    pipeline = pipeline_for(host)
    for turn in fixture_story().turns[:2]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    deferring = DeferringRouter()
    host.register_plugin(IdsRouter(), name="ids-router")
    host.register_plugin(ThreadsRouter(), name="threads-router")
    host.register_plugin(deferring, name="deferring-router")
    await pipeline.add_user_message(CHAT, "where now?")
    first = await pipeline.recall(CHAT)
    for name in ("threads-router", "ids-router"):
        host.unregister_plugin(name)
    await pipeline.add_user_message(CHAT, "smuggler")
    builtin = await pipeline.recall(CHAT)
    await host.stop()
    assert deferring.asked == 2
    assert first.route.router == "threads-router" and first.route.error is None
    assert builtin.route.router == "builtin-hybrid" and builtin.route.error is None


class BrokenExtractor:
    @hookimpl
    def memgraph_extract(self, chat_id, message, context):
        raise RuntimeError("llm quota")


class ExtraExtractor:
    @hookimpl
    def memgraph_extract(self, chat_id, message, context):
        return [
            {
                "op": "create",
                "type": "thread",
                "title": "Side quest",
                "fields": {"title": "Side quest", "status": "open", "note": "extra"},
            }
        ]


async def test_extractors_collected_and_a_failing_one_is_skipped(tmp_path):
    host, _ = await make_host(tmp_path)
    host.register_plugin(BrokenExtractor(), name="broken-extractor")
    host.register_plugin(ExtraExtractor(), name="extra-extractor")
    pipeline = pipeline_for(host)
    turn = fixture_story().turns[0]
    out = await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await host.stop()
    assert out.extraction.applied == len(turn.ops) + 1
    assert [f.plugin for f in out.extraction.failures] == ["broken-extractor"]


async def test_without_memory_graph_the_pipeline_does_nothing(tmp_path):
    host = Host(data_dir=tmp_path / "d", builtins=False, entry_points=False)
    await host.start()
    pipeline = pipeline_for(host)
    out = await pipeline.run_turn(CHAT, "hello", "hi")
    await host.stop()
    assert out.recall is None and out.extraction is None
    assert [m.role for m in host.get_context(CHAT).messages] == ["user", "assistant"]


async def test_vector_scores_join_the_baseline_with_an_embedding_profile(tmp_path):
    without, _ = await _smuggler_recall(tmp_path / "a", embedding_profile="none")
    with_vectors, titles = await _smuggler_recall(tmp_path / "b", embedding_profile="hashing")
    assert without.route.score_mode == "keyword+recency"
    assert with_vectors.route.score_mode == "keyword+vector+recency"
    assert with_vectors.trace.score_mode == "keyword+vector+recency"
    assert "Mara" in {titles[s] for s in with_vectors.route.seeds}
    # vector similarity can only add candidates to the keyword baseline
    keyword_ids = {i.id for i in without.route.selected if i.why != "graph_expansion"}
    vector_ids = {i.id for i in with_vectors.route.selected if i.why != "graph_expansion"}
    assert keyword_ids <= vector_ids | set(with_vectors.route.seeds)


async def _lantern_recall(tmp_path, **settings):
    host, companion = await make_host(
        tmp_path, **{"recall_recent_window": 0, "recall_seed_count": 1, **settings}
    )
    pipeline = pipeline_for(host)
    for turn in fixture_story().turns:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await pipeline.add_user_message(CHAT, "who hears the rumour in the lantern market")
    try:
        outcome = await pipeline.recall(CHAT)
        session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
        titles = {n.id: n.title for n in session.list_visible_candidates()}
        return outcome, titles, companion
    finally:
        await host.stop()


async def test_more_hops_reach_further_and_say_how_far(tmp_path):
    one, titles, _ = await _lantern_recall(tmp_path / "a")
    three, _, _ = await _lantern_recall(tmp_path / "b", recall_hops=3)
    (seed,) = three.route.seeds
    assert titles[seed] == "Rumour of Mara"
    far = {titles[i.id]: i for i in three.route.selected if i.why == "graph_expansion"}
    near = {titles[i.id] for i in one.route.selected if i.why == "graph_expansion"}
    # rumour -> Ilya (1) -> the arrival event (2) -> Juno (3); only the newest events are
    # pinned, so the older arrival event is reached (at 2 hops) like any other node
    assert "Juno Kade" not in near and "Arrival" not in near
    assert (far["Juno Kade"].via, far["Juno Kade"].hops) == (seed, 3)
    assert far["Juno Kade"].edge_type == "involved_in"
    assert (far["Arrival"].hops, far["Arrival"].edge_type) == (2, "involved_in")
    assert near <= set(far) and all(far[t].hops == 1 for t in near)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"recall_rollout": "sometimes"}, "recall_rollout"),
        ({"recall_recent_window": "two"}, "recall_recent_window"),
        ({"recall_hops": 0}, "recall_hops"),
    ],
)
async def test_bad_settings_are_named(tmp_path, settings, named):
    with pytest.raises(ValueError, match=named):
        await _lantern_recall(tmp_path, **settings)


async def test_a_regenerated_answer_replaces_the_writes_of_the_old_one(started):
    host, _, pipeline = started
    story = fixture_story()
    for turn in story.turns[:3]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    before = Counter(n.type for n in session.list_nodes())
    chat = host.chat(CHAT)
    assert chat.truncate(len(host.get_context(CHAT).messages) - 2) == 1
    assert (await pipeline.recall(CHAT)).reused
    again = await pipeline.add_assistant_message(CHAT, "Mara shrugs, then agrees anyway.")
    assert again.replaced and again.seq == 3 and again.applied == len(story.turns[2].ops)
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    assert Counter(n.type for n in session.list_nodes()) == before  # not one event too many
    fresh = await pipeline.run_turn(CHAT, story.turns[3].user, story.turns[3].assistant)
    assert not fresh.extraction.replaced and fresh.extraction.seq == 4


async def test_recall_never_scans_the_whole_store(tmp_path, monkeypatch):
    """Pool, keyword baseline, seeds and drill expansion all work from the store's indices."""
    from memgraph_plugin.engine.graph.store import Store

    host, _ = await make_host(tmp_path, recall_recent_window=0, recall_hops=2)
    pipeline = pipeline_for(host)
    for turn in fixture_story().turns:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await pipeline.add_user_message(CHAT, "Mara and the lantern market smuggler")

    def no_scan(self):
        raise AssertionError("the recall path scanned the whole store")

    monkeypatch.setattr(Store, "iter_edges", no_scan)
    monkeypatch.setattr(Store, "iter_nodes", no_scan)
    outcome = await pipeline.recall(CHAT)
    monkeypatch.undo()
    await host.stop()
    assert outcome.route.fallback_reason is None and outcome.route.error is None
    assert any(i.why == "graph_expansion" for i in outcome.route.selected)


async def test_recall_copies_no_message_list(tmp_path, monkeypatch):
    """The recall reads the newest messages only: no tuple of every message of a long chat
    (gen-0 collections walked one per call at 100k nodes)."""
    from host.chats.chat_files import Chat

    host, _ = await make_host(tmp_path)
    pipeline = pipeline_for(host)
    for turn in fixture_story().turns[:2]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await pipeline.add_user_message(CHAT, "Mara and the lantern market smuggler")

    def no_copy(self):
        raise AssertionError("the recall path copied every message of the chat")

    monkeypatch.setattr(Chat, "messages", property(no_copy))
    outcome = await pipeline.recall(CHAT)
    await host.drain(CHAT)
    monkeypatch.undo()
    await host.stop()
    assert outcome is not None and outcome.query == "Mara and the lantern market smuggler"


async def test_each_answer_is_one_batch_at_its_seq(started):
    """The extraction of answer k is one commit of every op, its nodes stamped with seq k."""
    host, _, pipeline = started
    spy = CommitSpy()
    host.register_plugin(spy, name="commit-spy")
    for number, turn in enumerate(fixture_story().turns, 1):
        before = len(spy.seen)
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
        await host.drain()  # commit notifications are delivered by a task
        (commit,) = [c for _, c in spy.seen[before:] if c.kind == "batch"]
        assert (commit.seq, commit.applied) == (number, len(turn.ops))
        session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
        created = {op.get("title") for op in turn.ops if op["op"] == "create"}
        written = [session.get_node(i) for i in commit.node_ids]
        assert created <= {n.title for n in written}
        assert {n.seq_to for n in written if n.title in created} == {number}


async def test_recent_window_keeps_the_last_answer_out_of_the_pool(tmp_path):
    """Pool = visible minus the nodes of the last N answers; pinned types are injected anyway."""
    outcome, everything, companion = await _recall_after_three_turns(  # default window: 1
        tmp_path, "Mara smuggler Lantern Market Quill"
    )
    recent = {n.id for n in everything if n.seq_to == 3}
    assert recent and not recent & set(outcome.visible_ids)
    # visible_ids: the bounded candidates the router ranked (never the whole pool), all
    # outside the window
    assert outcome.visible_ids and set(outcome.visible_ids) <= {n.id for n in everything} - recent
    assert not recent & set(outcome.recall_selected_ids)
    pinned_recent = {n.id for n in outcome.pinned} & recent
    assert pinned_recent and {n.type for n in everything if n.id in pinned_recent} <= {
        "event",
        "thread",
    }
    assert companion.seen[-1][1].visible_ids == frozenset(outcome.visible_ids)


async def test_quality_gate_holds_canary_back_after_failures_then_reopens(tmp_path):
    """Failed expansions fill the rolling window and close the gate: expansion then runs in
    the shadow (``quality_gate_blocked``) until the window's error rate is back to the limit."""
    from memgraph_plugin.recall.hybrid_router import default_expander
    from memgraph_plugin.turn import TurnPipeline

    failing = [False]

    def flaky(session, seed, hops, visible):
        if failing[0]:
            raise RuntimeError("graph store timeout")
        return default_expander(session, seed, hops, visible)

    host, _ = await make_host(tmp_path, recall_recent_window=0, recall_quality_window=4)
    pipeline = TurnPipeline(host, memory_graph_for(host), router=HybridRouter(expander=flaky))
    for turn in fixture_story().turns[:3]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    outcomes = []
    for number in range(7):
        failing[0] = number < 4
        await pipeline.add_user_message(CHAT, "smuggler")
        outcomes.append(await pipeline.recall(CHAT))
    traces = pipeline.traces.read(CHAT)[-7:]
    await host.stop()
    reasons = [o.route.fallback_reason for o in outcomes]
    assert reasons == ["graph_expansion_error"] * 4 + ["quality_gate_blocked"] * 2 + [None]
    assert [t.fallback_reason for t in traces] == reasons
    for blocked in outcomes[4:6]:  # measured in the shadow, not applied
        assert blocked.route.shadow
        assert all(i.why != "graph_expansion" for i in blocked.route.selected)
    assert any(i.why == "graph_expansion" for i in outcomes[-1].route.selected)


async def test_a_regenerated_answers_rollback_fires_memgraph_commit_once(started):
    """The rollback that undoes a replaced answer is a persisted change like any other: one
    ``memgraph_commit`` with its version, before the new answer's batch."""
    host, _, pipeline = started
    story = fixture_story()
    for turn in story.turns[:3]:
        await pipeline.run_turn(CHAT, turn.user, turn.assistant)
    await host.drain()
    spy = CommitSpy()
    host.register_plugin(spy, name="commit-spy")
    chat = host.chat(CHAT)
    assert chat.truncate(len(host.get_context(CHAT).messages) - 2) == 1  # regenerate answer 3
    await pipeline.recall(CHAT)
    again = await pipeline.add_assistant_message(CHAT, "Mara shrugs, then agrees anyway.")
    assert again.replaced
    await host.drain()
    history = await host.registry.get("memory-graph").history(CHAT)
    (rollback,) = [r for r in history if r.kind == "rollback"]
    fired = [(c.kind, c.version) for chat_id, c in spy.seen if chat_id == CHAT]
    assert fired[0] == ("rollback", rollback.version)
    assert [kind for kind, _ in fired].count("rollback") == 1
    assert ("batch", rollback.version + 1) in fired  # the new answer, committed after it
    (commit,) = [c for _, c in spy.seen if c.kind == "rollback"]
    assert (commit.seq, commit.persisted, commit.applied) == (2, True, rollback.applied)


async def test_catch_up_compaction_after_an_import_runs_off_the_turn(tmp_path):
    """An imported graph of 60 loose events (19 groups due: more than a turn compacts inline):
    the next message's extraction compacts nothing and hands the backlog to the background
    catch-up, which leaves what the per-group rule does (nothing left to compact, every rollup
    over 3 children) in a few commits, a chunk of groups per depth each."""
    from memgraph_plugin.service import memory_graph_for
    from memgraph_plugin.turn.catch_up import TURN_GROUPS
    from tests.recall.test_ranking import CHAT as RANKED
    from tests.recall.test_ranking import _event, _graph, _host

    graph = _graph(
        [_event(i, f"the lantern festival day {i} at the harbor") for i in range(1, 61)], []
    )
    host, pipeline = await _host(tmp_path, graph)
    spy = CommitSpy()
    host.register_plugin(spy, name="spy")
    message = host.chat(RANKED).add_message("user", "what happened at the harbor?")
    out = await pipeline.extract(RANKED, message)
    assert out.compacted == () and pipeline.catch_up.running(RANKED)
    assert pipeline.catch_up.pending(RANKED) == 19 > TURN_GROUPS
    await pipeline.catch_up.wait(RANKED)
    session = await memory_graph_for(host).open_session(host.get_context(RANKED))
    rollups = [n for n in session.store.iter_nodes() if n.semantic_rollup]
    # 61 events (the message's own one too), 3 held back: 19 groups at depth 0, then groups of
    # their rollups at depth 1 and up, a chunk at a time (a depth's roots left under the
    # threshold by a chunk's cut wait for more, as after any turn)
    assert len([r for r in rollups if r.semantic_depth == 1]) == 19
    assert 19 + 5 <= len(rollups) <= 19 + 6 + 2
    for depth in range(4):
        assert not session.compaction_candidates(type="event", depth=depth).groups
    for rollup in rollups:
        assert len(session.get_descendants(rollup.id, max_depth=1)) == 3
    await host.drain()
    kinds = Counter(c.kind for _, c in spy.seen)
    # a commit per chunk and depth (was: one per group)
    assert 3 <= kinds["compact_nodes"] <= 6 < len(rollups)
    assert not pipeline.catch_up.running(RANKED)
    await host.stop()


def test_the_messages_of_a_seq_before_one_are_found_walking_back() -> None:
    """`_same_seq_before`: what a replaced message's undo extracts again, found without
    reading a long chat's earlier messages."""
    from host.chats.context import Message
    from memgraph_plugin.turn.pipeline import _same_seq_before

    roles = ["user", "assistant", "user", "system", "assistant", "user"]
    seqs = [0, 1, 1, 1, 2, 2]
    chat = [Message(s, r, f"m{i}", i) for i, (s, r) in enumerate(zip(seqs, roles, strict=True))]
    assert _same_seq_before(chat, chat[3]) == chat[1:3]
    assert _same_seq_before(chat, chat[5]) == [chat[4]]
    assert _same_seq_before(chat[:4], chat[4]) == []  # (the chat cut before it)
    assert _same_seq_before(chat[:4], chat[3]) == chat[1:3]
    assert _same_seq_before(chat, chat[0]) == []
