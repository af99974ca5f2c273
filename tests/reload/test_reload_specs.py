"""Plugins in the folder that add hook specs, and plugins that implement them."""

from __future__ import annotations

from pathlib import Path

from host import Host
from tests.reload.conftest import write

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
