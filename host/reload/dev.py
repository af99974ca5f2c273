"""``memgraph-host dev``: run the host and reload the plugins of one folder as they change.

In-process (default): a `Reloader` swaps each changed plugin in place; chats, sessions and the
other plugins keep running. ``--restart``: the fallback for changes that cannot be swapped in place
(hook specs, the host itself): watchfiles' ``run_process`` restarts the whole host process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from watchfiles import run_process

from host.reload.plugin_folder import PluginFolderFilter
from host.reload.reload import Reloader, ReloadReport

if TYPE_CHECKING:
    from host.host import Host

log = logging.getLogger("host.reload.dev")


def add_dev_arguments(
    parser: argparse.ArgumentParser, *, standalone: bool = False
) -> argparse.ArgumentParser:
    """The ``dev`` sub-command's options (``standalone``: also ``--data-dir``, for ``-m
    host.reload.dev``).

    ``--plugins-dir`` is stored as ``dev_plugins_dir`` so it never clobbers the CLI's global,
    repeatable ``--plugins-dir``; without it the first global plugins folder is watched.
    """
    parser.add_argument(
        "--plugins-dir",
        dest="dev_plugins_dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of plugins to watch and reload",
    )
    if standalone:
        parser.add_argument(
            "--data-dir", default=".memgraph", type=Path, help="host data folder (.memgraph)"
        )
    parser.add_argument(
        "--restart",
        action="store_true",
        help="restart the whole host process on change instead of reloading plugins in place",
    )
    parser.add_argument(
        "--debounce",
        type=int,
        default=300,
        help="ms of quiet that ends a group of changes: saves closer than this make one reload"
        " (default 300)",
    )
    parser.add_argument(
        "--step", type=int, default=50, help="ms between the watcher's checks (default 50)"
    )
    parser.add_argument(
        "--force-polling",
        action="store_true",
        default=None,
        help="poll the folder (network drives, WSL, containers)",
    )
    return parser


def dev_command(host: Host, args: argparse.Namespace) -> int | Awaitable[int]:
    """``memgraph-host dev`` as a `host.Command` run: uses the host the CLI built.

    In-process mode returns a coroutine (the CLI awaits it); ``--restart`` blocks in watchfiles'
    process runner and returns the exit code.
    """
    plugins_dir = _plugins_dir(args, host)
    if plugins_dir is None:
        _print("memgraph-host dev: error: --plugins-dir DIR is required (an existing folder)")
        return 2
    if args.restart:
        return run_restarting(
            plugins_dir,
            host.data_dir,
            debounce=args.debounce,
            step=args.step,
            strict=host.strict,
            plugin_dirs=host.plugin_dirs,
        )

    async def in_process() -> int:
        await run_in_process(
            plugins_dir,
            host=host,
            debounce=args.debounce,
            step=args.step,
            force_polling=args.force_polling,
        )
        return 0

    return in_process()


def run_dev_command(args: argparse.Namespace, *, out: Callable[[str], None] | None = None) -> int:
    """``python -m host.reload.dev``: the same command with a host of its own (no event loop
    running)."""
    emit = out or _print
    plugins_dir = _plugins_dir(args, None)
    if plugins_dir is None:
        emit("memgraph-host dev: error: --plugins-dir DIR is required (an existing folder)")
        return 2
    data_dir = Path(getattr(args, "data_dir", ".memgraph"))
    if args.restart:
        return run_restarting(
            plugins_dir, data_dir, debounce=args.debounce, step=args.step, out=emit
        )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            run_in_process(
                plugins_dir,
                data_dir=data_dir,
                debounce=args.debounce,
                step=args.step,
                force_polling=args.force_polling,
                out=emit,
            )
        )
    return 0


def _plugins_dir(args: argparse.Namespace, host: Host | None) -> Path | None:
    chosen = getattr(args, "dev_plugins_dir", None)
    if chosen is None and host is not None and host.plugin_dirs:
        chosen = host.plugin_dirs[0]
    if chosen is None:
        return None
    path = Path(chosen).expanduser().resolve()
    return path if path.is_dir() else None


async def run_in_process(
    plugins_dir: Path,
    *,
    host: Host | None = None,
    data_dir: Path | None = None,
    debounce: int = 300,
    step: int = 50,
    force_polling: bool | None = None,
    stop_event: asyncio.Event | None = None,
    out: Callable[[str], None] | None = None,
) -> Reloader:
    """Start ``host`` (or a new one on ``data_dir``), load ``plugins_dir`` into it and hot-reload
    it until ``stop_event`` is set or SIGINT / SIGTERM arrives."""
    from host.host import Host

    emit = out or _print
    stop = stop_event if stop_event is not None else asyncio.Event()
    if host is None:
        host = Host(data_dir=data_dir or Path(".memgraph"))
    await host.start()
    reloader = Reloader(
        host,
        plugins_dir,
        debounce=debounce,
        step=step,
        force_polling=force_polling,
        on_report=lambda report: emit(_format_report(report)),
    )

    async def announce_ready() -> None:
        await reloader.watching.wait()
        emit(
            f"memgraph-host dev: ready ({len(reloader.loaded)} loaded, {len(reloader.failures)}"
            " failed); save a plugin file to reload it"
        )

    with _stop_on_signals(stop):
        emit(f"memgraph-host dev: watching {plugins_dir} (in-process reload, pid {os.getpid()})")
        ready = asyncio.create_task(announce_ready())
        try:
            await reloader.run(stop)
        finally:
            ready.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ready
            await host.stop()
            emit("memgraph-host dev: stopped")
    return reloader


def run_restarting(
    plugins_dir: Path,
    data_dir: Path,
    *,
    debounce: int = 300,
    step: int = 50,
    out: Callable[[str], None] | None = None,
    strict: bool = False,
    plugin_dirs: Iterable[Path] = (),
) -> int:
    """Run the host in a child process and restart it on every change (watchfiles' runner).

    The child builds its host like the CLI's: same data folder, strict mode and plugin folders.
    """
    emit = out or _print

    def on_change(changes: set) -> None:
        names = sorted({Path(path).name for _change, path in changes})
        emit(f"memgraph-host dev: {', '.join(names)} changed, restarting the host")

    emit(f"memgraph-host dev: watching {plugins_dir} (restart on change, pid {os.getpid()})")
    restarts: int | str = "?"
    # Ctrl+C while a restart is under way (outside the watcher) is still a clean stop
    with contextlib.suppress(KeyboardInterrupt), _default_sigint():
        restarts = run_process(
            plugins_dir,
            target=serve_host,
            args=(str(plugins_dir), str(data_dir), strict, tuple(str(d) for d in plugin_dirs)),
            target_type="function",
            callback=on_change,
            watch_filter=PluginFolderFilter(plugins_dir),
            debounce=debounce,
            step=step,
        )
    emit(f"memgraph-host dev: stopped after {restarts} restart(s)")
    return 0


def serve_host(
    plugins_dir: str, data_dir: str, strict: bool = False, plugin_dirs: tuple[str, ...] = ()
) -> None:
    """The child process of ``--restart``: load the folder once and serve until interrupted."""
    began = time.perf_counter()
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(Path(plugins_dir), Path(data_dir), strict, plugin_dirs, began))


async def _serve(
    plugins_dir: Path, data_dir: Path, strict: bool, plugin_dirs: tuple[str, ...], began: float
) -> None:
    from host.host import Host

    stop = asyncio.Event()
    host = Host(data_dir=data_dir, strict=strict, plugin_dirs=plugin_dirs)
    await host.start()
    reloader = Reloader(host, plugins_dir)
    with _stop_on_signals(stop):
        for report in await reloader.load_all():
            _print(_format_report(report))
        took = (time.perf_counter() - began) * 1000.0
        _print(f"memgraph-host: serving (pid {os.getpid()}, host started in {took:.1f} ms)")
        try:
            await stop.wait()
        finally:
            await host.stop()


@contextlib.contextmanager
def _default_sigint():
    """Ctrl+C raises KeyboardInterrupt while blocking here, even under ``asyncio.run`` (whose
    own SIGINT handler only cancels the main task, which a blocking call never notices)."""
    try:
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def _stop_on_signals(stop: asyncio.Event):
    """SIGINT / SIGTERM set ``stop`` (when running in the main thread of a loop)."""
    loop = asyncio.get_running_loop()
    installed = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stop.set)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)


def _format_report(report: ReloadReport) -> str:
    return f"memgraph-host dev: {report.describe()}"


def _print(line: str) -> None:
    print(line, file=sys.stdout, flush=True)


def main(argv: list[str] | None = None) -> int:
    """``python -m host.reload.dev``: the ``dev`` command without the rest of the CLI."""
    parser = add_dev_arguments(argparse.ArgumentParser(prog="memgraph-host dev"), standalone=True)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    return run_dev_command(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
