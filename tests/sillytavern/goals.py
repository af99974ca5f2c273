"""The SillyTavern goals as a table. Each test records its mode's cells here (`record`); under
xdist a worker hands its cells to the controller at the end of its session (`workeroutput`),
the controller merges them (`merge`), and the run ends with the table (tests/conftest.py's hooks
call `handed_over`, `merge` and `summary`). `SILLYTAVERN_GOALS=FILE` writes the table there too."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROWS = ("after trimming", "after a regenerate", "after a swipe", "in a branch")
KEYS = (*ROWS, "edit replaces the fact", "delete forgets the fact", "edit while answering kept",
        "parent untouched", "double injections", "panel edit in the next block",
        "panel undo takes it out", "why recalled shows the last generation")  # fmt: skip
TOTALS = {"in a branch": 3}  # two of the five facts were edited and deleted before the branch
#: the key of a worker's cells in xdist's `workeroutput`
WORKER_KEY = "sillytavern_goals"

#: mode -> goal -> cell text, as recorded in this process (or merged from the workers)
CELLS: dict[str, dict[str, str]] = {}


def _cell(value: Any, total: int) -> str:
    if isinstance(value, set):
        return f"{len(value)}/{total}"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    return str(value)


def record(mode: str, goals: dict[str, Any]) -> None:
    """A test's measured goals for `mode` (`proxy` or `direct`); other keys are left out."""
    row = CELLS.setdefault(mode, {})
    row.update({key: _cell(goals[key], TOTALS.get(key, 5)) for key in KEYS if key in goals})


def handed_over(config: pytest.Config) -> None:
    """In an xdist worker: put this worker's cells where the controller receives them."""
    output = getattr(config, "workeroutput", None)
    if output is not None and CELLS:
        output[WORKER_KEY] = CELLS


def merge(workeroutput: dict[str, Any]) -> None:
    """In the controller: a finished worker's cells join the table."""
    for mode, row in workeroutput.get(WORKER_KEY, {}).items():
        CELLS.setdefault(mode, {}).update(row)


def goal_lines(cells: dict[str, dict[str, str]]) -> list[str]:
    modes = sorted(cells)
    lines = ["| goal | " + " | ".join(modes) + " |", "|---" * (len(modes) + 1) + "|"]
    for key in KEYS:
        if not any(key in cells[m] for m in modes):
            continue
        label = f"early facts recalled {key}" if key in ROWS else key
        lines.append(f"| {label} | " + " | ".join(cells[m].get(key, "-") for m in modes) + " |")
    return lines


def summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The table at the end of the run (in the controller under xdist), if a test recorded."""
    if not CELLS or hasattr(terminalreporter.config, "workeroutput"):
        return
    lines = goal_lines(CELLS)
    terminalreporter.section("SillyTavern goals")
    for line in lines:
        terminalreporter.write_line(line)
    target = os.environ.get("SILLYTAVERN_GOALS")
    if target:
        Path(target).write_text("\n".join(lines) + "\n", "utf-8")
