"""A chat's file and its cached messages never disagree: a write the disk refuses (full, read-only)
changes neither; a chat another process changed is read again (`Chat.refresh`); the chat lock
file is held by one process at a time (`FileChatLock`)."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from host.chats.chat_files import ChatStore
from host.chats.chat_lock import ChatBusy, FileChatLock
from tests.tmpfs import fill_disk, small_tmpfs


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs of its own, unmounted at the end."""
    with small_tmpfs(tmp_path / "disk", "2m") as mount:
        yield mount


def test_a_full_disk_changes_neither_file_nor_chat(small_disk: Path) -> None:
    chat = ChatStore(small_disk / "chats").chat("storm")
    chat.add_message("user", "The lamp is lit.")
    chat.add_message("assistant", "The keeper nods.")
    before = chat.path.read_bytes()
    fill_disk(small_disk)
    big = "Spray on the lens. " * 2000  # more than the file's last page holds
    with pytest.raises(OSError) as raised:
        chat.add_message("user", big)
    assert raised.value.errno == errno.ENOSPC
    with pytest.raises(OSError), chat.batched_writes():
        chat.add_message("user", "First of a block.")
        chat.add_message("assistant", big)
    assert chat.path.read_bytes() == before
    assert [m.text for m in chat.messages] == ["The lamp is lit.", "The keeper nods."]
    assert [m.text for m in ChatStore(small_disk / "chats").chat("storm").messages] == [
        "The lamp is lit.",
        "The keeper nods.",
    ]
    assert not list((small_disk / "chats").glob("*.tmp"))


def test_a_cut_the_disk_refuses_leaves_the_chat_as_on_disk(small_disk: Path) -> None:
    chat = ChatStore(small_disk / "chats").chat("swipe")
    for n in range(4):
        chat.add_message("user" if n % 2 == 0 else "assistant", f"Line {n}")
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        with pytest.raises(OSError) as raised:
            chat.truncate(1)
        assert raised.value.errno == errno.EROFS
        assert [m.text for m in chat.messages] == ["Line 0", "Line 1", "Line 2", "Line 3"]
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
    assert chat.truncate(1) == 2
    assert [m.text for m in ChatStore(small_disk / "chats").chat("swipe").messages] == [
        "Line 0",
        "Line 1",
    ]


def test_a_chat_another_process_changed_is_read_again(tmp_path: Path) -> None:
    mine = ChatStore(tmp_path / "chats").chat("pier")
    mine.add_message("user", "Who rang the bell?")
    assert not mine.refresh()  # as this process wrote it
    theirs = ChatStore(tmp_path / "chats").chat("pier")  # another process's copy
    theirs.truncate(-1)
    theirs.add_message("user", "Who rang the bell at noon?")
    theirs.add_message("assistant", "The ferryman.")
    assert mine.refresh()
    assert [m.text for m in mine.messages] == ["Who rang the bell at noon?", "The ferryman."]
    assert not mine.refresh()


HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0); os.write(fd, f"{os.getpid()}\\n".encode())
print("held", flush=True)
sys.stdin.read()
"""


def test_a_lock_file_another_process_holds_is_waited_for_then_refused(tmp_path: Path) -> None:
    lock = FileChatLock(tmp_path / "locks", "pier", timeout_s=0.3)
    lock.path.parent.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock.path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(ChatBusy) as raised:
            asyncio.run(lock.acquire())
        assert raised.value.holder == holder.pid
        assert f"process {holder.pid}" in str(raised.value) and "'pier'" in str(raised.value)
        assert not lock.locked()
    finally:
        holder.communicate("", timeout=30)  # its stdin closes: it exits, the flock goes

    async def take() -> None:
        async with lock:
            assert lock.locked()
            assert lock.path.read_text() == f"{os.getpid()}\n"
        assert not lock.locked()

    asyncio.run(take())
