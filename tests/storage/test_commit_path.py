"""The commit path's shortcuts: a commit skips the read-back of its own row only when no other
writer can have committed in between, and a chat without a checkpoint is not searched for one
after every commit. Other writers are real processes (`writer_child`) or other handles."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgraph_plugin.storage import ConflictError, LanceStorage, StorageSettings
from tests.storage.helpers import change, node

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def storage(tmp_path):
    return LanceStorage(StorageSettings(uri=str(tmp_path / "db"), checkpoint_every=1000))


def _other_process_commits(uri: str, chat: str, tag: str) -> None:
    """One batch of one node committed to `chat` by a separate writer process."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.storage.writer_child", uri, chat, "1", "1", tag],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert any(line.startswith("ok ") for line in done.stdout.splitlines()), done.stdout


def _count_read_backs(st: LanceStorage) -> list[str]:
    """Record the filter of every read-back (`first_per_version`) `st` makes."""
    calls: list[str] = []
    real = st.journal.first_per_version

    def spy(where: str, columns: list[str]) -> Any:
        calls.append(where)
        return real(where, columns)

    st.journal.first_per_version = spy  # type: ignore[method-assign]
    return calls


def _around_add(st: LanceStorage, *, before=None, after=None) -> None:
    """Run `before()` / `after()` right around `st`'s next append (a writer racing it)."""
    table = st._commits
    real = table.add

    def add(data: Any, *args: Any, **kwargs: Any) -> Any:
        table.add = real
        if before is not None:
            before()
        result = real(data, *args, **kwargs)
        if after is not None:
            after()
        return result

    table.add = add


def spy_rows(storage: LanceStorage, table: Any) -> list[str]:
    """The filter of every row query `storage` makes of `table` from now on."""
    seen: list[str] = []
    real = storage.journal.rows

    def spy(t: Any, where: str, columns: list[str]) -> Any:
        if t is table:
            seen.append(where)
        return real(t, where, columns)

    storage.journal.rows = spy  # type: ignore[method-assign]
    return seen


def _another_process_appends_first(storage: LanceStorage, chat: str, prefix: str) -> list:
    """Chat "c" at version 1, then another process commits to `chat` right before the next
    append of `storage`; the list of read-backs `storage` makes."""
    uri = storage.settings.uri
    storage.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    reads = _count_read_backs(storage)
    _around_add(storage, before=lambda: _other_process_commits(uri, chat, prefix))
    return reads


def test_a_single_writer_never_reads_its_commit_back(storage):
    storage.load_sync("a")
    storage.load_sync("b")
    reads = _count_read_backs(storage)
    for i in range(1, 4):  # interleaved chats: the other chat's appends are this handle's own
        for chat in ("a", "b"):
            storage.commit_sync(chat, change(node(f"{chat}{i}"), node_seq=i), base_version=i - 1)
    assert reads == []
    for chat in ("a", "b"):
        fresh = LanceStorage(storage.settings)
        assert [r.version for r in fresh.history_sync(chat)] == [1, 2, 3]
        assert sorted(fresh.load_sync(chat).data["nodes"]) == [f"{chat}{i}" for i in (1, 2, 3)]


@pytest.mark.slow
@pytest.mark.process
def test_another_process_committing_between_load_and_append_is_a_conflict(storage):
    reads = _another_process_appends_first(storage, "c", "p")
    with pytest.raises(ConflictError) as info:
        storage.commit_sync("c", change(node("loser"), node_seq=2), base_version=1)
    assert info.value.latest_version == 2
    assert len(reads) == 1  # the other writer's commit in between forced the read-back
    fresh = LanceStorage(storage.settings)
    assert sorted(fresh.load_sync("c").data["nodes"]) == ["a", "p0_0"]
    assert [r.version for r in fresh.history_sync("c")] == [1, 2]


@pytest.mark.slow
@pytest.mark.process
def test_another_process_committing_to_another_chat_is_checked_and_no_conflict(storage):
    reads = _another_process_appends_first(storage, "other", "q")
    assert storage.commit_sync("c", change(node("b"), node_seq=2), base_version=1).version == 2
    assert len(reads) == 1  # not this handle's append in between: read back, and it won
    # which of the two versions made meanwhile was ours is not known (`_own_version`): the
    # next commit reads back once more, then nothing is in between any more
    assert storage.commit_sync("c", change(node("d"), node_seq=3), base_version=2).version == 3
    assert len(reads) == 2
    assert storage.commit_sync("c", change(node("e"), node_seq=4), base_version=3).version == 4
    assert len(reads) == 2
    assert sorted(LanceStorage(storage.settings).load_sync("c").data["nodes"]) == [
        "a",
        "b",
        "d",
        "e",
    ]


@pytest.mark.slow
@pytest.mark.process
def test_a_commit_landing_right_after_ours_is_seen_as_the_other_writers(storage):
    """The version remembered for a commit is its own append's, never a later one's: another
    process's commit right after it must show as a change, and a write based on ours conflicts."""
    uri = storage.settings.uri
    storage.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    _around_add(storage, after=lambda: _other_process_commits(uri, "c", "r"))
    assert storage.commit_sync("c", change(node("b"), node_seq=2), base_version=1).version == 2
    assert storage.has_changed_sync("c", 2) is True
    with pytest.raises(ConflictError) as info:
        storage.commit_sync("c", change(node("late"), node_seq=3), base_version=2)
    assert info.value.latest_version == 3
    assert sorted(storage.load_sync("c").data["nodes"]) == ["a", "b", "r0_0"]


def test_an_append_reported_at_another_writers_later_version_is_not_taken_as_ours(storage):
    """LanceDB's `add` reports the table's version after it, which is another writer's when
    that one committed inside the call (two processes appending side by side: a few appends in
    300 were reported at the other's version). Taken as ours, it hid that commit from our next
    commit's check: the next write skipped the read-back and was acknowledged though the other
    writer held its version (a lost write). The other writer here commits inside our `add`."""
    other = LanceStorage(storage.settings)
    storage.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    table = storage._commits
    real = table.add

    def add(data: Any, *args: Any, **kwargs: Any) -> Any:
        table.add = real
        ours = real(data, *args, **kwargs)
        other.load_sync("c")  # sees our version 2, commits version 3 right after our append
        theirs = other.commit_sync("c", change(node("o"), node_seq=3), base_version=2)
        assert theirs.version == 3
        return type("AddResult", (), {"version": ours.version + 1})()  # what LanceDB said

    table.add = add
    assert storage.commit_sync("c", change(node("b"), node_seq=2), base_version=1).version == 2
    acked = ["a", "b", "o"]
    try:
        storage.commit_sync("c", change(node("late"), node_seq=3), base_version=2)
        acked.append("late")
    except ConflictError as exc:
        assert exc.latest_version == 3
    fresh = LanceStorage(storage.settings)
    assert sorted(fresh.load_sync("c").data["nodes"]) == sorted(acked)  # every acked write
    assert acked == ["a", "b", "o"]  # and the stale write was refused, not acknowledged


def test_a_stale_handle_of_this_process_still_conflicts(storage):
    """Two handles in one process are two writers: neither's appends count as the other's."""
    other = LanceStorage(storage.settings)
    storage.load_sync("c")
    other.load_sync("c")
    storage.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    with pytest.raises(ConflictError):
        other.commit_sync("c", change(node("b"), node_seq=1), base_version=0)
    assert list(LanceStorage(storage.settings).load_sync("c").data["nodes"]) == ["a"]


def test_a_chat_without_checkpoint_is_not_searched_for_one_at_every_commit(storage):
    queried: list[str] = []
    real = storage._snaps.head_rows
    storage._snaps.head_rows = lambda chat, upto=None: (queried.append(chat), real(chat, upto))[1]
    for i in range(1, 6):
        storage.commit_sync("c", change(node(f"n{i}"), node_seq=i), base_version=i - 1)
        assert storage.maintenance.wait_idle()
    assert len(queried) <= 1  # looked up once, then "no checkpoint yet" is known
    assert storage.checkpointed_version("c") == 0


def test_a_load_that_raced_a_commit_of_this_handle_does_not_vouch_for_a_stale_base(storage):
    """A load scans the journal, then this handle commits to the chat (another thread), then the
    load records what it saw: a write based on that load is stale and must conflict."""
    real = storage.journal.entries
    committed: list[int] = []

    def journal(chat_id: str, after: int, upto: int | None = None) -> Any:
        entries = real(chat_id, after, upto)
        if not committed:
            committed.append(
                storage.commit_sync("c", change(node("a"), node_seq=1), base_version=0).version
            )
        return entries

    storage.journal.entries = journal  # type: ignore[method-assign]
    stale = storage.load_sync("c")
    storage.journal.entries = real  # type: ignore[method-assign]
    assert (stale.version, committed) == (0, [1])
    with pytest.raises(ConflictError):
        storage.commit_sync("c", change(node("b"), node_seq=1), base_version=stale.version)
    assert list(LanceStorage(storage.settings).load_sync("c").data["nodes"]) == ["a"]


def test_freshness_checks_skip_this_handles_own_commits_to_other_chats(storage):
    """A cached chat stays fresh without a journal scan while this handle writes other chats;
    another writer's commit, to any chat, makes the check look (and see only its own chat)."""
    for chat in ("a", "b"):
        storage.commit_sync(chat, change(node(f"{chat}0")), base_version=0)
    scans = spy_rows(storage, storage._commits)
    for v in (1, 2, 3):
        storage.commit_sync("b", change(node(f"b{v}")), base_version=v)
        assert storage.has_changed_sync("a", 1) is False
    assert scans == []
    assert storage.has_changed_sync("a", 0) is True  # a stale version is never "fresh"
    LanceStorage(storage.settings).commit_sync("b", change(node("x")), base_version=4)
    assert storage.has_changed_sync("a", 1) is False and len(scans) == 2
    LanceStorage(storage.settings).commit_sync("a", change(node("y")), base_version=1)
    assert storage.has_changed_sync("a", 1) is True


def test_other_writers_compaction_and_pruning_are_not_read_back(storage):
    """Versions that added no rows (the maintenance process's pruning and compaction, here made
    by another handle) are told apart by their row counts: neither a commit nor the freshness
    check reads rows back for them; versions classified after a pass are not counted again."""
    for i in range(1, 4):
        storage.commit_sync("old", change(node(f"o{i}"), node_seq=i), base_version=i - 1)
    storage.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    other = LanceStorage(storage.settings)
    reads = _count_read_backs(storage)
    queries = spy_rows(storage, storage._commits)
    counted: list[int] = []
    real_counts = storage.journal._classify

    def counts(versions: list[int]) -> Any:
        counted.extend(versions)
        return real_counts(versions)

    storage.journal._classify = counts  # type: ignore[method-assign]

    other.journal.prune("old", before_version=3, cutoff=1e18)  # a delete
    other.optimize_sync()  # a compaction (and the chat_id index)
    assert storage.has_changed_sync("c", 1) is False
    assert storage.commit_sync("c", change(node("b"), node_seq=2), base_version=1).version == 2
    assert reads == [] and queries == []
    assert counted  # the versions in between were looked at, by their row counts

    other.optimize_sync()
    storage.journal.classify_foreign()  # what the host does after each maintenance pass
    counted.clear()
    assert storage.commit_sync("c", change(node("d"), node_seq=3), base_version=2).version == 3
    assert reads == [] and counted == []
    fresh = LanceStorage(storage.settings)
    assert sorted(fresh.load_sync("c").data["nodes"]) == ["a", "b", "d"]
    assert [r.version for r in fresh.history_sync("old")] == [3]


def test_a_version_that_added_rows_is_still_read_back(storage):
    """Another handle's append, even to another chat, is an append: the commit after it reads
    its version back (row counts never pass an append for a delete or a compaction)."""
    storage.commit_sync("c", change(node("a"), node_seq=1), base_version=0)
    other = LanceStorage(storage.settings)
    other.optimize_sync()
    other.commit_sync("z", change(node("z"), node_seq=1), base_version=0)
    reads = _count_read_backs(storage)
    assert storage.commit_sync("c", change(node("b"), node_seq=2), base_version=1).version == 2
    assert len(reads) == 1
