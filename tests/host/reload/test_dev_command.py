"""The ``dev`` command as a real process: in-process reload output, and ``--restart``."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.host.reload.conftest import write

# `memgraph-host dev` as a real process
pytestmark = [pytest.mark.process, pytest.mark.slow]

DEADLINE = 120.0  # a bound so a broken run ends the test; never a speed assertion

CLI = [sys.executable, "-m", "host"]  # what the memgraph-host console script runs


class Lines:
    """Collects a process's stdout lines on a thread, so waits can time out."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(proc,), daemon=True)
        self._thread.start()

    def _pump(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self._queue.put(line.rstrip("\n"))

    def wait_for(
        self, predicate: Callable[[str], bool], what: str, timeout: float = DEADLINE
    ) -> str:
        end = time.monotonic() + timeout
        for line in self.lines:
            if predicate(line):
                return line
        while time.monotonic() < end:
            try:
                line = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            self.lines.append(line)
            if predicate(line):
                return line
        while not self._queue.empty():
            self.lines.append(self._queue.get())
        raise AssertionError(f"no line with {what!r} in {self.lines}")


@pytest.fixture
def start() -> Iterator[Callable[..., subprocess.Popen]]:
    """``start(data, args, cwd)``: ``memgraph-host --data-dir DATA dev ARGS`` in a session (and
    process group) of its own; at teardown whatever is left of each group is killed."""
    started: list[subprocess.Popen] = []

    def spawn(
        data_dir: Path, args: list[str], cwd: Path, *, global_args: tuple[str, ...] = ()
    ) -> subprocess.Popen:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(
            [*CLI, "--data-dir", str(data_dir), *global_args, "dev", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        started.append(proc)
        return proc

    yield spawn
    for proc in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the group is ours: the runner and its children
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=DEADLINE)


def stop(proc: subprocess.Popen) -> int:
    """Ctrl+C, then wait (bounded); kill the whole group if it does not stop by itself."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=DEADLINE)
        raise


GREETER = """
from host import hookimpl


@hookimpl
def host_startup(host):
    host.registry.register("greeter", "{word}", owner="greeter")
"""


def test_dev_command_reports_reloads_and_failures(tmp_path: Path, start) -> None:
    plugins = tmp_path / "plugins"
    write(plugins / "greeter.py", GREETER.format(word="v1"))
    proc = start(tmp_path / "data", ["--plugins-dir", str(plugins), "--step", "50"], tmp_path)
    try:
        lines = Lines(proc)
        lines.wait_for(lambda line: "watching" in line, "watching")
        lines.wait_for(lambda line: "loaded greeter in" in line, "loaded greeter")
        ready = lines.wait_for(lambda line: "dev: ready" in line, "ready")  # the watcher is live
        assert "1 loaded, 0 failed" in ready
        write(plugins / "greeter.py", GREETER.format(word="v2"))
        lines.wait_for(lambda line: "reloaded greeter in" in line, "reloaded")
        write(plugins / "greeter.py", "def broken(:\n")
        failed = lines.wait_for(lambda line: "FAILED greeter" in line, "FAILED greeter")
        assert "SyntaxError" in failed and f"{plugins / 'greeter.py'}:1" in failed
    finally:
        code = stop(proc)
    assert code == 0
    lines.wait_for(lambda line: "memgraph-host dev: stopped" in line, "stopped")


STAMP = """
import os

from host import hookimpl


@hookimpl
def host_startup(host):
    with open({marks!r}, "a") as out:
        out.write("{version}:" + str(os.getpid()) + ":" + str(host.strict) + "\\n")
"""


def read_marks(path: Path) -> list[tuple[str, int]]:
    """``(version, pid)`` of each host that started; every one must have run in strict mode."""
    if not path.exists():
        return []
    marks = []
    for line in path.read_text().splitlines():
        parts = line.split(":")
        if len(parts) == 3:  # a line still being written has fewer parts
            assert parts[2] == "True", f"the host did not get --strict: {line}"
            marks.append((parts[0], int(parts[1])))
    return marks


def wait_until(condition: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_restart_mode_restarts_the_host_process(tmp_path: Path, start) -> None:
    plugins = tmp_path / "plugins"
    marks = tmp_path / "marks.txt"
    write(plugins / "stamp.py", STAMP.format(marks=str(marks), version="v1"))
    proc = start(
        tmp_path / "data",
        ["--plugins-dir", str(plugins), "--restart", "--step", "50"],
        tmp_path,
        global_args=("--strict",),  # global options reach the host in the child process
    )
    child_pids: set[int] = set()
    try:
        lines = Lines(proc)
        wait_until(lambda: "v1" in {v for v, _ in read_marks(marks)}, "the first host")
        first_pid = read_marks(marks)[0][1]
        assert first_pid != proc.pid  # the host runs in a child process
        # the runner starts its watcher right after spawning the first child, which has booted
        # by now; run_process offers no "watching" signal, so a save it missed is repeated (after
        # a wait long enough under load that a seen save is not repeated: each restarts the host)
        end = time.monotonic() + DEADLINE
        while True:
            write(plugins / "stamp.py", STAMP.format(marks=str(marks), version="v2"))
            try:
                lines.wait_for(lambda line: "restarting the host" in line, "restarting", 10.0)
                break
            except AssertionError:
                assert time.monotonic() < end, "the runner never restarted the host"
        wait_until(lambda: "v2" in {v for v, _ in read_marks(marks)}, "the restarted host")
        child_pids = {pid for _, pid in read_marks(marks)}
        second_pid = next(pid for version, pid in read_marks(marks) if version == "v2")
        assert second_pid != first_pid
        # the restarted host says what it loaded and how long its start took
        lines.wait_for(lambda line: "loaded stamp in" in line and "ms" in line, "loaded stamp")
        serving = f"memgraph-host: serving (pid {second_pid}, host started in "
        lines.wait_for(lambda line: line.startswith(serving) and line.endswith(" ms)"), "serving")
    finally:
        code = stop(proc)
    assert code == 0
    for pid in child_pids:  # the children stopped with the runner
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
