"""The offline extractor: names and places from raw text, and as the default plugin on a real
host with LanceDB: every message extracted, names resolved to one node, idempotent per message."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from host import Host
from memgraph_plugin.extraction import extract_message_ops, find_mentions
from memgraph_plugin.turn import ReplayExtractor, pipeline_for

CHAT = "talk"


def names(text: str, **kwargs) -> list[tuple[str, bool]]:
    return [(m.name, m.place) for m in find_mentions(text, **kwargs)]


def test_names_across_sentence_starts_multi_word_and_possessives() -> None:
    text = (
        "Yesterday Melanie went to Paris with Juno Kade, as Melanie said. "
        "Then Mel's dog barked at the Lantern Market. "
        "Thanks, Caroline! Painting is fun. Lately Pim naps. Quill keeps a stall in the Bank of "
        "Qel, ask Quill."
    )
    assert names(text) == [
        ("Melanie", False),
        ("Paris", True),
        ("Juno Kade", False),
        ("Mel", False),
        ("Lantern Market", True),
        ("Caroline", False),
        ("Pim", False),  # after an opener word ("Lately", "Hey")
        ("Quill", False),
        ("Bank of Qel", True),
    ]
    assert names("I think so. Sounds great, I'm in. LGBTQ people rock.") == []
    # a lone sentence opener needs evidence: known to the chat, or capitalised mid-sentence
    assert names("Pim naps. Absolutely!") == []
    assert names("Pim naps.", known=lambda w: w == "pim") == [("Pim", False)]


def test_cjk_quoted_names_and_places() -> None:
    assert names("玛拉说「灯市」很热闹，『伊利亚』来了。") == [("灯市", True), ("伊利亚", False)]


def test_one_message_becomes_an_event_with_its_full_text_and_links() -> None:
    text = "Well, Mel and Melanie's brother met at the Lantern Market. " + "Long tail. " * 30
    ops = extract_message_ops(
        text, speaker="CAROLINE", role="user", index=4, time="8 May 2023", previous_event_id="n_9"
    )
    event = ops[0]
    assert event["type"] == "event" and event["fields"]["summary"] == text  # never truncated
    assert event["fields"] | {"summary": ""} == {
        "summary": "", "speaker": "Caroline", "role": "user", "time": "8 May 2023", "message": 4,
        "time_iso": "2023-05-08",  # the written time kept, its ISO 8601 form beside it
    }
    creates = {op["title"]: op for op in ops if op["op"] == "create" and op["type"] != "event"}
    assert set(creates) == {"Caroline", "Melanie", "Lantern Market"}  # Mel == Melanie
    assert creates["Melanie"]["fields"]["aliases"] == ["Mel"]
    assert creates["Lantern Market"]["type"] == "location_state"
    links = [
        (op.get("source_ref") or op.get("source_node_id"), li.get("target_ref") or
         li.get("target_node_id"), li["relation"])
        for op in ops if op["op"] == "link_upsert" for li in op["links"]
    ]
    refs = {op["title"]: op["ref"] for op in creates.values()}
    assert links == [
        (refs["Caroline"], "ev", "involved_in"),
        ("ev", refs["Melanie"], "mentions"),
        ("ev", refs["Lantern Market"], "occurred_at"),
        ("ev", "n_9", "follows"),
    ]
    assert extract_message_ops("   ") == []
    assert extract_message_ops("Hi Mara", types={"event"})[1:] == []  # schema without characters


async def graph(host: Host) -> tuple[list, list]:
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    data = session.store.to_dict()
    nodes = [n for n in data["nodes"].values() if not n.get("archived")]
    return nodes, data["edges"]


def by_type(nodes: list) -> Counter:
    return Counter(n["type"] for n in nodes if not n.get("semanticRollup"))


async def test_default_plugin_extracts_every_message_and_resolves_names(host: Host) -> None:
    pipeline = pipeline_for(host)
    assert "memgraph-extract-offline" in {r.name for r in host.plugin_records()}
    lines = [
        ("Caroline", "user", "Hey Melanie! I went to the support group in Boston yesterday."),
        ("Melanie", "assistant", "That's great, Caroline. Mel is proud of you!"),
        ("Caroline", "user", "MELANIE, you are sweet. Melanie's kids still love the beach?"),
        ("Melanie", "assistant", "They do. We went to Cape Cod with Caroline's friend Jon."),
    ]
    for speaker, role, text in lines:
        add = pipeline.add_user_message if role == "user" else pipeline.add_assistant_message
        await add(CHAT, text, name=speaker, time="8 May 2023")
    nodes, edges = await graph(host)
    events = sorted((n for n in nodes if n["type"] == "event" and "message" in n["fields"]),
                    key=lambda n: n["fields"]["message"])
    assert [e["fields"]["summary"] for e in events] == [t for _, _, t in lines]
    assert [e["fields"]["speaker"] for e in events] == [s for s, _, _ in lines]
    people = sorted(n["title"] for n in nodes if n["type"] == "character_sheet")
    assert people == ["Caroline", "Jon", "Melanie"]  # Mel, MELANIE, Melanie's: one node
    melanie = next(n for n in nodes if n["title"] == "Melanie")
    assert "Mel" in melanie["fields"]["aliases"]
    places = sorted(n["title"] for n in nodes if n["type"] == "location_state")
    assert places == ["Boston", "Cape Cod"]
    kinds = Counter(e["type"] for e in edges)
    assert kinds["follows"] == 3 and kinds["involved_in"] == 4 and kinds["occurred_at"] == 2
    follows = {(e["from"], e["to"]) for e in edges if e["type"] == "follows"}
    ids = [e["id"] for e in events]
    assert follows == set(zip(ids[1:], ids[:-1], strict=True))


async def test_regenerate_edit_and_delete_leave_nothing_doubled(host: Host) -> None:
    pipeline = pipeline_for(host)
    await pipeline.add_user_message(CHAT, "Ask Mara about the Lantern Market.", name="Ilya")
    await pipeline.add_assistant_message(CHAT, "Mara shrugs at Ilya.", name="Quill")
    before = by_type((await graph(host))[0])
    chat = host.chat(CHAT)
    # regenerate the answer: same seq, the old answer's event and Quill's mention go
    chat.truncate(0)
    out = await pipeline.add_assistant_message(CHAT, "Mara laughs at Ilya.", name="Quill")
    assert out is not None and out.replaced
    nodes, _ = await graph(host)
    assert by_type(nodes) == before
    summaries = [n["fields"]["summary"] for n in nodes if n["type"] == "event"]
    assert summaries[-1].startswith("Mara laughs")
    # edit the user's message in place: delete from it, write it again
    assert await pipeline.forget_messages_from(CHAT, 0) == 2
    nodes, edges = await graph(host)
    assert by_type(nodes) == Counter() and edges == []
    await pipeline.add_user_message(CHAT, "Ask Pim about the docks.", name="Ilya")
    nodes, _ = await graph(host)
    assert sorted(n["title"] for n in nodes if n["type"] == "character_sheet") == ["Ilya", "Pim"]
    assert by_type(nodes)["event"] == 1


async def test_steps_aside_for_another_extractor(tmp_path: Path) -> None:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    host.register_plugin(ReplayExtractor({1: []}), name="replay")
    await host.start()
    try:
        await pipeline_for(host).add_user_message(CHAT, "Hello Mara.")
        nodes, _ = await graph(host)
        assert nodes == []
    finally:
        await host.stop()
