"""Storage failures are one-line `StorageError`s: a folder that cannot be written
(``STORAGE_READ_ONLY``, not a raw ``OSError`` on ``.journal-gate``) and a full disk
(``STORAGE_FULL``, not ``RuntimeError: lance error ... No space left``); nothing acknowledged
before is lost."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from host import Host
from memgraph_plugin.errors import MemoryGraphError
from memgraph_plugin.storage.failures import storage_failure

CHILD = Path(__file__).with_name("readonly_child.py")
ROOT = Path(__file__).resolve().parents[2]


async def _write_many(data: Path, count: int, size: int) -> tuple[int, MemoryGraphError | None]:
    host = Host(data_dir=data, entry_points=False)
    await host.start()
    s = await host.registry.get("memory-graph").open_session(host.get_context("c"))
    written, error = 0, None
    try:
        for i in range(count):
            await s.create_node(type="event", fields={"summary": "x" * size + str(i)})
            written += 1
    except MemoryGraphError as exc:
        error = exc
    await host.stop()
    return written, error


async def _count(data: Path) -> int:
    host = Host(data_dir=data, entry_points=False)
    await host.start()
    s = await host.registry.get("memory-graph").open_session(host.get_context("c"))
    count = len(s.list_nodes())
    await host.stop()
    return count


@pytest.mark.skipif(os.geteuid() != 0, reason="drops from root to nobody to meet file modes")
def test_a_read_only_folder_is_a_one_line_storage_error():
    folder = Path(tempfile.mkdtemp(prefix="memgraph-ro-"))
    try:
        folder.chmod(0o755)
        data = folder / "d"
        assert asyncio.run(_write_many(data, 2, 10)) == (2, None)  # written as root
        for path in [data, *data.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # readable, writable by root only
        out = subprocess.run(
            [sys.executable, str(CHILD), str(data)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
            env={**os.environ, "HOME": str(folder)},
        )
        lines = [line for line in out.stdout.splitlines() if line.startswith(("ERR", "WROTE"))]
        assert lines[0] == "WROTE"  # the warm-up, as root
        assert lines[1].startswith("ERR StorageError STORAGE_READ_ONLY: cannot write"), out
        assert "read-only or not permitted" in lines[1] and "Traceback" not in lines[1]
        assert asyncio.run(_count(data)) == 2  # nothing stored before is lost
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _mount_tmpfs(path: Path, size: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
    )
    return done.returncode == 0


def test_a_full_disk_is_a_one_line_storage_error(tmp_path):
    """A real full file system: a 1 MB tmpfs (mounting needs root; where it cannot be mounted
    this test is skipped and `test_a_real_enospc_...` below still checks the translation)."""
    mount = tmp_path / f"full-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    if not _mount_tmpfs(mount, "1m"):
        pytest.skip("cannot mount a small tmpfs here")
    try:
        written, error = asyncio.run(_write_many(mount / "d", 200, 60_000))
        assert error is not None and error.code == "STORAGE_FULL"
        assert str(error).count("\n") == 0 and "No space left" in str(error)
        assert 0 < written < 200
        assert asyncio.run(_count(mount / "d")) == written  # every acknowledged write is there
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_real_enospc_from_the_kernel_becomes_storage_full():
    """/dev/full answers every write with ENOSPC: the error the storage receives on a full disk."""
    with pytest.raises(OSError) as caught, open("/dev/full", "wb", buffering=0) as handle:
        handle.write(b"x")
    assert caught.value.errno == errno.ENOSPC
    error = storage_failure(caught.value)
    assert error is not None and error.code == "STORAGE_FULL"
    lance_text = RuntimeError("lance error: LanceError(IO): No space left on device (os error 28)")
    assert storage_failure(lance_text).code == "STORAGE_FULL"
