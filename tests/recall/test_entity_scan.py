"""How far the walk from a named person reads: a person in every message of a long chat is a
hub, and `entity_events` reads only their newest ``ENTITY_SCAN`` edges (it read the oldest ones,
so a long chat's recent events were never reached this way), finding their recent events; the
store hands out a slice of a hub's edges without copying the rest."""

from __future__ import annotations

from types import SimpleNamespace

from memgraph_plugin.recall.ranking import signals
from memgraph_plugin.recall.ranking.signals import ENTITY_SCAN, entity_events
from tests.story_graph import build_store, node

HUB_EVENTS = ENTITY_SCAN + 300


def _hub_store():
    """Ada (a character) involved in HUB_EVENTS events, oldest first; every event names the
    harbour, so only the edges the walk reads decide which events it can return."""
    nodes = [node("ada", "character_sheet", "Ada", 0, fields={"title": "Ada"})]
    edges = []
    for i in range(1, HUB_EVENTS + 1):
        nodes.append(node(f"e{i}", "event", "", i, fields={"summary": f"Ada at the harbour {i}"}))
        edges.append(("ada", "involved_in", f"e{i}"))
    return build_store(nodes, edges, node_seq=HUB_EVENTS, seq_counter=HUB_EVENTS)


def test_store_hands_out_the_first_or_newest_edges_of_a_hub() -> None:
    store = _hub_store()
    assert store.degree("ada") == HUB_EVENTS
    assert len(store.out_edges("ada")) == HUB_EVENTS
    first = store.out_edges("ada", limit=3)
    assert [k.target for k in first] == ["e1", "e2", "e3"]
    newest = store.out_edges("ada", limit=3, newest=True)
    assert [k.target for k in newest] == [
        f"e{HUB_EVENTS - 2}",
        f"e{HUB_EVENTS - 1}",
        f"e{HUB_EVENTS}",
    ]
    assert store.out_edges("ada", limit=0, newest=True) == ()
    assert store.in_edges("e5", limit=1)[0].source == "ada"


def test_a_hub_person_reaches_their_newest_events_reading_a_bounded_slice(monkeypatch) -> None:
    store = _hub_store()
    session = SimpleNamespace(store=store)
    asked: list[int] = []
    scored = signals.term_scores

    def counting(session, node_ids, terms):  # how many reached nodes the walk scores
        ids = list(node_ids)
        asked.append(len(ids))
        return scored(session, ids, terms)

    monkeypatch.setattr(signals, "term_scores", counting)
    hits = entity_events(session, ["ada"], ["ada", "harbour"], k=5)
    assert asked == [ENTITY_SCAN]  # never the whole hub
    found = [int(h.id[1:]) for h in hits]
    assert found == list(range(HUB_EVENTS, HUB_EVENTS - 5, -1))  # the newest first
    assert all(h.via == "ada" and h.edge_type == "involved_in" for h in hits)
