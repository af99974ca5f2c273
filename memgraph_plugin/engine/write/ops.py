"""The write ops a batch takes: their kinds, the spellings accepted for them, and the checks
that turn one raw op into its canonical form or a rejection with a code (`normalize_op`).

An op may be written with snake_case or camelCase keys, with ``{"source": {"id"|"ref": ...}}``
endpoints or flat ``source_node_id`` / ``source_ref`` keys; ids, refs, types and relations must be
short valid names, titles and field values strict JSON data within the `Limits`. A bad op raises
`OpRejected` (its code is one of `REJECTION_CODES`); `engine.batch` records it as the op's
rejection and goes on with the others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...errors import MemoryGraphError, bad_args
from ..graph.store import Store
from ..model.schema import INTERNAL_EDGE_TYPES
from ..model.values import (
    DEFAULT_LIMITS,
    Limits,
    field_name_problem,
    text_problem,
    title_problem,
    value_problem,
)

__all__ = [
    "DIRECTIONS",
    "OP_KINDS",
    "REJECTION_CODES",
    "OpRejected",
    "check_store",
    "normalize_link",
    "normalize_op",
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


def _is_map(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _is_list(value: Any) -> bool:
    """A list-like of items (a str, bytes or mapping is not)."""
    if type(value) in (list, tuple):
        return True
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, Mapping))


class OpRejected(Exception):
    """An op is rejected with `code` (`apply_batch` records it; it never escapes the batch)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _flatten_endpoint(out: dict[str, Any], key: str, id_key: str, ref_key: str) -> None:
    """``{"source": {"id"|"ref": ...}}`` -> ``source_node_id`` / ``source_ref``."""
    value = out.pop(key, None)
    if value is None:
        return
    if isinstance(value, str):
        out.setdefault(id_key, value)
        return
    if not _is_map(value):
        raise OpRejected(
            "BAD_OP", f"{key}: expected {{'id': ...}} or {{'ref': ...}}, got {value!r}"
        )
    if value.get("id") is not None:
        out.setdefault(id_key, value.get("id"))
    if value.get("ref") is not None:
        out.setdefault(ref_key, value.get("ref"))


def _normalize_keys(raw: Mapping[str, Any]) -> dict[str, Any]:
    """`raw` with every key in its canonical spelling (a canonical key wins over an alias)."""
    if _KEYS.keys().isdisjoint(raw):
        return dict(raw)  # already canonical: the usual case, checked in C
    out: dict[str, Any] = {}
    for key, value in raw.items():
        canon = _KEYS.get(key, key) if isinstance(key, str) else key
        if canon not in out or key == canon:
            out[canon] = value
    return out


def normalize_link(raw: Any, where: str) -> dict[str, Any]:
    """A link spec -> ``{target_node_id|target_ref, relation, direction}`` (relation lower-case)."""
    if not _is_map(raw):
        raise OpRejected("BAD_OP", f"{where}: a link must be a mapping, got {type(raw).__name__}")
    link = _normalize_keys(raw)
    _flatten_endpoint(link, "target", "target_node_id", "target_ref")
    target_id, target_ref = link.get("target_node_id"), link.get("target_ref")
    if target_id is None and target_ref is None:
        raise OpRejected("BAD_OP", f"{where}: missing target (target_node_id or target_ref)")
    for name, value in (("target_node_id", target_id), ("target_ref", target_ref)):
        if value is not None and (not isinstance(value, str) or not value):
            raise OpRejected(
                "BAD_OP", f"{where}.{name}: expected a non-empty string, got {value!r}"
            )
        if value is not None:
            _check_name(value, f"{where}.{name}")
    relation = link.get("relation")
    if not isinstance(relation, str) or not relation.strip():
        raise OpRejected(
            "BAD_RELATION", f"{where}.relation: expected a non-empty string, got {relation!r}"
        )
    _check_name(relation, f"{where}.relation")
    relation = relation.strip().lower()
    if relation in INTERNAL_EDGE_TYPES:
        raise OpRejected(
            "BAD_RELATION", f"{where}.relation: {relation!r} is an internal hierarchy edge type"
        )
    direction = link.get("direction") or "bidirectional"
    if direction not in DIRECTIONS:
        raise OpRejected(
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
        raise OpRejected("BAD_OP", problem)


def _optional_title(op: Mapping[str, Any], limits: Limits) -> str | None:
    """The op's ``title``: None when absent, else a string within the limits."""
    title = op.get("title")
    if title is None:
        return None
    if not isinstance(title, str):
        raise OpRejected("BAD_OP", f"title: expected a string, got {type(title).__name__}")
    problem = title_problem(title, "title", limits)
    if problem is not None:
        raise OpRejected("BAD_OP", problem)
    return title


def _check_id(op: Mapping[str, Any], key: str, *, required: bool) -> str | None:
    value = op.get(key)
    if value is None:
        if required:
            raise OpRejected("BAD_OP", f"{key}: missing")
        return None
    if not isinstance(value, str) or not value:
        raise OpRejected("BAD_OP", f"{key}: expected a non-empty string, got {value!r}")
    _check_name(value, key)
    return value


def _check_values(fields: Mapping[str, Any], where: str, limits: Limits) -> None:
    """Field names must be valid text, values strict JSON data within the size limit (stores
    are written out as JSON): BAD_OP naming the path otherwise."""
    for key, value in fields.items():
        problem = field_name_problem(key, "key", limits)
        if problem is not None:
            raise OpRejected("BAD_OP", f"{where}: {problem}")
        problem = value_problem(value, f"{where}.{key}", limits)
        if problem is not None:
            raise OpRejected("BAD_OP", problem)


def _normalize_edit(op: dict[str, Any], kind: str, limits: Limits) -> dict[str, Any]:
    """An ``edit`` op's canonical form. The original rejects a malformed edit (no ``node_id``,
    fields of the wrong kind) with ``VALIDATION_SKIP``, the code the contract lists for it."""
    node_id = _check_id(op, "node_id", required=True)
    set_fields = op.get("set_fields")
    if set_fields is not None and (
        not _is_map(set_fields) or not all(type(k) is str for k in set_fields)
    ):
        raise OpRejected("BAD_OP", "set_fields: expected a mapping of column name -> value")
    if set_fields is not None:
        _check_values(set_fields, "set_fields", limits)
    clear = op.get("clear_fields")
    if clear is not None and (
        isinstance(clear, (str, bytes))
        or not isinstance(clear, Iterable)
        or not all(isinstance(c, str) for c in clear)
    ):
        raise OpRejected("BAD_OP", "clear_fields: expected a list of column names")
    for i, name in enumerate(clear or ()):
        problem = text_problem(name, f"clear_fields[{i}]")
        if problem is not None:
            raise OpRejected("BAD_OP", problem)
    title = _optional_title(op, limits)
    type_id = op.get("type")
    if type_id is not None and not isinstance(type_id, str):
        raise OpRejected("BAD_OP", f"type: expected a string, got {type(type_id).__name__}")
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


def normalize_op(raw: Any, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """An op in any accepted spelling -> its canonical snake_case dict (raises `_Reject`)."""
    if not _is_map(raw):
        raise OpRejected("BAD_OP", f"an op must be a mapping, got {type(raw).__name__}")
    op = _normalize_keys(raw)
    kind = op.get("op")
    if kind not in OP_KINDS:
        raise OpRejected("UNKNOWN_OP", f"op: must be one of {', '.join(OP_KINDS)}; got {kind!r}")
    _flatten_endpoint(op, "source", "source_node_id", "source_ref")
    if kind == "create":
        type_id = op.get("type")
        if not isinstance(type_id, str) or not type_id.strip():
            raise OpRejected("BAD_OP", f"type: expected a non-empty string, got {type_id!r}")
        _check_name(type_id, "type")
        title = _optional_title(op, limits)
        fields = op.get("fields")
        if fields is None:
            fields = {}
        if not _is_map(fields) or not all(type(k) is str for k in fields):
            raise OpRejected("BAD_OP", "fields: expected a mapping of column name -> value")
        _check_values(fields, "fields", limits)
        ref = op.get("ref")
        if ref is not None and (not isinstance(ref, str) or not ref):
            raise OpRejected("BAD_OP", f"ref: expected a non-empty string, got {ref!r}")
        if ref is not None:
            _check_name(ref, "ref")
        links = op.get("links") or ()
        if not _is_list(links):
            raise OpRejected("BAD_OP", "links: expected a list of links")
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
        try:
            return _normalize_edit(op, kind, limits)
        except OpRejected as rejected:
            if rejected.code != "BAD_OP":
                raise
            raise OpRejected("VALIDATION_SKIP", rejected.message) from None
    if kind == "delete":
        return {"op": kind, "node_id": _check_id(op, "node_id", required=True)}
    source_id = _check_id(op, "source_node_id", required=False)
    source_ref = _check_id(op, "source_ref", required=False)
    if source_id is None and source_ref is None:
        raise OpRejected("BAD_OP", "missing source (source_node_id or source_ref)")
    if kind == "link_upsert":
        links = op.get("links")
        if not _is_list(links) or not links:
            raise OpRejected("BAD_OP", "links: expected a non-empty list of links")
        return {
            "op": kind,
            "source_node_id": source_id,
            "source_ref": source_ref,
            "links": [normalize_link(link, f"links[{i}]") for i, link in enumerate(links)],
        }
    # link_delete: one link given flat on the op
    link = normalize_link(op, "link_delete")
    return {"op": kind, "source_node_id": source_id, "source_ref": source_ref, **link}


def check_store(store: Any) -> None:
    """The store a write goes to: a `Store` (MEMORY_STORE_MISSING for None, BAD_ARGS else)."""
    if store is None:
        raise MemoryGraphError("MEMORY_STORE_MISSING", "store: no memory store (None)")
    if not isinstance(store, Store):
        raise bad_args("store", f"expected a Store, got {type(store).__name__}")
