"""The layout of a hot-reloaded plugins folder: which entries are plugins, which changes count.

A plugin is a top-level ``name.py`` or a package folder ``name/__init__.py``; names starting with
``_`` or ``.`` are helpers, not plugins. Shared by the in-process reloader and ``dev --restart``.
"""

from __future__ import annotations

from pathlib import Path

from watchfiles import Change, DefaultFilter


def plugin_name(entry: str, *, is_dir: bool) -> str | None:
    """The plugin a top-level entry of the folder is (``scout.py`` / ``scout/`` -> ``scout``)."""
    if entry.startswith(("_", ".")):
        return None
    if is_dir:
        return entry if entry.isidentifier() else None
    if entry.endswith(".py") and entry[:-3].isidentifier():
        return entry[:-3]
    return None


class PluginFolderFilter(DefaultFilter):
    """watchfiles filter: ``.py`` files anywhere in the folder, plus its top-level package folders.

    A package plugin moved into the folder, moved out of it or renamed shows up only as its
    folder (no event for the files inside), so ``.py`` files alone would miss it. Caches, VCS
    folders and editor swap files stay ignored (`DefaultFilter`).
    """

    def __init__(self, plugins_dir: str | Path) -> None:
        super().__init__()
        self.plugins_dir = Path(plugins_dir).resolve()

    def __call__(self, change: Change, path: str) -> bool:
        if not super().__call__(change, path):
            return False
        if path.endswith(".py"):
            return True
        candidate = Path(path)
        return (
            candidate.parent == self.plugins_dir
            and plugin_name(candidate.name, is_dir=True) is not None
        )
