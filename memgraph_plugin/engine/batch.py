"""The one write pipeline: ops in, one store transaction, a `BatchResult` out.

`apply_batch` normalises every op (snake_case or camelCase keys), validates it, applies it or
records a rejection with a code, and runs the whole batch inside one `store.transaction()`: a
rejected op changes nothing, and an unexpected failure rolls every change of the batch back.
Creates, edits and deletes run first in batch order, then every link op (the links of creates
included) in batch order, so a ref defined anywhere in the batch resolves.

Choices where the docs leave room (see docs/api.md, "Write pipeline"):

- `edit` works on every type: a type's ``editable`` flag tells the extractor LLM what it may
  rewrite, while the write API is an explicit curator path (the docs' example edits an event).
- A required column is satisfied by a non-empty field value; ``title``, ``name`` and ``summary``
  columns are also satisfied by the node title.
- `delete` archives: the node stays with its edges and children (soft delete).
- Every write stamps ``seq_to`` with the batch's seq (edges too).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ..errors import MemoryGraphError, bad_args
from .frozen import FrozenDict, deep_freeze
from .models import Edge, EdgeKey, Node
from .name_index import merge_names, name_items, primary_key_values, split_aliases
from .results import BatchResult, Rejection, RejectionError
from .schema import INTERNAL_EDGE_TYPES, SYMMETRIC_RELATIONS, NodeTypeSpec, Schema
from .store import Store
from .values import DEFAULT_LIMITS, INT_MAX, Limits, text_problem, title_problem, value_problem

__all__ = [
    "DIRECTIONS",
    "OP_KINDS",
    "REJECTION_CODES",
    "apply_batch",
    "apply_rollup",
    "build_rollup",
    "normalize_op",
    "primary_key_values",
    "split_aliases",
]

OP_KINDS: tuple[str, ...] = ("create", "edit", "delete", "link_upsert", "link_delete")
DIRECTIONS: tuple[str, ...] = ("outgoing", "incoming", "bidirectional")

#: Codes an op can be rejected with.
REJECTION_CODES: frozenset[str] = frozenset(
    {
        "BAD_OP",  # not a mapping, or a key of the wrong kind / missing
        "UNKNOWN_OP",  # `op` is not one of OP_KINDS
        "VALIDATION_SKIP",  # unknown type, required columns missing, nothing to change
        "NODE_NOT_FOUND",
        "NODE_ARCHIVED",
        "TYPE_MISMATCH",  # an edit's `type` differs from the node's
        "BAD_REF",  # a ref no create of the batch defines, or defined twice
        "BAD_RELATION",  # empty, or an internal hierarchy edge type
    }
)

# camelCase and alternative spellings -> canonical key
_KEYS: dict[str, str] = {
    "nodeId": "node_id",
    "id": "node_id",
    "setFields": "set_fields",
    "clearFields": "clear_fields",
    "sourceNodeId": "source_node_id",
    "sourceRef": "source_ref",
    "targetNodeId": "target_node_id",
    "targetRef": "target_ref",
    "parentId": "parent_id",
    "parentRef": "parent_ref",
}

_CONTAINERS = (list, tuple, dict, FrozenDict, set, frozenset)
_TITLE_COLUMNS = frozenset({"title", "name", "summary"})


def _is_map(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _is_list(value: Any) -> bool:
    """A list-like of items (a str, bytes or mapping is not)."""
    if type(value) in (list, tuple):
        return True
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, Mapping))


class _Reject(Exception):
    """Internal: an op is rejected with `code` (never escapes `apply_batch`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- normalisation ------------------------------------------------------------------------------


def _flatten_endpoint(out: dict[str, Any], key: str, id_key: str, ref_key: str) -> None:
    """``{"source": {"id"|"ref": ...}}`` -> ``source_node_id`` / ``source_ref``."""
    value = out.pop(key, None)
    if value is None:
        return
    if isinstance(value, str):
        out.setdefault(id_key, value)
        return
    if not _is_map(value):
        raise _Reject("BAD_OP", f"{key}: expected {{'id': ...}} or {{'ref': ...}}, got {value!r}")
    if value.get("id") is not None:
        out.setdefault(id_key, value.get("id"))
    if value.get("ref") is not None:
        out.setdefault(ref_key, value.get("ref"))


def _normalize_keys(raw: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        canon = _KEYS.get(key, key) if isinstance(key, str) else key
        if canon not in out or key == canon:
            out[canon] = value
    return out


def normalize_link(raw: Any, where: str) -> dict[str, Any]:
    """A link spec -> ``{target_node_id|target_ref, relation, direction}`` (relation lower-case)."""
    if not _is_map(raw):
        raise _Reject("BAD_OP", f"{where}: a link must be a mapping, got {type(raw).__name__}")
    link = _normalize_keys(raw)
    _flatten_endpoint(link, "target", "target_node_id", "target_ref")
    target_id, target_ref = link.get("target_node_id"), link.get("target_ref")
    if target_id is None and target_ref is None:
        raise _Reject("BAD_OP", f"{where}: missing target (target_node_id or target_ref)")
    for name, value in (("target_node_id", target_id), ("target_ref", target_ref)):
        if value is not None and (not isinstance(value, str) or not value):
            raise _Reject("BAD_OP", f"{where}.{name}: expected a non-empty string, got {value!r}")
        if value is not None:
            _check_name(value, f"{where}.{name}")
    relation = link.get("relation")
    if not isinstance(relation, str) or not relation.strip():
        raise _Reject(
            "BAD_RELATION", f"{where}.relation: expected a non-empty string, got {relation!r}"
        )
    _check_name(relation, f"{where}.relation")
    relation = relation.strip().lower()
    if relation in INTERNAL_EDGE_TYPES:
        raise _Reject(
            "BAD_RELATION", f"{where}.relation: {relation!r} is an internal hierarchy edge type"
        )
    direction = link.get("direction") or "bidirectional"
    if direction not in DIRECTIONS:
        raise _Reject(
            "BAD_OP",
            f"{where}.direction: must be one of {', '.join(DIRECTIONS)}; got {direction!r}",
        )
    return {
        "target_node_id": target_id,
        "target_ref": target_ref,
        "relation": relation,
        "direction": direction,
    }


def _check_name(value: str, where: str) -> None:
    """An id, ref, type or relation: valid Unicode, no control characters, short."""
    problem = text_problem(value, where, name=True)
    if problem is not None:
        raise _Reject("BAD_OP", problem)


def _check_title(value: str, where: str, limits: Limits) -> None:
    problem = title_problem(value, where, limits)
    if problem is not None:
        raise _Reject("BAD_OP", problem)


def _check_id(op: Mapping[str, Any], key: str, *, required: bool) -> str | None:
    value = op.get(key)
    if value is None:
        if required:
            raise _Reject("BAD_OP", f"{key}: missing")
        return None
    if not isinstance(value, str) or not value:
        raise _Reject("BAD_OP", f"{key}: expected a non-empty string, got {value!r}")
    _check_name(value, key)
    return value


def _check_values(fields: Mapping[str, Any], where: str, limits: Limits) -> None:
    """Field names must be valid text, values strict JSON data within the size limit (stores
    are written out as JSON): BAD_OP naming the path otherwise."""
    for key, value in fields.items():
        problem = text_problem(key, "key")
        if problem is not None:
            raise _Reject("BAD_OP", f"{where}: {problem}")
        problem = value_problem(value, f"{where}.{key}", limits)
        if problem is not None:
            raise _Reject("BAD_OP", problem)


def normalize_op(raw: Any, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """An op in any accepted spelling -> its canonical snake_case dict (raises `_Reject`)."""
    if not _is_map(raw):
        raise _Reject("BAD_OP", f"an op must be a mapping, got {type(raw).__name__}")
    op = _normalize_keys(raw)
    kind = op.get("op")
    if kind not in OP_KINDS:
        raise _Reject("UNKNOWN_OP", f"op: must be one of {', '.join(OP_KINDS)}; got {kind!r}")
    _flatten_endpoint(op, "source", "source_node_id", "source_ref")
    if kind == "create":
        type_id = op.get("type")
        if not isinstance(type_id, str) or not type_id.strip():
            raise _Reject("BAD_OP", f"type: expected a non-empty string, got {type_id!r}")
        _check_name(type_id, "type")
        title = op.get("title")
        if title is not None and not isinstance(title, str):
            raise _Reject("BAD_OP", f"title: expected a string, got {type(title).__name__}")
        if title is not None:
            _check_title(title, "title", limits)
        fields = op.get("fields")
        if fields is None:
            fields = {}
        if not _is_map(fields) or not all(type(k) is str for k in fields):
            raise _Reject("BAD_OP", "fields: expected a mapping of column name -> value")
        _check_values(fields, "fields", limits)
        ref = op.get("ref")
        if ref is not None and (not isinstance(ref, str) or not ref):
            raise _Reject("BAD_OP", f"ref: expected a non-empty string, got {ref!r}")
        if ref is not None:
            _check_name(ref, "ref")
        links = op.get("links") or ()
        if not _is_list(links):
            raise _Reject("BAD_OP", "links: expected a list of links")
        return {
            "op": kind,
            "type": type_id.strip(),
            "title": title,
            "fields": dict(fields),
            "ref": ref,
            "links": [normalize_link(link, f"links[{i}]") for i, link in enumerate(links)],
            "parent_id": _check_id(op, "parent_id", required=False),
            "parent_ref": _check_id(op, "parent_ref", required=False),
        }
    if kind == "edit":
        node_id = _check_id(op, "node_id", required=True)
        set_fields = op.get("set_fields")
        if set_fields is not None and (
            not _is_map(set_fields) or not all(type(k) is str for k in set_fields)
        ):
            raise _Reject("BAD_OP", "set_fields: expected a mapping of column name -> value")
        if set_fields is not None:
            _check_values(set_fields, "set_fields", limits)
        clear = op.get("clear_fields")
        if clear is not None and (
            isinstance(clear, (str, bytes))
            or not isinstance(clear, Iterable)
            or not all(isinstance(c, str) for c in clear)
        ):
            raise _Reject("BAD_OP", "clear_fields: expected a list of column names")
        for i, name in enumerate(clear or ()):
            problem = text_problem(name, f"clear_fields[{i}]")
            if problem is not None:
                raise _Reject("BAD_OP", problem)
        title = op.get("title")
        if title is not None and not isinstance(title, str):
            raise _Reject("BAD_OP", f"title: expected a string, got {type(title).__name__}")
        if title is not None:
            _check_title(title, "title", limits)
        type_id = op.get("type")
        if type_id is not None and not isinstance(type_id, str):
            raise _Reject("BAD_OP", f"type: expected a string, got {type(type_id).__name__}")
        if type_id is not None:
            _check_name(type_id, "type")
        return {
            "op": kind,
            "node_id": node_id,
            "set_fields": dict(set_fields) if set_fields is not None else None,
            "clear_fields": list(clear) if clear is not None else None,
            "title": title,
            "type": type_id,
        }
    if kind == "delete":
        return {"op": kind, "node_id": _check_id(op, "node_id", required=True)}
    source_id = _check_id(op, "source_node_id", required=False)
    source_ref = _check_id(op, "source_ref", required=False)
    if source_id is None and source_ref is None:
        raise _Reject("BAD_OP", "missing source (source_node_id or source_ref)")
    if kind == "link_upsert":
        links = op.get("links")
        if not _is_list(links) or not links:
            raise _Reject("BAD_OP", "links: expected a non-empty list of links")
        return {
            "op": kind,
            "source_node_id": source_id,
            "source_ref": source_ref,
            "links": [normalize_link(link, f"links[{i}]") for i, link in enumerate(links)],
        }
    # link_delete: one link given flat on the op
    link = normalize_link(op, "link_delete")
    return {"op": kind, "source_node_id": source_id, "source_ref": source_ref, **link}


# -- values -------------------------------------------------------------------------------------


def _present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if type(value) in _CONTAINERS or isinstance(value, (list, tuple, set, frozenset, Mapping)):
        return len(value) > 0
    return True


def _missing_required(spec: NodeTypeSpec, title: str, fields: Mapping[str, Any]) -> list[str]:
    missing = []
    for column in spec.required_columns:
        if _present(fields.get(column)):
            continue
        if column in _TITLE_COLUMNS and title.strip():
            continue
        missing.append(column)
    return missing


def _merge_values(old: Any, new: Any) -> Any:
    """A merge keeps every name: list-like values are unioned (order kept), others replaced."""
    if isinstance(old, (list, tuple)) and isinstance(new, (list, tuple)):
        merged = list(old)
        seen = {_freeze_key(v) for v in merged}
        for item in new:
            if _freeze_key(item) not in seen:
                merged.append(item)
                seen.add(_freeze_key(item))
        return merged
    return new


def _freeze_key(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else deep_freeze(value)


def _seq_of(max_seq: Any, counter: int) -> int:
    if max_seq is None:
        return counter
    if isinstance(max_seq, bool) or not isinstance(max_seq, int) or max_seq < 0:
        raise bad_args("max_seq", f"expected a non-negative integer or None, got {max_seq!r}")
    if max_seq > INT_MAX:
        raise bad_args("max_seq", f"{max_seq} is outside the 64-bit range")
    return max_seq


# -- the pipeline -------------------------------------------------------------------------------


@attrs.define
class _Outcome:
    op: Any
    node_id: str | None = None
    error: RejectionError | None = None


class _BatchRun:
    """One batch's state: the store, the schema, the seq and what each op did."""

    def __init__(
        self, store: Any, schema: Schema, seq: int, limits: Limits = DEFAULT_LIMITS
    ) -> None:
        self.store = store
        self.schema = schema
        self.seq = seq
        self.limits = limits
        self.refs: dict[str, str] = {}
        self.outcomes: list[_Outcome] = []
        self.extra_rejections: list[Rejection] = []
        self.added = 0
        self.removed = 0

    # ---- helpers
    def _put(self, node: Node) -> None:
        self.store.put_node(node)

    def _active(self, node_id: str, what: str) -> Node:
        node = self.store.node(node_id)
        if node is None:
            raise _Reject("NODE_NOT_FOUND", f"{what}: no node {node_id!r}")
        if node.archived:
            raise _Reject("NODE_ARCHIVED", f"{what}: node {node_id!r} is archived")
        return node

    def _resolve(self, node_id: str | None, ref: str | None, what: str) -> str:
        if node_id is not None:
            return self._active(node_id, what).id
        assert ref is not None
        found = self.refs.get(ref)
        if found is None:
            raise _Reject(
                "BAD_REF", f"{what}: ref {ref!r} is not defined by a create in this batch"
            )
        return self._active(found, what).id

    def _put_child(self, parent: Node, child: Node) -> Node:
        """`child` under `parent`: parent_id, children_ids and a `contains` edge."""
        child = attrs.evolve(child, parent_id=parent.id)
        self._put(child)
        if child.id not in parent.children_ids:
            self._put(attrs.evolve(parent, children_ids=(*parent.children_ids, child.id)))
        if self.store.add_edge(Edge(parent.id, child.id, "contains", self.seq)):
            self.added += 1
        return child

    # ---- ops
    def create(self, op: dict[str, Any]) -> str:
        spec = self.schema.get(op["type"])
        if spec is None:
            known = ", ".join(self.schema.ids)
            raise _Reject("VALIDATION_SKIP", f"type: {op['type']!r} is not in the schema ({known})")
        ref = op["ref"]
        if ref is not None and ref in self.refs:
            raise _Reject("BAD_REF", f"ref: {ref!r} is defined twice in this batch")
        fields: dict[str, Any] = op["fields"]
        title = op["title"]
        if title is None or not title.strip():
            derived = fields.get("title") or fields.get("name")
            title = derived.strip() if isinstance(derived, str) else ""
        else:
            title = title.strip()
        missing = _missing_required(spec, title, fields)
        if missing:
            raise _Reject(
                "VALIDATION_SKIP",
                f"fields: required column(s) {', '.join(missing)} missing for type {spec.type!r}",
            )
        parent: Node | None = None
        if op["parent_id"] is not None or op["parent_ref"] is not None:
            parent = self.store.node(self._resolve(op["parent_id"], op["parent_ref"], "parent"))
        if spec.latest_only:
            names = primary_key_values(spec, title, fields)
            found = self.store.name_index(self.schema).find(spec, names) if names else None
            existing = self.store.node(found) if found is not None else None
            if existing is not None:
                self._merge(spec, existing, title, fields)
                if ref is not None:
                    self.refs[ref] = existing.id
                return existing.id
        node_id = self.store.allocate_id()
        if not title and spec.type == "event":
            title = f"Summary {node_id[2:] if node_id.startswith('n_') else node_id}"
        node = Node(
            id=node_id,
            type=spec.type,
            level=spec.level,
            title=title,
            fields=fields,
            seq_to=self.seq,
        )
        if parent is not None:
            self._put_child(parent, node)
        else:
            self._put(node)
        if ref is not None:
            self.refs[ref] = node_id
        return node_id

    def _merge(self, spec: NodeTypeSpec, node: Node, title: str, fields: Mapping[str, Any]) -> None:
        """Fold a create into the latest-only `node` it names: non-empty fields are set, lists
        unioned, and no name is lost: name columns (aliases) gather the names of both, and a
        title the node is not yet known by joins them (the node keeps its own title)."""
        merged = dict(node.fields)
        name_columns = [c for c in spec.primary_key_columns if c != "title"]
        for key, value in fields.items():
            if not _present(value):
                continue
            if key in name_columns:
                merged[key] = deep_freeze(merge_names(merged.get(key), value))
            elif key == "title" and _present(merged.get(key)):
                continue  # the node keeps its title; the new one is a name (below)
            else:
                merged[key] = deep_freeze(_merge_values(merged.get(key), value))
        new_title = node.title or title
        if name_columns and title:
            known = primary_key_values(spec, new_title, merged)
            extra = [n for n in name_items(title) if n.lower() not in known]
            if extra:
                column = name_columns[0]
                merged[column] = deep_freeze(merge_names(merged.get(column), None, *extra))
        new_seq = max(self.seq, node.seq_to or 0)
        frozen = FrozenDict(merged)
        if new_title != node.title or new_seq != node.seq_to or frozen != node.fields:
            self._put(attrs.evolve(node, title=new_title, fields=frozen, seq_to=new_seq))

    def edit(self, op: dict[str, Any]) -> str:
        node = self._active(op["node_id"], "node_id")
        if op["type"] is not None and op["type"].strip().lower() != node.type.lower():
            raise _Reject(
                "TYPE_MISMATCH", f"type: node {node.id!r} is a {node.type!r}, not {op['type']!r}"
            )
        set_fields, clear, title = op["set_fields"], op["clear_fields"], op["title"]
        if not set_fields and not clear and title is None:
            raise _Reject("VALIDATION_SKIP", "nothing to change (set_fields, clear_fields, title)")
        fields = dict(node.fields)
        for key in clear or ():
            fields.pop(key, None)
        for key, value in (set_fields or {}).items():
            fields[key] = deep_freeze(value)
        new_title = node.title if title is None else title.strip()
        spec = self.schema.get(node.type)
        if spec is not None:
            before = set(_missing_required(spec, node.title, node.fields))
            missing = [c for c in _missing_required(spec, new_title, fields) if c not in before]
            if missing:
                raise _Reject(
                    "VALIDATION_SKIP",
                    f"would leave required column(s) {', '.join(missing)} of {node.type!r} empty",
                )
        frozen = FrozenDict(fields)
        if new_title != node.title or frozen != node.fields:
            seq_to = max(self.seq, node.seq_to or 0)
            self._put(attrs.evolve(node, title=new_title, fields=frozen, seq_to=seq_to))
        return node.id

    def delete(self, op: dict[str, Any]) -> str:
        node = self._active(op["node_id"], "node_id")
        self._put(attrs.evolve(node, archived=True))
        return node.id

    def _edge_keys(self, source: str, target: str, relation: str, direction: str) -> list[EdgeKey]:
        if relation in SYMMETRIC_RELATIONS:
            a, b = (source, target) if source <= target else (target, source)
            return [EdgeKey(a, relation, b)]
        keys = []
        if direction in ("outgoing", "bidirectional"):
            keys.append(EdgeKey(source, relation, target))
        if direction in ("incoming", "bidirectional"):
            keys.append(EdgeKey(target, relation, source))
        return keys

    def upsert_links(self, source: str, links: list[dict[str, Any]], what: str) -> int:
        """Resolve every link first (nothing written when one is bad), then add the edges."""
        plan: list[EdgeKey] = []
        for i, link in enumerate(links):
            target = self._resolve(
                link["target_node_id"], link["target_ref"], f"{what}[{i}].target"
            )
            plan.extend(self._edge_keys(source, target, link["relation"], link["direction"]))
        added = 0
        for key in plan:
            if key.source != key.target and self.store.add_edge(
                Edge(key.source, key.target, key.type, self.seq)
            ):
                added += 1
        self.added += added
        return added

    def link_upsert(self, op: dict[str, Any]) -> str:
        source = self._resolve(op["source_node_id"], op["source_ref"], "source")
        self.upsert_links(source, op["links"], "links")
        return source

    def link_delete(self, op: dict[str, Any]) -> str:
        source = self._endpoint(op["source_node_id"], op["source_ref"], "source")
        target = self._endpoint(op["target_node_id"], op["target_ref"], "target")
        keys = self._edge_keys(source, target, op["relation"], op["direction"])
        if op["relation"] in SYMMETRIC_RELATIONS:  # also an imported edge in the other order
            keys.append(EdgeKey(keys[0].target, keys[0].type, keys[0].source))
        for key in keys:
            if self.store.remove_edge(key):
                self.removed += 1
        return source

    def _endpoint(self, node_id: str | None, ref: str | None, what: str) -> str:
        """A link_delete end: any existing node (archived ones too: their edges can go)."""
        if node_id is None:
            assert ref is not None
            node_id = self.refs.get(ref)
            if node_id is None:
                raise _Reject("BAD_REF", f"{what}: ref {ref!r} is not defined in this batch")
        if self.store.node(node_id) is None:
            raise _Reject("NODE_NOT_FOUND", f"{what}: no node {node_id!r}")
        return node_id

    # ---- driver
    def run(self, ops: Sequence[Any]) -> None:
        normalised: list[dict[str, Any] | None] = []
        for raw in ops:
            outcome = _Outcome(raw)
            self.outcomes.append(outcome)
            try:
                normalised.append(normalize_op(raw, self.limits))
            except _Reject as rej:
                outcome.error = RejectionError(rej.code, rej.message)
                normalised.append(None)
        # pass 1: nodes
        for outcome, op in zip(self.outcomes, normalised, strict=True):
            if op is None or op["op"] not in ("create", "edit", "delete"):
                continue
            try:
                outcome.node_id = getattr(self, op["op"])(op)
            except _Reject as rej:
                outcome.error = RejectionError(rej.code, rej.message)
        # pass 2: links, after every create, so refs defined later in the batch resolve
        for index, (outcome, op) in enumerate(zip(self.outcomes, normalised, strict=True)):
            if op is None or outcome.error is not None:
                continue
            try:
                if op["op"] == "create" and op["links"]:
                    # the node as it is now: a later op of this batch may have archived it
                    source = self._active(outcome.node_id, "source").id
                    self.upsert_links(source, op["links"], "links")
                elif op["op"] in ("link_upsert", "link_delete"):
                    outcome.node_id = getattr(self, op["op"])(op)
            except _Reject as rej:
                if op["op"] == "create":  # the node stands; only its links are refused
                    link_op = {
                        "op": "link_upsert",
                        "source_node_id": outcome.node_id,
                        "links": op["links"],
                        "from_op": index,
                    }
                    self.extra_rejections.append(
                        Rejection(link_op, RejectionError(rej.code, f"links of op {index}: {rej}"))
                    )
                else:
                    outcome.error = RejectionError(rej.code, rej.message)

    def applied_any(self) -> bool:
        return any(outcome.error is None for outcome in self.outcomes)

    def result(self, *, changed: bool, version: int, seq: int) -> BatchResult:
        applied, node_ids, rejected = [], [], []
        for index, outcome in enumerate(self.outcomes):
            if outcome.error is None:
                applied.append(outcome.op)
                node_ids.append(outcome.node_id)
            else:
                message = f"op {index}: {outcome.error.message}"
                rejected.append(Rejection(outcome.op, RejectionError(outcome.error.code, message)))
        rejected.extend(self.extra_rejections)
        return BatchResult(
            applied=tuple(applied),
            rejected=tuple(rejected),
            node_ids=tuple(node_ids),
            refs=self.refs,
            changed=changed,
            added=self.added,
            removed=self.removed,
            version=version,
            seq=seq,
        )


def _check_store(store: Any) -> None:
    if store is None:
        raise MemoryGraphError("MEMORY_STORE_MISSING", "store: no memory store (None)")
    if not isinstance(store, Store):
        raise bad_args("store", f"expected a Store, got {type(store).__name__}")


def apply_batch(
    store: Any,
    ops: Any,
    *,
    max_seq: int | None = None,
    schema: Schema | None = None,
    limits: Limits | None = None,
) -> BatchResult:
    """Apply `ops` in one transaction; each op is applied or rejected with a code.

    `max_seq` (default: the store's seq counter) stamps every write; a larger value advances the
    counter (that is how a message's seq is recorded) when at least one op applied: a batch that
    applies nothing changes nothing, its seq included. The result's `seq` is the counter after
    the batch (the seq its commit records). An unexpected exception rolls the whole
    batch back and is raised as ``MemoryGraphError("OP_FAILED")``.
    """
    _check_store(store)
    if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
        raise bad_args("ops", f"expected a list of ops, got {type(ops).__name__}")
    ops = list(ops)
    seq = _seq_of(max_seq, store.seq_counter)
    run = _BatchRun(
        store, schema if schema is not None else store.schema, seq, limits or DEFAULT_LIMITS
    )
    before = store.version
    try:
        with store.transaction():
            run.run(ops)
            if seq > store.seq_counter and run.applied_any():
                store.set_seq_counter(seq)  # a batch that applies nothing moves no seq
    except BaseException as exc:
        if isinstance(exc, MemoryGraphError) or not isinstance(exc, Exception):
            raise
        raise MemoryGraphError(
            "OP_FAILED", f"batch failed and was rolled back: {type(exc).__name__}: {exc}"
        ) from exc
    return run.result(changed=store.version != before, version=store.version, seq=store.seq_counter)


# -- rollups ------------------------------------------------------------------------------------


def build_rollup(
    store: Any,
    type: str,
    child_ids: Any,
    summary: Any,
    fields: Any = None,
    *,
    seq: int | None = None,
    schema: Schema | None = None,
    limits: Limits | None = None,
) -> str:
    """Make a rollup of `type` over `child_ids` (call inside a transaction); returns its id.

    Depth ``max(child depth) + 1``, title ``"<type> Summary L<depth> #<n>"``, ``seq_to`` the newest
    child's, fields ``{"summary": summary, **fields}``; each child is reparented (a ``contains``
    edge) and gets a ``semantic_contains`` edge from the rollup.
    """
    _check_store(store)
    schema = schema if schema is not None else store.schema
    if not isinstance(type, str) or not type.strip():
        raise bad_args("type", f"expected a non-empty node type, got {type!r}")
    spec = schema.get(type.strip())
    if spec is None:
        raise bad_args("type", f"{type!r} is not in the schema ({', '.join(schema.ids)})")
    type_id = spec.type
    if isinstance(child_ids, (str, bytes)) or not isinstance(child_ids, Iterable):
        raise bad_args("child_ids", f"expected a list of node ids, got {child_ids!r}")
    ids: list[str] = []
    for child_id in child_ids:
        if not isinstance(child_id, str) or not child_id:
            raise bad_args("child_ids", f"expected node ids (strings), found {child_id!r}")
        if child_id not in ids:
            ids.append(child_id)
    if not ids:
        raise bad_args("child_ids", "is empty")
    if not isinstance(summary, str) or not summary.strip():
        raise bad_args("summary", "expected a non-empty string")
    if fields is not None and (
        not isinstance(fields, Mapping) or not all(isinstance(k, str) for k in fields)
    ):
        raise bad_args("fields", "expected a mapping of column name -> value")
    for key, value in (fields or {}).items():
        problem = value_problem(value, f"fields.{key}", limits or DEFAULT_LIMITS)
        if problem is not None:
            raise MemoryGraphError("BAD_ARGS", problem)  # "fields.<column>...: ..."
    problem = text_problem(summary, "summary")
    if problem is not None:
        raise MemoryGraphError("BAD_ARGS", problem)
    children: list[Node] = []
    for child_id in ids:
        child = store.node(child_id)
        if child is None or child.archived:
            state = "is archived" if child is not None else "is not in the store"
            raise MemoryGraphError("CHILD_NOT_FOUND", f"child_ids: {child_id!r} {state}")
        if child.parent_id:
            parent = store.node(child.parent_id)
            if parent is not None and parent.type == type_id:
                raise MemoryGraphError(
                    "CHILD_HAS_PARENT",
                    f"child_ids: {child_id!r} already has a {type_id!r} parent {parent.id!r}",
                )
        children.append(child)
    depth = max(c.semantic_depth for c in children) + 1
    seqs = [c.seq_to for c in children if c.seq_to is not None]
    rollup_id = store.allocate_id()
    number = rollup_id[2:] if rollup_id.startswith("n_") else rollup_id
    rollup = Node(
        id=rollup_id,
        type=type_id,
        level=spec.level,
        title=f"{type_id} Summary L{depth} #{number}",
        fields={"summary": summary, **(fields or {})},
        children_ids=tuple(c.id for c in children),
        seq_to=max(seqs) if seqs else seq,
        semantic_depth=depth,
        semantic_rollup=True,
    )
    put = store.put_node
    put(rollup)
    edge_seq = rollup.seq_to
    for child_id in ids:
        # Read each child afresh: leaving an old parent that is itself among the children
        # (of another type) has just rewritten that parent's children_ids.
        child = store.node(child_id)
        if child.parent_id:  # leave the old parent (of another type): keep both sides agreeing
            old = store.node(child.parent_id)
            if old is not None:
                kept = tuple(c for c in old.children_ids if c != child.id)
                put(attrs.evolve(old, children_ids=kept))
            for etype in ("contains", "semantic_contains"):  # the latter from an old rollup
                store.remove_edge(EdgeKey(child.parent_id, etype, child.id))
        put(attrs.evolve(child, parent_id=rollup_id))
        store.add_edge(Edge(rollup_id, child.id, "contains", edge_seq))
        store.add_edge(Edge(rollup_id, child.id, "semantic_contains", edge_seq))
    return rollup_id


def apply_rollup(
    store: Any,
    type: str,
    child_ids: Any,
    summary: Any,
    fields: Any = None,
    *,
    schema: Schema | None = None,
    limits: Limits | None = None,
) -> tuple[str, bool]:
    """`build_rollup` in its own transaction (all or nothing); returns ``(rollup_id, changed)``."""
    _check_store(store)
    schema = schema if schema is not None else store.schema
    before = store.version
    with store.transaction():
        rollup_id = build_rollup(
            store,
            type,
            child_ids,
            summary,
            fields,
            seq=store.seq_counter,
            schema=schema,
            limits=limits,
        )
    return rollup_id, store.version != before
