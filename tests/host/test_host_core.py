"""Host core: per-host plugin managers, hook failures, strict mode, blocking, lifecycle."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pluggy
import pytest

from host import HookFailure, Host, PluginError, hookimpl, hookspec


class SpecAdder:
    """A plugin that declares a notification hook of its own and adds it through the historic
    ``host_addhooks``, the way the memory-graph plugin adds its hooks."""

    @hookspec
    def test_event(self, value: int) -> None:
        """Something happened."""

    @hookimpl
    def host_addhooks(self, pm: pluggy.PluginManager) -> None:
        pm.add_hookspecs(SpecAdder)


class Recorder:
    def __init__(self, seen: list[str], tag: str) -> None:
        self.seen = seen
        self.tag = tag

    @hookimpl
    def test_event(self, value: int) -> None:
        self.seen.append(f"{self.tag}:{value}")

    @hookimpl
    def host_startup(self, host: Host) -> None:
        self.seen.append(f"{self.tag}:start")

    @hookimpl
    def host_shutdown(self, host: Host) -> None:
        self.seen.append(f"{self.tag}:stop")


class AsyncRecorder:
    """An ``async def`` implementation: the host awaits it (or runs it) like the others."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    @hookimpl
    async def test_event(self, value: int) -> None:
        await asyncio.sleep(0)
        self.seen.append(f"async:{value}")


class Raiser:
    @hookimpl
    def test_event(self, value: int) -> None:
        raise RuntimeError(f"bad value {value}")


def make_host(tmp_path: Path, **kwargs: object) -> Host:
    kwargs.setdefault("entry_points", False)
    kwargs.setdefault("builtins", False)
    return Host(data_dir=tmp_path / "data", **kwargs)  # type: ignore[arg-type]


async def test_two_hosts_do_not_see_each_others_plugins(tmp_path: Path) -> None:
    seen: list[str] = []
    one, two = make_host(tmp_path / "1"), make_host(tmp_path / "2")
    one.register_plugin(SpecAdder(), name="specs")
    one.register_plugin(Recorder(seen, "a"), name="rec")
    assert one.pm is not two.pm and one.registry is not two.registry
    assert two.plugin_record("rec") is None and two.pm.get_plugin("rec") is None
    await two.start()
    await one.start()
    assert seen == ["a:start"]
    one.registry.register("x", 1, owner="rec")
    assert two.registry.get("x") is None
    assert one.get_extension_api("x") == 1 and two.get_extension_api("x") is None
    from extension_registry import get_extension_api

    assert get_extension_api("x") is None  # the process-wide default registry is apart too
    await one.stop()
    await two.stop()
    assert seen == ["a:start", "a:stop"]


async def test_raising_hook_does_not_stop_the_others_and_is_recorded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []
    host = make_host(tmp_path)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(Recorder(seen, "first"), name="first")
    host.register_plugin(Raiser(), name="raiser")
    host.register_plugin(Recorder(seen, "last"), name="last")
    await host.start()
    with caplog.at_level(logging.ERROR):
        failures = host.notify("test_event", value=7)
    assert seen[-2:] == ["last:7", "first:7"]  # explicit plugins: later registered runs first
    assert [(f.plugin, f.hook) for f in failures] == [("raiser", "test_event")]
    assert isinstance(failures[0], HookFailure)
    assert "bad value 7" in failures[0].traceback
    record = host.plugin_record("raiser")
    assert record.status == "loaded"
    assert record.error == "test_event: RuntimeError: bad value 7"
    assert "Traceback" in record.traceback
    assert "'raiser'" in caplog.text and "bad value 7" in caplog.text
    assert "test_host_core.Raiser" in caplog.text  # where it came from


async def test_anotify_awaits_async_implementations(tmp_path: Path) -> None:
    seen: list[str] = []

    class AsyncRaiser:
        @hookimpl
        async def test_event(self, value: int) -> None:
            raise ValueError("async boom")

    host = make_host(tmp_path)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(AsyncRaiser(), name="araiser")
    host.register_plugin(AsyncRecorder(seen), name="async")
    failures = await host.anotify("test_event", value=3)
    assert seen == ["async:3"]
    assert [f.plugin for f in failures] == ["araiser"]
    assert "async boom" in host.plugin_record("araiser").error


async def test_keyboard_interrupt_propagates(tmp_path: Path) -> None:
    class Interrupt:
        @hookimpl
        def test_event(self, value: int) -> None:
            raise KeyboardInterrupt

    host = make_host(tmp_path)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(Interrupt(), name="interrupt")
    with pytest.raises(KeyboardInterrupt):
        host.notify("test_event", value=1)


def test_strict_flag_makes_hook_failures_fatal(tmp_path: Path) -> None:
    seen: list[str] = []
    host = make_host(tmp_path, strict=True)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(Recorder(seen, "ok"), name="ok")
    host.register_plugin(Raiser(), name="raiser")
    with pytest.raises(PluginError, match="'raiser'.*test_event.*bad value 2") as info:
        host.notify("test_event", value=2)
    assert info.value.plugin == "raiser"
    assert seen == ["ok:2"]  # the others still ran before the error was raised


def test_strict_env_var_makes_validation_failures_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Misfit:
        @hookimpl
        def host_startup(self, host: Host, extra: int) -> None:  # not in the spec
            pass

    lenient = make_host(tmp_path / "lenient")
    record = lenient.register_plugin(Misfit(), name="misfit")
    assert record.status == "failed" and "extra" in record.error
    assert record.error.startswith("does not fit the hook specs: PluginValidationError")
    assert "PluginValidationError" in record.traceback
    assert "'misfit'" in caplog.text and "Misfit" in caplog.text  # name and origin
    assert lenient.pm.get_plugin("misfit") is None
    monkeypatch.setenv("MEMGRAPH_HOST_STRICT", "1")
    strict = make_host(tmp_path / "strict")
    assert strict.strict
    with pytest.raises(PluginError, match="'misfit'"):
        strict.register_plugin(Misfit(), name="misfit")


def test_a_plugin_raising_in_host_addhooks_fails_alone(tmp_path: Path) -> None:
    class BadSpecs:
        @hookimpl
        def host_addhooks(self, pm: pluggy.PluginManager) -> None:
            raise RuntimeError("no specs today")

    seen: list[str] = []
    host = make_host(tmp_path)
    record = host.register_plugin(BadSpecs(), name="badspecs")
    assert record.status == "failed"
    assert record.error == "raised while registering (host_addhooks): RuntimeError: no specs today"
    assert "Traceback" in record.traceback and host.pm.get_plugin("badspecs") is None
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(Recorder(seen, "ok"), name="ok")
    assert host.notify("test_event", value=1) == [] and seen == ["ok:1"]


async def test_unknown_hook_fails_its_plugin_at_start(tmp_path: Path) -> None:
    class Lonely:
        @hookimpl
        def nobody_declares_this(self) -> None:
            pass

    seen: list[str] = []
    host = make_host(tmp_path)
    host.register_plugin(Lonely(), name="lonely")
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(Recorder(seen, "ok"), name="ok")
    await host.start()
    record = host.plugin_record("lonely")
    assert record.status == "failed" and "nobody_declares_this" in record.error
    assert host.pm.get_plugin("lonely") is None
    assert seen == ["ok:start"]


async def test_hook_spec_added_later_is_not_an_unknown_hook(tmp_path: Path) -> None:
    seen: list[str] = []
    host = make_host(tmp_path)
    host.register_plugin(Recorder(seen, "early"), name="early")  # implements test_event
    host.register_plugin(SpecAdder(), name="specs")  # adds its spec afterwards
    await host.start()
    assert host.plugin_record("early").ok
    host.notify("test_event", value=1)
    assert "early:1" in seen


def test_blocking_by_argument_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGRAPH_HOST_BLOCK", "envblocked, other")
    host = make_host(tmp_path, blocked=["argblocked"])
    for name in ("argblocked", "envblocked", "free"):
        host.register_plugin(Recorder([], name), name=name)
    statuses = {r.name: r.status for r in host.plugin_records()}
    assert statuses == {"argblocked": "blocked", "envblocked": "blocked", "free": "loaded"}
    assert host.pm.get_plugin("argblocked") is None and host.pm.get_plugin("free") is not None


async def test_unregister_removes_hooks_publications_and_runs_unload_callbacks(
    tmp_path: Path,
) -> None:
    seen: list[str] = []
    unloaded: list[str] = []
    host = make_host(tmp_path)
    host.register_plugin(Recorder(seen, "p"), name="p")
    host.publish("p", "p-api", object(), version="2")
    host.registry.register("keep", 1, owner="other")
    host.on_unload("p", lambda: unloaded.append("p"))
    assert host.registry.entry("p-api").owner == "p"
    host.unregister_plugin("p")
    assert host.registry.names() == ["keep"]
    assert unloaded == ["p"]
    assert host.plugin_record("p") is None
    await host.start()
    assert seen == []
    host.unregister_plugin("p")  # unknown now: nothing happens


def test_publish_takes_the_plugin_its_name_or_its_module_name(tmp_path: Path) -> None:
    import types

    host = make_host(tmp_path)
    obj = Recorder([], "o")
    host.register_plugin(obj, name="obj")
    module = types.ModuleType("tests_publish_plugin_module")
    sys.modules[module.__name__] = module
    try:
        host.register_plugin(module, name="renamed@2")
        assert host.name_of(module.__name__) == "renamed@2" and host.name_of(obj) == "obj"
        assert host.publish(obj, "a", 1).owner == "obj"
        assert host.publish("obj", "b", 2).owner == "obj"
        assert host.publish(module.__name__, "c", 3).owner == "renamed@2"
        assert host.publish("not-loaded-yet", "d", 4).owner == "not-loaded-yet"
        with pytest.raises(ValueError, match="'e'.*not a registered plugin"):
            host.publish(object(), "e", 5)
        host.unregister_plugin("renamed@2")
        assert host.registry.names() == ["a", "b", "d"]
    finally:
        del sys.modules[module.__name__]


def test_a_module_plugins_unload_callbacks_stay_when_its_helper_object_leaves(
    tmp_path: Path,
) -> None:
    import types

    module = types.ModuleType("tests_unload_module_plugin")
    sys.modules[module.__name__] = module
    helper_class = type("Helper", (), {"__module__": module.__name__})
    unloaded: list[str] = []
    host = make_host(tmp_path)
    try:
        host.register_plugin(module, name="mod")
        host.register_plugin(helper_class(), name="helper")  # a worker object the module made
        host.on_unload(module.__name__, lambda: unloaded.append("module"))
        host.unregister_plugin("helper")
        assert unloaded == []  # the helper leaving does not tear the module plugin down
        host.unregister_plugin("mod")
        assert unloaded == ["module"]

        lone = helper_class()  # an object whose module is no plugin (an entry point's object)
        host.register_plugin(lone, name="lone")
        host.on_unload(module.__name__, lambda: unloaded.append("by module"))
        host.on_unload(lone, lambda: unloaded.append("by object"))
        host.unregister_plugin("lone")
        assert sorted(unloaded[1:]) == ["by module", "by object"]
    finally:
        del sys.modules[module.__name__]


def test_duplicate_explicit_name_is_a_clear_error(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.register_plugin(Recorder([], "a"), name="dup")
    with pytest.raises(ValueError, match="'dup'"):
        host.register_plugin(Recorder([], "b"), name="dup")


def test_call_order_follows_source_tiers(tmp_path: Path) -> None:
    seen: list[str] = []
    host = make_host(tmp_path)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(Recorder(seen, "explicit"), name="explicit")
    host.register_plugin(Recorder(seen, "builtin"), name="builtin", source="built-in")
    host.register_plugin(Recorder(seen, "folder"), name="folder", source="folder")
    host.notify("test_event", value=0)
    assert seen == ["explicit:0", "folder:0", "builtin:0"]
    # a plugin registered again under its name keeps its place (hot reload)
    host.unregister_plugin("folder")
    host.register_plugin(Recorder(seen, "folder2"), name="folder", source="folder")
    seen.clear()
    host.notify("test_event", value=1)
    assert seen == ["explicit:1", "folder2:1", "builtin:1"]


def test_cli_commands_hook_collects_results_with_plugin_names(tmp_path: Path) -> None:
    from host import Command

    class Contributes:
        @hookimpl
        def host_cli_commands(self, host: Host) -> list[Command]:
            return [Command("hello", "say hello", lambda parser: None, lambda h, a: 0)]

    host = make_host(tmp_path)
    host.register_plugin(Contributes(), name="contrib")
    results = host.call_hook("host_cli_commands", host=host)
    assert [(r.plugin, [c.name for c in r.value]) for r in results] == [("contrib", ["hello"])]


def test_sync_notify_runs_async_implementations_without_a_loop(tmp_path: Path) -> None:
    seen: list[str] = []

    host = make_host(tmp_path)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(AsyncRecorder(seen), name="async")
    assert host.notify("test_event", value=4) == []
    assert seen == ["async:4"]


async def test_sync_notify_in_a_running_loop_schedules_and_reports_late_failures(
    tmp_path: Path,
) -> None:
    class AsyncRaiser:
        @hookimpl
        async def test_event(self, value: int) -> None:
            await asyncio.sleep(0)
            raise LookupError(f"late {value}")

    host = make_host(tmp_path, strict=True)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(AsyncRaiser(), name="late")
    assert host.notify("test_event", value=5) == []  # scheduled, not failed yet
    await host.stop()  # returns once the notifications it scheduled have ended (never started)
    assert host.plugin_record("late").error == "test_event: LookupError: late 5"


def test_missing_hook_arguments_are_a_failure_of_that_call(tmp_path: Path) -> None:
    seen: list[str] = []
    host = make_host(tmp_path)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(Recorder(seen, "r"), name="r")
    failures = host.notify("test_event")
    assert [f.plugin for f in failures] == ["r"]
    assert "value" in str(failures[0].exception)
    assert host.notify("no_such_hook", value=1) == []


def test_host_hookspecs_are_documented_with_the_right_flags(tmp_path: Path) -> None:
    from host import hookspecs

    host = make_host(tmp_path)
    expected = {
        "host_addhooks": True,
        "host_startup": False,
        "host_shutdown": False,
        "host_cli_commands": False,
        "host_plugin_dispose": False,
        "host_plugin_adopt": False,
    }
    for name, historic in expected.items():
        caller = getattr(host.pm.hook, name)
        assert caller.spec is not None and caller.spec.namespace is hookspecs
        assert bool(caller.spec.opts.get("historic")) is historic, name
        assert (getattr(hookspecs, name).__doc__ or "").strip(), name
    assert Host.hookimpl is hookimpl
    assert host.pm.project_name == "memgraph_host"


async def test_stop_waits_for_async_implementations_a_sync_notify_scheduled(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    class Slow:
        @hookimpl
        async def test_event(self, value: int) -> None:
            for _ in range(20):
                await asyncio.sleep(0)
            seen.append(f"slow:{value}")

    host = make_host(tmp_path)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(Slow(), name="slow")
    host.register_plugin(Recorder(seen, "rec"), name="rec")
    await host.start()
    assert host.notify("test_event", value=6) == []
    assert "slow:6" not in seen  # scheduled in this loop, still running
    await host.stop()
    assert seen[-3:] == ["rec:6", "slow:6", "rec:stop"]


async def test_a_plugin_calling_sys_exit_in_a_hook_fails_alone(tmp_path: Path) -> None:
    """``sys.exit()`` inside a hook (sync, awaited, or scheduled by a sync notify in a running
    loop) is that plugin's failure, as it is at import: the host and the others carry on."""
    seen: list[str] = []

    class Quitter:
        @hookimpl
        def test_event(self, value: int) -> None:
            sys.exit(f"sync quit {value}")

    class AsyncQuitter:
        @hookimpl
        async def test_event(self, value: int) -> None:
            await asyncio.sleep(0)
            sys.exit(f"async quit {value}")

    host = make_host(tmp_path)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(Recorder(seen, "before"), name="before")
    host.register_plugin(Quitter(), name="quitter")
    host.register_plugin(AsyncQuitter(), name="aquitter")
    host.register_plugin(Recorder(seen, "after"), name="after")
    failures = await host.anotify("test_event", value=1)
    assert sorted(f.plugin for f in failures) == ["aquitter", "quitter"]
    assert seen == ["after:1", "before:1"]
    assert host.plugin_record("quitter").error == "test_event: SystemExit: sync quit 1"
    assert host.plugin_record("aquitter").error == "test_event: SystemExit: async quit 1"

    failures = host.notify("test_event", value=2)  # the async one is scheduled in this loop
    assert [f.plugin for f in failures] == ["quitter"]
    await host.stop()  # returns once the notifications it scheduled have ended (never started)
    assert host.plugin_record("aquitter").error == "test_event: SystemExit: async quit 2"
    assert seen[-2:] == ["after:2", "before:2"]


def test_sys_exit_in_an_async_hook_without_a_loop_fails_alone(tmp_path: Path) -> None:
    class AsyncQuitter:
        @hookimpl
        async def test_event(self, value: int) -> None:
            sys.exit("bye")

    seen: list[str] = []
    host = make_host(tmp_path)
    host.register_plugin(SpecAdder(), name="specs")
    host.register_plugin(AsyncQuitter(), name="aquitter")
    host.register_plugin(Recorder(seen, "ok"), name="ok")
    host.notify("test_event", value=3)
    assert seen == ["ok:3"]
    assert host.plugin_record("aquitter").error == "test_event: SystemExit: bye"


class LateSpecs:
    """Adds ``late_event`` through ``host_addhooks``; registered after plugins implementing it."""

    @hookspec
    def late_event(self, value: int) -> None:
        """Something happened, late."""

    @hookspec(historic=True)
    def late_history(self, value: int) -> None:
        """A historic hook added in the same namespace."""

    @hookimpl
    def host_addhooks(self, pm: pluggy.PluginManager) -> None:
        pm.add_hookspecs(LateSpecs)


def test_specs_added_later_fail_the_plugin_that_does_not_fit_them(tmp_path: Path) -> None:
    """A plugin that implemented a hook before its spec existed, with other arguments, is the
    one that does not fit when the spec arrives, not the plugin bringing the spec."""

    class Misfit:
        @hookimpl
        def late_event(self, value: int, extra: int) -> None:
            raise AssertionError("never called")

    class Fits:
        def __init__(self) -> None:
            self.seen: list[int] = []

        @hookimpl
        def late_event(self, value: int) -> None:
            self.seen.append(value)

    host = make_host(tmp_path)
    fits = Fits()
    host.register_plugin(Misfit(), name="misfit")
    host.register_plugin(fits, name="fits")
    host.publish("misfit", "misfit-api", object())
    record = host.register_plugin(LateSpecs(), name="specs")
    assert record.status == "loaded" and record.error is None
    misfit = host.plugin_record("misfit")
    assert misfit.status == "failed" and host.pm.get_plugin("misfit") is None
    assert misfit.error.startswith("does not fit the hook specs plugin 'specs' adds:")
    assert "extra" in misfit.error and "Traceback" in misfit.traceback
    assert host.registry.get("misfit-api") is None  # it left with everything it published
    assert host.notify("late_event", value=4) == [] and fits.seen == [4]


def test_a_failed_registration_leaves_no_hook_specs_behind(tmp_path: Path) -> None:
    """The specs a plugin's host_addhooks added are undone when its registration fails, so a
    fixed version can be registered and nothing is checked against a spec nobody provides."""

    class Broken(LateSpecs):
        @hookimpl
        def late_event(self, value: int, unknown: int) -> None:  # does not fit its own spec
            pass

    class Free:
        @hookimpl
        def late_event(self, value: int, anything: int) -> None:
            pass

    host = make_host(tmp_path)
    record = host.register_plugin(Broken(), name="specs")
    assert record.status == "failed" and "unknown" in record.error
    assert getattr(host.pm.hook, "late_event", None) is None
    assert getattr(host.pm.hook, "late_history", None) is None
    assert host.register_plugin(Free(), name="free").status == "loaded"  # no spec to fit
    fixed = host.register_plugin(LateSpecs(), name="specs2")
    assert fixed.status == "loaded", fixed.error
    assert host.pm.hook.late_history.spec.opts["historic"]
    assert host.plugin_record("free").status == "failed"  # now a spec exists, and it misfits
