"""Builders for storage tests: node/edge dicts in the contract's JSON shape (docs/contract.md)."""

from __future__ import annotations

from typing import Any

from memgraph_plugin.storage import ChangeRecord


def node(nid: str, title: str = "", *, type: str = "event", seq: int | None = None, **kw: Any):
    out: dict[str, Any] = {
        "id": nid,
        "type": type,
        "level": "semantic",
        "title": title or nid,
        "fields": {"summary": f"summary of {title or nid}"},
        "parentId": "",
        "childrenIds": [],
        "seqTo": seq,
        "semanticDepth": 0,
        "semanticRollup": False,
        "archived": False,
    }
    out.update(kw)
    return out


def edge(src: str, dst: str, etype: str = "related") -> dict[str, Any]:
    return {"from": src, "to": dst, "type": etype}


def change(*nodes: dict, edges=(), removed=(), node_seq=0, seq=0, applied=None) -> ChangeRecord:
    return ChangeRecord(
        nodes=tuple(nodes),
        edges_added=tuple(edges),
        edges_removed=tuple(removed),
        node_seq=node_seq,
        seq_counter=seq,
        applied=len(nodes) + len(edges) if applied is None else applied,
    )
