"""The injection's size: a small capped always-inject set and a character budget for it all.

Pinned (always-inject) nodes are the nodes a person pinned (`Node.pinned`, from the explorer or
``session.pin_node``), then the newest ``recall_pinned_per_type`` visible nodes of each
always-inject type (the current scene's events, the newest threads), read from the head of the
store's per-type pool. A person's pins take the budget first. Recalled nodes then fill what is
left of ``recall_budget_chars`` in relevance order; a node whose row does not fit is left out
(named in the trace) and smaller ones after it may still come in. A row that repeats one the
block already has (`repeated_rows.RowRepeats`: the same text, or nearly) is left out too
(counted in the trace as collapsed), and its room goes to the next-ranked items. Every cell is
clipped to ``recall_item_chars``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from ...engine.read.pinned import pinned_ids
from .render import PINNED_HEADING, RECALLED_HEADING, item_text, node_columns, render_injection
from .repeated_rows import RowRepeats

# a table's fixed cost beyond its rows: "### name", header and separator lines, blank lines
_TABLE_SLACK = 16


@attrs.frozen
class Fitted:
    """What fits the budget: pinned and recalled nodes (in order), the ids left out, the text,
    and the ids left out as repeats of a row kept (`collapsed`)."""

    pinned: tuple[Any, ...]
    recalled: tuple[Any, ...]
    cut: tuple[str, ...]
    prompt: str
    collapsed: tuple[str, ...] = ()


#: Nodes of the pool's head read past `per_type` to make up for the ones left out (the
#: question's own event, near-empty messages): bounded, whatever the chat's size.
PINNED_SLACK = 3


def pinned_nodes(
    session: Any, per_type: int, leave_out: Callable[[Any], bool] | None = None
) -> tuple[Any, ...]:
    """The newest `per_type` visible nodes of each always-inject type, in timeline order,
    without those `leave_out` names (the current question's event: it is in the prompt
    already; near-empty messages); then the nodes a person pinned (`pinned_ids`), last so
    that `fit` keeps them first."""
    store = session.store
    pins = [v for v in map(store.view, pinned_ids(store)) if v is not None]
    pinned = {v.id for v in pins}
    out: list[Any] = []
    for spec in store.schema.types:
        if spec.always_inject:
            extra = PINNED_SLACK if leave_out is not None else 0
            newest = store.newest_in_pool(spec.type, per_type + extra)
            kept = [n for n in newest if n.id not in pinned]
            kept = [n for n in kept if leave_out is None or not leave_out(n)]
            out.extend(kept[:per_type])
    newest_first = sorted(out, key=lambda n: (n.seq_to is None, n.seq_to or 0, n.id))
    return (*newest_first, *pins)


def _row_bound(node: Any, specs: Sequence[Any], max_cell: int) -> int:
    """An upper bound of the node's row length (every column present, separators included)."""
    columns = len(node_columns(node, specs))
    return len(item_text(node, specs, max_cell)) + 3 * (columns + 3) + 1


def _table_bound(node: Any, specs: Sequence[Any]) -> int:
    spec = next((s for s in specs if s.type == node.type), None)
    names = node_columns(node, specs)
    name = spec.table_name if spec is not None and spec.table_name else node.type
    header = sum(len(c) + 3 for c in ["id", "title", *names]) + 2
    return len(name) + 6 + 2 * header + _TABLE_SLACK


def fit(
    pinned: Sequence[Any],
    recalled: Sequence[Any],
    specs: Iterable[Any],
    *,
    budget: int,
    max_cell: int,
) -> Fitted:
    """Pinned first (the newest kept when even they overflow), then recalled in order, each
    while the bound of the text so far stays within `budget` and its row repeats none taken
    before (`RowRepeats`); the rendered text is checked and trimmed from the end until it
    fits."""
    specs = list(specs)
    used = 0
    tables: set[tuple[str, str]] = set()
    cut: list[str] = []
    collapsed: list[str] = []
    repeats = RowRepeats(specs, max_cell)

    def take(node: Any, block: str) -> bool:
        nonlocal used
        if repeats.repeats(node):
            collapsed.append(node.id)
            return False
        cost = _row_bound(node, specs, max_cell)
        if (block, node.type) not in tables:
            cost += _table_bound(node, specs)
            if not any(b == block for b, _ in tables):
                cost += len(max(PINNED_HEADING, RECALLED_HEADING, key=len)) + 4
        if used + cost > budget:
            cut.append(node.id)
            return False
        used += cost
        tables.add((block, node.type))
        repeats.keep(node)
        return True

    kept_pinned = [n for n in reversed(pinned) if take(n, "pinned")][::-1]
    kept = [n for n in recalled if take(n, "recalled")]
    prompt = render_injection(kept_pinned, kept, specs, max_cell=max_cell)
    while len(prompt) > budget and (kept or kept_pinned):  # the bound was too low: trim
        cut.append(kept.pop().id if kept else kept_pinned.pop(0).id)
        prompt = render_injection(kept_pinned, kept, specs, max_cell=max_cell)
    return Fitted(tuple(kept_pinned), tuple(kept), tuple(cut), prompt, tuple(collapsed))
