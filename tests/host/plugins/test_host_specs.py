"""Hook specs a plugin adds are its own: they leave with it and come back when it does."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pluggy

from host import Host, hookimpl, hookspec
from host.cli.cli import cmd_hooks, hook_rows
from host.plugins.discovery import BUILTIN_NAME


class Specs:
    """A firstresult hook and a historic one."""

    @hookspec(firstresult=True)
    def owned_pick(self, value: int) -> int | None:
        """The first answer wins."""

    @hookspec(historic=True)
    def owned_history(self, value: int) -> None:
        """Replayed to implementations registered later."""


class PickSpecs:
    """Adds `Specs` through ``host_addhooks`` and implements ``owned_pick``."""

    @hookimpl
    def host_addhooks(self, pm: pluggy.PluginManager) -> None:
        pm.add_hookspecs(Specs)

    @hookimpl
    def owned_pick(self, value: int) -> int:
        return value * 10


class Fits:
    """Implements the owner's hook with its arguments."""

    @hookimpl(trylast=True)
    def owned_pick(self, value: int) -> int:
        return value


class Misfit:
    """Implements the owner's hook with other argument names."""

    @hookimpl
    def owned_pick(self, other: int) -> int:
        raise AssertionError("never called")


def make_host(tmp_path: Path, **kwargs: object) -> Host:
    kwargs.setdefault("entry_points", False)
    kwargs.setdefault("builtins", False)
    return Host(data_dir=tmp_path / "data", **kwargs)  # type: ignore[arg-type]


def listing(host: Host) -> str:
    out = io.StringIO()
    cmd_hooks(host, argparse.Namespace(json=False), out)
    return out.getvalue()


def test_unregister_forgets_the_plugins_specs_and_it_registers_again(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    owner = PickSpecs()
    assert host.register_plugin(owner, name="owner").status == "loaded"
    host.unregister_plugin("owner")
    assert getattr(host.pm.hook, "owned_pick", None) is None
    assert getattr(host.pm.hook, "owned_history", None) is None
    assert not {"owned_pick", "owned_history"} & {row["name"] for row in hook_rows(host)}

    record = host.register_plugin(owner, name="owner")
    assert record.status == "loaded", record.error
    assert host.pm.hook.owned_pick.spec.opts["firstresult"]
    assert host.pm.hook.owned_pick(value=2) == 20  # firstresult: one value, not a list
    assert "owned_pick [firstresult]  (tests.host.plugins.test_host_specs.Specs)" in listing(host)
    # the spec's argument names are enforced again
    assert host.register_plugin(Misfit(), name="misfit").status == "failed"
    assert host.specs_of("owner") == ("owned_history", "owned_pick")
    host.unregister_plugin("owner")
    assert host.specs_of("owner") == ()


def test_other_implementations_stay_unverified_while_the_owner_is_away(tmp_path: Path) -> None:
    """A plugin that implemented the hook while its spec was gone and does not fit the spec
    when the owner comes back is the one failed, as when a spec arrives late; the owner loads."""
    host = make_host(tmp_path)
    host.register_plugin(PickSpecs(), name="owner")
    host.register_plugin(Fits(), name="fits")
    host.unregister_plugin("owner")
    caller = host.pm.hook.owned_pick
    assert caller.spec is None and [i.plugin_name for i in caller.get_hookimpls()] == ["fits"]
    assert "owned_pick  (no spec)\n    1. fits [trylast]\n" in listing(host)
    assert host.pm.hook.owned_pick(value=3) == [3]  # a hook without a spec returns a list

    assert host.register_plugin(Misfit(), name="misfit").status == "loaded"  # nothing to fit
    record = host.register_plugin(PickSpecs(), name="owner")
    assert record.status == "loaded", record.error
    misfit = host.plugin_record("misfit")
    assert misfit.status == "failed" and host.pm.get_plugin("misfit") is None
    assert misfit.error.startswith("does not fit the hook specs plugin 'owner' adds:")
    assert host.plugin_record("fits").status == "loaded"
    assert host.pm.hook.owned_pick(value=3) == 30  # the owner first, firstresult again


def test_historic_specs_come_back_with_an_empty_history(tmp_path: Path) -> None:
    class Listener:
        def __init__(self) -> None:
            self.seen: list[int] = []

        @hookimpl
        def owned_history(self, value: int) -> None:
            self.seen.append(value)

    host = make_host(tmp_path)
    host.register_plugin(PickSpecs(), name="owner")
    host.pm.hook.owned_history.call_historic(kwargs={"value": 1})
    early = Listener()
    host.register_plugin(early, name="early")
    assert early.seen == [1]
    host.unregister_plugin("owner")
    host.register_plugin(PickSpecs(), name="owner")
    late = Listener()
    host.register_plugin(late, name="late")
    assert late.seen == []  # the history left with the spec; a new one starts
    host.pm.hook.owned_history.call_historic(kwargs={"value": 2})
    assert early.seen == [1, 2] and late.seen == [2]


def test_a_plugin_failed_after_registering_leaves_no_specs_behind(tmp_path: Path) -> None:
    """Refused for an unknown hook after discovery, a plugin takes the specs it added with it."""

    class Unknown(PickSpecs):
        @hookimpl
        def no_such_hook(self) -> None:
            pass

    host = make_host(tmp_path)
    host.load_plugins()  # discovery has run: unknown hooks fail their plugin at registration
    record = host.register_plugin(Unknown(), name="owner")
    assert record.status == "failed" and "unknown hook 'no_such_hook'" in record.error
    assert getattr(host.pm.hook, "owned_pick", None) is None
    fixed = host.register_plugin(PickSpecs(), name="owner2")
    assert fixed.status == "loaded", fixed.error


def test_the_built_in_plugin_registers_again_with_its_specs(tmp_path: Path) -> None:
    """A module plugin whose specs live in another module (memgraph_plugin.hookspecs)."""
    host = make_host(tmp_path, builtins=True)
    host.load_plugins()
    plugin = host.pm.get_plugin(BUILTIN_NAME)
    assert plugin is not None
    host.unregister_plugin(BUILTIN_NAME)
    left = [row for row in hook_rows(host) if row["name"].startswith("memgraph_")]
    # only the built-in offline extractor's implementations stay, listed without a spec
    assert sorted((row["name"], row["spec"]) for row in left) == [
        ("memgraph_extract", None), ("memgraph_summarise", None)
    ]
    assert host.pm.hook.host_startup.spec is not None  # the host's own specs stay

    record = host.register_plugin(plugin, name=BUILTIN_NAME, source="built-in")
    assert record.status == "loaded", record.error
    assert host.pm.hook.memgraph_commit.spec.namespace.__name__ == "memgraph_plugin.hookspecs"
    assert "memgraph_commit" in host.specs_of(BUILTIN_NAME)


def test_only_the_leaving_plugins_specs_go(tmp_path: Path) -> None:
    """Two plugin objects of one module: each owns the specs its own registration added."""

    class OtherSpecs:
        @hookspec
        def other_event(self, value: int) -> None:
            """Another plugin's hook."""

    class Other:
        @hookimpl
        def host_addhooks(self, pm: pluggy.PluginManager) -> None:
            pm.add_hookspecs(OtherSpecs)

    host = make_host(tmp_path)
    host.register_plugin(PickSpecs(), name="owner")
    host.register_plugin(Other(), name="other")
    assert host.specs_of("other") == ("other_event",)
    host.unregister_plugin("owner")
    assert host.pm.hook.other_event.spec is not None
    assert host.specs_of("other") == ("other_event",)
