"""The sample plugins under hot reload: a new version replaces the old worker, never doubles it."""

from __future__ import annotations

import shutil
from pathlib import Path

import sample_plugins
from host import Host
from host.reload.reload import Reloader

from .conftest import CHAT, open_session

SOURCE = Path(sample_plugins.__file__).parent


def _workers(host: Host) -> list[str]:
    return [name for name, _ in host.pm.list_name_plugin() if name.endswith(".worker")]


async def test_reloaded_plugins_keep_one_worker_each(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    for name in ("scout.py", "compactor.py"):
        shutil.copy(SOURCE / name, folder / name)
    host = Host(data_dir=tmp_path / "data", entry_points=False, plugin_dirs=(folder,))
    await host.start()
    try:
        reloader = Reloader(host, folder)
        await reloader.load_all()
        assert sorted(_workers(host)) == ["compactor.worker", "scout.worker"]
        old_tools = host.registry.get("orchestrator")

        path = folder / "scout.py"
        path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
        reports = await reloader.reload_paths([path])
        assert [r.action for r in reports] == ["reloaded"], [r.describe() for r in reports]

        assert sorted(_workers(host)) == ["compactor.worker", "scout.worker"]
        tools = host.registry.get("orchestrator")
        assert tools is not None and tools is not old_tools
        assert host.registry.entry("orchestrator").owner == "scout.worker"
        session = await open_session(host)
        result = await session.apply_extraction_batch(
            ops=[{"op": "create", "type": "event", "title": "Ping", "fields": {"summary": "x"}}],
            max_seq=1,
        )
        assert not result.rejected
        found = await tools.memory_list_recent({}, host.get_context(CHAT))
        assert [n["title"] for n in found["nodes"]] == ["Ping"]
    finally:
        await host.stop()
    assert _workers(host) == []
