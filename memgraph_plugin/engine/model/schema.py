"""The node-type schema: four default types, normalisation of user specs, replace or extend."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from ...errors import MemoryGraphError, bad_args
from .converter import canonical_keys, key_spellings

RELATIONS: tuple[str, ...] = (
    "related",
    "involved_in",
    "occurred_at",
    "mentions",
    "evidence",
    "updates",
    "advances",
    "partner_of",
    "family_of",
    "allied_with",
    "hostile_to",
    "mentor_of",
    "sworn_to",
    "debt_owed_to",
    "deceiving",
)
#: Relations beyond the contract's that built-in plugins write (any non-internal relation is
#: accepted): ``follows``, an event -> the event before it in the same scene (the offline
#: extractor, memgraph_plugin/extraction).
EXTRA_RELATIONS: tuple[str, ...] = ("follows",)
#: Stored once, the smaller id first.
SYMMETRIC_RELATIONS: frozenset[str] = frozenset(
    {"allied_with", "hostile_to", "family_of", "partner_of"}
)
#: Hierarchy bookkeeping: `contains` (parent -> child), `semantic_contains` (rollup -> child).
INTERNAL_EDGE_TYPES: frozenset[str] = frozenset({"contains", "semantic_contains"})
#: Edge types a drill expansion follows by default.
DEFAULT_DRILL_EDGE_TYPES: tuple[str, ...] = (
    "related",
    "involved_in",
    "mentions",
    "evidence",
    "contains",
    "updates",
    "advances",
    "occurred_at",
)
LEVELS: tuple[str, ...] = ("semantic", "episodic")


def is_diagnostic_type(type_id: str) -> bool:
    """Recall diagnostics (type ``recall`` or ``recall_*``) never enter pools or active listings."""
    t = type_id.lower()
    return t == "recall" or t.startswith("recall_")


@attrs.frozen
class Compression:
    """How a type is rolled up: `mode` is ``hierarchical`` or ``none``."""

    mode: str = "none"
    threshold: int = 6
    fan_in: int = 3
    max_depth: int = 6
    keep_recent_leaves: int = 0

    @property
    def hierarchical(self) -> bool:
        return self.mode == "hierarchical"


@attrs.frozen
class NodeTypeSpec:
    """One node type. `type` is the normalised id (lower-case, ``[a-z0-9_-]``)."""

    type: str
    table_name: str
    table_columns: tuple[str, ...] = ()
    required_columns: tuple[str, ...] = ()
    primary_key_columns: tuple[str, ...] = ()
    force_update: bool = False
    always_inject: bool = False
    editable: bool = True
    latest_only: bool = False
    level: str = "semantic"
    compression: Compression = Compression()
    embedding_columns: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    @property
    def compression_mode(self) -> str:
        return self.compression.mode

    def to_dict(self) -> dict[str, Any]:
        """The original's camelCase spec shape."""
        c = self.compression
        return {
            "id": self.type,
            "tableName": self.table_name,
            "tableColumns": list(self.table_columns),
            "requiredColumns": list(self.required_columns),
            "primaryKeyColumns": list(self.primary_key_columns),
            "forceUpdate": self.force_update,
            "alwaysInject": self.always_inject,
            "editable": self.editable,
            "latestOnly": self.latest_only,
            "level": self.level,
            "compression": {
                "mode": c.mode,
                "threshold": c.threshold,
                "fanIn": c.fan_in,
                "maxDepth": c.max_depth,
                "keepRecentLeaves": c.keep_recent_leaves,
            },
            "embeddingColumns": list(self.embedding_columns),
            "keywords": list(self.keywords),
        }


@attrs.frozen
class Schema:
    """An ordered set of node types; `get` looks a type up case-insensitively."""

    types: tuple[NodeTypeSpec, ...]
    _by_id: dict[str, NodeTypeSpec] = attrs.field(
        init=False,
        repr=False,
        eq=False,
        hash=False,
        default=attrs.Factory(lambda self: {t.type: t for t in self.types}, takes_self=True),
    )

    def get(self, type_id: str | None) -> NodeTypeSpec | None:
        if not isinstance(type_id, str):
            return None
        spec = self._by_id.get(type_id)
        if spec is None:
            spec = self._by_id.get(type_id.lower())
        return spec

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(t.type for t in self.types)

    def __iter__(self) -> Iterator[NodeTypeSpec]:
        return iter(self.types)

    def __len__(self) -> int:
        return len(self.types)

    def __contains__(self, type_id: object) -> bool:
        return isinstance(type_id, str) and self.get(type_id) is not None

    def to_list(self) -> list[dict[str, Any]]:
        return [t.to_dict() for t in self.types]


DEFAULT_SCHEMA = Schema(
    types=(
        NodeTypeSpec(
            type="event",
            table_name="event_table",
            table_columns=("summary",),
            required_columns=("summary",),
            primary_key_columns=(),
            force_update=True,
            always_inject=True,
            editable=False,
            latest_only=False,
            compression=Compression("hierarchical", 5, 3, 10, 3),
            embedding_columns=("summary",),
            keywords=("battle", "reveal", "deal", "betrayal", "event", "outcome"),
        ),
        NodeTypeSpec(
            type="character_sheet",
            table_name="character_table",
            table_columns=(
                "title",
                "aliases",
                "traits",
                "identity",
                "goal",
                "inventory",
                "language_sample",
                "addressing_user",
            ),
            required_columns=("title",),
            primary_key_columns=("title", "aliases"),
            always_inject=False,
            editable=True,
            latest_only=True,
            embedding_columns=("title", "aliases", "traits", "identity", "goal"),
            keywords=("character", "person", "who", "name"),
        ),
        NodeTypeSpec(
            type="location_state",
            table_name="location_table",
            table_columns=("title", "aliases", "controller", "danger", "resources", "state"),
            required_columns=("title",),
            primary_key_columns=("title", "aliases"),
            always_inject=False,
            editable=True,
            latest_only=True,
            embedding_columns=("title", "aliases", "controller", "state"),
            keywords=("location", "place", "where", "area"),
        ),
        NodeTypeSpec(
            type="thread",
            table_name="thread_table",
            table_columns=("title", "status", "note"),
            required_columns=("title", "status", "note"),
            primary_key_columns=("title",),
            always_inject=True,
            editable=True,
            latest_only=True,
            embedding_columns=("title", "status", "note"),
            keywords=("thread", "quest", "plot", "goal"),
        ),
    )
)

# -- normalisation -----------------------------------------------------------------------------

_ID_BAD = re.compile(r"[^a-z0-9_-]")

# accepted spellings -> canonical snake_case key
_SPEC_KEYS = key_spellings(
    "type",
    "table_name",
    "table_columns",
    "required_columns",
    "primary_key_columns",
    "force_update",
    "always_inject",
    "editable",
    "latest_only",
    "level",
    "compression",
    "embedding_columns",
    "keywords",
    id="type",
)
_COMPRESSION_KEYS = key_spellings("mode", "threshold", "fan_in", "max_depth", "keep_recent_leaves")


def normalize_type_id(raw: Any, *, where: str = "type") -> str:
    """Lower-case; characters other than ``a-z0-9_-`` become ``_``."""
    if not isinstance(raw, str) or not raw.strip():
        raise bad_args(where, f"a node type id must be a non-empty string, got {raw!r}")
    return _ID_BAD.sub("_", raw.strip().lower())


def _columns(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise bad_args(where, f"expected a list of column names, got {type(value).__name__}")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise bad_args(where, f"column names must be non-empty strings, got {item!r}")
        name = item.strip()
        if name not in out:
            out.append(name)
    return tuple(out)


def _flag(value: Any, default: bool, where: str) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise bad_args(where, f"expected true or false, got {value!r}")
    return value


def _count(value: Any, default: int, minimum: int, where: str) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad_args(where, f"expected a number, got {value!r}")
    return max(minimum, int(value))


def _compression(raw: Any, where: str) -> Compression:
    if raw is None:
        return Compression()
    if isinstance(raw, str):
        raw = {"mode": raw}
    if not isinstance(raw, Mapping):
        raise bad_args(where, f"expected a table, got {type(raw).__name__}")
    data = canonical_keys(raw, _COMPRESSION_KEYS)
    mode = data.get("mode")
    if mode is not None and not isinstance(mode, str):
        raise bad_args(f"{where}.mode", f"expected a string, got {mode!r}")
    return Compression(
        mode="hierarchical" if mode == "hierarchical" else "none",
        threshold=_count(data.get("threshold"), 6, 2, f"{where}.threshold"),
        fan_in=_count(data.get("fan_in"), 3, 2, f"{where}.fan_in"),
        # 0 is kept: a type whose rollups may not grow at all is never compacted
        max_depth=_count(data.get("max_depth"), 6, 0, f"{where}.max_depth"),
        keep_recent_leaves=_count(
            data.get("keep_recent_leaves"), 0, 0, f"{where}.keep_recent_leaves"
        ),
    )


def normalize_type_spec(raw: Any, *, index: int = 0) -> NodeTypeSpec:
    """One spec in the contract's camelCase shape (or snake_case) -> `NodeTypeSpec`."""
    where = f"schema[{index}]"
    if isinstance(raw, NodeTypeSpec):
        return raw
    if not isinstance(raw, Mapping):
        raise bad_args(where, f"a node-type spec must be a table, got {type(raw).__name__}")
    data = canonical_keys(raw, _SPEC_KEYS)
    if "type" not in data:
        raise bad_args(f"{where}.id", "missing node type id")
    type_id = normalize_type_id(data["type"], where=f"{where}.id")
    table_name = data.get("table_name")
    if table_name is None:
        table_name = f"{type_id}_table"
    elif not isinstance(table_name, str) or not table_name.strip():
        raise bad_args(f"{where}.table_name", f"expected a non-empty string, got {table_name!r}")
    columns = _columns(data.get("table_columns"), f"{where}.table_columns")
    required = _columns(data.get("required_columns"), f"{where}.required_columns")
    primary = _columns(data.get("primary_key_columns"), f"{where}.primary_key_columns")
    level = data.get("level", "semantic")
    if level not in LEVELS:
        raise bad_args(f"{where}.level", f"must be semantic or episodic, got {level!r}")
    embedding = data.get("embedding_columns")
    keywords = data.get("keywords")
    if keywords is not None and (
        isinstance(keywords, str)
        or not isinstance(keywords, (list, tuple))
        or not all(isinstance(k, str) for k in keywords)
    ):
        raise bad_args(f"{where}.keywords", "expected a list of strings")
    return NodeTypeSpec(
        type=type_id,
        table_name=table_name.strip(),
        table_columns=columns,
        required_columns=required,
        primary_key_columns=primary,
        force_update=_flag(data.get("force_update"), False, f"{where}.force_update"),
        always_inject=_flag(data.get("always_inject"), False, f"{where}.always_inject"),
        editable=_flag(data.get("editable"), True, f"{where}.editable"),
        latest_only=_flag(data.get("latest_only"), False, f"{where}.latest_only"),
        level=level,
        compression=_compression(data.get("compression"), f"{where}.compression"),
        embedding_columns=(
            columns if embedding is None else _columns(embedding, f"{where}.embedding_columns")
        ),
        keywords=tuple(k.strip().lower() for k in (keywords or ()) if k.strip()),
    )


def normalize_schema(raw: Any) -> Schema:
    """A list of specs (or a `Schema`, or ``{"types": [...]}``) -> a normalised `Schema`."""
    if isinstance(raw, Schema):
        return raw
    if isinstance(raw, Mapping) and "types" in raw:
        raw = raw["types"]
    if isinstance(raw, (str, bytes)) or not isinstance(raw, (list, tuple)):
        raise bad_args("schema", f"expected a list of node-type specs, got {type(raw).__name__}")
    if not raw:
        raise bad_args("schema", "has no node types")
    specs: list[NodeTypeSpec] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        spec = normalize_type_spec(item, index=i)
        if spec.type in seen:
            raise bad_args(f"schema[{i}].id", f"duplicate node type {spec.type!r}")
        seen.add(spec.type)
        specs.append(spec)
    return Schema(types=tuple(specs))


def extend_schema(base: Schema, extra: Any) -> Schema:
    """`base` with `extra`'s types: a type with the same id replaces, a new id is appended."""
    more = normalize_schema(extra)
    replaced = {t.type: t for t in more.types}
    merged = [replaced.pop(t.type, t) for t in base.types]
    merged.extend(t for t in more.types if t.type in replaced)
    return Schema(types=tuple(merged))


def _read_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise bad_args("schema", f"cannot read {path}: {exc}") from exc
    try:
        if path.suffix.lower() == ".toml":
            return tomllib.loads(text)
        return json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise bad_args("schema", f"{path} is not valid {path.suffix[1:] or 'JSON'}: {exc}") from exc


def load_schema(source: Any, *, base: Schema | None = None) -> Schema:
    """A schema from a TOML file (``[[types]]``), a JSON file, a list of specs, or None.

    A file (or mapping) with ``extend = true`` (or ``mode = "extend"``) extends `base`
    (default: the default schema) instead of replacing it.
    """
    if source is None:
        return base or DEFAULT_SCHEMA
    if isinstance(source, Schema):
        return source
    data: Any = source
    if isinstance(source, (str, Path)):
        data = _read_file(Path(source))
    if isinstance(data, Mapping):
        extend = data.get("extend", False) is True or data.get("mode") == "extend"
        if "types" not in data:
            raise bad_args("schema", "expected a `types` array of node-type specs")
        if extend:
            return extend_schema(base or DEFAULT_SCHEMA, data["types"])
        return normalize_schema(data["types"])
    return normalize_schema(data)


def resolve_schema(value: Any) -> Schema:
    """What the factories accept as `schema=`: None (default), a Schema, a list, or a path."""
    try:
        return load_schema(value)
    except MemoryGraphError:
        raise
    except Exception as exc:  # pragma: no cover - defensive
        raise bad_args("schema", str(exc)) from exc
