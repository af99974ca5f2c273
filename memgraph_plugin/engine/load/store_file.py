"""A store file (the contract's JSON shape) read and checked whole before an import touches a chat.

`read_store_file` turns bytes into a checked store dict or raises `StoreFileError`, whose lines
read ``<file>: <path.to.field>: <what is wrong>`` (every problem found, up to `MAX_PROBLEMS`):
bad UTF-8, invalid JSON (NaN / Infinity included), nesting too deep to read, a wrong shape or
type, a dangling edge end, child, parent or ``supersededBy``, an id with a control character, a
number outside 64 bits, a value over the size limits. `anchor_store` re-anchors a store to the
chat's message seq, so the chat's next answer never reads the import as "messages were deleted".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from host.collector_pause import gc_paused
from host.echoed import capped

from ..model.converter import canonical_keys
from ..model.json_records import NODE_KEYS as _NODE_KEYS
from ..model.values import (
    DEFAULT_LIMITS,
    INT_MAX,
    Limits,
    field_name_problem,
    node_size_problem,
    text_problem,
    title_problem,
    value_problem,
)
from .import_hierarchy import contains_problems, parent_problems
from .import_pass import checked_normal_store
from .store_import import (
    TOP_KEYS,
    NormalStore,
    message_shifted,
    normalised_store,
    store_is_clean,
)

MAX_PROBLEMS = 20
_EDGE_KEYS = frozenset({"from", "to", "source", "target", "type", "seqTo", "seq_to"})


class StoreFileError(Exception):
    """A store file that cannot be imported: `problems` are ``path: what is wrong`` strings."""

    def __init__(self, source: str, problems: list[str]) -> None:
        problems = [capped(p) for p in problems]  # a 100k-character id is shown cut short
        super().__init__(f"{source}: {problems[0]}" if problems else source)
        self.source = source
        self.problems = problems

    def lines(self) -> list[str]:
        """One ``<file>: <path>: <what>`` line per problem."""
        return [f"{self.source}: {p}" for p in self.problems]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (JSON has no NaN or Infinity)")


def parse_json(raw: bytes, source: str) -> Any:
    """`raw` as strict JSON (UTF-8; no NaN / Infinity; no key twice in one object: a node id
    given twice would silently keep the last); `StoreFileError` with one line if not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StoreFileError(source, [f"not UTF-8 text (byte {exc.start})"]) from None
    twice: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)  # in C; a key given twice shows as fewer keys than pairs
        if len(out) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    twice.append(key)
                seen.add(key)
        return out

    try:
        data = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=pairs)
        if twice:
            nodes = data.get("nodes") if isinstance(data, dict) else None
            raise StoreFileError(
                source,
                [
                    f"nodes.{key}: duplicate node id {key!r} (given twice in the file)"
                    if isinstance(nodes, dict) and key in nodes
                    else f"duplicate key {key!r} in one JSON object"
                    for key in dict.fromkeys(twice)
                ],
            )
        return data
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise StoreFileError(source, [f"{where}: not valid JSON: {exc.msg}"]) from None
    except RecursionError:
        raise StoreFileError(source, ["nested too deeply to read (not a store)"]) from None
    except ValueError as exc:  # a NaN / Infinity constant
        raise StoreFileError(source, [str(exc)]) from None


def read_store_file(raw: bytes, source: str, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Parse and check a whole store file; the store dict, or `StoreFileError` listing every
    problem found."""
    data = parse_json(raw, source)
    with gc_paused():  # the usual file: one quick pass (store_import.py)
        if store_is_clean(data, limits):
            return data
        problems = store_problems(data, limits)
    if problems:
        raise StoreFileError(source, problems)
    return data


def read_normal_store(raw: bytes, source: str, limits: Limits = DEFAULT_LIMITS) -> NormalStore:
    """``normalised_store(read_store_file(raw, source, limits))``: the usual file checked and
    put in the normal form in one pass (`import_pass.checked_normal_store`); any other is
    checked by `store_problems` (`StoreFileError` listing every problem) and normalised."""
    data = parse_json(raw, source)
    with gc_paused():
        store = checked_normal_store(data, limits)
        if store is not None:
            return store
        problems = store_problems(data, limits)
        if problems:
            raise StoreFileError(source, problems)
        return normalised_store(data)


def _int_problem(value: Any, where: str, *, minimum: int | None = None) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{where}: expected an integer, got {type(value).__name__}"
    if value > INT_MAX or value < -INT_MAX - 1:
        return f"{where}: integer {value} is outside the 64-bit range"
    if minimum is not None and value < minimum:
        return f"{where}: must be >= {minimum}, got {value}"
    return None


def _name_problem(value: Any, where: str) -> str | None:
    if not isinstance(value, str) or not value:
        return f"{where}: expected a non-empty string, got {type(value).__name__}"
    return text_problem(value, where, name=True)


class _Checker:
    """Collects problems, stopping at `MAX_PROBLEMS`."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.problems: list[str] = []

    def add(self, problem: str | None) -> None:
        if problem is not None and len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)

    def node(self, key: str | None, raw: Any, where: str) -> str | None:
        """Check one node; its id when usable (references to it are then checked)."""
        if not isinstance(raw, Mapping):
            self.add(f"{where}: expected a node object, got {type(raw).__name__}")
            return None
        d = canonical_keys(raw, _NODE_KEYS)
        for extra in sorted(set(map(str, raw)) - set(_NODE_KEYS)):
            self.add(f"{where}.{extra}: unknown node key")
        nid = d.get("id", key)
        problem = _name_problem(nid, f"{where}.id")
        self.add(problem)
        if problem is None and key is not None and nid != key:
            self.add(f"{where}.id: {nid!r} does not match its key {key!r}")
        self.add(_name_problem(d.get("type"), f"{where}.type"))
        for name, camel in (("level", "level"), ("title", "title")):
            value = d.get(name)
            if value is not None and not isinstance(value, str):
                self.add(f"{where}.{camel}: expected a string, got {type(value).__name__}")
        title = d.get("title")
        if isinstance(title, str):
            self.add(title_problem(title, f"{where}.title", self.limits))
        fields = d.get("fields")
        if fields is not None and not isinstance(fields, Mapping):
            self.add(f"{where}.fields: expected an object, got {type(fields).__name__}")
        elif fields:
            for column, value in fields.items():
                if isinstance(column, str):
                    self.add(field_name_problem(column, f"{where}.fields", self.limits))
                self.add(value_problem(value, f"{where}.fields.{column}", self.limits))
            self.add(
                node_size_problem(
                    where, title if isinstance(title, str) else "", fields, self.limits
                )
            )
        for name, camel in (("seq_to", "seqTo"), ("semantic_depth", "semanticDepth")):
            if d.get(name) is not None:
                self.add(_int_problem(d[name], f"{where}.{camel}", minimum=0))
        flags = (
            ("semantic_rollup", "semanticRollup"),
            ("archived", "archived"),
            ("pinned", "pinned"),
        )
        for name, camel in flags:
            if d.get(name) is not None and not isinstance(d[name], bool):
                self.add(f"{where}.{camel}: expected true or false")
        return nid if problem is None else None

    def references(self, nid: str, raw: Mapping[str, Any], where: str, ids: set[str]) -> None:
        d = canonical_keys(raw, _NODE_KEYS)
        parent = d.get("parent_id")
        if parent not in (None, ""):
            if not isinstance(parent, str):
                self.add(f"{where}.parentId: expected a string, got {type(parent).__name__}")
            elif parent not in ids:
                self.add(f"{where}.parentId: no node {parent!r}")
        children = d.get("children_ids")
        if children is not None:
            if not isinstance(children, list):
                self.add(f"{where}.childrenIds: expected a list of ids")
            else:
                for i, child in enumerate(children):
                    if not isinstance(child, str) or child not in ids:
                        self.add(f"{where}.childrenIds[{i}]: no node {child!r}")
        sup = d.get("superseded_by")
        if sup is not None and (not isinstance(sup, str) or (sup and sup not in ids)):
            self.add(f"{where}.supersededBy: no node {sup!r}")

    def edge(self, index: int, raw: Any, ids: set[str]) -> None:
        where = f"edges[{index}]"
        if not isinstance(raw, Mapping):
            self.add(f"{where}: expected an edge object, got {type(raw).__name__}")
            return
        for extra in sorted(set(map(str, raw)) - _EDGE_KEYS):
            self.add(f"{where}.{extra}: unknown edge key")
        ends = []
        for name, alias in (("from", "source"), ("to", "target")):
            value = raw.get(name, raw.get(alias))
            problem = _name_problem(value, f"{where}.{name}")
            self.add(problem)
            if problem is None and value not in ids:
                self.add(f"{where}.{name}: no node {value!r}")
            ends.append(value)
        self.add(_name_problem(raw.get("type"), f"{where}.type"))
        if ends[0] == ends[1] and isinstance(ends[0], str):
            self.add(f"{where}: an edge from a node to itself")
        seq = raw.get("seqTo", raw.get("seq_to"))
        if seq is not None:
            self.add(_int_problem(seq, f"{where}.seqTo", minimum=0))


def store_problems(data: Any, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """Every problem (``path: what``) keeping `data` from being imported as a store."""
    check = _Checker(limits)
    if not isinstance(data, Mapping):
        return [
            "expected a JSON object (a store: nodes, edges, nodeSeq, seqCounter), "
            f"got {type(data).__name__}"
        ]
    for key in sorted(set(map(str, data)) - TOP_KEYS):
        check.add(f"{key}: unknown key (a store has nodes, edges, nodeSeq, seqCounter)")
    if "nodes" not in data:
        check.add("nodes: missing (a store has nodes and edges)")
    for camel, snake in (("nodeSeq", "node_seq"), ("seqCounter", "seq_counter")):
        value = data.get(camel, data.get(snake))
        if value is not None:
            check.add(_int_problem(value, camel, minimum=0))
    raw_nodes = data.get("nodes") or {}
    if isinstance(raw_nodes, Mapping):
        items = [(str(k), f"nodes.{k}", v) for k, v in raw_nodes.items()]
        keyed = True
    elif isinstance(raw_nodes, list):
        items = [(None, f"nodes[{i}]", v) for i, v in enumerate(raw_nodes)]
        keyed = False
    else:
        check.add(f"nodes: expected an object of id -> node, got {type(raw_nodes).__name__}")
        items, keyed = [], True
    ids: set[str] = set()
    usable: list[tuple[str, str, Any]] = []
    for key, where, raw in items:
        nid = check.node(key if keyed else None, raw, where)
        if nid is None:
            continue
        if nid in ids:
            check.add(f"{where}.id: duplicate node id {nid!r}")
        ids.add(nid)
        usable.append((nid, where, raw))
    parents: dict[str, str] = {}
    places: dict[str, str] = {}
    for nid, where, raw in usable:
        check.references(nid, raw, where, ids)
        parent = canonical_keys(raw, _NODE_KEYS).get("parent_id")
        places[nid] = where
        if isinstance(parent, str) and parent in ids:
            parents[nid] = parent
    for problem in parent_problems(parents, places):
        check.add(problem)
    raw_edges = data.get("edges")
    if raw_edges is None:
        raw_edges = []
    if not isinstance(raw_edges, list):
        check.add(f"edges: expected a list, got {type(raw_edges).__name__}")
    else:
        for index, raw in enumerate(raw_edges):
            check.edge(index, raw, ids)
        for problem in contains_problems(enumerate(raw_edges), parents):
            check.add(problem)
    return check.problems


def anchor_store(
    data: Mapping[str, Any], seq: int, messages: int | None = None
) -> dict[str, Any]:
    """`data` (a normalised store dict) re-anchored at message seq `seq`: its seq counter becomes
    `seq` and every ``seqTo`` moves down by how far the store's counter was past `seq` (never
    below 0), so the newest imported write counts as made at message `seq`. A store whose counter
    is not past `seq` keeps its ``seqTo`` values.

    With `messages` (how many messages the destination chat holds), the ``message`` field of
    imported nodes (the index of the source chat's message an event was extracted from) moves
    down the same way, so that the newest one is at most the destination's newest message: a
    message chatted after the import is never read as one the graph already extracted (which
    would roll the import back). An index that would fall below 0 goes to ``source_message``."""
    counter = int(data.get("seqCounter") or 0)
    shift = max(0, counter - seq)

    def moved(value: Any) -> Any:
        return value if value is None or not shift else max(0, int(value) - shift)

    indices = [
        node["fields"]["message"]
        for node in data.get("nodes", {}).values()
        if _message_field(node) is not None
    ]
    message_shift = 0
    if messages is not None and indices:
        message_shift = max(0, max(indices) - (int(messages) - 1))

    def fields_of(node: Mapping[str, Any]) -> Any:
        index = _message_field(node)
        if not message_shift or index is None:
            return node.get("fields")
        return message_shifted(node["fields"], index, message_shift)

    nodes = {}
    for nid, node in data.get("nodes", {}).items():
        node = dict(node)
        if shift:
            node["seqTo"] = moved(node.get("seqTo"))
        if message_shift and _message_field(node) is not None:
            node["fields"] = fields_of(node)
        nodes[nid] = node
    edges = []
    for edge in data.get("edges", []):
        edge = dict(edge)
        if shift and edge.get("seqTo") is not None:
            edge["seqTo"] = moved(edge["seqTo"])
        edges.append(edge)
    return {**data, "nodes": nodes, "edges": edges, "seqCounter": int(seq)}


def _message_field(node: Mapping[str, Any]) -> int | None:
    """A node's ``fields.message`` when it is a message index (an int, not a bool)."""
    fields = node.get("fields")
    value = fields.get("message") if isinstance(fields, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
