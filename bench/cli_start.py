"""How long ``memgraph-host`` takes to answer before it does any work: ``--version``, ``--help``
(which loads the plugins, since their commands are part of it), ``plugins`` and ``config``, each
run as a fresh process the way a user runs it. Wall time and the process's own CPU time (user +
system, from ``os.wait4``: what the machine's other load does not inflate), p50 over the runs.

    python bench/cli_start.py [--runs 9]

Goal (issue 30): ``--version`` and ``--help`` answer in well under a second.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "--help": ["--help"],
    "plugins": ["plugins"],
    "config": ["config"],
}
#: the goals, seconds of CPU at p50 (wall time on a shared machine follows its load)
GOALS = {"--version": 0.5, "--help": 0.8}


def run_once(argv: list[str], data_dir: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one ``python -m host ...`` process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "host", "--data-dir", str(data_dir), *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"memgraph-host {' '.join(argv)} failed ({status})")
    return wall, usage.ru_utime + usage.ru_stime


def rows(runs: int) -> list[tuple[str, float, float, float | None]]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in COMMANDS.items():
            run_once(argv, Path(tmp))  # warm the file cache (bytecode) once
            samples = [run_once(argv, Path(tmp)) for _ in range(runs)]
            wall = statistics.median(s[0] for s in samples)
            cpu = statistics.median(s[1] for s in samples)
            out.append((name, wall, cpu, GOALS.get(name)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    table = Table(title=f"memgraph-host start, p50 of {args.runs} runs")
    for column in ("command", "wall s", "CPU s", "goal (CPU s)", "met"):
        table.add_column(column, justify="left" if column == "command" else "right")
    for name, wall, cpu, goal in rows(args.runs):
        met = "-" if goal is None else ("yes" if cpu <= goal else "NO")
        table.add_row(name, f"{wall:.3f}", f"{cpu:.3f}", "-" if goal is None else f"{goal}", met)
    Console().print(table)


if __name__ == "__main__":
    main()
