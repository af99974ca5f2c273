"""A failed reload is shown once (by the report callback), not again by the log."""

from __future__ import annotations

import logging
from pathlib import Path

from host import Host
from host.reload.reload import Reloader

from .conftest import write


async def test_a_failed_reload_is_reported_once(tmp_path: Path, caplog) -> None:
    plugins = tmp_path / "plugins"
    write(plugins / "shaky.py", "from host import hookimpl\n")
    host = Host(data_dir=tmp_path / "d", entry_points=False, builtins=False)
    await host.start()
    shown: list[str] = []
    reloader = Reloader(host, plugins, on_report=lambda report: shown.append(report.describe()))
    try:
        await reloader.load_all()
        write(plugins / "shaky.py", "def broken(:\n")
        caplog.clear()
        with caplog.at_level(logging.INFO):
            (report,) = await reloader.reload_paths([plugins / "shaky.py"])
        assert not report.ok
        printed = [line for line in shown if line.startswith("FAILED shaky")]
        logged = [r for r in caplog.records if "FAILED shaky" in r.getMessage()]
        assert len(printed) == 1
        assert [r.levelno for r in logged if r.levelno >= logging.WARNING] == []
    finally:
        await host.stop()


async def test_without_a_callback_the_failure_is_logged(tmp_path: Path, caplog) -> None:
    plugins = tmp_path / "plugins"
    write(plugins / "shaky.py", "from host import hookimpl\n")
    host = Host(data_dir=tmp_path / "d", entry_points=False, builtins=False)
    await host.start()
    reloader = Reloader(host, plugins)
    try:
        await reloader.load_all()
        write(plugins / "shaky.py", "def broken(:\n")
        with caplog.at_level(logging.INFO):
            await reloader.reload_paths([plugins / "shaky.py"])
        assert [r.levelno for r in caplog.records if "FAILED shaky" in r.getMessage()] == [
            logging.ERROR
        ]
    finally:
        await host.stop()
