"""The one write pipeline: ops in, one store transaction, a `BatchResult` out.

`apply_batch` normalises every op (`engine.ops`: snake_case or camelCase keys, checks), applies
it or records a rejection with a code, and runs the whole batch inside one `store.transaction()`: a
rejected op changes nothing, and an unexpected failure rolls every change of the batch back.
Creates, edits and deletes run first in batch order, then every link op (the links of creates
included) in batch order, so a ref defined anywhere in the batch resolves.

Choices where the docs leave room (see docs/api.md, "Write pipeline"):

- `edit` works on every type: a type's ``editable`` flag tells the extractor LLM what it may
  rewrite, while the write API is an explicit curator path (the docs' example edits an event).
- A required column is satisfied by a non-empty field value; ``title``, ``name`` and ``summary``
  columns are also satisfied by the node title.
- `delete` archives: the node stays with its edges and children (soft delete).
- Every write stamps ``seq_to`` with the batch's seq (edges too), except an `edit` in a batch run
  with ``keep_node_seq`` (a person's correction): the node keeps its place on the timeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ...errors import MemoryGraphError, bad_args
from ..index.name_index import merge_names, name_items, primary_key_values
from ..model.frozen import FrozenDict, deep_freeze
from ..model.models import Edge, EdgeKey, Node
from ..model.results import BatchResult, Rejection, RejectionError
from ..model.schema import SYMMETRIC_RELATIONS, NodeTypeSpec, Schema
from ..model.values import DEFAULT_LIMITS, INT_MAX, Limits, node_size_problem
from .ops import OpRejected, check_store, normalize_op

__all__ = ["apply_batch"]

_CONTAINERS = (list, tuple, dict, FrozenDict, set, frozenset)
_TITLE_COLUMNS = frozenset({"title", "name", "summary"})


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
        self,
        store: Any,
        schema: Schema,
        seq: int,
        limits: Limits = DEFAULT_LIMITS,
        *,
        keep_node_seq: bool = False,
    ) -> None:
        self.store = store
        self.schema = schema
        self.seq = seq
        self.limits = limits
        self.keep_node_seq = keep_node_seq
        self.refs: dict[str, str] = {}
        self.outcomes: list[_Outcome] = []
        self.extra_rejections: list[Rejection] = []
        self.added = 0
        self.removed = 0

    # ---- helpers
    def _put(self, node: Node) -> None:
        self.store.put_node(node)

    def _check_size(self, what: str, title: str, fields: Mapping[str, Any]) -> None:
        """A node's title and fields within ``max_node_bytes`` (BAD_OP otherwise)."""
        problem = node_size_problem(what, title, fields, self.limits)
        if problem is not None:
            raise OpRejected("BAD_OP", problem)

    def _active(self, node_id: str, what: str) -> Node:
        node = self.store.node(node_id)
        if node is None:
            raise OpRejected("NODE_NOT_FOUND", f"{what}: no node {node_id!r}")
        if node.archived:
            raise OpRejected("NODE_ARCHIVED", f"{what}: node {node_id!r} is archived")
        return node

    def _resolve(self, node_id: str | None, ref: str | None, what: str) -> str:
        if node_id is not None:
            return self._active(node_id, what).id
        assert ref is not None
        found = self.refs.get(ref)
        if found is None:
            raise OpRejected(
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
            raise OpRejected(
                "VALIDATION_SKIP", f"type: {op['type']!r} is not in the schema ({known})"
            )
        ref = op["ref"]
        if ref is not None and ref in self.refs:
            raise OpRejected("BAD_REF", f"ref: {ref!r} is defined twice in this batch")
        fields: dict[str, Any] = op["fields"]
        title = op["title"]
        if title is None or not title.strip():
            derived = fields.get("title") or fields.get("name")
            title = derived.strip() if isinstance(derived, str) else ""
        else:
            title = title.strip()
        missing = _missing_required(spec, title, fields)
        if missing:
            raise OpRejected(
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
        self._check_size("fields", title, fields)
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
            self._check_size(f"node {node.id!r}", new_title, frozen)
            self._put(attrs.evolve(node, title=new_title, fields=frozen, seq_to=new_seq))

    def edit(self, op: dict[str, Any]) -> str:
        node = self._active(op["node_id"], "node_id")
        if op["type"] is not None and op["type"].strip().lower() != node.type.lower():
            raise OpRejected(
                "TYPE_MISMATCH", f"type: node {node.id!r} is a {node.type!r}, not {op['type']!r}"
            )
        set_fields, clear, title = op["set_fields"], op["clear_fields"], op["title"]
        if not set_fields and not clear and title is None:
            raise OpRejected(
                "VALIDATION_SKIP", "nothing to change (set_fields, clear_fields, title)"
            )
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
                raise OpRejected(
                    "VALIDATION_SKIP",
                    f"would leave required column(s) {', '.join(missing)} of {node.type!r} empty",
                )
        frozen = FrozenDict(fields)
        if new_title != node.title or frozen != node.fields:
            self._check_size(f"node {node.id!r}", new_title, frozen)
            seq_to = node.seq_to if self.keep_node_seq else max(self.seq, node.seq_to or 0)
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
                raise OpRejected("BAD_REF", f"{what}: ref {ref!r} is not defined in this batch")
        if self.store.node(node_id) is None:
            raise OpRejected("NODE_NOT_FOUND", f"{what}: no node {node_id!r}")
        return node_id

    # ---- driver
    def run(self, ops: Sequence[Any]) -> None:
        normalised: list[dict[str, Any] | None] = []
        for raw in ops:
            outcome = _Outcome(raw)
            self.outcomes.append(outcome)
            try:
                normalised.append(normalize_op(raw, self.limits))
            except OpRejected as rej:
                outcome.error = RejectionError(rej.code, rej.message)
                normalised.append(None)
        # pass 1: nodes
        for outcome, op in zip(self.outcomes, normalised, strict=True):
            if op is None or op["op"] not in ("create", "edit", "delete"):
                continue
            try:
                outcome.node_id = getattr(self, op["op"])(op)
            except OpRejected as rej:
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
            except OpRejected as rej:
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


def apply_batch(
    store: Any,
    ops: Any,
    *,
    max_seq: int | None = None,
    schema: Schema | None = None,
    limits: Limits | None = None,
    keep_node_seq: bool = False,
) -> BatchResult:
    """Apply `ops` in one transaction; each op is applied or rejected with a code.

    `max_seq` (default: the store's seq counter) stamps every write; a larger value advances the
    counter (that is how a message's seq is recorded) when the batch changed a node or an edge:
    a batch that changes nothing (every op rejected, or applied without effect: a same-value
    edit, a duplicate link) changes nothing, its seq included. The result's `seq` is the
    counter after the batch (the seq its commit records). An unexpected exception rolls the whole
    batch back and is raised as ``MemoryGraphError("OP_FAILED")``. With `keep_node_seq` (a
    person's correction), an edited node keeps its ``seq_to``: when it happened, not when it
    was corrected, so it stays where it was on the timeline and in recency.
    """
    check_store(store)
    if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
        raise bad_args("ops", f"expected a list of ops, got {type(ops).__name__}")
    ops = list(ops)
    seq = _seq_of(max_seq, store.seq_counter)
    run = _BatchRun(
        store,
        schema if schema is not None else store.schema,
        seq,
        limits or DEFAULT_LIMITS,
        keep_node_seq=keep_node_seq,
    )
    before = store.version
    try:
        with store.transaction():
            run.run(ops)
            if seq > store.seq_counter and store.transaction_changed_graph():
                store.set_seq_counter(seq)  # a batch that changes nothing moves no seq
    except BaseException as exc:
        if isinstance(exc, MemoryGraphError) or not isinstance(exc, Exception):
            raise
        raise MemoryGraphError(
            "OP_FAILED", f"batch failed and was rolled back: {type(exc).__name__}: {exc}"
        ) from exc
    return run.result(changed=store.version != before, version=store.version, seq=store.seq_counter)
