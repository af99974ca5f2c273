"""The property-based suite (tests/storage/fuzz_machine.py) run long: 10,000 steps by default.

Runs `ChatMachine` (write API batches good and hostile, rollback, import, reopen, messages with
Unicode line breaks, an import followed by a turn, a damaged data file checked and repaired; a
real LanceDB in a temporary directory) again and again until the step count is reached, and
prints steps, rejected (ops and calls refused), applied ops, reopens, the issue-28 steps and
invariant breaks. A break is printed
with hypothesis's shrunk reproduction and counted; the run goes on.

    python bench/fuzz.py [--steps 10000] [--steps-per-run 50] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, settings  # noqa: E402
from hypothesis.stateful import run_state_machine_as_test  # noqa: E402

from tests.storage.fuzz_machine import ChatMachine  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--steps-per-run", type=int, default=50)
    parser.add_argument("--examples-per-round", type=int, default=10)
    parser.add_argument(
        "--no-shrink", action="store_true", help="report a break as found (faster, longer repro)"
    )
    args = parser.parse_args(argv)
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    if not args.no_shrink:
        phases.append(Phase.shrink)
    breaks: list[str] = []
    started = time.perf_counter()
    rounds = 0
    while ChatMachine.totals["steps"] < args.steps:
        rounds += 1
        config = settings(
            max_examples=args.examples_per_round,
            stateful_step_count=args.steps_per_run,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=phases,
        )
        try:
            run_state_machine_as_test(ChatMachine, settings=config)
        except Exception:  # an invariant break: counted, shown, and the hunt goes on
            breaks.append(traceback.format_exc())
            print(breaks[-1], file=sys.stderr)
        done = ChatMachine.totals["steps"]
        print(f"\r{done}/{args.steps} steps", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    elapsed = time.perf_counter() - started
    totals = ChatMachine.totals
    rows = [
        ("steps", totals["steps"]),
        ("rejected (ops and refused calls)", totals["rejected"]),
        ("applied ops", totals["applied"]),
        ("reopens", totals["reopens"]),
        ("messages with Unicode line breaks", totals["messages"]),
        ("imports followed by a turn", totals["imports_then_turns"]),
        ("damaged files found and repaired", totals["damaged_files"]),
        ("invariant breaks", len(breaks)),
        ("seconds", f"{elapsed:.0f}"),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"| {'fuzz (bench/fuzz.py)':<{width}} | value |")
    print(f"|{'-' * (width + 2)}|-------|")
    for name, value in rows:
        print(f"| {name:<{width}} | {value} |")
    return 1 if breaks else 0


if __name__ == "__main__":
    raise SystemExit(main())
