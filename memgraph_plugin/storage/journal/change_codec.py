"""Conversions between engine records, journal changes and the contract's JSON store shape."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from memgraph_plugin.engine.load.store_import import PlainStore
from memgraph_plugin.storage.format.json_shapes import (
    EdgeKey,
    _plain_edge_json,
    edge_key,
    edge_to_json,
    node_to_json,
    thaw,
)
from memgraph_plugin.storage.journal.snapshot_refs import ref_change, ref_payload
from memgraph_plugin.storage.persistence import ChangeRecord, VectorBlock


def changeset_to_change(
    changeset: Any, *, applied: int, kind: str = "write", vectors: VectorBlock | None = None
) -> ChangeRecord:
    """The engine's `Changeset` as a journal change."""
    return ChangeRecord(
        nodes=tuple(node_to_json(n) for n in changeset.nodes),
        nodes_removed=tuple(getattr(changeset, "nodes_removed", ())),
        edges_added=tuple(edge_to_json(e) for e in changeset.edges_added),
        edges_removed=tuple((str(k[0]), str(k[1]), str(k[2])) for k in changeset.edges_removed),
        node_seq=int(changeset.node_seq),
        seq_counter=int(changeset.seq_counter),
        applied=applied,
        kind=kind,
        vectors=vectors,
    )


def empty_state() -> dict[str, Any]:
    """The store dict of a chat that has never been written."""
    return {"nodes": {}, "edges": [], "nodeSeq": 0, "seqCounter": 0}


def change_payload(change: ChangeRecord) -> str:
    """The journal's JSON text for a change (vectors travel in their own columns; a provenance
    note, when there is one, as ``note``). A change stored in a snapshot (`change.snapshot`):
    a pointer to it (`snapshot_refs.py`), not its nodes and edges."""
    if change.snapshot is not None:
        return _ENCODER.encode(ref_payload(change, change.snapshot))
    payload: dict[str, Any] = {
        "nodes": list(change.nodes),  # frozen containers: `_thawed` as the encoder meets them
        "nodesRemoved": list(change.nodes_removed),
        "edgesAdded": list(change.edges_added),
        "edgesRemoved": [list(k) for k in change.edges_removed],
        "nodeSeq": change.node_seq,
        "seqCounter": change.seq_counter,
    }
    if change.note:
        payload["note"] = change.note
    return _ENCODER.encode(payload)


def _thawed(value: Any) -> Any:
    """What `thaw` makes of a container JSON does not encode itself (a frozen mapping, a set):
    the encoder calls this only for those, so plain dicts and lists are not copied first (an
    import's change holds 100k nodes). Tuples are encoded as lists, as `thaw` makes them."""
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return thaw(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_thawed)


def change_from_payload(text: str, *, applied: int = 0, kind: str = "write") -> ChangeRecord:
    """Inverse of `change_payload`."""
    raw = json.loads(text)
    if "snapshot" in raw:
        return ref_change(raw, applied=applied, kind=kind)
    return ChangeRecord(
        nodes=tuple(raw.get("nodes", ())),
        nodes_removed=tuple(raw.get("nodesRemoved", ())),
        edges_added=tuple(raw.get("edgesAdded", ())),
        edges_removed=tuple(tuple(k) for k in raw.get("edgesRemoved", ())),
        node_seq=int(raw.get("nodeSeq", 0)),
        seq_counter=int(raw.get("seqCounter", 0)),
        applied=applied,
        kind=kind,
        note=str(raw.get("note", "") or ""),
    )


class StateBuilder:
    """Replays changes onto a store dict; idempotent (replaying a change twice changes nothing)."""

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        data = data if data is not None else empty_state()
        self.nodes: dict[str, Any] = dict(data.get("nodes", {}))
        self.edges: dict[EdgeKey, dict[str, Any]] = {}
        edges = self.edges
        for edge in data.get("edges", ()):
            e = _plain_edge_json(edge)
            if e is None:
                e = edge_to_json(edge)
                edges[edge_key(e)] = e
            else:
                edges[(e["from"], e["type"], e["to"])] = e
        self.node_seq = int(data.get("nodeSeq", data.get("node_seq", 0)) or 0)
        self.seq_counter = int(data.get("seqCounter", data.get("seq_counter", 0)) or 0)

    def apply(self, change: ChangeRecord) -> None:
        for node in change.nodes:
            self.nodes[str(node["id"])] = node
        for node_id in change.nodes_removed:
            self.nodes.pop(node_id, None)
        for key in change.edges_removed:
            self.edges.pop(tuple(key), None)  # type: ignore[arg-type]
        for edge in change.edges_added:
            self.edges[edge_key(edge)] = dict(edge)
        self.node_seq = change.node_seq
        self.seq_counter = change.seq_counter

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": dict(self.nodes),
            "edges": list(self.edges.values()),
            "nodeSeq": self.node_seq,
            "seqCounter": self.seq_counter,
        }


def diff_states(
    current: Mapping[str, Any], target: Mapping[str, Any], *, kind: str
) -> ChangeRecord:
    """The change that turns store dict `current` into `target` (for rollback and import)."""
    if not current.get("nodes") and not current.get("edges"):
        return _everything(target, kind=kind)
    cur = StateBuilder(current)
    tgt = StateBuilder(target)
    changed = tuple(
        n for nid, n in tgt.nodes.items() if nid not in cur.nodes or cur.nodes[nid] != n
    )
    removed = tuple(nid for nid in cur.nodes if nid not in tgt.nodes)
    added = tuple(e for k, e in tgt.edges.items() if cur.edges.get(k) != e)
    gone = tuple(k for k in cur.edges if k not in tgt.edges)
    return ChangeRecord(
        nodes=changed,
        nodes_removed=removed,
        edges_added=added,
        edges_removed=gone,
        node_seq=tgt.node_seq,
        seq_counter=tgt.seq_counter,
        applied=len(changed) + len(removed) + len(added) + len(gone),
        kind=kind,
    )


def _everything(target: Mapping[str, Any], *, kind: str) -> ChangeRecord:
    """`diff_states` from an empty graph: every node and edge of `target` (edges by key, the
    last of a repeated key winning where `StateBuilder` keeps it; an import's `PlainStore`
    has them so already: taken as they are)."""
    nodes = tuple(dict(target.get("nodes", {})).values())
    if isinstance(target, PlainStore):
        edges = tuple(target["edges"])
    else:
        by_key: dict[EdgeKey, Any] = {}
        for edge in target.get("edges", ()):
            e = edge if _is_edge_json(edge) else (_plain_edge_json(edge) or edge_to_json(edge))
            by_key[(e["from"], e["type"], e["to"])] = e
        edges = tuple(by_key.values())
    counters = StateBuilder({**target, "nodes": {}, "edges": []})
    return ChangeRecord(
        nodes=nodes,
        nodes_removed=(),
        edges_added=edges,
        edges_removed=(),
        node_seq=counters.node_seq,
        seq_counter=counters.seq_counter,
        applied=len(nodes) + len(edges),
        kind=kind,
    )


def _is_edge_json(edge: Any) -> bool:
    """Whether `edge` is already what `edge_to_json` makes of it (a dict of string ends and
    type, ``seqTo`` only when set): taken as it is."""
    if type(edge) is not dict:
        return False
    keys = edge.keys()
    return (
        (len(keys) == 3 or (len(keys) == 4 and edge.get("seqTo") is not None))
        and type(edge.get("from")) is str
        and type(edge.get("to")) is str
        and type(edge.get("type")) is str
    )


def node_ids(nodes: Iterable[Mapping[str, Any]]) -> list[str]:
    return [str(n["id"]) for n in nodes]
