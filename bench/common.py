"""What the bench scripts share: a sibling script loaded as a module, a server process started.

A script imports it after ``sys.path.insert(0, str(HERE))`` (its own folder), as
`load_path.py` does with `engine`."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent


def sibling(name: str, module_name: str = "") -> ModuleType:
    """``bench/<name>.py`` loaded as a module, ``memgraph_bench_<name>`` unless named."""
    module_name = module_name or f"memgraph_bench_{name}"
    spec = importlib.util.spec_from_file_location(module_name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def start_server(cmd: list[str]) -> tuple[subprocess.Popen, str]:
    """A server process (unbuffered output) and its URL, the first word of its first line that
    starts with ``http``; exits the bench naming the command when there is none."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline() if proc.stdout else ""
    url = next((w for w in line.split() if w.startswith("http")), "")
    if not url:
        proc.kill()
        raise SystemExit(f"could not start {cmd[:3]}: {line!r}")
    return proc, url


async def hashing_host(data_dir: Path) -> tuple[Any, Any, Any]:
    """A started host on the hashing embedding profile (no entry points), its ``memory-graph``
    API and its persistence (the repository root must be on ``sys.path``)."""
    from host import Host
    from memgraph_plugin.service import memory_graph_for

    host = Host(data_dir=data_dir, settings={"embedding_profile": "hashing"}, entry_points=False)
    await host.start()
    return host, host.registry.get("memory-graph"), memory_graph_for(host).persistence
