"""Recall gathers a person's facts across a chat: the fact signal covers
each fact of the asked kind once before a fact's second mention, and the speaker boost knows a
person by every name their sheet holds; a hand-written chat through the built-in offline
extractor on a real host with LanceDB."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from host import Host
from memgraph_plugin.recall.ranking.fact_signal import fact_hits
from memgraph_plugin.recall.ranking.fusion import fuse
from memgraph_plugin.recall.ranking.people import known_names
from memgraph_plugin.recall.ranking.signals import Hit
from tests.recall.spoken_chat import spoken_chat

CHAT = "club"
LINES = [
    ("Nora", "I'm really into swimming, I do laps at the pool every morning before work."),
    ("Ben", "Hey Nora, that sounds tiring but healthy."),
    ("Nora", "I love swimming in the lake near my house, the water is so clear."),
    ("Ben", "Nice. I mostly read on weekends."),
    ("Nora", "I took up pottery last month and made a lopsided bowl."),
    ("Ben", "Ha, show me the bowl sometime, Nora."),
    ("Nora", "I love swimming with my sister on Saturdays, she is faster than me."),
    ("Ben", "Your sister sounds competitive."),
    ("Nora", "I'm really into chess too, my club meets on Tuesdays at the library."),
    ("Ben", "Chess is hard. Good luck at the club, Nora."),
]


async def _chat(tmp_path: Path) -> tuple[Host, object]:
    return await spoken_chat(tmp_path, CHAT, LINES)


def _sheet(store: object, title: str) -> object:
    return next(v for v in store.newest_in_pool("character_sheet", 20) if v.title == title)


async def test_fact_signal_covers_every_fact_before_repeating_one(tmp_path: Path) -> None:
    host, pipeline = await _chat(tmp_path)
    try:
        session = await pipeline.open_session(CHAT)
        store = session.store
        nora = _sheet(store, "Nora")
        assert {"swimming", "chess"} <= set(nora.fields["hobbies"])
        hits = fact_hits(session, [nora.id], ["activities", "nora"], 10)
        texts = [store.node(h.id).fields["summary"] for h in hits]
        assert len(texts) == 5  # every evidence message of her hobbies and likes
        first = " ".join(texts[:3])
        # swimming is mentioned three times, pottery and chess once: the first three ranks
        # hold the three pastimes, not three mentions of swimming
        assert "swimming" in first and "pottery" in first and "chess" in first
        assert all(h.via == nora.id and h.edge_type == "evidence" for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    finally:
        await host.stop()


async def test_speaker_boost_knows_a_person_by_any_of_their_names(tmp_path: Path) -> None:
    host, pipeline = await _chat(tmp_path)
    try:
        session = await pipeline.open_session(CHAT)
        store = session.store
        events = store.newest_in_pool("event", 50)
        leaves = [
            n
            for e in events
            for n in ([e] if not e.children_ids else [store.node(c) for c in e.children_ids])
        ]
        by_text = {n.fields.get("summary"): n.id for n in leaves if n is not None}
        bens = by_text["Ha, show me the bowl sometime, Nora."]
        noras = by_text["I took up pottery last month and made a lopsided bowl."]
        lists = {"keyword": [Hit(bens, 2.0), Hit(noras, 1.0)]}
        assert [f.id for f in fuse(lists, store=store)][:2] == [bens, noras]
        # a sheet titled by a nickname, her written name an alias: her own message comes first
        sheet = SimpleNamespace(title="Nor", fields={"aliases": ("Nora",)})
        names = known_names(sheet)
        assert names == {"nor", "nora"}
        assert [f.id for f in fuse(lists, store=store, speakers=names)][:2] == [noras, bens]
        assert [f.id for f in fuse(lists, store=store, speakers=frozenset({"nor"}))][:2] == [
            bens,
            noras,
        ]
    finally:
        await host.stop()
