"""The curator alone on a real host: duplicates merged in one batch, edges following, a report."""

from __future__ import annotations

from typing import Any

from sample_plugins import curator
from sample_plugins.curator import Curator, same_entity

from .conftest import CHAT, CommitSpy, event, link, open_session, person, place


def _neighbours(session: Any, node_id: str) -> dict[str, set[tuple[str, str]]]:
    """Raw neighbours of a node: id -> {(relation, direction)}."""
    found: dict[str, set[tuple[str, str]]] = {}
    for view in session.expand_from_seeds(
        [node_id],
        hops=1,
        project_to="raw",
        include_children=False,
        exclude_internal=True,
        edge_types=["involved_in", "allied_with", "occurred_at", "mentor_of", "related"],
    ):
        if view.id == node_id:
            continue
        pair = session.get_edge_summary(node_id, visible_node_ids=[node_id, view.id])
        found[view.id] = {(r.relation, r.direction) for r in pair.relations}
    return found


TURNS = [
    [
        event("Rumour of Mara", "Ilya hears of Mara, a smuggler.", "e1"),
        person("Mara", "c_mara", aliases=["玛拉"], identity="a smuggler"),
        person("Ilya Renn", "c_ilya"),
        place("Qel", "l_qel", aliases=["岐尔"]),
        link("c_mara", "e1", "involved_in"),
        link("e1", "l_qel", "occurred_at"),
    ],
    [
        event("Meeting the captain", "Ilya meets Captain Mara Voss on the Heron.", "e2"),
        person("Captain Mara Voss", "c_voss", aliases=["Voss"], goal="pay her debt"),
        person("Ilya Renn", "c_ilya"),
        person("Pim", "c_pim"),
        place("Night Bazaar of Qel", "l_bazaar", aliases=["灯市集"]),
        link("c_voss", "e2", "involved_in"),
        link("c_voss", "c_ilya", "allied_with"),
        link("c_voss", "c_pim", "mentor_of"),
        link("e2", "l_bazaar", "occurred_at"),
    ],
    [
        place("Lantern Market", "l_market", aliases=["灯市"], state="crowded"),
        event("At the market", "Ilya shops at the Lantern Market.", "e3"),
        link("e3", "l_market", "occurred_at"),
    ],
]


async def _apply(host) -> None:
    session = await open_session(host)
    for seq, ops in enumerate(TURNS, start=1):
        result = await session.apply_extraction_batch(ops=ops, max_seq=seq)
        assert not result.rejected, result.rejected


async def _seed(host) -> dict[str, str]:
    await _apply(host)
    session = await open_session(host)
    nodes = session.list_visible_candidates()
    people = [n for n in nodes if n.type == "character_sheet"]
    assert len([n for n in people if "Mara" in n.title]) == 2  # latest-only merging missed them
    return {n.title: n.id for n in nodes}


async def test_curator_merges_duplicates_and_moves_their_edges(make_host) -> None:
    spy = CommitSpy()
    host = await make_host(curator, spy)
    ids = await _seed(host)
    await host.drain()  # the seed's commit notifications are delivered by tasks
    commits_before = len(spy.seen)
    report = await host.registry.get("curator").curate(CHAT)
    await host.drain()

    assert report.rejected == ()
    by_survivor = {m.survivor_id: m for m in report.merges}
    assert set(by_survivor) == {ids["Mara"], ids["Night Bazaar of Qel"]}
    mara = by_survivor[ids["Mara"]]
    assert mara.merged_ids == (ids["Captain Mara Voss"],)
    assert mara.title == "Captain Mara Voss"
    assert {"Mara", "玛拉", "Voss"} <= set(mara.aliases)
    assert mara.relinked == 3
    bazaar = by_survivor[ids["Night Bazaar of Qel"]]
    assert bazaar.merged_ids == (ids["Lantern Market"],) and "灯市" in bazaar.aliases
    # Qel is not the Night Bazaar of Qel
    assert ids["Qel"] not in {i for m in report.merges for i in (m.survivor_id, *m.merged_ids)}
    # one batch (one commit) per merge
    assert len(spy.seen) - commits_before == 2

    session = await open_session(host)
    assert session.get_node_brief(ids["Captain Mara Voss"]) is None  # archived
    brief = session.get_node_brief(ids["Mara"], include_edge_summary=False)
    assert brief.title == "Captain Mara Voss"
    assert brief.row_values.get("goal") == "pay her debt"
    edges = _neighbours(session, ids["Mara"])
    assert ("involved_in", "out") in edges[ids["Rumour of Mara"]]
    assert ("involved_in", "out") in edges[ids["Meeting the captain"]]
    assert ("mentor_of", "out") in edges[ids["Pim"]]
    assert any(rel == "allied_with" for rel, _ in edges[ids["Ilya Renn"]])
    matches = session.find_by_name(query="Voss", types=["character_sheet"]).matches
    assert [m.id for m in matches] == [ids["Mara"]]
    bazaar_edges = _neighbours(session, ids["Night Bazaar of Qel"])
    assert ("occurred_at", "in") in bazaar_edges[ids["At the market"]]

    api = host.registry.get("curator")
    assert api.last_report(CHAT) is report
    again = await api.curate(CHAT)
    assert again.merges == () and api.last_report(CHAT) is report  # nothing left to merge
    assert any("Captain Mara Voss" in line for line in report.describe())


async def test_curator_on_commit_setting(make_host) -> None:
    host = await make_host(curator, settings={"curator_on_commit": True})
    await _apply(host)
    api = host.registry.get("curator")
    await api.drain()
    merged_titles = {t for r in api.reports(CHAT) for m in r.merges for t in m.merged_titles}
    assert merged_titles == {"Captain Mara Voss", "Lantern Market"}
    session = await open_session(host)
    titles = [n.title for n in session.list_visible_candidates(types=["character_sheet"])]
    assert titles.count("Captain Mara Voss") == 1 and "Mara" not in titles


class _Node:
    def __init__(self, title: str, aliases: list[str] | None = None) -> None:
        self.title = title
        self.fields = {"title": title, "aliases": aliases or []}


def test_identity_rules() -> None:
    assert same_entity(_Node("Mara"), _Node("Captain Mara Voss"), person=True)
    assert same_entity(_Node("Quill"), _Node("Teodor Quill"), person=True)
    assert same_entity(_Node("A", ["灯市"]), _Node("B", ["灯市集"]), person=False)
    assert same_entity(_Node("Eileen"), _Node("The healer", ["eileen"]), person=False)
    assert not same_entity(_Node("Qel"), _Node("Night Bazaar of Qel"), person=False)
    assert not same_entity(_Node("Mara"), _Node("Tamara Lind"), person=True)
    assert not same_entity(_Node("Captain Mara Voss"), _Node("Captain Ilya Renn"), person=True)


class _DocumentedSession:
    """A session with only the documented facade methods (no read-API extras)."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        if name in {"get_neighbors", "list_edges", "list_nodes"}:
            raise AttributeError(name)
        return getattr(self._session, name)


async def test_edges_found_the_same_way_without_get_neighbors(make_host) -> None:
    host = await make_host(curator)
    ids = await _seed(host)
    session = await open_session(host)
    for title in ("Captain Mara Voss", "Ilya Renn", "Night Bazaar of Qel"):
        node_id = ids[title]
        direct = set(Curator._edges_of(session, node_id, set()))
        documented = set(Curator._edges_of(_DocumentedSession(session), node_id, set()))
        assert direct and documented == direct
    voss = set(Curator._edges_of(session, ids["Captain Mara Voss"], {ids["Pim"]}))
    assert ids["Pim"] not in {t for t, _, _ in voss}
    assert (ids["Meeting the captain"], "involved_in", "outgoing") in voss


async def test_later_curates_probe_what_was_written_since(make_host) -> None:
    host = await make_host(curator)
    await _apply(host)
    api = host.registry.get("curator")
    first = await api.curate(CHAT)  # the first call for a chat looks at everything
    assert len(first.merges) == 2
    session = await open_session(host)
    result = await session.apply_extraction_batch(
        ops=[
            person("Quill", "c_q", aliases=["the Fence"]),
            event("A fence", "Quill appraises the satchel.", "e4"),
            link("c_q", "e4", "involved_in"),
        ],
        max_seq=4,
    )
    assert not result.rejected
    await host.drain(CHAT)  # the curator hears of the commit (memgraph_commit) in the background
    assert (await api.curate(CHAT)).merges == ()  # nothing to pair the new Quill with yet
    result = await session.apply_extraction_batch(
        ops=[person("Teodor Quill", "c_t", aliases=["泰奥"])], max_seq=5
    )
    assert not result.rejected
    await host.drain(CHAT)
    report = await api.curate(CHAT)  # only the new node is probed: by its words, "quill" too
    assert [(m.title, m.merged_titles) for m in report.merges] == [
        ("Teodor Quill", ("Teodor Quill",))
    ]
    full = await api.curate(CHAT, full=True)
    assert full.merges == ()
