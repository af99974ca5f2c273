"""Every plugin's ``host_startup`` finds the built-in APIs, whatever the load order."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from host import Host

DOCS = Path(__file__).resolve().parents[2] / "docs"

SEES = """
from host import hookimpl

SEEN = []


@hookimpl
def host_startup(host):
    SEEN.append(host.registry.get("memory-graph") is not None)
"""


class Explicit:
    def __init__(self) -> None:
        self.seen: list[bool] = []

    def host_startup(self, host):
        self.seen.append(host.registry.get("memory-graph") is not None)


Explicit.host_startup = Host.hookimpl(Explicit.host_startup)  # type: ignore[method-assign]


async def test_folder_and_explicit_plugins_see_memory_graph_at_startup(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "aaa_sees.py").write_text(textwrap.dedent(SEES))
    (folder / "zzz_sees.py").write_text(textwrap.dedent(SEES))
    host = Host(data_dir=tmp_path / "d", plugin_dirs=[folder], entry_points=False)
    explicit = Explicit()
    host.register_plugin(explicit, name="explicit")  # registered before the built-in loads
    await host.start()
    try:
        assert explicit.seen == [True]
        for name in ("aaa_sees", "zzz_sees"):
            assert host.plugin_record(name).plugin.SEEN == [True], name
    finally:
        await host.stop()


async def test_the_hot_reload_docs_companion_example_starts(tmp_path: Path, capsys) -> None:
    """The ``greeter`` example of docs/hot-reload.md opens a memory-graph session at startup."""
    text = (DOCS / "hot-reload.md").read_text(encoding="utf-8")
    block = re.search(r"```python file=my_plugins/greeter.py\n(.*?)^```", text, re.S | re.M)
    assert block is not None
    folder = tmp_path / "my_plugins"
    folder.mkdir()
    (folder / "greeter.py").write_text(block.group(1))
    host = Host(data_dir=tmp_path / "d", plugin_dirs=[folder], entry_points=False)
    await host.start()
    try:
        record = host.plugin_record("greeter")
        assert record.status == "loaded" and record.error is None, record.error
        assert host.registry.get("greeter").greet("ann").startswith("hello, ann")
    finally:
        await host.stop()
