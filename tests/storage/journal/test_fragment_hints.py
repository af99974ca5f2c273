"""Fragment hints (`storage/journal/fragment_hints.py`): a host taking a chat another host wrote
reads only the journal fragments the last holder named, and falls back to reading every
fragment when the hint does not hold. Real LanceDB on disk; the other chats' data files are
deleted, so a read of every fragment fails and a hinted one does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgraph_plugin.storage import LanceStorage, StorageSettings
from tests.storage.helpers import change, node


def _two_chats(tmp_path: Path) -> tuple[StorageSettings, str]:
    """Chats x and y, three commits each, interleaved by two single-writer handles; y's data
    files then deleted. Returns the settings and x's hint as its writer leaves it."""
    settings = StorageSettings(
        uri=str(tmp_path / "db"), checkpoint_every=1000, single_writer=True
    )
    x, y = LanceStorage(settings), LanceStorage(settings)
    x.load_sync("x")
    y.load_sync("y")
    for i in range(1, 4):
        x.commit_sync("x", change(node(f"x{i}"), node_seq=i), base_version=i - 1)
        y.commit_sync("y", change(node(f"y{i}"), node_seq=i), base_version=i - 1)
    hint = x.journal.hints.of("x")
    assert hint is not None and hint.startswith("3:") and len(hint.split(",")) == 3
    assert y.journal.hints.of("y") not in (None, hint)
    import lance

    folder = tmp_path / "db" / "commits.lance"
    for fragment in lance.dataset(str(folder)).get_fragments():
        if fragment.to_table(columns=["chat_id"]).column("chat_id").to_pylist() == ["y"]:
            for data_file in fragment.metadata.files:
                (folder / "data" / data_file.path).unlink()
    x.close()
    y.close()
    return settings, hint


def test_a_hinted_load_reads_the_named_fragments_only(tmp_path: Path) -> None:
    settings, hint = _two_chats(tmp_path)
    blind = LanceStorage(settings)
    with pytest.raises(Exception, match=r"\.lance"):  # every fragment read: y's are gone
        blind.load_sync("x")
    taker = LanceStorage(settings)
    taker.journal.hints.received("x", hint)
    state = taker.load_sync("x")
    assert sorted(state.data["nodes"]) == ["x1", "x2", "x3"] and state.version == 3
    assert taker.journal.hints.of("x") == hint  # learnt from the read, left for the next
    taker.commit_sync("x", change(node("x4"), node_seq=4), base_version=3)
    after = taker.journal.hints.of("x")
    assert after is not None and after.startswith("4:") and len(after.split(",")) == 4


@pytest.mark.parametrize(
    "why", ["a fragment no longer there", "a version past the rows", "not a hint"]
)
def test_a_hint_that_does_not_hold_reads_every_fragment(tmp_path: Path, why: str) -> None:
    settings, hint = _two_chats(tmp_path)
    version, _, ids = hint.partition(":")
    given = {
        "a fragment no longer there": f"{version}:{ids},999",
        "a version past the rows": f"4:{ids}",
        "not a hint": "x",
    }[why]
    taker = LanceStorage(settings)
    taker.journal.hints.received("x", given)
    with pytest.raises(Exception, match=r"\.lance"):  # it read every fragment
        taker.load_sync("x")
