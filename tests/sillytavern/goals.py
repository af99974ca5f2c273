"""The SillyTavern goals as a table (printed at the end of a run; written to the file
`SILLYTAVERN_GOALS` names, for bench/ to show)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ROWS = ("after trimming", "after a regenerate", "after a swipe", "in a branch")
TOTALS = {"in a branch": 3}  # two of the five facts were edited and deleted before the branch


def _cell(value: Any, total: int) -> str:
    if isinstance(value, set):
        return f"{len(value)}/{total}"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    return str(value)


def goal_lines(goals: dict[str, dict[str, Any]]) -> list[str]:
    modes = sorted(goals)
    lines = ["| goal | " + " | ".join(modes) + " |", "|---" * (len(modes) + 1) + "|"]
    keys = [*ROWS, "edit replaces the fact", "delete forgets the fact", "parent untouched",
            "double injections"]  # fmt: skip
    for key in keys:
        label = f"early facts recalled {key}" if key in ROWS else key
        cells = [_cell(goals[m].get(key), TOTALS.get(key, 5)) for m in modes]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    target = os.environ.get("SILLYTAVERN_GOALS")
    if target:
        Path(target).write_text("\n".join(lines) + "\n", "utf-8")
    return lines
