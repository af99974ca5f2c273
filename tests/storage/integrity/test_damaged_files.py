"""One damaged LanceDB data file: a `StorageError` naming the file and its table,
``memgraph-host check`` says what is damaged and which chats it touches, ``memgraph-host repair``
brings every chat back to its newest intact state and says what was lost.

Real LanceDB folders on disk: a fragment's data file of each table is deleted or cut short.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from host import Host
from host.cli.cli import main
from memgraph_plugin.storage import LanceStorage, StorageSettings
from memgraph_plugin.storage.errors import StorageError
from memgraph_plugin.storage.failures import storage_failure
from memgraph_plugin.storage.integrity.integrity import DamagedFragment, check_database
from memgraph_plugin.storage.integrity.repair import repair_database

CHATS = ("A", "B", "C")


async def _build(data: Path) -> dict[str, list[set[str]]]:
    """Three chats: 3 writes each (with links), a snapshot, then one more write each. Returns
    every chat's node ids after each version (index = version)."""
    host = Host(data_dir=data, entry_points=False)
    await host.start()
    service = host.registry.get("memory-graph")
    states: dict[str, list[set[str]]] = {c: [set()] for c in CHATS}
    for chat in CHATS:
        s = await service.open_session(host.get_context(chat))
        previous = None
        for i in range(3):
            links = [{"target": {"id": previous}, "relation": "related"}] if previous else None
            made = await s.create_node(
                type="event", fields={"summary": f"{chat} event {i}"}, links=links
            )
            previous = made.id
            states[chat].append({n.id for n in s.list_nodes()})
    await host.stop()
    storage = LanceStorage(StorageSettings(uri=str(data / "lancedb")))
    for chat in CHATS:
        assert storage.snapshot_sync(chat) == 3
    storage.close()
    host = Host(data_dir=data, entry_points=False)
    await host.start()
    service = host.registry.get("memory-graph")
    for chat in CHATS:
        s = await service.open_session(host.get_context(chat))
        await s.create_node(type="event", fields={"summary": f"{chat} after the snapshot"})
        states[chat].append({n.id for n in s.list_nodes()})
    await host.stop()
    return states


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[set[str]]]]:
    data = tmp_path_factory.mktemp("pristine") / "d"
    states = asyncio.run(_build(data))
    return data, states


def _tables(data: Path) -> list[str]:
    return sorted(p.name[: -len(".lance")] for p in (data / "lancedb").glob("*.lance"))


def _damage(data: Path, table: str, how: str, which: int = 0) -> Path:
    files = sorted((data / "lancedb" / f"{table}.lance" / "data").glob("*.lance"))
    target = files[which]
    if how == "delete":
        target.unlink()
    else:
        size = target.stat().st_size
        with target.open("r+b") as handle:
            handle.truncate(size // 2)
    return target


async def _open_all(data: Path) -> dict[str, set[str] | None]:
    host = Host(data_dir=data, entry_points=False)
    await host.start()
    service = host.registry.get("memory-graph")
    out: dict[str, set[str] | None] = {}
    for chat in CHATS:
        s = await service.open_session(host.get_context(chat))
        out[chat] = None if s is None else {n.id for n in s.list_nodes()}
    await host.stop()
    return out


DAMAGED_TABLES = ("commits", "snapshots", "snap_nodes", "snap_edges")


@pytest.mark.parametrize("how", ["delete", "truncate"])
@pytest.mark.parametrize("table", DAMAGED_TABLES)
def test_check_names_the_damage_and_repair_brings_every_chat_back(
    pristine, tmp_path: Path, table: str, how: str, capsys
) -> None:
    source, states = pristine
    data = tmp_path / "d"
    shutil.copytree(source, data)
    assert table in _tables(data)
    damaged = _damage(data, table, how)
    uri = str(data / "lancedb")

    report = check_database(uri, _tables(data))
    assert not report.ok
    (frag,) = report.damaged
    assert frag.table == table and damaged.name in " ".join(frag.files)

    # the CLI: history names the file and its table in one line, check exits 1
    assert main(["--data-dir", str(data), "history", "A"]) != 0 or table != "commits"
    err = capsys.readouterr().err
    if table == "commits":
        assert damaged.name in err and "'commits'" in err and "Traceback" not in err
    assert main(["--data-dir", str(data), "check"]) == 1
    out = capsys.readouterr().out
    assert table in out and "affected chats" in out

    assert main(["--data-dir", str(data), "repair"]) == 0
    said = capsys.readouterr().out
    assert f"table {table!r}: 1 damaged fragment(s) dropped" in said
    assert check_database(uri, _tables(data)).ok

    opened = asyncio.run(_open_all(data))
    newest = {chat: states[chat][-1] for chat in CHATS}
    for damage in report.chats:  # a chat that lost commits is at its newest intact version
        newest[damage.chat_id] = states[damage.chat_id][damage.intact_version]
        assert f"chat {damage.chat_id!r}" in said
    for chat in CHATS:
        assert opened[chat] is not None, chat
    if table == "commits" and not report.chats:  # some chat's newest commit row was lost
        assert "each was a chat's newest commit" in said
        # that chat is back at its previous commit, or whole when a snapshot holds the commit
        lost = [c for c in CHATS if opened[c] != newest[c]]
        assert len(lost) <= 1 and all(opened[c] == states[c][-2] for c in lost)
    else:
        assert opened == newest


def test_damage_in_the_middle_of_a_journal_cuts_the_chat_back_to_the_gap(
    pristine, tmp_path: Path
) -> None:
    source, states = pristine
    data = tmp_path / "d"
    shutil.copytree(source, data)
    uri = str(data / "lancedb")
    # find the fragment holding chat B's version 2 (before its snapshot: state kept)
    import lance

    dataset = lance.dataset(f"{uri}/commits.lance")
    for fragment in dataset.get_fragments():
        rows = fragment.to_table(columns=["chat_id", "version"]).to_pylist()
        if rows == [{"chat_id": "B", "version": 2}]:
            (data_file,) = fragment.metadata.files
            (Path(uri) / "commits.lance" / "data" / data_file.path).unlink()
    report = check_database(uri, _tables(data))
    (damage,) = report.chats
    assert damage.chat_id == "B" and damage.missing_versions == (2,) and damage.state_whole
    repaired = repair_database(uri, _tables(data))
    assert repaired.after.ok
    assert any("history rows of version(s) 2 lost" in line for line in repaired.lines)
    opened = asyncio.run(_open_all(data))
    assert opened == {chat: states[chat][-1] for chat in CHATS}  # nothing of the state lost


def test_a_lance_error_naming_a_file_becomes_a_storage_error() -> None:
    raw = RuntimeError(
        "lance error: LanceError(IO): Generic N/A error: Wrapped error: Not found: "
        "/x/lancedb/snap_nodes.lance/data/0101.lance, /rustc/abc/library/core/src/result.rs:1:2"
    )
    error = storage_failure(raw)
    assert isinstance(error, StorageError) and error.code == "STORAGE_DAMAGED"
    assert "/x/lancedb/snap_nodes.lance/data/0101.lance" in str(error)
    assert "'snap_nodes'" in str(error) and "/rustc/" not in str(error)


def test_newest_rows_lost_behind_a_snapshot_are_reported() -> None:
    """An import writes a snapshot at its own version: when the damaged fragment held the newest
    journal rows, the snapshot is newer than every readable row, and those versions are reported
    lost (history only: the state is whole)."""
    import pyarrow as pa

    from memgraph_plugin.storage.integrity.integrity import _journal_damage

    commits = pa.table({"chat_id": ["a", "a", "a", "b"], "version": [1, 2, 3, 1]})
    damage = {d.chat_id: d for d in _journal_damage(commits, {"a": 5, "b": 1})}
    assert set(damage) == {"a"}
    assert damage["a"].missing_versions == (4, 5) and damage["a"].state_whole
    assert damage["a"].intact_version == 5 and "history rows of version(s) 4-5" in (
        damage["a"].describe()
    )


@pytest.mark.parametrize("table", ["snap_nodes", "snap_edges"])
def test_an_import_whose_snapshot_rows_were_damaged_is_cut_back_before_it(
    tmp_path: Path, table: str
) -> None:
    """An import's graph lives only in the snapshot rows its journal row points at: when some
    of them are lost, repair takes the chat back to the version before the import (the import
    and the commit after it are removed and listed), never a partial graph."""
    from ..helpers import change, edge, node

    data = tmp_path / "d"
    uri = str(data / "lancedb")
    storage = LanceStorage(StorageSettings(uri=uri))
    storage.commit_sync("A", change(node("n_1", "before"), node_seq=1, seq=1), base_version=0)
    graph = {
        "nodes": {f"n_{i}": node(f"n_{i}", f"imported {i}") for i in range(2, 40)},
        "edges": [edge(f"n_{i}", f"n_{i + 1}") for i in range(2, 39)],
        "nodeSeq": 40,
        "seqCounter": 5,
    }
    assert storage.import_sync("A", graph).version == 2
    storage.commit_sync("A", change(node("n_50", "after"), node_seq=50, seq=6), base_version=2)
    storage.close()
    _damage(data, table, "delete")  # the import's row set is the table's one fragment

    repaired = repair_database(uri, _tables(data))
    assert repaired.after.ok
    said = " ".join(repaired.lines)
    assert "chat 'A': the snapshot rows of its import at version 2 were damaged" in said
    assert "back to version 1; lost 2 commit(s) from version 2 on" in said
    storage = LanceStorage(StorageSettings(uri=uri))
    state = storage.load_sync("A")
    assert state.version == 1 and list(state.data["nodes"]) == ["n_1"]
    assert [r.kind for r in storage.history_sync("A")] == ["write"]
    storage.close()


def test_rows_before_the_first_readable_one_are_lost_unless_history_may_be_pruned() -> None:
    """Without ``storage_history_seconds`` nothing prunes the journal, so a journal that starts
    at version 3 lost versions 1-2 (history only, under a snapshot at 2); with it, they may have
    been pruned: `check` names the chat and says it cannot tell, never "a chat's newest
    commit"."""
    import pyarrow as pa

    from memgraph_plugin.storage.integrity.integrity import (
        IntegrityReport,
        _journal_damage,
        unheaded_journals,
    )

    commits = pa.table({"chat_id": ["a", "a", "b", "b"], "version": [3, 4, 3, 4]})
    kept = {d.chat_id: d for d in _journal_damage(commits, {"a": 2})}
    assert kept["a"].missing_versions == (1, 2) and kept["a"].state_whole
    assert kept["b"].missing_versions == (1, 2) and kept["b"].intact_version == 0
    pruned = {d.chat_id: d for d in _journal_damage(commits, {"a": 2}, history_pruned=True)}
    assert set(pruned) == {"b"} and pruned["b"].missing_versions == (1, 2)
    assert unheaded_journals(commits, {"a": 2}) == [("a", 3, 2)]
    lost = DamagedFragment("commits", 0, ("commits.lance/data/x.lance",), 4, "gone")
    report = IntegrityReport(
        "u", ("commits",), (lost,), tuple(pruned.values()), (), (), (("a", 3, 2),)
    )
    said = "\n".join(report.lines())
    assert "chat 'a': no journal rows before version 3 (lost here, or pruned by" in said
    assert "2 lost commit row(s) are in no chat's gap" in said
    assert "or one of the rows before a first readable version listed above" in said


async def _build_two_namespaces(data: Path) -> None:
    """Chat ``diary`` of namespace alice (stored ``ns/alice/diary``) and chat ``notes`` of the
    default one, three commits each."""
    host = Host(data_dir=data, entry_points=False)
    await host.start()
    service = host.registry.get("memory-graph")
    for chat in ("ns/alice/diary", "notes"):
        s = await service.open_session(host.get_context(chat))
        for i in range(3):
            await s.create_node(type="event", fields={"summary": f"{chat} event {i}"})
    await host.stop()


def _lose_version(uri: str, chat: str, version: int) -> None:
    """Delete the data file of the fragment holding only `chat`'s journal row `version`."""
    import lance

    for fragment in lance.dataset(f"{uri}/commits.lance").get_fragments():
        rows = fragment.to_table(columns=["chat_id", "version"]).to_pylist()
        if rows == [{"chat_id": chat, "version": version}]:
            (data_file,) = fragment.metadata.files
            (Path(uri) / "commits.lance" / "data" / data_file.path).unlink()
            return
    raise AssertionError(f"no fragment of {chat} version {version} alone")


def test_check_and_repair_take_a_namespace(tmp_path: Path, capsys) -> None:
    """``--namespace``: check names only the namespace's chats, by their ids in it, and counts
    the others; repair of a namespace refuses damage that touches another namespace's chats
    (nothing changed), and repairs damage of its own chats."""
    data = tmp_path / "d"
    asyncio.run(_build_two_namespaces(data))
    uri = str(data / "lancedb")
    _lose_version(uri, "ns/alice/diary", 2)
    base = ["--data-dir", str(data)]

    assert main([*base, "check", "--namespace", "alice"]) == 1
    said = capsys.readouterr().out
    assert "chat 'diary': " in said and "affected chats: 'diary'" in said
    assert "ns/alice" not in said and "outside namespace" not in said
    assert main([*base, "check", "--namespace", "default"]) == 1  # the damaged file is shared
    said = capsys.readouterr().out
    assert "affected chats: none of namespace 'default'" in said and "'diary'" not in said
    assert "and 1 chat(s) outside namespace 'default'" in said

    assert main([*base, "repair", "--namespace", "default"]) == 1
    said = capsys.readouterr().out
    assert "outside namespace 'default'" in said and "nothing changed" in said
    assert not check_database(uri, _tables(data)).ok

    assert main([*base, "repair", "--namespace", "alice"]) == 0
    said = capsys.readouterr().out
    assert "chat 'diary': " in said and "ns/alice" not in said
    assert check_database(uri, _tables(data)).ok
    assert main([*base, "check", "--namespace", "alice"]) == 0
    assert main([*base, "check", "--namespace", "no such"]) == 2  # a usage error
