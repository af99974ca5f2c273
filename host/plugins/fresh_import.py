"""Import plugin source under a fresh module name, and say where an import went wrong.

Hot reload never uses ``importlib.reload``: that keeps stale ``from x import y`` bindings, old
instances and module globals. Each load gets a new synthetic module name instead, the source is
compiled straight from disk (no ``__pycache__``: two saves within one second with the same size
would otherwise load stale bytecode), and the previous version's entries are purged from
``sys.modules``.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import itertools
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType, TracebackType

import attrs

#: Every module imported by the reloader lives under names starting with this prefix.
FRESH_PREFIX = "_memgraph_dev_"

_generation = itertools.count(1)


@attrs.frozen
class SourceLocation:
    """A file and (when known) a line: what an author needs to find a failure."""

    filename: str
    lineno: int | None = None

    def __str__(self) -> str:
        return self.filename if self.lineno is None else f"{self.filename}:{self.lineno}"


class PluginLoadError(Exception):
    """A plugin's new code could not be imported or did not fit the hook specs."""

    def __init__(self, plugin: str, message: str, location: SourceLocation | None = None):
        self.plugin = plugin
        self.message = message
        self.location = location
        where = f" ({location})" if location is not None else ""
        super().__init__(f"{plugin}: {message}{where}")


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """A source loader that always compiles from the file and never reads or writes bytecode."""

    def get_code(self, fullname: str):  # type: ignore[override]
        source = self.get_data(self.path)
        return self.source_to_code(source, self.path)

    def set_data(self, path: str, data: bytes, *, _mode: int = 0o666) -> None:
        return None


class _FreshFinder(importlib.abc.MetaPathFinder):
    """Routes submodules of fresh plugin packages through the bytecode-free loader."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: object = None):
        if not fullname.startswith(FRESH_PREFIX) or "." not in fullname or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _FreshSourceLoader(fullname, spec.origin or "")
        return spec


_FINDER = _FreshFinder()


def _install_finder() -> None:
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def entry_file(path: Path) -> Path:
    """The file whose code defines the plugin: the module itself, or a package's ``__init__.py``."""
    return path / "__init__.py" if path.is_dir() else path


def fresh_module_name(plugin: str) -> str:
    """A module name never used before in this process, e.g. ``_memgraph_dev_scout_3``."""
    safe = re.sub(r"\W", "_", plugin)
    return f"{FRESH_PREFIX}{safe}_{next(_generation)}"


def import_fresh(plugin: str, path: Path) -> ModuleType:
    """Import the plugin at ``path`` (a ``.py`` file or a package folder) under a new name.

    Raises `PluginLoadError` naming the file and line when the code fails to import; nothing
    of the failed attempt stays in ``sys.modules``.
    """
    _install_finder()
    path = Path(path)
    source = entry_file(path)
    if not source.is_file():
        raise PluginLoadError(plugin, f"no plugin source at {source}", SourceLocation(str(source)))
    name = fresh_module_name(plugin)
    loader = _FreshSourceLoader(name, str(source))
    spec = importlib.util.spec_from_file_location(
        name,
        source,
        loader=loader,
        submodule_search_locations=[str(path)] if path.is_dir() else None,
    )
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except (KeyboardInterrupt, GeneratorExit):
        purge_modules(name)
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit in plugin code is a failed import
        purge_modules(name)
        raise PluginLoadError(
            plugin, f"{type(exc).__name__}: {_first_line(exc)}", locate_error(exc, path)
        ) from exc
    return module


def purge_modules(module_name: str) -> tuple[str, ...]:
    """Drop ``module_name`` and its submodules from ``sys.modules``; returns what was removed."""
    doomed = [
        key for key in list(sys.modules) if key == module_name or key.startswith(module_name + ".")
    ]
    for key in doomed:
        sys.modules.pop(key, None)
    return tuple(doomed)


def owns_module(module_name: str, candidate: str) -> bool:
    """True when ``candidate`` is ``module_name`` or one of its submodules."""
    return candidate == module_name or candidate.startswith(module_name + ".")


def defined_in(callback: object, module_name: str) -> bool:
    """True when ``callback``'s code belongs to module ``module_name`` (or a submodule of it).

    Functions, lambdas and bound methods count by their function's module, ``functools.partial``
    by the function it wraps, other callable objects by their class.
    """
    for _depth in range(8):  # partials of partials, bounded
        inner = getattr(callback, "func", None)
        if isinstance(callback, functools.partial) and inner is not None:
            callback = inner
            continue
        break
    function = getattr(callback, "__func__", callback)  # a bound method's function
    module = getattr(function, "__module__", None) if inspect.isroutine(function) else None
    if module is None:
        module = getattr(type(callback), "__module__", None)
    return isinstance(module, str) and owns_module(module_name, module)


def locate_error(exc: BaseException, root: Path | None = None) -> SourceLocation | None:
    """Where ``exc`` happened: a syntax error's own position, else the deepest frame in ``root``."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return SourceLocation(exc.filename, exc.lineno)
    return _locate_traceback(exc.__traceback__, root)


#: One frame line of a formatted traceback: ``  File "/x/p.py", line 3, in f``.
_FRAME_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)


def locate_in_plugin(
    root: Path, exc: BaseException | None = None, traceback_text: str | None = None
) -> SourceLocation:
    """Where a plugin failed inside its own source ``root``: the deepest frame there in the
    exception chain of ``exc`` or in ``traceback_text`` (what a host record keeps), else its
    entry file. For failures raised by host code on the plugin's behalf (registration)."""
    base = Path(root).resolve()
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, SyntaxError) and exc.filename and _inside(exc.filename, base):
            return SourceLocation(exc.filename, exc.lineno)
        for frame in reversed(traceback.extract_tb(exc.__traceback__)):
            if _inside(frame.filename, base):
                return SourceLocation(frame.filename, frame.lineno)
        exc = exc.__cause__ or exc.__context__
    frames = [m for m in _FRAME_LINE.finditer(traceback_text or "") if _inside(m["file"], base)]
    if frames:
        return SourceLocation(frames[-1]["file"], int(frames[-1]["line"]))
    return SourceLocation(str(entry_file(Path(root))))


def _inside(filename: str, base: Path) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(base)
    except OSError:
        return False


def _locate_traceback(tb: TracebackType | None, root: Path | None) -> SourceLocation | None:
    frames = traceback.extract_tb(tb)
    if not frames:
        return None
    if root is not None:
        base = Path(root).resolve()
        for frame in reversed(frames):
            if _inside(frame.filename, base):
                return SourceLocation(frame.filename, frame.lineno)
    last = frames[-1]
    return SourceLocation(last.filename, last.lineno)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    if isinstance(exc, SyntaxError):
        text = exc.msg or text
    return text.splitlines()[0] if text else type(exc).__name__
