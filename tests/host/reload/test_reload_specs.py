"""Plugins in the folder that add hook specs, and plugins that implement them."""

from __future__ import annotations

from pathlib import Path

from host import Host, hookimpl
from host.reload.reload import Reloader
from tests.host.reload.conftest import write

SPEC_OWNER = """
import pluggy

from host import hookimpl

hookspec = pluggy.HookspecMarker("memgraph_host")


class ShoutSpecs:
    @hookspec
    def dev_shout({args}):
        '''Shout ``text``.'''


@hookimpl
def host_addhooks(pm):
    pm.add_hookspecs(ShoutSpecs)


@hookimpl
def dev_shout(text):
    return "{word} " + text
"""

SHOUTER = """
from host import hookimpl


@hookimpl
def dev_shout(text):
    return "user " + text
"""


async def test_plugin_that_adds_specs_reloads_with_them(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    # "a_user" sorts first: its hook is unknown until "owner" adds the spec, and loads anyway
    write(plugins_dir / "a_user.py", SHOUTER)
    write(plugins_dir / "owner.py", SPEC_OWNER.format(args="self, text", word="v1"))
    run = await start_reloader()
    await run.wait_report("owner", "loaded")
    await run.wait_report("a_user", "loaded")
    assert sorted(host.pm.hook.dev_shout(text="x")) == ["user x", "v1 x"]

    write(plugins_dir / "owner.py", SPEC_OWNER.format(args="self, text", word="v2"))
    report = await run.wait_report("owner", "reloaded")
    assert report.ok, report.describe()
    assert sorted(host.pm.hook.dev_shout(text="x")) == ["user x", "v2 x"]

    # a spec change that no longer fits the other plugin is refused, naming it
    write(plugins_dir / "owner.py", SPEC_OWNER.format(args="self, words", word="v3"))
    failed = await run.wait_report("owner", "failed")
    assert "a_user" in failed.error
    assert sorted(host.pm.hook.dev_shout(text="x")) == ["user x", "v2 x"]


async def test_unknown_hook_is_refused_with_its_line(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    path = plugins_dir / "lonely.py"
    write(path, "from host import hookimpl\n\n\n@hookimpl\ndef no_such_hook(x):\n    return x\n")
    run = await start_reloader()
    failed = await run.wait_report("lonely", "failed")
    assert "unknown hook 'no_such_hook'" in failed.error
    assert failed.location == f"{path}:4"
    assert host.pm.get_plugin("lonely") is None

    # a plugin that never loaded loads once its file is fixed
    write(
        path,
        "from host import hookimpl\n\n\n@hookimpl\ndef reload_test_greet(name):\n"
        "    return 'fixed ' + name\n",
    )
    await run.wait_report("lonely", "loaded")
    assert host.pm.hook.reload_test_greet(name="x") == ["fixed x"]
    assert "lonely" not in run.reloader.failures


#: Adds a historic spec too; with ``fail`` its host_addhooks works in the scratch manager (the
#: reload's check) and raises in the host, so the reload fails after the old version left.
OWNER_WITH_HISTORY = """
import pluggy

from host import hookimpl

hookspec = pluggy.HookspecMarker("memgraph_host")
CALLS = []


class ShoutSpecs:
    @hookspec
    def dev_shout(self, text):
        '''Shout ``text``.'''

    @hookspec(historic=True)
    def dev_announce(self, topic):
        '''Replayed to implementations registered later.'''


@hookimpl
def host_addhooks(pm):
    CALLS.append(pm)
    if {fail} and len(CALLS) > 1:
        raise RuntimeError("host_addhooks works only once")
    pm.add_hookspecs(ShoutSpecs)


@hookimpl
def dev_shout(text):
    return "{word} " + text
"""


class Listener:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def dev_announce(self, topic: str) -> None:
        self.seen.append(topic)


def _owner_source(word: str, *, fail: bool = False) -> str:
    return OWNER_WITH_HISTORY.replace("{fail}", str(fail)).replace("{word}", word)


async def test_specs_leave_and_come_back_with_their_plugin(host: Host, plugins_dir: Path) -> None:
    """A failed reload puts the old version's specs (and a historic hook's history) back; a
    deleted plugin takes its specs with it, so it loads again when its file comes back."""
    owner = plugins_dir / "owner.py"
    write(plugins_dir / "a_user.py", SHOUTER)
    write(owner, _owner_source("v1"))
    reloader = Reloader(host, plugins_dir)
    reports = await reloader.load_all()
    assert all(r.ok for r in reports), [r.describe() for r in reports]
    host.pm.hook.dev_announce.call_historic(kwargs={"topic": "t1"})

    write(owner, _owner_source("v2", fail=True))
    (report,) = await reloader.reload_paths([owner])
    assert report.action == "failed" and "host_addhooks works only once" in report.error
    old_module = reloader.loaded["owner"].__name__
    assert host.pm.hook.dev_shout.spec.namespace.__module__ == old_module
    assert sorted(host.pm.hook.dev_shout(text="x")) == ["user x", "v1 x"]
    listener = Listener()
    host.register_plugin(listener, name="listener")
    assert listener.seen == ["t1"]  # the history came back with the spec

    write(owner, _owner_source("v3"))
    (report,) = await reloader.reload_paths([owner])
    assert report.action == "reloaded", report.describe()
    assert sorted(host.pm.hook.dev_shout(text="x")) == ["user x", "v3 x"]
    later = Listener()
    host.register_plugin(later, name="later")
    assert later.seen == ["t1"]

    owner.unlink()
    (report,) = await reloader.reload_paths([owner])
    assert report.action == "unloaded"
    assert host.pm.hook.dev_shout.spec is None  # a_user's implementation stays, unverified
    assert [i.plugin_name for i in host.pm.hook.dev_shout.get_hookimpls()] == ["a_user"]

    write(owner, _owner_source("v4"))
    (report,) = await reloader.reload_paths([owner])
    assert report.action == "loaded", report.describe()
    assert sorted(host.pm.hook.dev_shout(text="x")) == ["user x", "v4 x"]
    assert host.plugin_record("a_user").status == "loaded"
