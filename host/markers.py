"""The pluggy markers of the project "memgraph_host": plugins mark their hooks with `hookimpl`."""

from __future__ import annotations

import pluggy

PROJECT_NAME = "memgraph_host"

#: Marks a hook implementation in a plugin: ``@hookimpl def host_startup(host): ...``.
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

#: Marks a hook specification (host/hookspecs.py, and specs plugins add via ``host_addhooks``).
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
