"""The whole pipeline on the sample story, with and without the sample plugins.

Expectations come from the story data: how many events each turn creates, which entities
latest-only merging folds together (title and aliases), the duplicates the story plants for the
curator, and the event type's documented compaction rule (threshold 5, fan-in 3, keep 3 recent).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import pytest

from host import Host
from memgraph_plugin.settings_keys import RECALL
from memgraph_plugin.tools.demo import between_turns
from memgraph_plugin.turn import ReplayExtractor, load_story, pipeline_for
from tests.story_hosts import Companion

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "sample_plugins" / "story" / "story.json"
CHAT = "story"
THRESHOLD, FAN_IN, KEEP_RECENT, MAX_DEPTH = 5, 3, 3, 10
PLANTED = {  # the duplicates the story README says it plants for the curator
    "character_sheet": [{"Mara", "Captain Mara Voss"}, {"Quill", "Teodor Quill"}],
    "location_state": [{"Lantern Market", "Night Bazaar of Qel"}],
}
CHOSEN_TURNS = (1, 10, 25, 44)
# turn -> (a name the user message says, whether recall injects it): Pim, last written by answer
# 20, is recalled on his name at 24; Drake, first written by answer 7, is in the recent window at 8
NAMED = {24: ("Pim", True), 8: ("Magistrate Hollen Drake", False)}


def simulate_compaction(events_per_turn: list[int]) -> list[dict[str, int]]:
    """After each turn: rollups by depth and visible (unparented) events, by the documented rule."""
    nodes: list[dict[str, Any]] = []
    after = []
    for count in events_per_turn:
        nodes.extend({"depth": 0, "parent": False} for _ in range(count))
        changed = True
        while changed:
            changed = False
            for depth in range(MAX_DEPTH):
                free = [n for n in nodes if n["depth"] == depth and not n["parent"]]
                if depth == 0:
                    free = free[: max(0, len(free) - KEEP_RECENT)]
                if len(free) < THRESHOLD:
                    continue
                for g in range(len(free) // FAN_IN):
                    for child in free[g * FAN_IN : (g + 1) * FAN_IN]:
                        child["parent"] = True
                    nodes.append({"depth": depth + 1, "parent": False})
                    changed = True
        rollups = Counter(n["depth"] for n in nodes if n["depth"] > 0)
        after.append(
            {
                "rollups": sum(rollups.values()),
                "visible": sum(not n["parent"] for n in nodes),
                "max_depth": max(rollups, default=0),
            }
        )
    return after


def latest_only_entities(turns: list[dict]) -> dict[str, int]:
    """Distinct entities per latest-only type: creates sharing a title or alias are one."""
    parent: dict[tuple, tuple] = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    entity_keys: dict[str, list] = {}
    for turn in turns:
        for op in turn["ops"]:
            if op["op"] != "create" or op["type"] == "event":
                continue
            fields = op.get("fields", {})
            aliases = fields.get("aliases", [])
            if isinstance(aliases, str):
                aliases = [
                    a
                    for part in aliases.replace(";", ",").replace("|", ",").split(",")
                    if (a := part)
                ]
            names = [op["title"], *(a.strip() for a in aliases if a.strip())]
            keys = [(op["type"], n.lower()) for n in names]
            for k in keys[1:]:
                parent[find(k)] = find(keys[0])
            entity_keys.setdefault(op["type"], []).append(keys[0])
    return {t: len({find(k) for k in ks}) for t, ks in entity_keys.items()}


@attrs.frozen
class Facts:
    per_turn: list[dict[str, Any]]
    counts: Counter
    rollups: int
    rollup_max_depth: int
    archived: int
    merges: list[Any]
    pipeline_compacted: int
    companion_states: int
    fresh_recalls: int
    titles: dict[str, str]


async def _run(data_dir: Path, *, plugins: bool) -> Facts:
    story = load_story(STORY)
    dirs = (ROOT / "sample_plugins",) if plugins else ()
    host = Host(data_dir=data_dir, plugin_dirs=dirs, entry_points=False)
    host.register_plugin(ReplayExtractor.from_story(story, chat_id=CHAT), name="replay")
    companion = Companion()
    host.register_plugin(companion, name="companion")
    await host.start()
    pipeline = pipeline_for(host)
    per_turn = []
    compacted = 0
    for turn in story.turns:
        out = await pipeline.run_turn(CHAT, turn.user, turn.assistant)
        await between_turns(host, CHAT)  # what the demo does: the curator runs between turns
        compacted += len(out.extraction.compacted)
        per_turn.append(
            {
                "pinned": Counter(n.type for n in out.recall.pinned),
                "always": out.recall.always_inject_ids,
                "selected": out.recall.recall_selected_ids,
                "visible": out.recall.visible_ids,
                "rejected": out.extraction.rejected,
                "applied": out.extraction.applied,
            }
        )
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    nodes = session.list_nodes(active_only=False)
    curator = host.registry.get("curator")
    merges = [m for r in curator.reports(CHAT) for m in r.merges] if curator else []
    active = [n for n in nodes if not n.archived]
    facts = Facts(
        per_turn=per_turn,
        counts=Counter(n.type for n in active if not n.semantic_rollup),
        rollups=sum(1 for n in active if n.semantic_rollup),
        rollup_max_depth=max((n.semantic_depth for n in active), default=0),
        archived=len(nodes) - len(active),
        merges=merges,
        pipeline_compacted=compacted,
        companion_states=sum(1 for chat, _ in companion.seen if chat == CHAT),
        fresh_recalls=len(story.turns),
        titles={n.id: n.title for n in nodes},
    )
    await host.stop()
    return facts


@pytest.fixture(scope="module")
def story_data():
    return json.loads(STORY.read_text())


@pytest.fixture(scope="module")
def with_plugins(tmp_path_factory):
    return asyncio.run(_run(tmp_path_factory.mktemp("with"), plugins=True))


@pytest.fixture(scope="module")
def without_plugins(tmp_path_factory):
    return asyncio.run(_run(tmp_path_factory.mktemp("without"), plugins=False))


def _events_per_turn(story_data) -> list[int]:
    return [
        sum(1 for op in t["ops"] if op["op"] == "create" and op["type"] == "event")
        for t in story_data["turns"]
    ]


def test_story_is_long_enough(story_data):
    assert len(story_data["turns"]) >= 40


@pytest.mark.slow
def test_every_recorded_op_applies(with_plugins, story_data):
    for facts, turn in zip(with_plugins.per_turn, story_data["turns"], strict=True):
        assert facts["rejected"] == ()
        assert facts["applied"] == len(turn["ops"])


def test_node_counts_rollups_and_merges(with_plugins, story_data):
    events = _events_per_turn(story_data)
    expected = simulate_compaction(events)[-1]
    entities = latest_only_entities(story_data["turns"])
    assert with_plugins.counts["event"] == sum(events)
    assert with_plugins.rollups == expected["rollups"] and expected["max_depth"] >= 2
    assert with_plugins.rollup_max_depth == expected["max_depth"]
    assert with_plugins.pipeline_compacted == 0  # the compactor did it
    merged = Counter(m.type for m in with_plugins.merges)
    assert merged == Counter({t: len(p) for t, p in PLANTED.items()})
    for type_name, pairs in PLANTED.items():
        for pair in pairs:
            assert any(pair <= {m.title, *m.merged_titles, *m.aliases} for m in with_plugins.merges)
        assert with_plugins.counts[type_name] == entities[type_name] - len(pairs)
    assert with_plugins.counts["thread"] == entities["thread"]
    assert with_plugins.archived == sum(len(m.merged_ids) for m in with_plugins.merges)


@pytest.mark.slow
def test_pipeline_compacts_when_no_compactor(without_plugins, with_plugins, story_data):
    expected = simulate_compaction(_events_per_turn(story_data))[-1]
    assert without_plugins.rollups == expected["rollups"]
    assert without_plugins.pipeline_compacted == expected["rollups"]
    assert without_plugins.merges == [] and without_plugins.archived == 0
    entities = latest_only_entities(story_data["turns"])
    assert without_plugins.counts["character_sheet"] == entities["character_sheet"]


@pytest.mark.parametrize("turn", CHOSEN_TURNS)
def test_injection_state_after_chosen_turns(with_plugins, story_data, turn):
    state = with_plugins.per_turn[turn - 1]
    events = _events_per_turn(story_data)
    sim = simulate_compaction(events)
    visible_events = sim[turn - 2]["visible"] if turn > 1 else 0
    threads = latest_only_entities(story_data["turns"][: turn - 1]).get("thread", 0)
    # the always-inject set is capped: the newest recall_pinned_per_type (3) of each type
    assert state["pinned"]["event"] == min(RECALL.recall_pinned_per_type.default, visible_events)
    assert state["pinned"]["thread"] == min(RECALL.recall_pinned_per_type.default, threads)
    assert len(state["always"]) == min(RECALL.recall_pinned_per_type.default, visible_events) + min(
        RECALL.recall_pinned_per_type.default, threads
    )
    assert set(state["selected"]) <= set(state["visible"])
    assert not set(state["selected"]) & set(state["always"])


def test_companion_saw_every_recall(with_plugins):
    assert with_plugins.companion_states == with_plugins.fresh_recalls


@pytest.mark.parametrize("turn", sorted(NAMED))
def test_a_named_entity_is_recalled_unless_in_the_recent_window(with_plugins, story_data, turn):
    title, recalled = NAMED[turn]
    user = story_data["turns"][turn - 1]["user"]
    assert title.split()[-1] in user  # the story names it
    (node_id,) = [i for i, t in with_plugins.titles.items() if t == title]
    state = with_plugins.per_turn[turn - 1]
    assert (node_id in state["selected"]) is recalled
    assert (node_id in state["visible"]) is recalled  # out of the pool only by the window
    if not recalled:  # the previous answer wrote it
        previous = story_data["turns"][turn - 2]["ops"]
        assert any(op.get("title") == title for op in previous)
