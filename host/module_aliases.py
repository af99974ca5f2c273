"""Former module paths kept importable after a layout change.

A meta-path finder answers an old dotted name with the module that now lives at its new path (the
same module object, so ``from old.path import X`` and ``from new.path import X`` give the same
``X``). Each package registers its own map (`keep_importable`); real modules always win, since the
finder is consulted last.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any


class _AliasLoader(importlib.abc.Loader):
    """Loads an old name by importing the new one: the module object is shared, not re-run."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was executed under its new name."""


class ModuleAliases(importlib.abc.MetaPathFinder):
    """Old dotted module name -> new one, for every package that registered its moves."""

    def __init__(self) -> None:
        self.moves: dict[str, str] = {}

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        new = self.moves.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(new))


def _finder() -> ModuleAliases:
    for finder in sys.meta_path:
        if isinstance(finder, ModuleAliases):
            return finder
    finder = ModuleAliases()
    sys.meta_path.append(finder)
    return finder


def keep_importable(moves: Mapping[str, str]) -> None:
    """Make every old name in ``moves`` import the module now at its new name."""
    _finder().moves.update(moves)


#: The host's own former module paths (the layout of issue 25). Rooms named like the module they
#: grew from (`host.reload`, `host.settings`, `host.chats`, `host.cli`) re-export its names instead.
HOST_MOVES: dict[str, str] = {
    "host.core": "host.host",
    "host.discovery": "host.plugins.discovery",
    "host.fresh_import": "host.plugins.fresh_import",
    "host.records": "host.plugins.records",
    "host.specs": "host.plugins.specs",
    "host.hook_guard": "host.plugins.hook_guard",
    "host.notify": "host.plugins.notify",
    "host.dev": "host.reload.dev",
    "host.plugin_folder": "host.reload.plugin_folder",
    "host.settings_doc": "host.settings.settings_doc",
    "host.settings_schema": "host.settings.settings_schema",
    "host.chat_ids": "host.chats.chat_ids",
    "host.context": "host.chats.context",
    "host.console": "host.cli.console",
    "host.listings": "host.cli.listings",
}


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` (PEP 562) for its public names: ``exports`` maps each
    name to the module defining it, imported on first use and then kept in the package, so
    importing the package (or one module below it) loads nothing it does not use."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
