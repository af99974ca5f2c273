"""`memgraph-host import`: the whole file is checked before
the chat is touched, every problem is reported as ``file: path.to.field: what is wrong`` with exit
status 2, an empty graph replaces a non-empty chat only with ``--replace``, an import is anchored
to the chat's messages (chatting after it never rolls it away), and CONFLICT is retried."""

from __future__ import annotations

import json

import pytest

from host import Host
from host.cli.cli import main
from memgraph_plugin.storage import LanceStorage
from memgraph_plugin.storage.errors import ConflictError
from memgraph_plugin.turn.pipeline import pipeline_for


def _node(nid: str, summary: str, seq: int | None = None) -> dict:
    return {"id": nid, "type": "event", "title": "", "fields": {"summary": summary}, "seqTo": seq}


STORE = {
    "nodes": {"n_1": _node("n_1", "harbor storm", 30), "n_2": _node("n_2", "guild vote", 40)},
    "edges": [{"from": "n_1", "to": "n_2", "type": "related"}],
    "nodeSeq": 2,
    "seqCounter": 40,
}


def _cli(data, capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _exported(data, capsys, chat: str = "c") -> dict:
    code, out, _ = _cli(data, capsys, "export", chat)
    assert code == 0
    return json.loads(out)


@pytest.fixture
def data(tmp_path, capsys):
    """A data dir whose chat "c" holds STORE (imported through the CLI)."""
    d = tmp_path / "data"
    path = tmp_path / "store.json"
    path.write_text(json.dumps(STORE))
    code, _, err = _cli(d, capsys, "import", "c", str(path))
    assert code == 0, err
    return d


BAD_FILES = [
    ({"foo": 1}, "store.json: nodes: missing"),
    ([1, 2], "store.json: expected a JSON object"),
    (
        {"nodes": {"n_1": _node("n_1", "a")}, "edges": [{"from": "n_1", "to": "n_9", "type": "x"}]},
        "store.json: edges[0].to: no node 'n_9'",
    ),
    ({"nodes": {"n_1": {"id": "n_1", "type": 5}}, "edges": []}, "store.json: nodes.n_1.type:"),
    ({"nodes": {"n\x01": _node("n\x01", "a")}, "edges": []}, "control character"),
    ({"nodes": {"n_1": _node("n_1", "a", 2**63)}, "edges": []}, "nodes.n_1.seqTo:"),
    (
        {"nodes": {"n_1": {**_node("n_1", "a"), "childrenIds": ["n_7"]}}, "edges": []},
        "store.json: nodes.n_1.childrenIds[0]: no node 'n_7'",
    ),
    ({"nodes": {"n_1": _node("n_1", "a")}, "edges": [], "seqCounter": -1}, "seqCounter:"),
    ({"nodes": {"n_1": _node("n_1", "x" * 70_000)}, "edges": []}, "nodes.n_1.fields.summary:"),
    # the size caps
    (
        {"nodes": {"n_1": {**_node("n_1", "a"), "fields": {"k" * 300: 1}}}, "edges": []},
        "store.json: nodes.n_1.fields: a field name of 300 characters",
    ),
    (
        {
            "nodes": {
                "n_1": {
                    **_node("n_1", "a"),
                    "fields": {f"f{i}": "x" * 60_000 for i in range(20)},
                }
            },
            "edges": [],
        },
        "store.json: nodes.n_1: the node is over 1048576 bytes",
    ),
    # the hierarchy
    (
        {"nodes": {"n_1": {**_node("n_1", "a"), "parentId": "n_1"}}, "edges": []},
        "store.json: nodes.n_1.parentId: node 'n_1' is its own parent",
    ),
    (
        {
            "nodes": {
                "n_1": {**_node("n_1", "a"), "parentId": "n_2"},
                "n_2": {**_node("n_2", "b"), "parentId": "n_3"},
                "n_3": {**_node("n_3", "c"), "parentId": "n_1"},
                "n_4": {**_node("n_4", "d"), "parentId": "n_1"},
            },
            "edges": [],
        },
        "store.json: nodes.n_1.parentId: node 'n_1' is in a parent cycle (n_1 -> n_2 -> n_3",
    ),
    (
        {
            "nodes": {"n_1": _node("n_1", "a"), "n_2": _node("n_2", "b")},
            "edges": [{"from": "n_1", "to": "n_2", "type": "contains"}],
        },
        "store.json: edges[0]: a contains edge 'n_1' -> 'n_2', but node 'n_2' has no parentId",
    ),
]


@pytest.mark.parametrize(("content", "message"), BAD_FILES)
def test_a_bad_file_is_refused_whole_with_the_field_path(data, tmp_path, capsys, content, message):
    before = _exported(data, capsys)
    bad = tmp_path / "store.json"
    bad.write_text(json.dumps(content))
    code, _, err = _cli(data, capsys, "import", "c", str(bad))
    assert code == 1, err  # a user error (docs/cli.md)
    assert message in err and "Traceback" not in err
    assert _exported(data, capsys) == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            b'{"nodes": {"n_1": {"id": "n_1", "type": "event", "fields": {"summary": "a"}}, '
            b'"n_1": {"id": "n_1", "type": "event", "fields": {"summary": "b"}}}, "edges": []}',
            "nodes.n_1: duplicate node id 'n_1' (given twice in the file)",
        ),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"nodes": {}, "edges": [], "x": "\xff\xfe"}', "not UTF-8"),
        (b'{"nodes": {}, "edges": [], "seqCounter": NaN}', "NaN"),
        (b'{"nodes": {}, "edges": [', "not valid JSON"),
    ],
)
def test_unreadable_json_is_refused_with_a_clear_line(data, tmp_path, capsys, raw, message):
    before = _exported(data, capsys)
    bad = tmp_path / "store.json"
    bad.write_bytes(raw)
    code, _, err = _cli(data, capsys, "import", "c", str(bad))
    assert code == 1, err  # a user error (docs/cli.md)
    assert err.count("\n") == 1 and "store.json" in err and message in err
    assert "Traceback" not in err and "RecursionError" not in err
    assert _exported(data, capsys) == before


@pytest.mark.slow
def test_an_empty_graph_replaces_a_non_empty_chat_only_with_replace(data, tmp_path, capsys):
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"nodes": {}, "edges": []}))
    code, _, err = _cli(data, capsys, "import", "c", str(empty))
    assert code == 1 and "--replace" in err
    assert set(_exported(data, capsys)["nodes"]) == {"n_1", "n_2"}
    code, _, err = _cli(data, capsys, "import", "c", str(empty), "--replace")
    assert code == 0, err
    assert _exported(data, capsys)["nodes"] == {}
    # an empty graph into an empty chat needs no flag
    assert _cli(data, capsys, "import", "fresh", str(empty))[0] == 0


async def test_chatting_after_an_import_keeps_the_imported_graph(tmp_path, capsys):
    host = Host(data_dir=tmp_path / "d", entry_points=False)
    await host.start()
    pipeline = pipeline_for(host)
    await pipeline.run_turn("c", "hi", "hello")  # one answer before the import: message seq 1
    path = tmp_path / "store.json"
    path.write_text(json.dumps(STORE))  # its seqCounter (40) is far past the chat's messages
    service = host.registry.get("memory-graph")
    commit = await service.import_graph("c", json.loads(path.read_text()))
    assert commit.seq == 1  # anchored to the chat's messages

    await pipeline.run_turn("c", "what happened at the harbor?", "a storm, I recall")
    s = await service.open_session(host.get_context("c"))
    nodes = {n.id: n for n in s.list_nodes()}
    assert {"n_1", "n_2"} <= set(nodes)  # the imported graph is kept
    # ... and the built-in offline extractor adds the new messages' events on top of it
    new = sorted(n.fields["summary"] for i, n in nodes.items() if i not in ("n_1", "n_2"))
    assert new == ["a storm, I recall", "what happened at the harbor?"]
    kinds = [r.kind for r in await service.history("c")]
    after = kinds[kinds.index("import") + 1 :]  # the second turn's writes, no rollback
    assert after and set(after) == {"write"}
    outcome = await pipeline.recall("c")
    assert outcome is not None and "harbor storm" in outcome.prompt  # recalled or pinned
    await host.stop()


def test_cli_import_retries_a_conflict(data, tmp_path, capsys, monkeypatch):
    real = LanceStorage.import_sync
    calls = []

    def conflicting_once(self, chat_id, data_dict, **kwargs):
        calls.append(chat_id)
        if len(calls) == 1:  # another writer got there first, once
            raise ConflictError(chat_id, 1, 2)
        return real(self, chat_id, data_dict, **kwargs)

    monkeypatch.setattr(LanceStorage, "import_sync", conflicting_once)
    path = tmp_path / "two.json"
    path.write_text(json.dumps({**STORE, "nodes": {"n_1": STORE["nodes"]["n_1"]}, "edges": []}))
    code, _, err = _cli(data, capsys, "import", "c", str(path))
    assert code == 0, err
    assert len(calls) == 2 and set(_exported(data, capsys)["nodes"]) == {"n_1"}


def test_cli_import_checks_and_normalises_the_file_once(data, tmp_path, capsys, monkeypatch):
    """The CLI checks and normalises the file in one pass (`import_pass.checked_normal_store`),
    and hands the service its normal form (a `NormalStore`), which only anchors it: no
    separate check or normal form, in the CLI or in the service."""
    from memgraph_plugin.engine.load import import_pass, store_file, store_import

    calls: list[str] = []

    def counted(name, real):
        def wrapper(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(store_file, "store_is_clean", counted("check", store_file.store_is_clean))
    monkeypatch.setattr(
        store_import, "store_is_clean", counted("check", store_import.store_is_clean)
    )
    monkeypatch.setattr(store_file, "store_problems", counted("check", store_file.store_problems))
    monkeypatch.setattr(
        store_file, "normalised_store", counted("normalise", store_file.normalised_store)
    )
    monkeypatch.setattr(
        store_import, "normalised_store", counted("normalise", store_import.normalised_store)
    )
    monkeypatch.setattr(
        store_file,
        "checked_normal_store",
        counted("one pass", import_pass.checked_normal_store),
    )
    store = {**STORE, "nodes": {**STORE["nodes"], "n_3": _node("n_3", "a lantern", 50)}}
    path = tmp_path / "three.json"
    path.write_text(json.dumps(store))
    code, _, err = _cli(data, capsys, "import", "c", str(path))
    assert code == 0, err
    assert calls == ["one pass"]
    exported = _exported(data, capsys)
    assert set(exported["nodes"]) == {"n_1", "n_2", "n_3"}
    assert exported["nodes"]["n_3"]["fields"] == {"summary": "a lantern"}


def test_the_file_is_parsed_checked_and_imported_under_one_collector_pause(
    tmp_path, capsys, monkeypatch
) -> None:
    """The parse makes about ten objects per node and edge: `memgraph-host import` holds the
    collector off from the parse to the commit, and turns it back on when it is done."""
    import gc

    from memgraph_plugin.engine.load import store_file
    from memgraph_plugin.storage.lance import LanceStorage as Storage

    seen: dict[str, bool] = {}
    parse, commit = store_file.parse_json, Storage.import_sync

    def parsing(raw: bytes, source: str) -> object:
        seen["parse"] = gc.isenabled()
        return parse(raw, source)

    def committing(self: Storage, *args: object, **kwargs: object) -> object:
        seen["commit"] = gc.isenabled()
        return commit(self, *args, **kwargs)

    monkeypatch.setattr(store_file, "parse_json", parsing)
    monkeypatch.setattr(Storage, "import_sync", committing)
    assert gc.isenabled()
    path = tmp_path / "store.json"
    path.write_text(json.dumps(STORE))
    code, _, err = _cli(tmp_path / "data", capsys, "import", "c", str(path))
    assert code == 0, err
    assert seen == {"parse": False, "commit": False}
    assert gc.isenabled()
