"""Store builders for engine and API tests: `build_store` (a Store from a small dict) and a small
realistic story graph (`story_data`; the `story` fixture in tests/conftest.py builds its Store)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from memgraph_plugin.engine.graph.store import Store


def node(id: str, type: str, title: str = "", seq: int | None = None, **extra: Any) -> dict:
    """A node dict in the contract's camelCase shape (docs/contract.md) with sensible defaults."""
    out: dict[str, Any] = {
        "id": id,
        "type": type,
        "level": extra.pop("level", "semantic"),
        "title": title,
        "fields": extra.pop("fields", {}),
        "parentId": extra.pop("parentId", ""),
        "childrenIds": extra.pop("childrenIds", []),
        "seqTo": seq,
        "semanticDepth": extra.pop("semanticDepth", 0),
        "semanticRollup": extra.pop("semanticRollup", False),
        "archived": extra.pop("archived", False),
    }
    out.update(extra)
    return out


def build_store(
    nodes: Iterable[Mapping[str, Any]],
    edges: Iterable[tuple[str, str, str] | tuple[str, str, str, int]] = (),
    *,
    node_seq: int = 0,
    seq_counter: int = 0,
    schema: Any = None,
) -> Store:
    """A Store from node dicts and ``(from, type, to[, seqTo])`` edge tuples."""
    return Store.from_dict(story_dict(nodes, edges, node_seq, seq_counter), schema=schema)


def story_dict(
    nodes: Iterable[Mapping[str, Any]],
    edges: Iterable[tuple],
    node_seq: int = 0,
    seq_counter: int = 0,
) -> dict:
    edge_list = []
    for e in edges:
        d = {"from": e[0], "type": e[1], "to": e[2]}
        if len(e) > 3:
            d["seqTo"] = e[3]
        edge_list.append(d)
    return {
        "nodes": {n["id"]: dict(n) for n in nodes},
        "edges": edge_list,
        "nodeSeq": node_seq,
        "seqCounter": seq_counter,
    }


STORY_NODES = [
    node("n_1", "character_sheet", "Eileen", 2,
         fields={"title": "Eileen", "aliases": ["艾琳", "the healer"], "traits": "kind, stubborn",
                 "goal": "find the lost seal"}),
    node("n_2", "character_sheet", "Bram", 3,
         fields={"title": "Bram", "aliases": ["Bramwell"], "identity": "guild smith"}),
    node("n_3", "location_state", "Rosewood Garden", 2,
         fields={"title": "Rosewood Garden", "aliases": ["花园"], "state": "overgrown"}),
    node("n_4", "thread", "Find the lost seal", 4,
         fields={"title": "Find the lost seal", "status": "open", "note": "Bram knows more"}),
    node("n_5", "event", "Eileen meets Bram", 1, parentId="n_11",
         fields={"summary": "Eileen meets Bram at the inn"}),
    node("n_6", "event", "Garden walk", 2, parentId="n_11",
         fields={"summary": "我看见艾琳走进花园"}),
    node("n_7", "event", "Sword fight in the inn", 3, parentId="n_11",
         fields={"summary": "A sword fight breaks out in the inn"}),
    node("n_8", "event", "Bram betrays the guild", 5,
         fields={"summary": "Bram sells the guild seal"}),
    node("n_9", "event", "Eileen heals a stranger", 6,
         fields={"summary": "Eileen heals a wounded stranger"}),
    node("n_10", "event", "Night at the garden", 7,
         fields={"summary": "A quiet night in the garden"}),
    node("n_11", "event", "event Summary L1 #1", 3, childrenIds=["n_5", "n_6", "n_7"],
         semanticDepth=1, semanticRollup=True,
         fields={"summary": "Eileen and Bram meet; a fight at the inn"}),
    node("n_12", "character_sheet", "Old Ghost", 1, archived=True,
         fields={"title": "Old Ghost"}),
    node("n_13", "recall_trace", "route trace", 7, fields={"note": "diagnostic"}),
    node("n_14", "event", "Raw memory", 4, level="episodic",
         fields={"summary": "an episodic trace of the inn"}),
]

STORY_EDGES = [
    ("n_11", "contains", "n_5"),
    ("n_11", "contains", "n_6"),
    ("n_11", "contains", "n_7"),
    ("n_11", "semantic_contains", "n_5"),
    ("n_11", "semantic_contains", "n_6"),
    ("n_11", "semantic_contains", "n_7"),
    ("n_5", "involved_in", "n_1"),
    ("n_5", "involved_in", "n_2"),
    ("n_6", "occurred_at", "n_3"),
    ("n_7", "involved_in", "n_2", 3),
    ("n_8", "involved_in", "n_2"),
    ("n_8", "advances", "n_4"),
    ("n_1", "allied_with", "n_2"),
    ("n_1", "mentions", "n_12"),
    ("n_9", "mentions", "n_1"),
    ("n_10", "occurred_at", "n_3"),
    ("n_4", "related", "n_1"),
]


def story_data() -> dict:
    return copy.deepcopy(story_dict(STORY_NODES, STORY_EDGES, node_seq=14, seq_counter=7))
