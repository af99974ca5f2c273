"""Packaging and set-up: the distribution's metadata, the Makefile's .venv logic, CI, README."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = {"pluggy", "attrs", "cattrs", "lancedb", "pyarrow", "watchfiles"}


def test_distribution_metadata_and_pinned_ranges() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["name"] == "memgraph-host"
    assert project["requires-python"] == ">=3.11"
    runtime = [Requirement(r) for r in project["dependencies"]]
    test = [Requirement(r) for r in project["optional-dependencies"]["test"]]
    assert {r.name for r in runtime} >= RUNTIME
    assert {"pytest", "pytest-asyncio", "ruff"} <= {r.name for r in test}
    for requirement in runtime + test:  # a range: a lower and an upper bound
        operators = {spec.operator for spec in requirement.specifier}
        assert ">=" in operators and "<" in operators, str(requirement)
    assert project["scripts"] == {"memgraph-host": "host.cli.entry:main"}


@pytest.mark.slow
@pytest.mark.process
def test_the_console_script_is_installed_and_runs() -> None:
    (script,) = entry_points(group="console_scripts", name="memgraph-host")
    assert script.value == "host.cli.entry:main"
    path = Path(sys.executable).parent / "memgraph-host"
    proc = subprocess.run(
        [str(path), "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0 and proc.stdout.startswith("memgraph-host "), proc.stderr


def make_plan(folder: Path, target: str = "test") -> str:
    """What ``make`` would run for ``target`` (``make -n``: nothing is executed)."""
    proc = subprocess.run(
        [shutil.which("make") or "make", "-n", "-C", str(folder), target],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return proc.stdout


@pytest.mark.process
def test_make_creates_reuses_and_resyncs_the_venv(tmp_path: Path) -> None:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    fresh = make_plan(tmp_path)  # a fresh clone: create .venv, install, run
    assert "-m venv" in fresh and "pip install --quiet -e '.[test]'" in fresh
    assert "pytest" in fresh and "ruff check" in fresh
    assert "memgraph-host demo" in make_plan(tmp_path, "demo")

    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    stamp = tmp_path / ".venv" / ".installed"
    stamp.touch()
    os.utime(tmp_path / "pyproject.toml", (1_000_000, 1_000_000))
    os.utime(stamp, (2_000_000, 2_000_000))
    reused = make_plan(tmp_path)
    assert "-m venv" not in reused and "pip install" not in reused
    assert "pytest" in reused

    os.utime(tmp_path / "pyproject.toml", (3_000_000, 3_000_000))  # pyproject.toml changed
    resynced = make_plan(tmp_path)
    assert "pip install --quiet -e '.[test]'" in resynced and "-m venv" not in resynced

    python.unlink()  # the venv's Python is gone: the venv is made again
    assert "-m venv --clear .venv" in make_plan(tmp_path)


def test_ci_runs_make_test_and_the_readme_opens_with_both_commands() -> None:
    ci = ROOT / ".ci" / "run"
    assert os.access(ci, os.X_OK)
    assert "make test" in ci.read_text("utf-8")
    readme = (ROOT / "README.md").read_text("utf-8")
    first_block = readme.split("```", 2)[1]
    assert "make demo" in first_block and "make test" in first_block
    assert readme.index("```") < readme.index("pluggy")  # the commands come first
