"""The hierarchy checks of an imported store file: no node its own parent, no ``parentId``
cycle, and every ``contains`` edge matched by its child's ``parentId``. A node
in a cycle never becomes a recall candidate, and a ``contains`` edge without the parent link
is a rollup whose child does not know it: each is refused, naming the node."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def parent_problems(parents: Mapping[str, str], where: Mapping[str, str]) -> list[str]:
    """Self-parents and ``parentId`` cycles among `parents` (node id -> parent id, both known
    ids); `where` gives each node's path in the file."""
    problems: list[str] = []
    done: set[str] = set()
    for start in parents:
        if start in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        node: str | None = start
        while node is not None and node not in done:
            if node in on_path:
                cycle = path[path.index(node) :]
                if len(cycle) == 1:
                    problems.append(f"{where[node]}.parentId: node {node!r} is its own parent")
                else:
                    ring = " -> ".join([*cycle, node])
                    problems.append(
                        f"{where[node]}.parentId: node {node!r} is in a parent cycle ({ring})"
                    )
                break
            path.append(node)
            on_path.add(node)
            node = parents.get(node)
        done.update(path)
    return problems


def contains_problems(edges: Iterable[tuple[int, Any]], parents: Mapping[str, str]) -> list[str]:
    """``contains`` edges (index, raw edge) whose child's ``parentId`` is not their source."""
    problems = []
    for index, raw in edges:
        if not isinstance(raw, Mapping) or raw.get("type") != "contains":
            continue
        source, target = raw.get("from", raw.get("source")), raw.get("to", raw.get("target"))
        if not isinstance(source, str) or not isinstance(target, str):
            continue
        if parents.get(target) != source:
            problems.append(
                f"edges[{index}]: a contains edge {source!r} -> {target!r}, but node {target!r} "
                f"has no parentId {source!r}"
            )
    return problems


def parents_end_in_roots(parents: Mapping[str, str]) -> bool:
    """Whether every ``parentId`` chain of `parents` (node id -> parent id) ends at a node
    without a parent: `parent_problems` finds nothing. Found with numpy by pointer doubling
    (each node's ancestor 1, 2, 4, ... steps up) instead of a Python walk of every chain (an
    import's 100k nodes); the import's quick pass asks it, and on False the full check names
    the nodes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    children = pa.array(list(parents), pa.string())
    up = pc.index_in(pa.array(list(parents.values()), pa.string()), value_set=children)
    # a parent that has no parent itself is a root (-1: its chain ends)
    return positions_end_in_roots(
        pc.fill_null(up, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    )


def positions_end_in_roots(parent_at: Any) -> bool:
    """`parents_end_in_roots` of nodes given by position: ``parent_at[i]`` is node i's
    parent's position, -1 for none (a numpy int array; parents among the nodes). The import's
    column check has the positions already (`import_nodes.plain_nodes`)."""
    import numpy as np

    n = int(parent_at.shape[0])
    step = np.append(np.where(parent_at < 0, n, parent_at), n)  # no parent: the chain ends
    for _ in range(max(1, n.bit_length() + 1)):
        step = step[step]
    return bool((step == n).all())
