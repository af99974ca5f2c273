"""The explorer's JSON endpoints and data, over a real LanceDB written by another process."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from memgraph_plugin.recall.hybrid_router import Inclusion
from memgraph_plugin.recall.trace import TRACE_DIR, RecallTrace, TraceLog
from memgraph_plugin.type_colours import colour_of

from .conftest import write_nodes

# `memgraph-host serve` and a writer process
pytestmark = [pytest.mark.process, pytest.mark.slow]


def get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_chats_graph_search_and_node_detail(served: str, data_dir: Path) -> None:
    status, body = get(served + "api/chats")
    assert status == 200 and [c["id"] for c in body["chats"]] == ["harbor"]
    assert body["chats"][0]["version"] == 4

    status, graph = get(served + "api/chats/harbor/graph")
    titles = {n["title"]: n for n in graph["nodes"]}
    assert set(titles) == {
        "Mira",
        "Old lighthouse",
        "Harbor storm",
        "Lantern found in the lighthouse",
    }
    assert graph["total_nodes"] == 4 and graph["total_edges"] == 2
    assert graph["types"] == {  # colours: memgraph_plugin/type_colours.py; events: a timeline
        "character_sheet": {"colour": colour_of("character_sheet"), "timeline": False},
        "event": {"colour": colour_of("event"), "timeline": True},
        "location_state": {"colour": colour_of("location_state"), "timeline": False},
    }
    storm = titles["Harbor storm"]["id"]
    assert {"source": storm, "target": titles["Mira"]["id"], "type": "involved_in"} in graph[
        "edges"
    ]

    _, found = get(served + "api/chats/harbor/search?q=LIGHTHOUSE")
    assert [r["title"] for r in found["results"]] == [
        "Old lighthouse",
        "Lantern found in the lighthouse",
    ]

    _, detail = get(served + f"api/chats/harbor/nodes/{storm}")
    assert detail["fields"] == {"summary": "Harbor storm in the harbour town"}
    assert detail["edges"] == [
        {
            "direction": "out",
            "type": "involved_in",
            "other": titles["Mira"]["id"],
            "other_title": "Mira",
            "seq": 0,
        }
    ]
    assert [h["version"] for h in detail["history"]] == [3]


def test_a_node_lists_the_recalls_that_chose_it(served: str, data_dir: Path) -> None:
    _, graph = get(served + "api/chats/harbor/graph")
    mira = next(n["id"] for n in graph["nodes"] if n["title"] == "Mira")
    log = TraceLog(data_dir / TRACE_DIR)
    base = dict(
        chat_id="harbor",
        anchor=(1, 0),
        router="builtin",
        mode="hybrid",
        score_mode="rrf",
        fallback_reason=None,
        pool_size=4,
        recent_window=2,
        seeds=(),
    )
    log.append(
        RecallTrace(
            seq=1,
            query="where is Mira?",
            always_inject_ids=(),
            selected=(Inclusion(id=mira, why="seed", score=0.5),),
            **base,
        )
    )
    log.append(RecallTrace(seq=3, query="the storm", always_inject_ids=(), selected=(), **base))
    _, detail = get(served + f"api/chats/harbor/nodes/{mira}")
    assert [(r["seq"], r["query"]) for r in detail["recalls"]] == [(1, "where is Mira?")]
    assert "seed" in detail["recalls"][0]["why"]


def test_bad_requests_are_answered_not_crashed(served: str) -> None:
    assert get(served + "api/chats/nope/graph") == (
        404,
        {
            "error": "unknown chat 'nope': this data dir has no commits for it",
            "code": "unknown_chat",
            "chat": "nope",
        },
    )
    status, body = get(served + "api/chats/harbor/nodes/n_999")
    assert status == 404 and "n_999" in body["error"]
    status, _ = get(served + "static/..%2F..%2Fexplorer.py")
    assert status == 404
    status, _ = get(served + "api/chats/harbor/nope")
    assert status == 404
    assert get(served + "api/chats")[0] == 200  # still serving


def _next_event(stream) -> tuple[str, dict]:
    """The next event of a server-sent stream (keep-alive comments skipped)."""
    name = ""
    while True:
        line = stream.readline()
        assert line, "the stream ended"
        if line.startswith(b"event: "):
            name = line[7:].decode().strip()
        elif line.startswith(b"data: "):
            return name, json.loads(line[6:])


def test_the_event_stream_reports_another_writers_commit(served: str, data_dir: Path) -> None:
    with urllib.request.urlopen(served + "api/chats/harbor/events", timeout=120) as stream:
        assert _next_event(stream) == ("hello", {"chat": "harbor", "version": 4})
        write_nodes(data_dir, "harbor", "Quay:location_state")
        assert _next_event(stream) == ("commit", {"chat": "harbor", "version": 5})


@pytest.mark.parametrize("chat", ["x' OR '1'='1", "with/slash"])
def test_odd_chat_ids_round_trip_through_the_url(tmp_path: Path, chat: str) -> None:
    from urllib.parse import quote

    from memgraph_plugin.engine.graph.store import Store
    from memgraph_plugin.storage import LanceStorage, StorageSettings
    from memgraph_plugin.web import GraphExplorer, start_server

    write_nodes(tmp_path, chat, "Mira:character_sheet")
    storage = LanceStorage(StorageSettings.from_settings({}, data_dir=tmp_path))
    server, _ = start_server(GraphExplorer(storage, Store.from_dict, tmp_path))
    try:
        _, body = get(server.url + f"api/chats/{quote(chat, safe='')}/graph")
        assert body["chat"] == chat and [n["title"] for n in body["nodes"]] == ["Mira"]
    finally:
        server.stop()
