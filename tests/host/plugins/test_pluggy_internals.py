"""The host's reach past pluggy's public API (`host.plugins.pluggy_internals`), each function
exercised on a real `pluggy.PluginManager` of the installed pluggy, which must be in the range
pyproject.toml pins: a pluggy that renames or reshapes what they touch fails here, by name."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path
from typing import Any

import pluggy
from packaging.requirements import Requirement

from host.plugins.pluggy_internals import (
    call_history,
    call_order,
    drop_hook,
    forget_spec,
    hook_callers,
    restore_call_history,
    sort_hookimpls,
)

ROOT = Path(__file__).resolve().parents[3]
PROJECT = "pluggy_internals_test"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class Specs:
    @hookspec
    def greet(self, name: str) -> str:  # type: ignore[empty-body]
        """Say hello."""

    @hookspec(historic=True)
    def configured(self, value: int) -> None:
        """A historic hook: every later implementation gets the earlier calls."""


class GreetSpec:
    @hookspec
    def greet(self, name: str) -> str:  # type: ignore[empty-body]
        """Say hello (declared again, after the hook was dropped)."""


class ConfiguredSpec:
    @hookspec(historic=True)
    def configured(self, value: int) -> None:
        """The historic hook, declared again after its spec was forgotten."""


def _impl(tag: str, seen: list[Any] | None = None) -> object:
    class Plugin:
        @hookimpl
        def greet(self, name: str) -> str:
            return f"{tag}:{name}"

        @hookimpl
        def configured(self, value: int) -> None:
            if seen is not None:
                seen.append((tag, value))

    return Plugin()


def _manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(Specs)
    return pm


def test_the_installed_pluggy_is_in_the_pinned_range() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = [Requirement(d) for d in pyproject["project"]["dependencies"]]
    (pin,) = [r for r in pins if r.name == "pluggy"]
    installed = importlib.metadata.version("pluggy")
    assert pin.specifier.contains(installed), (installed, str(pin.specifier))
    assert pluggy.__version__ == installed


def test_the_private_attributes_used_exist_on_hook_callers() -> None:
    slots = set(pluggy.HookCaller.__slots__)
    assert {"_hookimpls", "_call_history", "spec"} <= slots
    assert "__dict__" in pluggy.HookRelay.__slots__  # hooks are the relay's attributes


def test_hook_callers_lists_hooks_with_and_without_a_spec() -> None:
    pm = _manager()

    class Stray:
        @hookimpl
        def unknown_hook(self) -> None: ...

    pm.register(Stray())
    callers = hook_callers(pm)
    assert set(callers) == {"greet", "configured", "unknown_hook"}
    assert callers["greet"] is pm.hook.greet
    assert callers["unknown_hook"].spec is None
    assert callers["greet"].spec is not None


def test_drop_hook_removes_it_so_its_spec_can_be_added_again() -> None:
    pm = _manager()
    drop_hook(pm, "greet")
    assert "greet" not in hook_callers(pm)
    assert not hasattr(pm.hook, "greet")
    pm.add_hookspecs(GreetSpec)  # no "already registered within namespace"
    assert pm.hook.greet.spec is not None
    assert pm.hook.greet.spec.namespace is GreetSpec


def test_forget_spec_keeps_implementations_and_a_later_spec_checks_them() -> None:
    pm = _manager()
    pm.register(_impl("a"))
    pm.hook.configured.call_historic(kwargs={"value": 1})
    forget_spec(pm.hook.greet)
    forget_spec(pm.hook.configured)
    assert not pm.hook.greet.has_spec()
    assert not pm.hook.configured.is_historic()
    assert call_history(pm.hook.configured) is None
    assert pm.hook.greet(name="x") == ["a:x"]  # the implementation is still called
    pm.add_hookspecs(Specs)
    assert pm.hook.greet.has_spec()
    assert pm.hook.configured.is_historic()


def test_call_history_holds_a_historic_hooks_calls() -> None:
    pm = _manager()
    assert call_history(pm.hook.greet) is None
    assert call_history(pm.hook.configured) == []
    pm.hook.configured.call_historic(kwargs={"value": 7})
    history = call_history(pm.hook.configured)
    assert history is not None and len(history) == 1
    assert history[0][0] == {"value": 7}


def test_restore_call_history_replays_the_calls_to_later_plugins() -> None:
    pm = _manager()
    pm.hook.configured.call_historic(kwargs={"value": 3})
    saved = list(call_history(pm.hook.configured) or [])
    forget_spec(pm.hook.configured)
    pm.add_hookspecs(ConfiguredSpec)
    assert restore_call_history(pm.hook.configured, saved)
    seen: list[Any] = []
    pm.register(_impl("late", seen))
    assert seen == [("late", 3)]
    # called since, or not historic: nothing to restore
    assert not restore_call_history(pm.hook.configured, saved)
    assert not restore_call_history(pm.hook.greet, saved)
    assert len(call_history(pm.hook.configured) or []) == 1


def test_sort_hookimpls_sets_the_call_order() -> None:
    pm = _manager()
    for tag in ("a", "b", "c"):
        pm.register(_impl(tag), name=tag)
    assert pm.hook.greet(name="x") == ["c:x", "b:x", "a:x"]  # pluggy: last registered first
    sort_hookimpls(pm.hook.greet, lambda impl: impl.plugin_name)
    assert pm.hook.greet(name="x") == ["c:x", "b:x", "a:x"]  # already in that order
    sort_hookimpls(pm.hook.greet, lambda impl: {"a": 2, "b": 0, "c": 1}[impl.plugin_name])
    assert pm.hook.greet(name="x") == ["a:x", "c:x", "b:x"]  # the one sorted last runs first
    assert [i.plugin_name for i in pm.hook.greet.get_hookimpls()] == ["b", "c", "a"]


def test_call_order_is_the_order_pluggy_calls_in() -> None:
    pm = _manager()
    calls: list[str] = []

    class Wrapper:
        @hookimpl(wrapper=True)
        def greet(self, name: str):  # type: ignore[no-untyped-def]
            calls.append("wrapper")
            return (yield)

    class First:
        @hookimpl(tryfirst=True)
        def greet(self, name: str) -> str:
            calls.append("first")
            return "first"

    class Last:
        @hookimpl(trylast=True)
        def greet(self, name: str) -> str:
            calls.append("last")
            return "last"

    pm.register(Last(), name="last")
    pm.register(_impl("plain"), name="plain")
    pm.register(Wrapper(), name="wrapper")
    pm.register(First(), name="first")
    pm.hook.greet(name="x")
    order = [impl.plugin_name for impl in call_order(pm.hook.greet)]
    assert order == ["wrapper", "first", "plain", "last"]
    assert calls == ["wrapper", "first", "last"]  # "plain" is not recorded; its place is
