"""A person's sheet is titled by the name they speak under, even when another speaker's
nickname for them came first ("Hey Mel!" before Melanie spoke): the nickname stays an alias and
both names still find the one sheet. On a real host with LanceDB through the built-in offline
extractor, live and through `memgraph-host ingest`'s code path."""

from __future__ import annotations

import json
from pathlib import Path

from host import Host
from memgraph_plugin.ingest import ingest_file
from memgraph_plugin.turn import pipeline_for
from tests.recall.spoken_chat import spoken_chat

LINES = [
    ("Ben", "Hey Mel, how was the trip to Rome?"),
    ("Melanie", "It was great, Ben! I saw the Colosseum."),
    ("Ben", "Nice one, Mel. Did you bring anything back?"),
    ("Melanie", "I bought a silk scarf there."),
    ("Ben", "I hope Mel liked the food there too."),
]


def _sheets(store: object) -> dict[str, object]:
    return {v.title: v for v in store.newest_in_pool("character_sheet", 20)}


def _assert_titled_by_speaker(store: object) -> None:
    sheets = _sheets(store)
    assert "Mel" not in sheets
    melanie = sheets["Melanie"]
    assert "Mel" in melanie.fields["aliases"]
    assert "Melanie" not in melanie.fields["aliases"]  # the title is no alias of itself
    names = store.name_index().ids
    assert names[("character_sheet", "mel")] == {melanie.id}
    assert names[("character_sheet", "melanie")] == {melanie.id}
    # the scarf message is hers: the speaker's sheet is linked to it
    scarf = next(
        e for e in store.newest_in_pool("event", 20) if "scarf" in e.fields.get("summary", "")
    )
    assert (melanie.id, "involved_in", scarf.id) in set(store.out_edges(melanie.id))


async def test_a_sheet_named_by_a_nickname_takes_the_speakers_name(tmp_path: Path) -> None:
    host, pipeline = await spoken_chat(tmp_path, "trip", LINES)
    try:
        session = await pipeline.open_session("trip")
        _assert_titled_by_speaker(session.store)
    finally:
        await host.stop()


async def test_the_same_title_after_an_ingest(tmp_path: Path) -> None:
    transcript = tmp_path / "trip.jsonl"
    rows = [
        {"role": "user" if i % 2 == 0 else "assistant", "name": who, "content": text}
        for i, (who, text) in enumerate(LINES)
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    try:
        report = await ingest_file(host, transcript, "trip")
        assert report.error is None
        session = await pipeline_for(host).open_session("trip")
        _assert_titled_by_speaker(session.store)
    finally:
        await host.stop()
