"""The sample story: a valid file, current with its builder, and every op applies on replay."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from memgraph_plugin.api.write import get_write_api
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.turn.story import load_story
from sample_plugins import compactor, curator
from sample_plugins.story import build_story

from .conftest import CHAT, open_session, settle

STORY = Path(build_story.__file__).with_name("story.json")


def test_story_file_is_valid() -> None:
    data = json.loads(STORY.read_text(encoding="utf-8"))
    assert isinstance(data["title"], str) and data["title"]
    assert len(data["turns"]) >= 40
    for turn in data["turns"]:
        assert turn["user"].strip() and turn["assistant"].strip()
        assert turn["ops"] and all(isinstance(op, dict) and op["op"] for op in turn["ops"])
    assert len(load_story(STORY).turns) == len(data["turns"])
    text = STORY.read_text(encoding="utf-8")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text)  # CJK aliases for CJK search


def test_story_json_is_what_the_builder_makes() -> None:
    assert json.loads(STORY.read_text(encoding="utf-8")) == build_story.build_story()


async def test_every_op_applies_on_replay() -> None:
    store = Store()
    write = get_write_api(store, None)
    data = json.loads(STORY.read_text(encoding="utf-8"))
    for seq, turn in enumerate(data["turns"], start=1):
        result = await write.apply_extraction_batch(ops=turn["ops"], max_seq=seq)
        assert not result.rejected, (
            seq,
            [(r.error.code, r.error.message) for r in result.rejected],
        )
        assert len(result.applied) == len(turn["ops"])
    types = Counter(n.type for n in store.iter_nodes() if not n.archived)
    assert types["event"] == len(data["turns"])
    titles = {n.title for n in store.iter_nodes()}
    # the entities stored twice, for the curator
    assert {"Mara", "Captain Mara Voss", "Quill", "Teodor Quill"} <= titles
    assert {"Lantern Market", "Night Bazaar of Qel"} <= titles


@pytest.mark.slow
async def test_story_with_curator_and_compactor(make_host) -> None:
    host = await make_host(curator, compactor)
    data = json.loads(STORY.read_text(encoding="utf-8"))
    curate = host.registry.get("curator").curate
    for seq, turn in enumerate(data["turns"], start=1):
        session = await open_session(host)
        result = await session.apply_extraction_batch(ops=turn["ops"], max_seq=seq)
        assert not result.rejected, (
            seq,
            [(r.error.code, r.error.message) for r in result.rejected],
        )
        await settle(host)
        await curate(CHAT)
    merges = [m for r in host.registry.get("curator").reports(CHAT) for m in r.merges]
    assert sorted(m.title for m in merges) == [
        "Captain Mara Voss",
        "Night Bazaar of Qel",
        "Teodor Quill",
    ]
    rollups = [r for rep in host.registry.get("compactor").reports(CHAT) for r in rep.rollups]
    assert {r.depth for r in rollups} == {1, 2}
    session = await open_session(host)
    people = [n.title for n in session.list_visible_candidates(types=["character_sheet"])]
    assert len(people) == len(set(people)) == 8
