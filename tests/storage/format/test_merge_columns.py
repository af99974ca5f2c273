"""`graph_columns.merge(base, delta)` leaves the node table a replay of both changes leaves:
rows replaced in place, removed ones dropped, new and moved ones appended in delta order (the
appends-only case takes a shortcut: it must give the same table)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from memgraph_plugin.storage.format.graph_columns import DeltaBuilder, merge

IDS = [f"n_{i}" for i in range(12)]


def _node(nid: str, title: str) -> dict[str, Any]:
    return {"id": nid, "type": "event", "level": "semantic", "title": title, "fields": {},
            "parentId": "", "childrenIds": [], "seqTo": 1, "semanticDepth": 0,
            "semanticRollup": False, "archived": False}  # fmt: skip


def _change(ops: list[tuple[str, str]], tag: str) -> Any:
    return SimpleNamespace(
        nodes=[_node(nid, f"{tag} {nid}") for op, nid in ops if op == "put"],
        nodes_removed=[nid for op, nid in ops if op == "del"],
        edges_removed=[],
        edges_added=[],
        node_seq=0,
        seq_counter=0,
    )


OPS = st.lists(st.tuples(st.sampled_from(["put", "del"]), st.sampled_from(IDS)), max_size=10)


def _rows(table: Any) -> list[tuple[str, str]]:
    return list(zip(table["id"].to_pylist(), table["title"].to_pylist(), strict=True))


@settings(max_examples=150, deadline=None)
@given(first=OPS, second=OPS)
def test_merge_equals_one_replay_of_both(first: list, second: list) -> None:
    base_builder, delta_builder, both = DeltaBuilder(), DeltaBuilder(), DeltaBuilder()
    base_builder.apply(_change([op for op in first if op[0] == "put"], "a"))
    both.apply(_change([op for op in first if op[0] == "put"], "a"))
    delta_builder.apply(_change([op for op in second if op[0] == "put"], "b"))
    delta_builder.apply(_change([op for op in second if op[0] == "del"], "b"))
    both.apply(_change([op for op in second if op[0] == "put"], "b"))
    both.apply(_change([op for op in second if op[0] == "del"], "b"))
    base = base_builder.tables()[0]
    merged = merge(base, delta_builder.tables()[0])
    reference = both.tables()[0]
    reference = reference.filter(pc.invert(reference["removed"]))
    assert _rows(merged) == _rows(reference)


ENDS = [f"n_{i}" for i in range(10)]
EDGE_OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "del"]),
        st.sampled_from(ENDS),
        st.sampled_from(["knows", "at"]),
        st.sampled_from(ENDS),
        st.integers(0, 3),
    ),
    max_size=12,
)
#: enough edges that a merge looks up only the base rows whose source the delta names
BASE_EDGES = [
    {"from": a, "to": b, "type": t, "seqTo": 0} for a in ENDS for b in ENDS for t in ("knows", "at")
]


def _edge_change(ops: list[tuple[str, str, str, str, int]]) -> Any:
    return SimpleNamespace(
        nodes=[],
        nodes_removed=[],
        edges_removed=[(a, t, b) for op, a, t, b, _seq in ops if op == "del"],
        edges_added=[
            {"from": a, "to": b, "type": t, "seqTo": seq} for op, a, t, b, seq in ops if op == "put"
        ],
        node_seq=0,
        seq_counter=0,
    )


def _edge_rows(table: Any) -> list[tuple[Any, ...]]:
    cols = ("src", "type", "dst", "seq_to")
    return list(zip(*(table[c].to_pylist() for c in cols), strict=True))


@settings(max_examples=100, deadline=None)
@given(keep=st.integers(0, len(BASE_EDGES)), second=EDGE_OPS)
def test_an_edge_merge_equals_one_replay_of_both(keep: int, second: list) -> None:
    """With a base of up to 200 edges (past the size where only the rows whose source the
    delta names are looked up) and a delta of puts and removals, new and existing."""
    base_builder, delta_builder, both = DeltaBuilder(), DeltaBuilder(), DeltaBuilder()
    first = _edge_change([])
    first.edges_added = BASE_EDGES[:keep]
    base_builder.apply(first)
    both.apply(first)
    for op_kind in ("put", "del"):
        part = _edge_change([op for op in second if op[0] == op_kind])
        delta_builder.apply(part)
        both.apply(part)
    merged = merge(base_builder.tables()[1], delta_builder.tables()[1])
    reference = both.tables()[1]
    reference = reference.filter(pc.invert(reference["removed"]))
    assert _edge_rows(merged) == _edge_rows(reference)
