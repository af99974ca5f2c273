"""`host.plugins.fresh_import`: fresh module names, and which callbacks belong to a plugin's
code."""

from __future__ import annotations

import functools
import sys
import traceback
from pathlib import Path

import pytest

from host.plugins.fresh_import import (
    FRESH_PREFIX,
    PluginLoadError,
    SourceLocation,
    defined_in,
    import_fresh,
    locate_in_plugin,
    purge_modules,
)
from tests.host.reload.conftest import write

SOURCE = """
def function(state):
    return state


class Listener:
    def method(self, state):
        return state

    def __call__(self, state):
        return state


LAMBDA = lambda state: state  # noqa: E731
"""


def test_each_import_is_a_new_module_and_callbacks_know_their_version(tmp_path: Path) -> None:
    write(tmp_path / "pack" / "__init__.py", SOURCE + "\nfrom .inner import inner\n")
    write(tmp_path / "pack" / "inner.py", "def inner(state):\n    return state\n")
    first = import_fresh("pack", tmp_path / "pack")
    second = import_fresh("pack", tmp_path / "pack")
    try:
        assert first.__name__ != second.__name__
        assert first.__name__.startswith(FRESH_PREFIX) and first.function is not second.function
        owned = [
            first.function,
            first.LAMBDA,
            first.Listener().method,
            first.Listener(),
            functools.partial(functools.partial(first.function), 1),
            first.inner,  # a submodule of the plugin's package
        ]
        for callback in owned:
            assert defined_in(callback, first.__name__), callback
            assert not defined_in(callback, second.__name__), callback
        for foreign in ([].append, print, len, functools.partial(print), object()):
            assert not defined_in(foreign, first.__name__), foreign
    finally:
        purge_modules(first.__name__)
        purge_modules(second.__name__)
    assert not [name for name in sys.modules if name in (first.__name__, second.__name__)]


def test_failed_import_names_file_and_line_and_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    write(path, "X = 1\n\nraise ValueError('nope')\n")
    before = set(sys.modules)
    with pytest.raises(PluginLoadError) as caught:
        import_fresh("bad", path)
    assert caught.value.message == "ValueError: nope"
    assert str(caught.value.location) == f"{path}:3"
    assert set(sys.modules) == before


def test_locate_in_plugin_finds_the_plugins_own_line(tmp_path: Path) -> None:
    path = tmp_path / "plug.py"
    write(path, "def hook():\n    raise KeyError('k')\n")
    module = import_fresh("plug", path)
    try:
        try:
            try:
                module.hook()
            except KeyError as inner:
                raise RuntimeError("the host refused it") from inner  # raised by host code
        except RuntimeError as outer:
            caught = outer
        assert locate_in_plugin(path, caught) == SourceLocation(str(path), 2)
        text = "".join(traceback.format_exception(caught.__cause__))  # what a record keeps
        assert locate_in_plugin(path, RuntimeError("no trace"), text) == SourceLocation(
            str(path), 2
        )
        assert locate_in_plugin(path, RuntimeError("nowhere")) == SourceLocation(str(path))
        (tmp_path / "pack").mkdir()
        assert locate_in_plugin(tmp_path / "pack") == SourceLocation(
            str(tmp_path / "pack" / "__init__.py")
        )
    finally:
        purge_modules(module.__name__)
