"""`Host`: one pluggy PluginManager, one extension registry, chats and settings per instance.

Call order: pluggy calls the implementation registered last first. The host keeps a fixed order
by source tier instead of by accident of registration time: explicit plugins run first, then
folder plugins, then entry-point plugins, then the built-in plugin (within a tier, the one
registered later runs first; ``tryfirst`` / ``trylast`` still apply). ``host_startup`` runs the
tiers the other way round (built-in first), so a plugin's startup finds the built-in APIs. A
plugin registered again under the same name (hot reload) keeps its place.

Why one module of ~650 lines: it is the one `Host` class, the facade every other host module
(discovery, notify, hook_guard, settings, chats, reload) is reached through; its methods are
thin and each delegates to the module that owns the concept.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pluggy

from extension_registry import ExtensionEntry, ExtensionRegistry
from host import hookspecs
from host.chats.chat_files import Chat, ChatStore
from host.chats.context import ChatContext
from host.errors import PluginError
from host.markers import PROJECT_NAME, hookimpl
from host.plugins import discovery
from host.plugins.hook_guard import Guard, PluginStuck
from host.plugins.notify import (
    HookFailure,
    HookResult,
    acall,
    call,
    failure,
    run_awaitable,
    summary,
)
from host.plugins.pluggy_internals import hook_callers, sort_hookimpls
from host.plugins.records import SOURCES, PluginRecord, PluginTable, Source
from host.plugins.specs import SpecSnapshot, forget_specs, specs_declared_in
from host.settings.redaction import register_secrets
from host.settings.settings import SettingsState, env_blocked, env_strict, load_state

log = logging.getLogger("host")

#: Seconds `Host.stop` waits past the longest pending deadline (a timeout is reported first).
STOP_GRACE = 0.5

#: The host's own hooks (lifecycle, CLI, hot reload): called unguarded, on the caller's thread.
HOST_HOOKS: frozenset[str] = frozenset(n for n in vars(hookspecs) if n.startswith("host_"))

#: Lower tiers are called later (pluggy calls the end of its list first).
TIERS: Mapping[str, int] = {"built-in": 0, "entry point": 1, "folder": 2, "explicit": 3}
#: Hooks called built-in tier first (providers before consumers): ``host_startup``, so a plugin
#: starting finds every built-in API (``memory-graph``) already published.
PROVIDERS_FIRST = frozenset({"host_startup"})


class Host:
    """A plugin host: discovers and registers plugins, calls their hooks, keeps chats."""

    hookimpl = hookimpl

    def __init__(
        self,
        data_dir: str | Path = ".memgraph",
        settings: Mapping[str, Any] | None = None,
        *,
        plugin_dirs: Iterable[str | Path] = (),
        entry_points: bool = True,
        builtins: bool = True,
        strict: bool | None = None,
        blocked: Iterable[str] | None = None,
        setting_texts: Mapping[str, str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self._settings_state: SettingsState = load_state(
            self.data_dir, settings, texts=setting_texts
        )
        self.settings: Mapping[str, Any] = self._settings_state.view
        register_secrets(self.settings)  # never printed: logs, traces, listings (redaction.py)
        self.strict = env_strict() if strict is None else bool(strict)
        if isinstance(blocked, str):
            blocked = [blocked]
        self.blocked: frozenset[str] = frozenset(blocked or ()) | env_blocked()
        dirs = [*self.settings["plugin_dirs"], *plugin_dirs]
        self.plugin_dirs: tuple[Path, ...] = tuple(
            dict.fromkeys(Path(d).expanduser().resolve() for d in dirs)
        )
        self.entry_points = entry_points
        self.builtins = builtins
        self.registry = ExtensionRegistry()
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.pm.hook.host_addhooks.call_historic(kwargs={"pm": self.pm})
        self._records = PluginTable()
        self._ranks: dict[str, tuple[int, int]] = {}
        self._counter = itertools.count()
        self._on_unload: dict[str, list[Callable[[], object]]] = {}
        self._added_specs: dict[str, dict[str, object]] = {}  # plugin -> hook -> spec it added
        self._chats = ChatStore(self.data_dir / "chats")
        self._lock = threading.RLock()
        self._tasks: set[asyncio.Task] = set()  # async implementations a sync notify scheduled
        self._soon: dict[tuple[str, Any], asyncio.Future] = {}  # (hook, chat) -> last task
        self.hook_guard = Guard.from_settings(self.settings)
        self._discovered = False  # unknown-hook checks wait until discovery has run once
        self._started = False

    def __repr__(self) -> str:
        return f"<Host data_dir={str(self.data_dir)!r} plugins={len(self._records.all())}>"

    @property
    def settings_sources(self) -> Mapping[str, str]:
        """Where each set key came from: ``file <path>``, ``env <VAR>`` or ``flag`` (absent keys:
        their declared default)."""
        return dict(self._settings_state.sources)

    def check_settings(self) -> None:
        """Every key set in the file, environment or ``settings=`` must be declared in the
        settings schema with a value of its type (`SettingsError` naming the closest key).

        Runs after each `load_plugins`, when the loaded plugins have declared their keys.
        """
        self._settings_state.check()

    @property
    def started(self) -> bool:
        """True between `start` and `stop`."""
        return self._started

    # ------------------------------------------------------------------ plugins

    def load_plugins(self) -> tuple[PluginRecord, ...]:
        """Find and register plugins not loaded yet: built-in, entry points, plugin folders.

        Each failure is recorded on its plugin (strict mode: raised as `PluginError`). Returns
        the records of this call's plugins. Two threads calling it never load a plugin twice.
        """
        with self._lock:
            return self._load_plugins()

    def _load_plugins(self) -> tuple[PluginRecord, ...]:
        candidates: list[discovery.Candidate] = []
        if self.builtins:
            candidates += discovery.builtin_candidates()
        if self.entry_points:
            candidates += self._tolerant(discovery.entry_point_candidates, "entry points")
        for folder in self.plugin_dirs:
            candidates += self._tolerant(lambda f=folder: discovery.folder_candidates(f), folder)
        known = {record.origin for record in self._records.all()}
        records = []
        for candidate in candidates:
            if candidate.origin in known:
                continue
            record = self._load_candidate(candidate)
            if record is not None:
                records.append(record)
        with self._lock:
            first = not self._discovered
            self._discovered = True
        if first:
            for record in self._records.all():
                if record.status == "loaded" and record.plugin is not None:
                    self._check_unknown_hooks(record.name, record.plugin)
        self.check_settings()
        return tuple(self._records.get(r.name) or r for r in records)

    def register_plugin(
        self,
        obj: object,
        *,
        name: str | None = None,
        source: Source | str = "explicit",
        origin: str | None = None,
        version: str | None = None,
    ) -> PluginRecord:
        """Register a plugin object or module; returns its record.

        A plugin that does not fit the hook specs (or raises in ``host_addhooks``) is recorded as
        failed and left out (strict mode: `PluginError`). A blocked name is recorded as blocked.
        ``source`` other than the four kinds is taken as the origin (a path) of a folder plugin.
        Raises `ValueError` when ``name`` is already registered.
        """
        if source not in SOURCES:
            origin = origin or str(source)
            source = "folder" if Path(str(source)).exists() else "explicit"
        name = name or _default_name(obj)
        origin = origin or _origin_of(obj)
        version = discovery.version_of(obj, version)
        with self._lock:
            if self.pm.has_plugin(name) or self.pm.is_registered(obj):
                raise ValueError(f"a plugin named {name!r} (or this same object) is registered")
            base = PluginRecord(name, source, origin, version, plugin=obj)  # type: ignore[arg-type]
            if name in self.blocked:
                log.info("plugin %r (%s) is blocked; not registered", name, origin)
                return self._records.put(_evolve(base, status="blocked", plugin=None))
            self._ranks.setdefault(name, (TIERS[source], next(self._counter)))
            failure = self._register(obj, name)
            if failure is not None:
                what = (
                    "does not fit the hook specs"
                    if isinstance(failure, pluggy.PluginValidationError)
                    else "raised while registering (host_addhooks)"
                )
                return self._failed(base, what, failure)
            self._records.put(base)
            self._restore_call_order()
        if self._discovered:
            self._check_unknown_hooks(name, obj)
        return self._records.get(name) or base

    def _register(self, obj: object, name: str) -> Exception | None:
        """``pm.register`` that leaves nothing behind on failure; returns the failure.

        pluggy's register is not atomic: the plugin and the specs its ``host_addhooks`` added
        stay when it raises; both are undone here. On success the specs it added are noted as
        its own (they leave with it, see `specs_of`). When the specs it adds do not fit a plugin
        registered earlier (which implemented the hook before any spec existed), that plugin is
        the misfit: it is failed and taken out, and ``obj`` registered again, as if the specs
        had come first.
        """
        while True:
            before = SpecSnapshot.take(self.pm)
            try:
                self.pm.register(obj, name=name)
                added = before.added_since(self.pm)
                self._added_specs[name] = {hook: getattr(self.pm.hook, hook).spec for hook in added}
                return None
            except Exception as exc:  # noqa: BLE001 - validation or host_addhooks failure
                if self.pm.has_plugin(name):
                    self.pm.unregister(name=name)
                added = before.restore(self.pm)
                misfit = getattr(exc, "plugin", None)
                if not (
                    isinstance(exc, pluggy.PluginValidationError)
                    and misfit is not obj
                    and added
                    and self.pm.is_registered(misfit)
                ):
                    return exc
                error = exc
            other = self.pm.get_name(misfit)
            record = self._records.get(other) or PluginRecord(other, "explicit", _origin_of(misfit))
            self.unregister_plugin(other)
            self._failed(record, f"does not fit the hook specs plugin {name!r} adds", error)

    def unregister_plugin(self, name: str) -> None:
        """Take a plugin out: its hooks, the hook specs it added (`specs_of`), everything it
        published, its ``on_unload`` callbacks.

        Other plugins' implementations of a forgotten spec stay, unverified, until a spec for the
        hook comes back (the plugin registered again): then they are checked against it again.
        """
        with self._lock:
            plugin = self.pm.get_plugin(name)
            specs = self.specs_of(name)
            self._added_specs.pop(name, None)
            if plugin is not None:
                self.pm.unregister(name=name)
            forgotten = forget_specs(self.pm, specs)
            record = self._records.remove(name)
        removed = self.registry.unregister_owner(name)
        owner = plugin if plugin is not None else getattr(record, "plugin", None)
        keys = {name} | self._unload_keys(owner)
        callbacks = [cb for key in keys for cb in self._on_unload.pop(key, [])]
        for callback in callbacks:
            try:
                callback()
            except Exception:  # noqa: BLE001 - one bad callback must not stop the teardown
                log.exception("plugin %r: on_unload callback raised", name)
        if plugin is not None or removed:
            log.debug(
                "unregistered plugin %r (published: %s; specs: %s)",
                name,
                ", ".join(removed) or "-",
                ", ".join(forgotten) or "-",
            )

    def on_unload(self, owner: str | object, callback: Callable[[], object]) -> None:
        """Run ``callback`` when plugin ``owner`` is unregistered (hot reload, teardown).

        ``owner`` is a plugin name, a plugin module's ``__name__``, or the plugin object.
        """
        if isinstance(owner, str):
            key = owner
        else:
            key = self.name_of(owner) or next(iter(_module_keys(owner)), repr(owner))
        self._on_unload.setdefault(key, []).append(callback)

    def _unload_keys(self, plugin: object) -> set[str]:
        """The ``on_unload`` keys that belong to ``plugin``: a module's ``__name__``; for a plugin
        object, its class's module unless that module is a plugin of its own here (a module
        plugin that registers helper objects keeps its callbacks when a helper leaves)."""
        keys = _module_keys(plugin)
        if plugin is not None and not isinstance(plugin, ModuleType):
            keys = {key for key in keys if self.name_of(sys.modules.get(key)) is None}
        return keys

    def plugin_records(self) -> tuple[PluginRecord, ...]:
        """Every plugin the host knows (loaded, failed, blocked), in the order first seen."""
        return self._records.all()

    def plugin_record(self, name: str) -> PluginRecord | None:
        """The record of plugin ``name``, or ``None``."""
        return self._records.get(name)

    def note_error(self, name: str, error: str, traceback_text: str | None = None) -> None:
        """Record ``error`` as plugin ``name``'s last error (tools that call plugins use this)."""
        log.error("plugin %r: %s", name, error)
        self._records.update(name, error=error, traceback=traceback_text)

    def hooks_of(self, name: str) -> tuple[str, ...]:
        """The hook names plugin ``name`` implements, sorted."""
        plugin = self.pm.get_plugin(name)
        if plugin is None:
            return ()
        return tuple(sorted({c.name for c in self.pm.get_hookcallers(plugin) or ()}))

    def specs_of(self, name: str) -> tuple[str, ...]:
        """The hooks whose specs plugin ``name`` brought, sorted; they leave with it.

        Those its registration added (its ``host_addhooks``) and still in place, and for a module
        plugin those declared in its own module or a submodule (added some other way).
        """
        plugin = self.pm.get_plugin(name)
        if plugin is None:
            return ()
        owned = {
            hook
            for hook, spec in self._added_specs.get(name, {}).items()
            if getattr(getattr(self.pm.hook, hook, None), "spec", None) is spec
        }
        if isinstance(plugin, ModuleType):
            declared = specs_declared_in(self.pm, plugin.__name__)
            owned.update(
                h for h in declared if getattr(self.pm.hook, h).spec.namespace is not hookspecs
            )
        return tuple(sorted(owned))

    def name_of(self, plugin: object) -> str | None:
        """The name ``plugin`` is registered under, or ``None``.

        ``plugin`` is the plugin object, its name, or its module's ``__name__`` (what a module
        plugin has at hand, whatever name the host gave it: ``scout@2``, a reload's name).
        """
        if isinstance(plugin, str):
            if self.pm.has_plugin(plugin):
                return plugin
            plugin = sys.modules.get(plugin)
        if plugin is None:
            return None
        return self.pm.get_name(plugin) if self.pm.is_registered(plugin) else None

    def get_extension_api(self, name: str) -> object | None:
        """The API published as ``name`` in this host's registry, or ``None``; never raises.

        The front end's ``getExtensionApi`` for plugins of this host (the module-level
        `extension_registry.get_extension_api` reads the process-wide default registry).
        """
        return self.registry.get(name)

    def publish(
        self, plugin: str | object, name: str, api: object, *, version: str | None = None
    ) -> ExtensionEntry:
        """Publish ``api`` as ``name`` in this host's registry, owned by ``plugin`` (see
        `name_of`; an unknown name is taken as given), so it leaves when the plugin does."""
        owner = self.name_of(plugin)
        if owner is None:
            if not isinstance(plugin, str):
                raise ValueError(f"publish({name!r}): {plugin!r} is not a registered plugin")
            owner = plugin
        return self.registry.register(name, api, owner=owner, version=version)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Load plugins not loaded yet, then fire ``host_startup`` on every plugin (once)."""
        self.load_plugins()
        if self._started:
            return
        await self.anotify("host_startup", host=self)
        self._started = True

    async def stop(self) -> None:
        """Let notifications scheduled in this loop (`notify_soon`, a sync `notify`'s awaitables)
        finish, waiting one deadline at most overall (the longest of their hooks'); those still
        running then are cancelled and reported. Then ``host_shutdown`` on every plugin (when
        started)."""
        loop = asyncio.get_running_loop()
        scheduled = [task for task in self._tasks if task.get_loop() is loop]
        bound = self._stop_bound()
        end = None if bound is None else loop.time() + bound
        while scheduled:
            left = None if end is None else end - loop.time()
            if left is not None and left <= 0:
                break
            await asyncio.wait(scheduled, timeout=left)
            scheduled = [t for t in self._tasks if t.get_loop() is loop and not t.done()]
        if scheduled:
            log.warning(
                "stop: %d notification(s) still running after %g s are cancelled",
                len(scheduled),
                bound,
            )
            for task in scheduled:
                task.cancel()
            await asyncio.wait(scheduled, timeout=1.0)
        if not self._started:
            return
        self._started = False
        await self.anotify("host_shutdown", host=self)

    # ------------------------------------------------------------------ hook calls

    def _stop_bound(self) -> float | None:
        """How long `stop` waits for pending notifications: the longest deadline of their hooks,
        plus a moment so a call timing out at its deadline is reported as such, not cancelled
        (None: no deadline)."""
        guard = self.hook_guard
        deadlines = [guard.deadline_of(hook) for hook, _chat in list(self._soon)]
        deadlines.append(guard.deadline)
        if any(d is None for d in deadlines):
            return None
        return max(d for d in deadlines if d is not None) + STOP_GRACE

    def notify(self, hook_name: str, **kwargs: Any) -> list[HookFailure]:
        """Call every implementation of ``hook_name``; failures are logged, recorded, returned.

        An implementation returning an awaitable is run to completion when no event loop runs,
        else scheduled as a task; prefer `anotify` from async code.
        """
        return self._settle(self._call(hook_name, kwargs)[1])

    async def anotify(self, hook_name: str, **kwargs: Any) -> list[HookFailure]:
        """Like `notify`, awaiting implementations that return awaitables, one after another.

        Every hook but the host's own (`HOST_HOOKS`) is guarded (`host.plugins.hook_guard`): sync
        implementations run on worker threads, each call within the hook's deadline; one past
        it is a `HookFailure` (`HookTimeout`) and the others go on without it.
        """
        _results, failures = await acall(
            self.pm, hook_name, kwargs, guard=self.guard_for(hook_name)
        )
        return self._settle(failures)

    def guard_for(self, hook_name: str) -> Guard | None:
        """The guard `anotify` calls `hook_name` under (None for the host's own hooks)."""
        return None if hook_name in HOST_HOOKS else self.hook_guard

    def notify_soon(self, hook_name: str, **kwargs: Any) -> asyncio.Future | None:
        """`anotify` as a task of the running loop, after the previous `notify_soon` of the same
        hook and chat (``chat_id`` argument; so their order holds); `drain` and `stop` wait for
        it, the caller does not. Without a running loop: `notify` now (returns None)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.notify(hook_name, **kwargs)
            return None
        key = (hook_name, kwargs.get("chat_id"))
        previous = self._soon.get(key)
        if previous is not None and (previous.done() or previous.get_loop() is not loop):
            previous = None

        async def run() -> None:
            if previous is not None:
                await asyncio.wait({previous})
            await self.anotify(hook_name, **kwargs)

        task = loop.create_task(run())
        self._soon[key] = task
        task.add_done_callback(lambda t: self._soon.get(key) is t and self._soon.pop(key, None))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return task

    async def drain(self, chat_id: Any = None) -> None:
        """Wait until the notifications `notify_soon` scheduled in this loop have been delivered
        (with `chat_id`: only those for that chat; each within its hooks' deadlines)."""
        loop = asyncio.get_running_loop()
        while True:
            pending = [
                task
                for (_hook, chat), task in list(self._soon.items())
                if task.get_loop() is loop and (chat_id is None or chat == chat_id)
            ]
            if not pending:
                return
            await asyncio.wait(pending)

    def record_failures(self, failures: Iterable[HookFailure]) -> list[HookFailure]:
        """Log and record failures met outside `notify` / `anotify` (e.g. a collecting or
        first-result call): the plugin's record shows the last one; never raises."""
        return self._settle(list(failures), late=True)

    def call_hook(self, hook_name: str, **kwargs: Any) -> list[HookResult]:
        """Call every implementation like `notify`, and return the non-None results in order."""
        results, failures = self._call(hook_name, kwargs)
        self._settle(failures)
        return results

    def _call(
        self, hook_name: str, kwargs: Mapping[str, Any]
    ) -> tuple[list[HookResult], list[HookFailure]]:
        def on_awaitable(plugin: str, awaitable: Any) -> object | None:
            return run_awaitable(
                awaitable,
                lambda exc: self._settle([failure(plugin, hook_name, exc)], late=True),
                self._tasks,
            )

        return call(self.pm, hook_name, kwargs, on_awaitable=on_awaitable)

    def _settle(self, failures: list[HookFailure], *, late: bool = False) -> list[HookFailure]:
        for item in failures:
            if isinstance(item.exception, PluginStuck):  # its timeout is on the record already
                log.debug("plugin %r: %s %s", item.plugin, item.hook, item.exception)
                continue
            record = self._records.get(item.plugin)
            origin = record.origin if record else None
            log.error(
                "plugin %r (%s): %s raised %s",
                item.plugin,
                origin,
                item.hook,
                summary(item.exception),
            )
            log.debug("plugin %r: %s traceback:\n%s", item.plugin, item.hook, item.traceback)
            self._records.update(
                item.plugin,
                error=f"{item.hook}: {summary(item.exception)}",
                traceback=item.traceback,
            )
        if failures and self.strict and not late:
            first = failures[0]
            raise PluginError(
                "; ".join(f.describe() for f in failures),
                plugin=first.plugin,
                origin=getattr(self._records.get(first.plugin), "origin", None),
                failures=tuple(failures),
            ) from first.exception
        return failures

    # ------------------------------------------------------------------ chats and context

    def chat(self, chat_id: str) -> Chat:
        """The chat ``chat_id`` (created on first message, read from disk on first use)."""
        return self._chats.chat(chat_id)

    def chat_ids(self) -> list[str]:
        """Every chat stored under the data dir or holding messages in this process."""
        return self._chats.chat_ids()

    def has_chat(self, chat_id: str) -> bool:
        """Whether chat ``chat_id`` exists (stored, or holding messages); asking never makes it."""
        return self._chats.has(chat_id)

    def get_context(self, chat_id: str | None = None) -> ChatContext:
        """What a plugin is handed for one chat; ``chat_id`` None gives a context with no chat."""
        messages = self.chat(chat_id).snapshot() if chat_id is not None else ()
        return ChatContext(
            chat_id=chat_id,
            messages=messages,
            host=self,
            data_dir=self.data_dir,
            settings=self.settings,
            storage_uri=str(self.settings["storage_uri"]),
        )

    # ------------------------------------------------------------------ internals

    def _tolerant(self, find: Callable[[], list[discovery.Candidate]], where: object) -> list:
        try:
            return find()
        except Exception as exc:  # noqa: BLE001 - broken metadata must not brick the host
            if self.strict:
                raise PluginError(f"discovering plugins in {where} failed: {exc}") from exc
            log.exception("discovering plugins in %s failed", where)
            return []

    def _load_candidate(self, candidate: discovery.Candidate) -> PluginRecord | None:
        name = self._free_name(candidate.name)
        base = PluginRecord(name, candidate.source, candidate.origin, candidate.version)
        if name in self.blocked or candidate.name in self.blocked:
            log.info("plugin %r (%s) is blocked; not loaded", name, candidate.origin)
            return self._records.put(_evolve(base, status="blocked"))
        try:
            obj = candidate.load()
        except discovery.PluginMissing:
            if candidate.optional:
                log.debug("optional plugin %r is not available", name)
                return None
            raise
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a failed import fails alone
            return self._failed(base, "failed to import", exc)
        other = self.pm.get_name(obj) if self.pm.is_registered(obj) else None
        if other is not None:  # e.g. two entry points naming one module
            return self._failed(
                base, "was not registered", ValueError(f"it is already loaded as plugin {other!r}")
            )
        return self.register_plugin(
            obj,
            name=name,
            source=candidate.source,
            origin=candidate.origin,
            version=candidate.version,
        )

    def _free_name(self, name: str) -> str:
        """``name``, or ``name@2``, ``name@3``... when another plugin already has it."""
        if not self.pm.has_plugin(name) and name not in self._records:
            return name
        for number in itertools.count(2):
            other = f"{name}@{number}"
            if not self.pm.has_plugin(other) and other not in self._records:
                log.warning("plugin name %r is taken; loading the next one as %r", name, other)
                return other
        raise AssertionError("unreachable")

    def _failed(self, base: PluginRecord, what: str, exc: BaseException) -> PluginRecord:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        record = self._records.put(
            _evolve(
                base, status="failed", error=f"{what}: {summary(exc)}", traceback=text, plugin=None
            )
        )
        log.error(
            "plugin %r (%s, %s) %s: %s", base.name, base.source, base.origin, what, summary(exc)
        )
        log.debug("plugin %r traceback:\n%s", base.name, text)
        if self.strict:
            raise PluginError(
                f"plugin {base.name!r} ({base.source}: {base.origin}) {what}: {summary(exc)}",
                plugin=base.name,
                origin=base.origin,
            ) from exc
        return record

    def _check_unknown_hooks(self, name: str, plugin: object) -> None:
        """pluggy's check_pending for one plugin: a hook no spec declares fails the plugin."""
        for caller in self.pm.get_hookcallers(plugin) or ():
            if caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and not impl.optionalhook:
                    record = self._records.get(name)
                    self.unregister_plugin(name)
                    error = pluggy.PluginValidationError(
                        plugin,
                        f"unknown hook {caller.name!r} in plugin {name!r}: no hook spec declares"
                        " it (is the plugin that adds the spec loaded?)",
                    )
                    base = record or PluginRecord(name, "explicit", _origin_of(plugin))
                    self._failed(base, "does not fit the hook specs", error)
                    return

    def _restore_call_order(self) -> None:
        """Sort every hook's implementations by (tier, first registration); see module doc.

        `PROVIDERS_FIRST` hooks run the tiers the other way round (built-in first), so every
        plugin's ``host_startup`` finds the built-in APIs published, whatever the load order.
        """
        ranks = self._ranks

        def key(impl: Any, providers_first: bool) -> tuple[int, int, tuple[int, int]]:
            wrapper = 1 if (impl.wrapper or impl.hookwrapper) else 0
            group = 0 if impl.trylast else 2 if impl.tryfirst else 1
            tier, seq = ranks.get(impl.plugin_name, (len(TIERS), 1 << 30))
            if providers_first:
                tier = -tier
            rank = (-tier, -seq) if impl.trylast else (tier, seq)  # pluggy puts trylast first
            return (wrapper, group, rank)

        for caller in hook_callers(self.pm).values():
            first = caller.name in PROVIDERS_FIRST
            sort_hookimpls(caller, lambda impl, first=first: key(impl, first))


def _evolve(record: PluginRecord, **changes: Any) -> PluginRecord:
    return attrs.evolve(record, **changes)


def _default_name(obj: object) -> str:
    if isinstance(obj, ModuleType):
        return obj.__name__.rsplit(".", 1)[-1]
    name = getattr(obj, "__name__", None)
    return name if isinstance(name, str) else type(obj).__name__


def _origin_of(obj: object) -> str:
    if isinstance(obj, ModuleType):
        return getattr(obj, "__file__", None) or obj.__name__
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _module_keys(plugin: object) -> set[str]:
    if plugin is None:
        return set()
    if isinstance(plugin, ModuleType):
        return {plugin.__name__}
    module = getattr(type(plugin), "__module__", None)
    return {module} if module else set()
