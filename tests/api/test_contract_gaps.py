"""Points where the contract (docs/contract.md) and the code could part, each pinned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from host import Host
from memgraph_plugin import MemoryGraphError, Store, get_read_api, get_write_api
from memgraph_plugin.api import external as ext
from memgraph_plugin.engine.model.schema import normalize_schema

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
async def host(tmp_path: Path):
    h = Host(data_dir=tmp_path / "d", entry_points=False)
    await h.start()
    yield h
    await h.stop()


async def _session(host: Host, chat_id: str = "c1"):
    return await host.registry.get("memory-graph").open_session(host.get_context(chat_id))


# 13 ----------------------------------------------------------------------------------------
async def test_upsert_links_applied_counts_edges_as_the_contract_says() -> None:
    write = get_write_api(Store())
    a = (await write.create_node(type="event", title="a", fields={"summary": "a"})).id
    b = (await write.create_node(type="event", title="b", fields={"summary": "b"})).id
    link = {"target": {"id": b}, "relation": "causes", "direction": "bidirectional"}
    assert (await write.upsert_links(source={"id": a}, links=[link])).applied == 2
    assert (await write.upsert_links(source={"id": a}, links=[link])).applied == 0  # duplicate


def test_docs_say_where_the_contract_and_the_original_disagree() -> None:
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    section = text.split("## Where the contract and the original disagree", 1)[1]
    for needle in ("upsert_links", "applied", "API.md wins", "vector_search", "max_depth"):
        assert needle in section, needle


# 14 ----------------------------------------------------------------------------------------
async def test_a_write_missing_a_required_argument_is_bad_args(host: Host) -> None:
    session = await _session(host)
    with pytest.raises(MemoryGraphError) as err:
        await session.create_node(title="no type")
    assert err.value.code == "BAD_ARGS" and "type" in err.value.message
    with pytest.raises(MemoryGraphError) as err:
        await session.delete_node(id="n_1", colour="red")  # unknown argument, on the session
    assert err.value.code == "BAD_ARGS" and "colour" in err.value.message
    write = get_write_api(Store())
    for call in (
        lambda: write.edit_node(title="x"),
        lambda: write.delete_node(),
        lambda: write.upsert_links(links=[]),
        lambda: write.compact_nodes(type="event", summary="s"),
        lambda: write.apply_extraction_batch(),
        lambda: write.create_node(type="event", colour="red"),  # unknown argument
    ):
        with pytest.raises(MemoryGraphError) as err:
            await call()
        assert err.value.code == "BAD_ARGS"


# 15 ----------------------------------------------------------------------------------------
async def test_vector_search_empty_query_without_a_profile_is_empty(tmp_path: Path) -> None:
    host = Host(data_dir=tmp_path / "d", settings={"embedding_profile": "none"}, entry_points=False)
    await host.start()  # the default profile is wordllama: "none" turns vectors off
    session = await _session(host)
    assert tuple(await session.vector_search(query="")) == ()
    assert tuple(await session.vector_search(query="   ")) == ()
    with pytest.raises(MemoryGraphError) as err:
        await session.vector_search(query="lighthouse")
    assert err.value.code == "NO_EMBEDDING_PROFILE"
    await host.stop()


# 16 ----------------------------------------------------------------------------------------
async def test_compaction_candidates_skip_types_never_compacted() -> None:
    raw = [
        {"id": "note", "tableName": "notes", "tableColumns": ["summary"],
         "compression": {"mode": "hierarchical", "threshold": 2, "fanIn": 2, "maxDepth": 0}},
        {"id": "memo", "tableName": "memos", "tableColumns": ["summary"],
         "compression": {"mode": "none", "threshold": 2, "fanIn": 2}},
    ]  # fmt: skip
    schema = normalize_schema(raw)
    store = Store(schema=schema)
    write = get_write_api(store)
    for i in range(6):
        await write.create_node(type="note", title=f"n{i}", fields={"summary": f"n{i}"})
        await write.create_node(type="memo", title=f"m{i}", fields={"summary": f"m{i}"})
    read = get_read_api(store)
    assert read.compaction_candidates(type="note").groups == ()  # maxDepth 0: never compacted
    assert read.compaction_candidates(type="memo").groups == ()


# 17 ----------------------------------------------------------------------------------------
async def test_legacy_functions_accept_a_plain_dict_store() -> None:
    store = Store()
    write = get_write_api(store)
    a = (await write.create_node(type="event", title="harbour", fields={"summary": "harbour"})).id
    data = json.loads(json.dumps(store.to_dict()))  # a plain dict, as the original passed
    assert [n["id"] for n in ext.search_nodes_lexical(data, "harbour")["nodes"]] == [a]
    assert [n["id"] for n in ext.list_recent_nodes(data)["nodes"]] == [a]
    assert ext.get_node_by_id(data, a)["node"].id == a
    with pytest.raises(MemoryGraphError):
        ext.list_recent_nodes(42)


# 18 ----------------------------------------------------------------------------------------
async def test_legacy_injection_state_functions(host: Host) -> None:
    empty = ext.create_empty_injection_state()
    assert (empty.always_inject_ids, empty.recall_selected_ids, empty.visible_ids) == (
        frozenset(),
        frozenset(),
        frozenset(),
    )
    ctx = host.get_context("c1")
    heard = []
    session = await _session(host)
    session.on_injection_changed(lambda state: heard.append(state))
    state = ext.apply_memory_graph_injection_update(
        ctx, {"alwaysInjectIds": ["n_1"], "recall_selected_ids": ["n_2"]}
    )
    assert state.always_inject_ids == frozenset({"n_1"})
    assert ext.get_memory_graph_injection_state(ctx) == state == session.get_injection_state()
    later = ext.apply_memory_graph_injection_update(ctx, {"visible_ids": ["n_3"]})
    assert later.recall_selected_ids == frozenset({"n_2"})  # keys not given are kept
    assert len(heard) == 2
    assert ext.get_memory_graph_injection_state(None) == empty
    with pytest.raises(MemoryGraphError):
        ext.apply_memory_graph_injection_update(ctx, {"colour": ["x"]})


# 19 ----------------------------------------------------------------------------------------
def _trace(seq: int, reason: str | None, mode: str = "canary", error: str | None = None) -> dict:
    return {
        "chat_id": "c1", "seq": seq, "anchor": [seq, seq], "query": "q", "router": "r",
        "mode": mode, "score_mode": "keyword", "fallback_reason": reason, "pool_size": 3,
        "recent_window": 1, "always_inject_ids": [], "seeds": [], "selected": [],
        "error": error,
    }  # fmt: skip


def _write_traces(data_dir: Path, rows: list[dict]) -> None:
    from memgraph_plugin.recall.trace import TRACE_DIR, TraceLog

    log = TraceLog(data_dir / TRACE_DIR)
    path = log.path_for("c1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


async def test_retrieval_status_per_chat(tmp_path: Path) -> None:
    data = tmp_path / "d"
    rows = [_trace(1, None), _trace(2, "graph_expansion_error", error="boom"),
            _trace(3, "graph_expansion_error", error="boom"), _trace(4, None),
            _trace(5, "quality_gate_blocked")]  # fmt: skip
    _write_traces(data, rows)
    h = Host(data_dir=data, settings={"recall_rollout": "shadow"}, entry_points=False)
    await h.start()
    try:
        status = (await _session(h)).get_retrieval_status()
    finally:
        await h.stop()
    assert status.chat_id == "c1" and status.rollout_mode == "shadow"
    assert (status.recalls, status.expansion_applied, status.fallback_rate) == (5, 2, 0.6)
    rates = {f.reason: (f.count, f.rate) for f in status.fallbacks}
    assert rates == {"graph_expansion_error": (2, 0.4), "quality_gate_blocked": (1, 0.2)}
    assert status.last_fallback_reason == "quality_gate_blocked" and status.last_seq == 5


def test_status_command(tmp_path: Path, capsys) -> None:
    from host.cli.cli import main

    data = tmp_path / "d"
    _write_traces(data, [_trace(1, None), _trace(2, "rollout_off", mode="off")])
    assert main(["status", "c1", "--data-dir", str(data), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["recalls"] == 2 and out["fallbacks"] == [
        {"reason": "rollout_off", "count": 1, "rate": 0.5}
    ]
    assert main(["status", "c1", "--data-dir", str(data)]) == 0
    text = capsys.readouterr().out
    assert "rollout_off" in text and "50.0%" in text and "canary" in text
    assert main(["status", "nobody", "--data-dir", str(data)]) == 1
    assert "unknown chat 'nobody'" in capsys.readouterr().err


# the read API over a bare store ------------------------------------------------------------------
async def test_the_read_api_over_a_bare_store_has_vector_search(tmp_path: Path) -> None:
    class Ctx:  # what a context hands the read API: its settings
        chat_id = "bare"
        host = None

        def __init__(self, profile: str) -> None:
            self.settings = {"embedding_profile": profile}

    store = Store()
    write = get_write_api(store)
    for text in ("a lighthouse keeper's log", "the harbor at dawn", "bread from the bakery"):
        await write.create_node(type="event", fields={"summary": text})
    off = get_read_api(store, Ctx("none"))
    assert await off.vector_search(query="") == () and await off.vector_search(query="  ") == ()
    with pytest.raises(MemoryGraphError) as err:
        await off.vector_search(query="lighthouse")
    assert err.value.code == "NO_EMBEDDING_PROFILE"
    with pytest.raises(MemoryGraphError) as err:
        await off.vector_search(query="x", types="event")  # a bare string, as keyword_search
    assert err.value.code == "BAD_ARGS"

    read = get_read_api(store, Ctx("hashing"))
    hits = await read.vector_search(query="harbor", k=2)
    assert hits[0].id == "n_2" and hits[0].score_mode == "vector" and len(hits) == 2
    await write.create_node(type="event", fields={"summary": "harbor lights at night"})
    await write.delete_node(id="n_2")  # archived: no longer searchable
    later = [h.id for h in await read.vector_search(query="harbor", k=4)]
    assert later[0] == "n_4" and "n_2" not in later  # kept in step with the store's writes

    # with a profile it searches as the session does: same nodes, same order, same scores
    host = Host(data_dir=tmp_path / "d", settings={"embedding_profile": "hashing"},
                entry_points=False)
    await host.start()
    session = await _session(host, "c2")
    for text in ("a lighthouse keeper's log", "the harbor at dawn", "bread from the bakery"):
        await session.create_node(type="event", fields={"summary": text})
    via_session = await session.vector_search(query="harbor at night", k=3)
    via_read = await get_read_api(session.store, host.get_context("c2")).vector_search(
        query="harbor at night", k=3
    )
    assert [(h.id, round(h.score, 5)) for h in via_read] == [
        (h.id, round(h.score, 5)) for h in via_session
    ]
    await host.stop()
