"""``memgraph-host proxy --workers N`` and ``serve --workers N``: N worker processes on one port.

The parent binds the public port, chooses the JSON API's write token, and starts N children
that run the same command line with ``--worker-fd FD`` in place of ``--workers N``: child `i`
inherits the listening Unix socket of slot `i` (the parent made it in a private folder), reads
the token from the first line of its stdin, and serves the whole app on that socket. The
parent's front (`worker_front.Front`) takes the public port's connections and sends each
request to the worker of its chat, so a chat's turns are served by one process. The parent
prints the start line once, after every child said it is ready (one line on its stdout).

The children share the data dir the way separate processes always could: a chat's turns are
served by one process at a time (its cross-process lock, `host.chats.chat_lock`), and a process
taking a chat's lock reads again what another one changed (`proxy.ledger.chat_memory.ChatMemory`):
requests the front cannot route by chat stay correct wherever they land. A new local database
is split in one shard per child first (`storage.shards`, by `web.serve_commands`), so a child writes
the tables of its own chats alone.

The parent restarts a child that exits while it serves (a crash, a kill) on the same slot: the
slot's socket stays open in the parent, so requests for its chats wait in the socket's backlog
for the new process. On SIGTERM or SIGINT the parent stops taking connections and stops every
child (each stores the answers still in flight first). A child stops by itself when its stdin
closes: the parent is gone, however it ended. Children run in their own process group, so a
terminal's Ctrl-C reaches the parent only, which stops them in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .worker_front import HEAD_LIMIT, Front

log = logging.getLogger(__name__)

#: The longest folder path the slots' Unix sockets go in (a socket's path has ~100 bytes).
UNIX_PATH_ROOM = 80
#: The response header naming the worker process that answered (its pid).
WORKER_HEADER = "x-memgraph-worker"
#: The line a child prints on its stdout once it serves (the parent waits for it).
READY = "memgraph worker ready"
#: Seconds a stopping child gets to store its answers before it is killed.
STOP_GRACE_S = 60.0
#: A child that ended sooner than this after its start waits this long before the next start
#: (a child that cannot start is not restarted in a tight loop).
RESTART_PAUSE_S = 1.0


class WorkerStartError(Exception):
    """A child ended before it was ready; the message has its exit code."""


def child_command(argv: Sequence[str], fd: int) -> list[str]:
    """The child's command line: this process's (`argv`, without the program) with
    ``--workers N`` (or ``--workers=N``) replaced by ``--worker-fd FD``."""
    out: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word == "--workers":
            skip = True
            continue
        if word.startswith("--workers="):
            continue
        out.append(word)
    return [sys.executable, "-m", "host.cli.entry", *out, "--worker-fd", str(fd)]


class Worker:
    """One child process, its slot and when it started."""

    def __init__(self, proc: asyncio.subprocess.Process, slot: int, started: float) -> None:
        self.proc = proc
        self.slot = slot
        self.started = started

    @property
    def pid(self) -> int:
        return self.proc.pid


def slot_sockets(count: int) -> tuple[Path, list[socket.socket]]:
    """A private folder (mode 0700) and `count` listening Unix sockets in it, one per slot."""
    folder = Path(tempfile.mkdtemp(prefix="memgraph-workers-"))
    if len(str(folder)) > UNIX_PATH_ROOM:  # a long TMPDIR: a socket's path has ~100 bytes
        folder.rmdir()
        folder = Path(tempfile.mkdtemp(prefix="memgraph-workers-", dir="/tmp"))
    socks: list[socket.socket] = []
    try:
        for slot in range(count):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            socks.append(sock)
            sock.bind(str(folder / f"worker-{slot}.sock"))
            sock.listen(socket.SOMAXCONN)
    except OSError:
        for sock in socks:
            sock.close()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, socks


class Supervisor:
    """Serves `sock` through `count` children (one per slot), keeps them running, stops them."""

    def __init__(self, sock: socket.socket, count: int, token: str, argv: Sequence[str]) -> None:
        self.sock = sock
        self.count = count
        self.token = token
        self.argv = list(argv)
        self.folder, self.slots = slot_sockets(count)
        self.front = Front([str(s.getsockname()) for s in self.slots])
        self.workers: list[Worker] = []
        self.stopping = asyncio.Event()
        self.restarts = 0

    async def start_one(self, slot: int) -> Worker:
        """A new child on `slot`, ready (`WorkerStartError` when it ends first)."""
        fd = self.slots[slot].fileno()
        proc = await asyncio.create_subprocess_exec(
            *child_command(self.argv, fd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            pass_fds=(fd,),
            process_group=0,
        )
        assert proc.stdin is not None and proc.stdout is not None
        worker = Worker(proc, slot, time.monotonic())
        self.workers.append(worker)  # stopped with the others from now on
        proc.stdin.write(self.token.encode() + b"\n")  # the stdin pipe stays open: see the module
        with contextlib.suppress(ConnectionError):
            await proc.stdin.drain()
        while True:
            line = await proc.stdout.readline()
            if not line:
                code = await proc.wait()
                self.workers.remove(worker)
                raise WorkerStartError(f"a worker process ended before it served (exit {code})")
            if line.decode(errors="replace").startswith(READY):
                break
        asyncio.ensure_future(_discard(proc.stdout))  # nothing else is read from it
        return worker

    async def run(self, announce: Callable[[list[int]], None]) -> int:
        """Start the children, serve the front, `announce` the children's pids (by slot), keep
        them up until SIGTERM or SIGINT."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.stopping.set)
        front: asyncio.Server | None = None
        try:
            started = await asyncio.gather(
                *(self.start_one(slot) for slot in range(self.count)), return_exceptions=True
            )
            failed = [r for r in started if isinstance(r, BaseException)]
            if failed:
                await self._stop_all()
                raise failed[0]
            self.sock.setblocking(False)
            front = await asyncio.start_server(
                self.front.handle, sock=self.sock, limit=HEAD_LIMIT
            )
            announce([w.pid for w in sorted(self.workers, key=lambda w: w.slot)])
            watchers = {asyncio.ensure_future(w.proc.wait()): w for w in self.workers}
            stop = asyncio.ensure_future(self.stopping.wait())
            while not self.stopping.is_set():
                done, _ = await asyncio.wait(
                    [*watchers, stop], return_when=asyncio.FIRST_COMPLETED
                )
                for task in done:
                    worker = watchers.pop(task, None)
                    if worker is None or self.stopping.is_set():
                        continue
                    fresh = await self._replace(worker, task.result())
                    if fresh is not None:
                        watchers[asyncio.ensure_future(fresh.proc.wait())] = fresh
            for task in [*watchers, stop]:
                task.cancel()
            front.close()  # no new connections; those in flight are answered by the children
            await self._stop_all()
            if self.front.connections:
                await asyncio.wait(list(self.front.connections), timeout=STOP_GRACE_S)
            return 0
        finally:
            if front is not None:
                front.close()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            for sock in self.slots:
                sock.close()
            shutil.rmtree(self.folder, ignore_errors=True)

    async def _replace(self, worker: Worker, code: int) -> Worker | None:
        """A child that ended while serving: start another in its place (None: stopping)."""
        self.workers.remove(worker)
        print(
            f"memgraph workers: process {worker.pid} ended (exit {code}); starting another",
            file=sys.stderr,
            flush=True,
        )
        while not self.stopping.is_set():
            if time.monotonic() - worker.started < RESTART_PAUSE_S:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), RESTART_PAUSE_S)
                if self.stopping.is_set():
                    return None
            try:
                fresh = await self.start_one(worker.slot)
            except WorkerStartError as exc:
                print(f"memgraph workers: {exc}; trying again", file=sys.stderr, flush=True)
                worker = Worker(worker.proc, worker.slot, time.monotonic())
                continue
            self.restarts += 1
            print(
                f"memgraph workers: process {fresh.pid} serves in place of {worker.pid}",
                file=sys.stderr,
                flush=True,
            )
            return fresh
        return None

    async def _stop_all(self) -> None:
        """SIGTERM to every child (each stores its answers in flight), SIGKILL past the grace."""
        for worker in self.workers:
            with contextlib.suppress(ProcessLookupError):
                worker.proc.send_signal(signal.SIGTERM)
        waits = [asyncio.ensure_future(w.proc.wait()) for w in self.workers]
        if not waits:
            return
        _, late = await asyncio.wait(waits, timeout=STOP_GRACE_S)
        for worker in self.workers:
            if worker.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    worker.proc.kill()
        if late:
            await asyncio.wait(late)


async def _discard(stream: asyncio.StreamReader) -> None:
    with contextlib.suppress(Exception):
        while await stream.read(65536):
            pass


# ------------------------------------------------------------------ the child side


def inherited_socket(fd: int) -> socket.socket:
    """The listening socket the parent passed down as `fd`."""
    sock = socket.socket(fileno=fd)
    sock.setblocking(False)
    return sock


def read_token() -> str:
    """The write token, from the first line of stdin (the parent's)."""
    line = sys.stdin.readline()
    if not line.strip():
        raise WorkerStartError("no write token on stdin: a worker is started by --workers N")
    return line.strip()


def stop_when_parent_goes(server: Any) -> None:
    """Set ``server.should_exit`` once stdin closes (the parent ended, or stopped us)."""

    def watch() -> None:
        with contextlib.suppress(Exception):
            while sys.stdin.read(4096):
                pass
        server.should_exit = True

    threading.Thread(target=watch, name="memgraph-worker-parent", daemon=True).start()


def announce_ready() -> None:
    print(f"{READY} {os.getpid()}", flush=True)
