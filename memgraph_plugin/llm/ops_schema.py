"""What an LLM extractor must answer: a JSON schema derived from the chat's node/edge schema,
and the validation (cattrs, then the schema's rules) that turns an answer into batch ops.

The answer is ``{"nodes": [{"ref", "type", "title", "fields", "links": [{"relation",
"target"}]}]}``; a link's ``target`` is the ``ref`` of another node of the answer or the id of a
node the prompt listed. Validation is all or nothing: one bad node and the whole answer is
refused with every problem listed, so a batch is never partial.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any, TypeVar

import attrs
import cattrs

from memgraph_plugin.engine.model.schema import INTERNAL_EDGE_TYPES, RELATIONS, is_diagnostic_type

from .provider import JsonSchema

SCHEMA_NAME = "memgraph_ops"
EVENT = "event"  # the type every message gets one node of (when the chat's schema has it)
REF_PREFIX = "llm:"  # refs share one batch with other extractors: ours are prefixed
_TITLE_COLUMNS = frozenset({"title", "name", "summary"})  # the batch fills these from a title
FieldValue = str | int | float | bool | list[str]
T = TypeVar("T")


class InvalidOutput(ValueError):
    """The answer does not fit: ``problems`` lists each one with its JSON path."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


@attrs.frozen
class LinkOut:
    relation: str
    target: str


@attrs.frozen
class NodeOut:
    ref: str
    type: str
    title: str = ""
    fields: dict[str, FieldValue] = attrs.Factory(dict)
    links: list[LinkOut] = attrs.Factory(list)


@attrs.frozen
class OpsOut:
    nodes: list[NodeOut]


def _strict(kind: type) -> Any:
    def structure(value: Any, _type: Any) -> Any:
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {kind.__name__}, got a boolean")
        if not isinstance(value, kind):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return structure


def _field_value(value: Any, _type: Any) -> FieldValue:
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError(f"expected a string, a number or a list of strings, got {value!r}")


converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
converter.register_structure_hook(str, _strict(str))
converter.register_structure_hook(FieldValue, _field_value)


def answer_as(data: Any, cls: type[T], shape: str) -> T:
    """`data` (a decoded JSON answer) as a `cls`; `InvalidOutput` naming each wrong path, or
    saying that the answer is not the object `shape` (``'{"nodes": [...]}'``) at all."""
    if not isinstance(data, dict):
        raise InvalidOutput([f"$: expected an object {shape}, got {type(data).__name__}"])
    try:
        return converter.structure(data, cls)
    except cattrs.BaseValidationError as exc:
        raise InvalidOutput(cattrs.transform_error(exc, path="$")) from exc


# -- the JSON schema ---------------------------------------------------------------------------


def _types(schema: Any) -> list[Any]:
    """The node types an extractor may write (diagnostic recall types left out)."""
    return [t for t in getattr(schema, "types", schema) if not is_diagnostic_type(t.type)]


def relations() -> tuple[str, ...]:
    return tuple(r for r in RELATIONS if r not in INTERNAL_EDGE_TYPES)


_VALUE = {
    "anyOf": [
        {"type": "string"},
        {"type": "number"},
        {"type": "array", "items": {"type": "string"}},
    ]
}


def _node_variant(spec: Any) -> dict[str, Any]:
    columns = list(spec.table_columns)
    required = [c for c in spec.required_columns if c not in _TITLE_COLUMNS]
    return {
        "type": "object",
        "properties": {
            "ref": {"type": "string", "description": "a short name other links can target"},
            "type": {"type": "string", "enum": [spec.type]},
            "title": {"type": "string"},
            "fields": {
                "type": "object",
                "properties": {c: _VALUE for c in columns},
                "required": required,
                "additionalProperties": False,
            },
            "links": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "relation": {"type": "string", "enum": list(relations())},
                        "target": {"type": "string"},
                    },
                    "required": ["relation", "target"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["ref", "type", "title", "fields", "links"],
        "additionalProperties": False,
    }


def ops_json_schema(schema: Any) -> JsonSchema:
    """The answer's JSON schema for a chat's schema (a `Schema` or the read API's view)."""
    variants = [_node_variant(spec) for spec in _types(schema)]
    return JsonSchema(
        SCHEMA_NAME,
        {
            "type": "object",
            "properties": {"nodes": {"type": "array", "items": {"anyOf": variants}}},
            "required": ["nodes"],
            "additionalProperties": False,
        },
    )


# -- validation ------------------------------------------------------------------------------


def _present(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list):
        return bool(value)
    return value is not None


def _check_node(
    i: int, node: NodeOut, specs: Mapping[str, Any], refs: Collection[str], known: Collection[str]
) -> list[str]:
    where = f"$.nodes[{i}]"
    problems: list[str] = []
    spec = specs.get(node.type.strip().lower())
    if spec is None:
        problems.append(f"{where}.type: {node.type!r} is not a node type ({', '.join(specs)})")
    else:
        columns = tuple(spec.table_columns)
        for key in node.fields:
            if key not in columns:
                problems.append(
                    f"{where}.fields.{key}: not a column of {spec.type} ({', '.join(columns)})"
                )
        for column in spec.required_columns:
            if _present(node.fields.get(column)):
                continue
            if column in _TITLE_COLUMNS and node.title.strip():
                continue
            problems.append(f"{where}.fields.{column}: required for {spec.type}, missing")
    allowed = set(relations())
    for j, link in enumerate(node.links):
        if link.relation.strip().lower() not in allowed:
            problems.append(
                f"{where}.links[{j}].relation: {link.relation!r} is not a relation "
                f"({', '.join(sorted(allowed))})"
            )
        if link.target not in refs and link.target not in known:
            problems.append(
                f"{where}.links[{j}].target: {link.target!r} is neither a ref of this answer "
                "nor a listed node id (dangling ref)"
            )
    return problems


def validate_ops(data: Any, schema: Any, *, known_ids: Collection[str] = ()) -> list[dict]:
    """The batch ops of a whole answer, or `InvalidOutput` listing every problem.

    ``known_ids``: node ids the prompt listed (links may target them). An answer without an
    ``event`` node is refused when the schema has the type (each message is one event).
    """
    answer = answer_as(data, OpsOut, '{"nodes": [...]}')
    specs = {s.type: s for s in _types(schema)}
    problems: list[str] = []
    refs: set[str] = set()
    for i, node in enumerate(answer.nodes):
        if not node.ref.strip():
            problems.append(f"$.nodes[{i}].ref: empty")
        elif node.ref in refs:
            problems.append(f"$.nodes[{i}].ref: {node.ref!r} is used twice")
        refs.add(node.ref)
    for i, node in enumerate(answer.nodes):
        problems.extend(_check_node(i, node, specs, refs, set(known_ids)))
    if EVENT in specs and not any(n.type.strip().lower() == EVENT for n in answer.nodes):
        problems.append("$.nodes: no event node for the message (every message gets one)")
    if problems:
        raise InvalidOutput(problems)
    return [_to_op(node, refs) for node in answer.nodes]


def _to_op(node: NodeOut, refs: Collection[str]) -> dict[str, Any]:
    links = []
    for link in node.links:
        target = (
            {"target_ref": REF_PREFIX + link.target}
            if link.target in refs
            else {"target_node_id": link.target}
        )
        links.append({**target, "relation": link.relation.strip().lower(), "direction": "outgoing"})
    return {
        "op": "create",
        "type": node.type.strip().lower(),
        "ref": REF_PREFIX + node.ref,
        "title": node.title.strip(),
        "fields": {k: v for k, v in node.fields.items() if _present(v)},
        "links": links,
    }
