"""`make bench`: per-turn figures of the engine on synthetic chats (1k, 10k, 100k nodes, 3 edges
a node) plus the storage section, printed as one markdown table.

Sections are modules next to this file, loaded by path when present:

- ``engine.py``: ``COLUMNS`` and ``measure(size, data) -> {column: text}`` for each chat size,
  `data` being the synthetic chat (``build_chat``) in the original's JSON shape;
- ``storage.py``: ``rows(quick=...) -> [(name, p50_ms, limit_ms | None, note)]``;
- ``reload.py``: the same ``rows`` (hot reload: reload step, failed reload, save-to-swap);
- ``keyword.py``: the same ``rows`` (keyword search at 100k nodes against LanceDB's native FTS
  and bm25s on the same texts, and what a write costs each);
- ``turn.py``: the same ``rows`` (a recall turn and a whole turn at 1k/10k/100k nodes);
- ``scale.py``: the same ``rows``, a fifth element being the unit (storage scale ratios:
  write tails across maintenance, writes during another chat's maintenance, cold open against a
  raw pyarrow read, first vector search after an open; ``--million`` adds a 1M-node chat);
- ``memory.py``: ``rows(quick=...) -> [(name, value, unit, limit | None, note)]`` (MB per 1k
  nodes of a loaded chat at 10k/100k, and a host serving 1,000 chats under `memory_budget_mb`);
- ``ingest.py``: ``table_rows(quick=...) -> [table row]`` (offline transcript ingest: messages/s
  and cost per message at 1k and 10k messages, synthetic and LoCoMo).

A section that is missing, fails to import or raises is reported and the table still prints.

    python bench/run.py [--sizes 1000,10000,100000] [--quick] [--sections engine] [--write]
    (--write appends the table to bench/RESULTS.md with the date)
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import platform
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# engine column -> (unit, target for a chat size or None)
ENGINE_UNITS: dict[str, tuple[str, Any]] = {
    "load ms": ("ms", lambda n: None),
    "list_visible_candidates ms": ("ms", lambda n: 5.0 if n <= 10_000 else None),
    "get_node_brief µs/node": ("µs/node", lambda n: 50.0),
    "get_node_brief µs/node (first call)": ("µs/node", lambda n: None),
    "keyword_search ms": ("ms", lambda n: 10.0 if n <= 10_000 else 50.0),
    "apply_extraction_batch µs/op": ("µs/op", lambda n: 50.0),
    "apply_extraction_batch µs/op (first round)": ("µs/op", lambda n: None),
}
SECTIONS = ("engine", "storage", "reload", "keyword", "turn", "scale", "memory", "ingest")
Row = tuple[str, str, str, str, str, str]  # measure, value, unit, target, status, note


def _load(name: str) -> ModuleType | None:
    path = HERE / f"{name}.py"
    if not path.exists():
        print(f"[bench] no section {name!r} ({path.name} missing)", file=sys.stderr)
        return None
    spec = importlib.util.spec_from_file_location(f"memgraph_bench_{name}", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:
        print(f"[bench] section {name!r} failed to import:", file=sys.stderr)
        traceback.print_exc()
        return None
    return module


def _status(value: str, target: float | None) -> str:
    if target is None:
        return ""
    try:
        return "ok" if float(value) <= target else "OVER"
    except ValueError:
        return ""


def engine_rows(engine: ModuleType, sizes: list[int]) -> list[Row]:
    out: list[Row] = []
    for size in sizes:
        t0 = time.perf_counter()
        data = engine.build_chat(size)
        where = f"{size // 1000}k nodes/{len(data['edges']) // 1000}k edges"
        try:
            figures = engine.measure(size, data)
        except Exception:
            traceback.print_exc()
            figures = {c: "error" for c in engine.COLUMNS}
        for column in engine.COLUMNS:
            unit, target_of = ENGINE_UNITS.get(column, ("", lambda n: None))
            name = column.replace(f" {unit}", "").replace(" ms", "")
            value = str(figures.get(column, "n/a"))
            target = target_of(size)
            out.append((f"{name} @{where}", value, unit,
                        "-" if target is None else f"<= {target:g}", _status(value, target), ""))
        print(f"[bench] engine {size:,} nodes: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return out


def storage_rows(
    storage: ModuleType, quick: bool, label: str = "storage", **options: Any
) -> list[Row]:
    t0 = time.perf_counter()
    try:
        raw = storage.rows(quick=quick, **options)
    except Exception:
        traceback.print_exc()
        return [(f"{label} section", "error", "", "-", "", "see stderr")]
    out: list[Row] = []
    for name, ms, limit, note, *unit in raw:  # an optional fifth element: the unit
        value = f"{ms:.2f}"
        out.append((str(name), value, unit[0] if unit else "ms",
                    "-" if limit is None else f"<= {limit:g}", _status(value, limit), str(note)))
    print(f"[bench] {label}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return out


def unit_rows(section: ModuleType, quick: bool, label: str) -> list[Row]:
    """Rows `(name, value text, unit, limit | None, note)` of a section that names its units."""
    t0 = time.perf_counter()
    try:
        raw = section.rows(quick=quick)
    except Exception:
        traceback.print_exc()
        return [(f"{label} section", "error", "", "-", "", "see stderr")]
    out: list[Row] = []
    for name, value, unit, limit, note in raw:
        out.append((str(name), str(value), str(unit), "-" if limit is None else f"<= {limit:g}",
                    _status(str(value), limit), str(note)))
    print(f"[bench] {label}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return out


def run(
    sizes: list[int],
    *,
    quick: bool = False,
    sections: tuple[str, ...] = SECTIONS,
    million: bool = False,
) -> str:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    rows: list[Row] = []
    engine = _load("engine") if "engine" in sections else None
    if engine is not None:
        rows += engine_rows(engine, sizes)
    storage = _load("storage") if "storage" in sections else None
    if storage is not None and hasattr(storage, "rows"):
        rows += storage_rows(storage, quick)
    reload = _load("reload") if "reload" in sections else None  # same row shape as storage
    if reload is not None and hasattr(reload, "rows"):
        rows += storage_rows(reload, quick, "reload")
    keyword = _load("keyword") if "keyword" in sections else None  # same row shape as storage
    if keyword is not None and hasattr(keyword, "rows"):
        rows += storage_rows(keyword, quick, "keyword")
    turn = _load("turn") if "turn" in sections else None  # a chat turn at 1k/10k/100k nodes
    if turn is not None and hasattr(turn, "rows"):
        rows += storage_rows(turn, quick, "turn")
    scale = _load("scale") if "scale" in sections else None
    if scale is not None and hasattr(scale, "rows"):
        rows += storage_rows(scale, quick, "scale", million=million)
    memory = _load("memory") if "memory" in sections else None  # rows carry their own unit
    if memory is not None and hasattr(memory, "rows"):
        rows += unit_rows(memory, quick, "memory")
    ingest = _load("ingest") if "ingest" in sections else None  # rows in the table's own shape
    if ingest is not None and hasattr(ingest, "table_rows"):
        t0 = time.perf_counter()
        try:
            rows += ingest.table_rows(quick=quick)
        except Exception:
            traceback.print_exc()
            rows.append(("ingest section", "error", "", "-", "", "see stderr"))
        print(f"[bench] ingest: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    header = ("measure", "value", "unit", "target", "status", "note")
    lines = ["| " + " | ".join(header) + " |", "|---|---:|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="memgraph-host benchmarks")
    parser.add_argument("--sizes", default=None, help="chat sizes (default 1000,10000,100000)")
    parser.add_argument("--quick", action="store_true", help="1k and 10k only, quick storage")
    parser.add_argument("--sections", default=",".join(SECTIONS), help="which sections to run")
    parser.add_argument("--write", action="store_true", help="append the table to RESULTS.md")
    parser.add_argument("--million", action="store_true", help="scale: also a 1M-node chat")
    args = parser.parse_args(argv)
    default = "1000,10000" if args.quick else "1000,10000,100000"
    sizes = [int(s) for s in (args.sizes or default).split(",") if s.strip()]
    sections = tuple(x.strip() for x in args.sections.split(",") if x.strip())
    table = run(sizes, quick=args.quick, sections=sections, million=args.million)
    print(table)
    if args.write:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        machine = f"Python {platform.python_version()}, {platform.machine()}"
        with (HERE / "RESULTS.md").open("a", encoding="utf-8") as fh:
            fh.write(f"\n## {stamp} ({machine}; `python bench/run.py`)\n\n{table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
