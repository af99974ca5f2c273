"""In-process hot reload of the plugins in one folder, driven by watchfiles.

A plugin is a top-level ``name.py`` or a package folder ``name/__init__.py`` in the plugins
folder; every changed path is mapped to the plugin it belongs to, so several files of one package
make one reload. A reload imports the new code under a fresh module name, checks it against the
hook specs in a scratch plugin manager, and only then swaps it in: ``host_plugin_dispose`` on the
old version, teardown (hooks and the specs it added, registry entries, ``host.on_unload``
callbacks, modules), register the new version (the host keeps its place in the call order),
``host_startup`` and ``host_plugin_adopt`` for it alone.

Why one module of ~650 lines: a reload is one transaction (map the changed paths, import under a
fresh name, check in a scratch manager, swap, start) whose steps share the `Reloader`'s state;
cut apart, each half would need the other to be read.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

import attrs
import pluggy
from watchfiles import awatch

from host.plugins.fresh_import import (
    PluginLoadError,
    SourceLocation,
    defined_in,
    entry_file,
    import_fresh,
    locate_error,
    locate_in_plugin,
    owns_module,
    purge_modules,
)
from host.plugins.pluggy_internals import call_history, hook_callers, restore_call_history
from host.reload.plugin_folder import PluginFolderFilter, plugin_name

if TYPE_CHECKING:
    from host.protocols import HostLike as Host

log = logging.getLogger("host.reload.reload")

ReloadAction = Literal["loaded", "reloaded", "unloaded", "failed"]

#: A group of changes ends after ``debounce`` ms of quiet, or at the latest after this long.
MAX_GROUP_MS = 5000


@attrs.frozen
class ReloadReport:
    """What one reload did to one plugin, for the CLI, the log and tests."""

    plugin: str
    action: ReloadAction
    duration_ms: float
    error: str | None = None
    location: str | None = None  # "file:line" of the failure, when known
    version: int = 0  # how many times this plugin has been (re)loaded into the host

    @property
    def ok(self) -> bool:
        return self.action != "failed"

    def describe(self) -> str:
        """One line: ``reloaded scout in 12.3 ms`` / ``FAILED scout: SyntaxError ... (f.py:3)``."""
        if self.ok:
            return f"{self.action} {self.plugin} in {self.duration_ms:.1f} ms"
        where = f" ({self.location})" if self.location else ""
        return f"FAILED {self.plugin} after {self.duration_ms:.1f} ms: {self.error}{where}"


@attrs.define
class _Loaded:
    """The version of a plugin that currently runs in the host."""

    module: ModuleType
    path: Path
    version: int


class Reloader:
    """Keeps the plugins of ``plugins_dir`` loaded in ``host`` and swaps in new versions on change.

    ``run(stop_event)`` loads the folder, then watches it; ``reload_paths(paths)`` is the same
    reload step without a watcher. Reloads run one at a time. ``debounce``: ms of quiet that end
    a group of changes (one reload per plugin per group); ``step``: ms between the watcher's checks.
    """

    def __init__(
        self,
        host: Host,
        plugins_dir: str | Path,
        *,
        debounce: int = 300,
        step: int = 50,
        force_polling: bool | None = None,
        on_report: Callable[[ReloadReport], None] | None = None,
    ) -> None:
        self.host = host
        self.plugins_dir = Path(plugins_dir).resolve()
        self.debounce = debounce
        self.step = step
        self.force_polling = force_polling
        self.on_report = on_report
        self.reports: list[ReloadReport] = []
        #: Set once the watcher is live: file changes made after this are seen.
        self.watching = asyncio.Event()
        self._loaded: dict[str, _Loaded] = {}
        self._failed: dict[str, ReloadReport] = {}
        self._lock = asyncio.Lock()
        self._reported = asyncio.Condition()
        self._versions: dict[str, int] = {}

    # ------------------------------------------------------------------ public API

    @property
    def loaded(self) -> Mapping[str, ModuleType]:
        """Plugin name -> the module object of the version running now."""
        return {name: entry.module for name, entry in self._loaded.items()}

    @property
    def failures(self) -> Mapping[str, ReloadReport]:
        """Plugins whose latest code failed to load (an older version may still run)."""
        return dict(self._failed)

    def discover(self) -> dict[str, Path]:
        """Plugins present in the folder now: name -> module file or package folder."""
        found: dict[str, Path] = {}
        if not self.plugins_dir.is_dir():
            return found
        for child in sorted(self.plugins_dir.iterdir()):
            name = plugin_name(child.name, is_dir=child.is_dir())
            if name is not None and entry_file(child).is_file():
                found[name] = child
        return found

    def plugin_for_path(self, path: str | Path) -> str | None:
        """The plugin a changed path belongs to, or ``None`` when it belongs to none.

        A relative path is taken from the working directory, else from the plugins folder.
        """
        given = Path(path)
        bases = [Path.cwd(), self.plugins_dir] if not given.is_absolute() else [Path("/")]
        for base in bases:
            try:
                parts = (base / given).resolve().relative_to(self.plugins_dir).parts
            except ValueError:
                continue
            break
        else:
            return None
        if not parts:
            return None
        if len(parts) == 1 and parts[0].endswith(".py"):
            return plugin_name(parts[0], is_dir=False)
        # a file inside a package, or the package folder itself (moved in, out or deleted whole)
        return plugin_name(parts[0], is_dir=True)

    async def load_all(self) -> tuple[ReloadReport, ...]:
        """Load every plugin in the folder that is not loaded yet."""
        names = []
        for name, path in self.discover().items():
            if name in self._loaded:
                continue
            if self._adopt_registered(name, path):
                continue
            names.append(name)
        reports = list(await self._reload_names(names, publish=False))
        # a plugin may implement hooks whose specs a plugin later in the folder adds: retry
        # the ones refused for an unknown hook while the others keep loading
        while True:
            retry = [r.plugin for r in reports if not r.ok and "unknown hook" in (r.error or "")]
            if not retry:
                break
            again = await self._reload_names(retry, publish=False)
            if not any(report.ok for report in again):
                break
            reports = [r for r in reports if r.plugin not in retry] + list(again)
        for report in reports:
            await self._publish(report)
        return tuple(reports)

    def _adopt_registered(self, name: str, path: Path) -> bool:
        """Take over a plugin the host already loaded from this folder (``plugin_dirs``)."""
        plugin = self.host.pm.get_plugin(name)
        if not isinstance(plugin, ModuleType):
            return False
        try:
            same = Path(plugin.__file__ or "").resolve() == entry_file(path).resolve()
        except OSError:
            same = False
        if same:
            self._versions[name] = self._versions.get(name, 0) + 1
            self._loaded[name] = _Loaded(plugin, path, self._versions[name])
        return same

    async def reload_paths(self, changed_paths: Iterable[str | Path]) -> tuple[ReloadReport, ...]:
        """Reload (load, unload) every plugin one of ``changed_paths`` belongs to, once each."""
        names: list[str] = []
        for path in changed_paths:
            name = self.plugin_for_path(path)
            if name is not None and name not in names:
                names.append(name)
        return await self._reload_names(names)

    async def run(self, stop_event: asyncio.Event | None = None) -> None:
        """Load the folder, then reload on every (debounced) change until ``stop_event`` is set."""
        stop = stop_event if stop_event is not None else asyncio.Event()
        await self.load_all()
        changes = awatch(
            self.plugins_dir,
            watch_filter=PluginFolderFilter(self.plugins_dir),
            debounce=self.debounce,
            step=self.step,
            stop_event=stop,
            force_polling=self.force_polling,
        )
        # The watcher is created in the generator's first step, before it first awaits: once that
        # step has run, every later change on disk is seen (changes made while a reload runs are
        # kept by the watcher for the next group).
        pending = asyncio.ensure_future(anext(changes))
        await asyncio.sleep(0)
        self.watching.set()
        try:
            while not stop.is_set():
                paths, pending = await self._next_group(changes, pending)
                if paths is None or stop.is_set():
                    break
                log.debug("changes: %s", paths)
                await self.reload_paths(paths)
        finally:
            self.watching.clear()
            if not pending.done():
                stop.set()
                with contextlib.suppress(StopAsyncIteration, asyncio.CancelledError):
                    await pending
            await changes.aclose()

    async def _next_group(
        self, changes: AsyncIterator[set[tuple[Any, str]]], pending: asyncio.Future
    ) -> tuple[list[str] | None, asyncio.Future]:
        """Wait for a change, then collect until the folder has been quiet for ``debounce`` ms.

        watchfiles alone ends a group after ``step`` ms without a *new* path, so two saves of one
        file a little apart would make two reloads; here a group ends only after ``debounce`` ms
        without any change (at most `MAX_GROUP_MS`). Returns the sorted paths (``None`` once the
        watcher has stopped) and the watcher step still waiting for the next change.
        """
        try:
            batch = await pending
        except StopAsyncIteration:
            return None, pending
        paths = {path for _change, path in batch}
        give_up = time.monotonic() + MAX_GROUP_MS / 1000.0
        while True:
            pending = asyncio.ensure_future(anext(changes))
            quiet = min(self.debounce / 1000.0, max(0.0, give_up - time.monotonic()))
            done, _ = await asyncio.wait({pending}, timeout=quiet)
            if not done:
                return sorted(paths), pending
            try:
                batch = pending.result()
            except StopAsyncIteration:
                return sorted(paths), pending
            paths.update(path for _change, path in batch)

    async def wait_for(
        self, predicate: Callable[[list[ReloadReport]], bool], timeout: float = 30.0
    ) -> list[ReloadReport]:
        """Wait until ``predicate(reports)`` holds (tests and tools); returns the reports."""
        async with self._reported:
            await asyncio.wait_for(
                self._reported.wait_for(lambda: predicate(self.reports)), timeout
            )
            return list(self.reports)

    # ------------------------------------------------------------------ one reload

    async def _reload_names(
        self, names: Iterable[str], *, publish: bool = True
    ) -> tuple[ReloadReport, ...]:
        reports = []
        for name in names:
            started = time.perf_counter()
            async with self._lock:
                try:
                    report = await self._reload_one(name)
                except Exception as exc:  # noqa: BLE001 - one plugin never stops the watcher
                    log.exception("reloading %s failed", name)
                    report = ReloadReport(
                        name,
                        "failed",
                        (time.perf_counter() - started) * 1000.0,
                        error=f"reload failed: {type(exc).__name__}: {exc}",
                        location=_location_text(locate_error(exc)),
                    )
            if report is not None:
                reports.append(report)
                if publish:
                    await self._publish(report)
        return tuple(reports)

    async def _publish(self, report: ReloadReport) -> None:
        # with a display callback (``memgraph-host dev``) the callback shows the report, so the
        # log keeps it at DEBUG: a terminal showing both would print each FAILED line twice
        if self.on_report is not None:
            log.debug("%s", report.describe())
        elif report.ok:
            log.info("%s", report.describe())
        else:
            log.error("%s", report.describe())
        async with self._reported:
            self.reports.append(report)
            self._reported.notify_all()
        if self.on_report is not None:
            try:
                self.on_report(report)
            except Exception:  # noqa: BLE001 - a display callback must not stop reloading
                log.exception("reload report callback failed")

    async def _reload_one(self, name: str) -> ReloadReport | None:
        started = time.perf_counter()

        def elapsed() -> float:
            return (time.perf_counter() - started) * 1000.0

        path = self._path_of(name)
        old = self._loaded.get(name)
        if path is None:
            self._failed.pop(name, None)
            if old is None:
                return None
            await self._unload(name, old)
            return ReloadReport(name, "unloaded", elapsed(), version=old.version)

        try:
            module = import_fresh(name, path)
        except PluginLoadError as exc:
            return self._fail(name, exc, elapsed())
        try:
            self._validate(name, module, old)
        except PluginLoadError as exc:
            purge_modules(module.__name__)
            return self._fail(name, exc, elapsed())

        taken_by = self.host.pm.get_plugin(name)
        if old is None and taken_by is not None:
            purge_modules(module.__name__)
            origin = getattr(self.host.plugin_record(name), "origin", None) or repr(taken_by)
            return self._fail(
                name,
                PluginLoadError(
                    name,
                    f"the name is taken by another plugin ({origin})",
                    SourceLocation(str(path)),
                ),
                elapsed(),
            )
        state = await self._dispose(name, old) if old is not None else None
        histories = self._spec_histories(name) if old is not None else {}
        # the teardown's unregister forgets the specs the old version added (host.specs_of), so
        # the new version can add them again
        purged = self._teardown(name, old) if old is not None else {}
        refused: str | None = None  # the traceback the host recorded for a refused registration
        try:
            # the host keeps a re-registered name in its first place in every hook's call order
            record = self.host.register_plugin(module, name=name, source="folder", origin=str(path))
            if record.status != "loaded":
                refused = record.traceback
                raise RuntimeError(record.error or f"status {record.status}")
        except Exception as exc:  # noqa: BLE001 - reported, the old version is put back
            if self.host.pm.get_plugin(name) is module:
                self._unregister_quietly(name)  # its specs leave with it
            purge_modules(module.__name__)
            if old is not None:  # registered again, the old version adds its specs again
                await self._put_back(name, old, state, purged)
            self._restore_histories(histories)
            failure = PluginLoadError(
                name, f"register failed: {exc}", locate_in_plugin(path, exc, refused)
            )
            return self._fail(name, failure, elapsed())
        self._restore_histories(histories)
        version = self._versions.get(name, 0) + 1
        self._versions[name] = version
        self._loaded[name] = _Loaded(module, path, version)
        self._failed.pop(name, None)

        problems = []
        if self._host_started():
            problems.extend(await self._call_own(module, "host_startup", host=self.host))
        if old is not None:
            problems.extend(
                await self._call_own(module, "host_plugin_adopt", host=self.host, state=state)
            )
        action: ReloadAction = "reloaded" if old is not None else "loaded"
        if problems:
            hook, exc = problems[0]
            report = ReloadReport(
                name,
                "failed",
                elapsed(),
                error=f"new version loaded, but {hook} raised {type(exc).__name__}: {exc}",
                location=_location_text(locate_error(exc, path)),
                version=version,
            )
            self._failed[name] = report
            return report
        return ReloadReport(name, action, elapsed(), version=version)

    def _fail(self, name: str, exc: PluginLoadError, duration_ms: float) -> ReloadReport:
        old = self._loaded.get(name)
        report = ReloadReport(
            name,
            "failed",
            duration_ms,
            error=exc.message,
            location=_location_text(exc.location),
            version=old.version if old else 0,
        )
        self._failed[name] = report
        return report

    # ------------------------------------------------------------------ validation

    def _validate(self, name: str, module: ModuleType, old: _Loaded | None) -> None:
        """Check the candidate in a scratch manager shaped like the host's; raise on misfit.

        The scratch manager gets the host's hook specs (those plugins added through
        ``host_addhooks`` included). Specs the old version added itself are left out: the
        candidate adds its own through ``host_addhooks``, called on the scratch manager, so a
        changed spec is checked against the other plugins that implement it (registered there too).
        """
        pm = self.host.pm
        scratch = pluggy.PluginManager(pm.project_name)
        owned = set(self.host.specs_of(name)) if old is not None else set()
        seen: set[int] = set()
        for caller in hook_callers(pm).values():
            spec = caller.spec
            if spec is None or caller.name in owned or id(spec.namespace) in seen:
                continue
            seen.add(id(spec.namespace))
            with contextlib.suppress(ValueError):  # hooks another namespace already declared
                scratch.add_hookspecs(spec.namespace)
        # only the plugins whose hooks the candidate's specs could change need checking: those
        # implementing a hook with no spec yet or with a spec the old version added
        affected: dict[str, object] = {}
        for caller in hook_callers(pm).values():
            if caller.spec is not None and caller.name not in owned:
                continue
            for impl in caller.get_hookimpls():
                if impl.plugin_name != name:
                    affected.setdefault(impl.plugin_name, impl.plugin)
        for other_name, other in affected.items():
            with contextlib.suppress(Exception):  # the host accepted it; not this reload's concern
                scratch.register(other, name=other_name)
        try:
            scratch.register(module, name=name)
            addhooks = getattr(scratch.hook, "host_addhooks", None)
            if addhooks is not None:
                for impl in addhooks.get_hookimpls():
                    if impl.plugin is module:
                        _call_impl_sync(impl, {"pm": scratch})
        except pluggy.PluginValidationError as exc:
            if exc.plugin is module:
                message = f"does not fit the hook specs: {_first_line(exc)}"
            else:
                other_name = scratch.get_name(exc.plugin) or repr(exc.plugin)
                message = f"its hook specs no longer fit plugin {other_name!r}: {_first_line(exc)}"
            raise PluginLoadError(name, message, _impl_location(module, exc)) from exc
        except Exception as exc:  # noqa: BLE001 - plugin code run by host_addhooks
            raise PluginLoadError(
                name, f"{type(exc).__name__} while validating: {exc}", locate_error(exc)
            ) from exc
        for caller in hook_callers(scratch).values():
            if caller.spec is not None:
                continue
            for impl in caller.get_hookimpls():
                if impl.plugin is module and not impl.optionalhook:
                    code = getattr(impl.function, "__code__", None)
                    location = (
                        SourceLocation(code.co_filename, code.co_firstlineno) if code else None
                    )
                    raise PluginLoadError(
                        name, f"unknown hook {caller.name!r}: no hook spec declares it", location
                    )

    # ------------------------------------------------------------------ swap helpers

    async def _dispose(self, name: str, old: _Loaded) -> Any:
        """Ask the old version what state to hand over; a failing dispose hands over nothing."""
        results = []
        problems = await self._call_own(
            old.module, "host_plugin_dispose", host=self.host, out=results
        )
        for hook, exc in problems:
            log.error("%s: %s raised %s: %s", name, hook, type(exc).__name__, exc)
        return results[0] if results else None

    def _teardown(self, name: str, old: _Loaded) -> dict[str, ModuleType]:
        """Take the old version out: hooks, registry entries, unload callbacks, the listeners its
        code left subscribed, modules (returned, for `_put_back`)."""
        self._unregister_quietly(name)
        swept = self._sweep_listeners(old.module.__name__)
        if swept:
            log.info("%s: dropped %d listener(s) the old version left subscribed", name, swept)
        modules = {
            key: module
            for key, module in list(sys.modules.items())
            if owns_module(old.module.__name__, key)
        }
        purge_modules(old.module.__name__)
        return modules

    def _sweep_listeners(self, module_name: str) -> int:
        """Drop the callbacks defined in ``module_name`` that are still subscribed somewhere.

        Holders are the host's registry and every API published in it whose class offers
        ``unsubscribe_where(predicate) -> int`` (the memory graph's injection listeners). A plugin
        that hands its undo to ``host.on_unload`` has nothing left here.
        """
        holders: dict[int, object] = {id(self.host.registry): self.host.registry}
        for entry in self.host.registry.entries():
            holders.setdefault(id(entry.api), entry.api)
        dropped = 0
        for holder in holders.values():
            if not callable(getattr(type(holder), "unsubscribe_where", None)):
                continue  # looked up on the class: no proxy's __getattr__ answers for it
            try:
                dropped += int(holder.unsubscribe_where(lambda cb: defined_in(cb, module_name)))
            except Exception:  # noqa: BLE001 - one holder must not stop the teardown
                log.exception("dropping the listeners of %s from %r failed", module_name, holder)
        return dropped

    def _unregister_quietly(self, name: str) -> None:
        try:
            self.host.unregister_plugin(name)
        except Exception:  # noqa: BLE001 - already gone is fine
            log.debug("unregister %s failed", name, exc_info=True)

    async def _put_back(
        self, name: str, old: _Loaded, state: Any, modules: Mapping[str, ModuleType]
    ) -> None:
        """Bring the old version back after its successor could not be registered: its modules,
        its hooks, then ``host_startup`` and ``host_plugin_adopt`` with the state it handed over
        (the teardown dropped what it had published and subscribed)."""
        sys.modules.update(modules)
        try:
            record = self.host.register_plugin(
                old.module, name=name, source="folder", origin=str(old.path)
            )
            if record.status != "loaded":
                raise RuntimeError(record.error)
        except Exception:  # noqa: BLE001
            log.exception("could not put back the previous version of %s", name)
            self._loaded.pop(name, None)
            purge_modules(old.module.__name__)
            return
        if self._host_started():
            await self._call_own(old.module, "host_startup", host=self.host)
        await self._call_own(old.module, "host_plugin_adopt", host=self.host, state=state)

    async def _unload(self, name: str, old: _Loaded) -> None:
        await self._dispose(name, old)
        self._teardown(name, old)
        self._loaded.pop(name, None)

    def _spec_histories(self, name: str) -> dict[str, list[Any]]:
        """The call history of each historic hook whose spec plugin ``name`` added: the teardown
        forgets the spec, and whichever version adds it again keeps the history."""
        histories = {}
        for hook in self.host.specs_of(name):
            history = call_history(getattr(self.host.pm.hook, hook))
            if history:
                histories[hook] = list(history)
        return histories

    def _restore_histories(self, histories: Mapping[str, list[Any]]) -> None:
        """Give the historic hooks whose spec was added again their history back."""
        for hook, history in histories.items():
            caller = getattr(self.host.pm.hook, hook, None)
            if caller is not None:
                restore_call_history(caller, history)

    # ------------------------------------------------------------------ hook calls

    async def _call_own(
        self, plugin: object, hook_name: str, *, out: list | None = None, **kwargs: Any
    ) -> list[tuple[str, BaseException]]:
        """Call ``hook_name`` on one plugin only, awaiting async implementations."""
        caller = getattr(self.host.pm.hook, hook_name, None)
        if caller is None:
            return []
        problems: list[tuple[str, BaseException]] = []
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin:
                continue
            try:
                result = _call_impl_sync(impl, kwargs)
                if inspect.isawaitable(result):
                    result = await result
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:  # noqa: BLE001 - reported with the plugin's name
                log.error(
                    "%s.%s raised %s: %s", impl.plugin_name, hook_name, type(exc).__name__, exc
                )
                problems.append((hook_name, exc))
                continue
            if out is not None and result is not None:
                out.append(result)
        return problems

    # ------------------------------------------------------------------ naming

    def _path_of(self, name: str) -> Path | None:
        package = self.plugins_dir / name
        if (package / "__init__.py").is_file():
            return package
        module = self.plugins_dir / f"{name}.py"
        if module.is_file():
            return module
        return None

    def _host_started(self) -> bool:
        return bool(self.host.started)


# ---------------------------------------------------------------------- module helpers


def _call_impl_sync(impl: Any, kwargs: Mapping[str, Any]) -> Any:
    args = [kwargs[name] for name in impl.argnames]
    return impl.function(*args)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (
        "; ".join(line.strip() for line in text.splitlines() if line.strip()) or type(exc).__name__
    )


def _impl_location(module: ModuleType, exc: pluggy.PluginValidationError) -> SourceLocation | None:
    """The definition of the hook implementation a validation error is about."""
    message = str(exc)
    fallback = None
    for attr in dir(module):
        func = getattr(module, attr, None)
        code = getattr(func, "__code__", None)
        if code is None or not hasattr(func, "memgraph_host_impl"):
            continue
        location = SourceLocation(code.co_filename, code.co_firstlineno)
        if repr(attr) in message or f"'{attr}'" in message:
            return location
        fallback = fallback or location
    return fallback or SourceLocation(getattr(module, "__file__", None) or "?")


def _location_text(location: SourceLocation | None) -> str | None:
    return str(location) if location is not None else None
