"""A database split in shards (`storage/shards.py`) on a real LanceDB folder: where chats land,
what reads every shard, and when a database is split at all."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from memgraph_plugin.storage import LanceStorage, StorageError, StorageSettings
from memgraph_plugin.storage.shards import (
    ShardedStorage,
    open_storage,
    plan_shards,
    shard_count,
    shard_of,
    shard_uri,
)
from memgraph_plugin.web.worker_front import Front
from tests.storage.helpers import change, node

CHATS = [f"chat {n}" for n in range(12)]


@pytest.fixture
def uri(tmp_path: Path) -> str:
    return str(tmp_path / "lancedb")


def _fill(storage: LanceStorage) -> None:
    for chat in CHATS:
        storage.commit_sync(chat, change(node(f"{chat}-a"), node_seq=1, seq=1), base_version=0)
        storage.commit_sync(chat, change(node(f"{chat}-b"), node_seq=2, seq=2), base_version=1)


def test_each_chat_is_written_to_its_shard_alone_and_read_from_every_handle(uri: str) -> None:
    assert plan_shards(uri, 3) == 3 and shard_count(uri) == 3
    storage = open_storage(uri)
    assert isinstance(storage, ShardedStorage)
    _fill(storage)
    for i in range(3):  # each shard's own database holds exactly its chats
        held = set(LanceStorage(shard_uri(uri, i)).chats_sync())
        assert held == {c for c in CHATS if shard_of(c, 3) == i}, i
        assert held, f"shard {i} holds no chat of {len(CHATS)}"
    fresh = open_storage(uri)  # another process's handle: every chat, every version
    assert fresh.chats_sync() == tuple(sorted(CHATS))
    for chat in CHATS:
        state = fresh.load_sync(chat)
        assert state.version == 2 and set(state.data["nodes"]) == {f"{chat}-a", f"{chat}-b"}
        assert [r.version for r in fresh.history_sync(chat)] == [1, 2]
    rolled = asyncio.run(fresh.rollback(CHATS[1], version=1))
    assert rolled.version == 3 and set(storage.load_sync(CHATS[1]).data["nodes"]) == {
        f"{CHATS[1]}-a"
    }
    stats = fresh.stats_sync()
    assert stats["commits"]["rows"] == 2 * len(CHATS) + 1
    storage.maintain_sync()
    fresh.close()
    storage.close()


def test_a_shard_is_the_worker_the_front_routes_the_chat_to() -> None:
    for count in (2, 3, 4):
        front = Front([f"slot {i}" for i in range(count)])
        assert all(front.slot(c.encode()) == shard_of(c, count) for c in CHATS)
    assert {shard_of(f"crew {n}", 2) for n in range(4)} == {0, 1}  # a last digit spreads
    # a namespace's chat: its shard is the worker its key's requests (naming `chat 3`) reach
    front = Front(["slot 0", "slot 1", "slot 2"])
    for chat in CHATS:
        assert shard_of(f"ns/alice/{chat}", 3) == front.slot(chat.encode())
        assert front.slot(f"ns/alice/{chat}".encode()) == front.slot(chat.encode())


def test_a_database_holding_rows_is_not_split_and_reads_as_before(uri: str) -> None:
    plain = LanceStorage(uri)
    _fill(plain)
    plain.close()
    assert plan_shards(uri, 2) == 1 and shard_count(uri) == 1
    again = open_storage(uri)
    assert not isinstance(again, ShardedStorage)
    assert again.chats_sync() == tuple(sorted(CHATS))
    again.close()


def test_tables_made_empty_by_a_first_open_do_not_stop_the_split(uri: str) -> None:
    LanceStorage(uri).close()  # an open makes the tables, with no row
    assert plan_shards(uri, 2) == 2
    assert plan_shards(uri, 3) == 2  # recorded once: the chats stay where they are


def test_one_worker_or_an_object_store_is_never_split(uri: str) -> None:
    assert plan_shards(uri, 1) == 1 and not Path(uri + ".shards").exists()
    assert plan_shards("s3://bucket/prefix", 4) == 1
    assert shard_count("s3://bucket/prefix") == 1


@pytest.mark.parametrize("record", ["{", '{"shards": 0}', '{"count": 2}', '{"shards": "2"}'])
def test_a_bad_shard_record_names_the_file(uri: str, record: str) -> None:
    Path(uri + ".shards").write_text(record)
    with pytest.raises(StorageError, match=r"lancedb\.shards") as err:
        open_storage(StorageSettings(uri=uri))
    assert err.value.code == "BAD_SETTINGS"


def test_the_cli_lists_and_checks_the_chats_of_every_shard(tmp_path: Path) -> None:
    data = tmp_path / "data"
    uri = str(data / "lancedb")
    plan_shards(uri, 2)
    storage = open_storage(uri)
    _fill(storage)
    storage.close()
    cli = [sys.executable, "-m", "host.cli.entry", "--data-dir", str(data)]
    cli += ["--set", "embedding_profile=hashing"]
    check = subprocess.run([*cli, "check"], capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "shard 0:" in check.stdout and "shard 1:" in check.stdout, check.stdout
    history = subprocess.run(
        [*cli, "history", CHATS[-1]], capture_output=True, text=True, timeout=300
    )
    assert history.returncode == 0, history.stdout + history.stderr
    assert len([line for line in history.stdout.splitlines() if "write" in line]) == 2
