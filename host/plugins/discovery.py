"""Where plugins come from: the built-in plugin, entry points and plugin folders.

Discovery only finds candidates (name, source, origin, a loader); the host imports them one by
one so that a broken plugin fails alone. Folder plugins are imported under synthetic module
names derived from their folder, so two folders with a same-named file never clash in
``sys.modules``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import attrs

from host.plugins.records import Source
from host.version import own_version

log = logging.getLogger("host.plugins.discovery")

ENTRY_POINT_GROUP = "memgraph_host.plugins"
BUILTIN_MODULE = "memgraph_plugin.plugin"
BUILTIN_NAME = "memgraph"
#: The built-in offline extractor (a plugin like any other extractor; see docs/extraction.md).
EXTRACTOR_MODULE = "memgraph_plugin.extraction.plugin"
EXTRACTOR_NAME = "memgraph-extract-offline"
FOLDER_MODULE_PREFIX = "_memgraph_host_plugin_"


@attrs.frozen
class Candidate:
    """A plugin found but not imported yet; ``load()`` imports it (and may raise)."""

    name: str
    source: Source
    origin: str
    load: Callable[[], object] = attrs.field(eq=False, repr=False)
    version: str | None = None
    optional: bool = False  # a missing module is not a failure (the built-in plugin)


class PluginMissing(ImportError):
    """An optional plugin's module does not exist."""


def _loader(module: str) -> Callable[[], object]:
    def load() -> object:
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module.startswith(exc.name):
                raise PluginMissing(f"{module} is not installed") from exc
            raise

    return load


def builtin_candidates() -> list[Candidate]:
    """The memory-graph plugin and its offline extractor (versioned with this distribution);
    absent is not an error."""
    version = own_version()
    return [
        Candidate(
            BUILTIN_NAME, "built-in", BUILTIN_MODULE, _loader(BUILTIN_MODULE), version=version,
            optional=True,
        ),
        Candidate(
            EXTRACTOR_NAME, "built-in", EXTRACTOR_MODULE, _loader(EXTRACTOR_MODULE),
            version=version, optional=True,
        ),
    ]


def entry_point_candidates(group: str = ENTRY_POINT_GROUP) -> list[Candidate]:
    """One candidate per entry point in ``group`` (duplicates found twice on sys.path dropped)."""
    found: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    for ep in sorted(importlib.metadata.entry_points(group=group), key=lambda e: e.name):
        if (ep.name, ep.value) in seen:
            continue
        seen.add((ep.name, ep.value))
        dist = getattr(ep, "dist", None)
        version = getattr(dist, "version", None) if dist is not None else None
        dist_name = _dist_name(dist)
        origin = f"{ep.name} = {ep.value}" + (f" ({dist_name} {version})" if dist_name else "")
        found.append(Candidate(ep.name, "entry point", origin, ep.load, version=version))
    return found


def _dist_name(dist: object) -> str | None:
    if dist is None:
        return None
    try:
        return dist.metadata["Name"]  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - broken metadata only loses the name in the listing
        return getattr(dist, "name", None)


def folder_candidates(folder: str | Path) -> list[Candidate]:
    """Every ``name.py`` and package folder ``name/__init__.py`` in ``folder``, sorted.

    As in Python's own import system a package wins over a module of the same name; the module
    is still listed, as a candidate whose import fails saying it is shadowed.
    """
    root = Path(folder).expanduser().resolve()
    if not root.is_dir():
        log.warning("plugin folder %s does not exist", root)
        return []
    found: list[Candidate] = []
    for child in sorted(root.iterdir()):
        name = plugin_name_of(child)
        if name is None:
            continue
        package = root / name
        if child != package and plugin_name_of(package) == name:
            load = _shadowed_loader(child, package)
        else:
            load = _path_loader(child, folder_module_name(root, name))
        found.append(Candidate(name, "folder", str(child), load))
    return found


def plugin_name_of(path: Path) -> str | None:
    """``scout`` for ``scout.py`` or ``scout/__init__.py``; ``None`` for anything else."""
    if path.name.startswith(("_", ".")):
        return None
    if path.is_dir():
        return path.name if path.name.isidentifier() and (path / "__init__.py").is_file() else None
    if path.suffix == ".py" and path.stem.isidentifier():
        return path.stem
    return None


def folder_module_name(folder: Path, name: str) -> str:
    """A module name unique to ``folder`` + ``name``: ``_memgraph_host_plugin_1a2b3c4d_scout``."""
    digest = hashlib.sha1(str(folder).encode("utf-8")).hexdigest()[:8]
    return f"{FOLDER_MODULE_PREFIX}{digest}_{name}"


def _path_loader(path: Path, module_name: str) -> Callable[[], object]:
    return lambda: import_path(path, module_name)


def _shadowed_loader(path: Path, package: Path) -> Callable[[], object]:
    def load() -> object:
        raise ImportError(f"{path.name} is shadowed by the package {package.name}/ beside it")

    return load


def import_path(path: Path, module_name: str) -> ModuleType:
    """Import a ``.py`` file or a package folder as ``module_name``; nothing stays on failure.

    Like any import, a module already imported is reused: two hosts loading the same folder share
    its module objects (but each registers them in its own PluginManager). Hot reload
    (`host.reload.reload`) imports changed code under fresh names instead.
    """
    if module_name in sys.modules:
        return sys.modules[module_name]
    is_package = path.is_dir()
    source = path / "__init__.py" if is_package else path
    spec = importlib.util.spec_from_file_location(
        module_name, source, submodule_search_locations=[str(path)] if is_package else None
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import plugin source {source}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for key in [k for k in sys.modules if k == module_name or k.startswith(module_name + ".")]:
            del sys.modules[key]
        raise
    return module


def version_of(plugin: object, known: str | None = None) -> str | None:
    """The dist version when known, else the plugin's (or its module's) ``__version__``."""
    if known:
        return known
    version = getattr(plugin, "__version__", None)
    if version is None and not isinstance(plugin, ModuleType):
        module = sys.modules.get(getattr(type(plugin), "__module__", ""), None)
        version = getattr(module, "__version__", None)
    return str(version) if version is not None else None
