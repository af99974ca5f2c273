"""A store dict made ready for an import in one quick pass per node and edge.

Checking a store file node by node (`store_file.store_problems`), loading it into a `Store`
and writing it back (`from_dict(...).to_dict()`, the normal form), then re-anchoring it
(`store_file.anchor_store`) would make Python objects for every node three times. Here:

- `store_is_clean` answers "would `store_problems` find nothing?" with cheap checks of the usual
  shapes; anything unusual answers False, and the caller runs `store_problems` for the precise
  ``path: what`` lines (so the errors stay the same).
- `normalised_store` is ``anchor_store(Store.from_dict(data).to_dict(), seq, messages)`` for a
  checked store, without a `Store`: a node already in the normal form is taken as it is, any
  other through the engine's own decoder and encoder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Mapping
from typing import Any

from ..model.json_records import NORMAL_NODE_KEYS, edge_from_dict, node_from_dict, node_to_dict
from ..model.schema import SYMMETRIC_RELATIONS
from ..model.values import (
    DEFAULT_LIMITS,
    INT_MAX,
    MAX_NAME_CHARS,
    Limits,
    node_size_problem,
    text_problem,
    value_problem,
)
from .import_hierarchy import parent_problems

__all__ = [
    "TOP_KEYS",
    "NormalStore",
    "PlainStore",
    "anchored_store",
    "normalised_store",
    "keep_normal_edge",
    "node_links",
    "store_is_clean",
]

_INT_MIN = -INT_MAX - 1
#: the keys of a store dict
TOP_KEYS = frozenset({"nodes", "edges", "nodeSeq", "node_seq", "seqCounter", "seq_counter"})
_NORMAL_KEYS = frozenset(NORMAL_NODE_KEYS)  # a node in the normal form, optional keys aside
_NORMAL_KEYS_SUP = _NORMAL_KEYS | {"supersededBy"}
#: keys the quick check reads (the camelCase spellings `store_problems` knows)
_QUICK_NODE_KEYS = _NORMAL_KEYS | {"supersededBy", "pinned"}
_EDGE_KEYS = frozenset({"from", "to", "type", "seqTo"})
_ID_NUM = re.compile(r"n_(\d+)")
_NATIVE_SCALARS = frozenset({str, int, float, bool, type(None)})
_STR_TYPE = {str}


def _name_ok(value: Any) -> bool:
    """A non-empty printable ASCII name within `MAX_NAME_CHARS` (others: the full check)."""
    return (
        type(value) is str
        and 0 < len(value) <= MAX_NAME_CHARS
        and value.isascii()
        and value.isprintable()
    )


def _count_ok(value: Any) -> bool:
    """None, or an int (not a bool) in 0..INT_MAX."""
    return value is None or (type(value) is int and 0 <= value <= INT_MAX)


def _fields_ok(fields: Any, title: str, limits: Limits) -> int:
    """Whether a node's fields and title pass `store_problems`' field, title and size checks:
    0 no (or not sure), 2 yes with every value JSON-native without a float (a scalar, or a
    list of plain ASCII texts), 1 yes (some value checked by `value_problem`, which
    `import_pass` then tests for the normal form). The node's size is added up as
    `node_size_problem` measures it, which is asked only when it is not sure."""
    if len(title) > limits.max_title_chars:
        return 0
    if title.isascii():
        size = len(title) + 2
    elif text_problem(title, "t") is not None:
        return 0
    else:  # valid Unicode (no lone surrogate): its UTF-8 length as `node_size_problem` takes it
        size = len(title.encode("utf-8")) + 2
    if fields is None:
        return 2
    if type(fields) is not dict:
        return 0
    short = limits.max_field_bytes
    # a text this short is measured at its length and quotes by both `value_problem` and
    # `node_size_problem` (`_json_size`); a longer one (a JSON escape takes up to 6 bytes) is
    # measured by `node_size_problem` as JSON writes it
    short_text = min(short, limits.max_node_bytes)
    name_limit = limits.max_field_name_chars
    scalars = 2
    for key, value in fields.items():
        if type(key) is not str or len(key) > name_limit or not key.isascii():
            return 0
        kind = type(value)
        if kind is str and len(value) * 6 + 2 <= short_text:
            if not value.isascii() and text_problem(value, "f") is not None:
                return 0
            if size >= 0:  # (`_json_size` of a short text: its length and the quotes)
                size += len(key) + 6 + len(value)
            continue
        if kind is int and _INT_MIN <= value <= INT_MAX and short >= 32:
            if size >= 0:
                size += len(key) + 4 + len(str(value))
            continue
        if (kind is bool or value is None) and short >= 32:
            if size >= 0:
                size += len(key) + 9
            continue
        if kind is list:
            texts = _text_list_size(value)
            if 0 <= texts <= short:
                if size >= 0:
                    size += len(key) + 4 + texts
                continue
        if value_problem(value, "f", limits) is not None:
            return 0
        size = -1
        scalars = 1
    if size < 0 or size > limits.max_node_bytes:
        return scalars if node_size_problem("n", title, fields, limits) is None else 0
    return scalars


def _text_list_size(value: list[Any]) -> int:
    """The size of a list of ASCII texts with nothing JSON escapes (no quote, backslash or
    control character) as ``json.dumps`` writes it (``["a", "b"]``): what `value_problem`
    and `node_size_problem` measure it at; -1 for any other list."""
    if not value:
        return 2
    if set(map(type, value)) != _STR_TYPE:
        return -1
    joined = "".join(value)
    if not (joined.isascii() and joined.isprintable()) or '"' in joined or "\\" in joined:
        return -1
    return len(joined) + 4 * len(value)


def node_links(
    get: Callable[[str], Any], nid: str, ids: Container[str], parents: dict[str, str]
) -> tuple[Any, Any, Any] | None:
    """A node's ``(parentId, childrenIds, supersededBy)`` when each is absent or names a node of
    the store (`ids`; the parent noted in `parents`), else None (the quick passes' check)."""
    parent = get("parentId")
    if parent not in (None, ""):
        if type(parent) is not str or parent not in ids:
            return None
        parents[nid] = parent
    children = get("childrenIds")
    if children is not None:
        if type(children) is not list:
            return None
        for child in children:
            if type(child) is not str or child not in ids:
                return None
    sup = get("supersededBy")
    if sup is not None and (type(sup) is not str or (sup and sup not in ids)):
        return None
    return parent, children, sup


def store_is_clean(data: Any, limits: Limits = DEFAULT_LIMITS) -> bool:
    """True when `store_file.store_problems(data, limits)` would find no problem, decided with
    cheap checks of the usual shapes; False for a problem or anything unusual (then ask
    `store_problems`, which names each problem)."""
    if type(data) is not dict or not data.keys() <= TOP_KEYS or "nodes" not in data:
        return False
    for camel, snake in (("nodeSeq", "node_seq"), ("seqCounter", "seq_counter")):
        if not _count_ok(data.get(camel, data.get(snake))):
            return False
    raw_nodes = data.get("nodes") or {}
    raw_edges = data.get("edges")
    if type(raw_nodes) is not dict or (raw_edges is not None and type(raw_edges) is not list):
        return False
    ids = raw_nodes.keys()
    parents: dict[str, str] = {}
    for key, raw in raw_nodes.items():
        if type(raw) is not dict or not raw.keys() <= _QUICK_NODE_KEYS:
            return False
        get = raw.get
        nid = get("id", key)
        if nid != key or not _name_ok(nid) or not _name_ok(get("type")):
            return False
        level, title = get("level"), get("title")
        if (level is not None and type(level) is not str) or (
            title is not None and type(title) is not str
        ):
            return False
        if not _fields_ok(get("fields"), title or "", limits):
            return False
        if not (_count_ok(get("seqTo")) and _count_ok(get("semanticDepth"))):
            return False
        for flag in ("semanticRollup", "archived", "pinned"):
            value = get(flag)
            if value is not None and type(value) is not bool:
                return False
        if node_links(get, nid, ids, parents) is None:
            return False
    if parents and parent_problems(parents, {nid: nid for nid in parents}):
        return False
    for raw in raw_edges or ():
        if type(raw) is not dict or not raw.keys() <= _EDGE_KEYS:
            return False
        src, dst, etype = raw.get("from"), raw.get("to"), raw.get("type")
        if type(src) is not str or src not in ids or type(dst) is not str or dst not in ids:
            return False
        if src == dst or not _name_ok(etype) or not _count_ok(raw.get("seqTo")):
            return False
        if etype == "contains" and parents.get(dst) != src:
            return False
    return True


class PlainStore(dict):  # type: ignore[type-arg]
    """A store dict in the normal form: its edges are `edge_to_dict`'s with unique keys, so
    storage takes it whole as the change from an empty chat (`change_codec.diff_states`).
    With `plain` True every node also has exactly the plain keys `node_to_dict` writes (no
    ``pinned``, no ``floorRange``), so storage builds its columns without testing each row
    again (`graph_columns.state_tables`). Not to be changed after it was made."""

    plain: bool = False
    #: no float anywhere in its nodes' fields (then orjson writes each node's fields as
    #: ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))`` does, byte for byte:
    #: `graph_columns` encodes them with it)
    float_free: bool = False
    #: the largest ``fields.message`` index of its nodes (-1 or below: none; None: not known,
    #: anchoring then looks at every node)
    top_message: int | None = None
    #: its edges as columns ``src``, ``type``, ``dst``, ``seq_to`` (a pyarrow table, row i
    #: edge i) when its maker has them (`import_pass`): storage's edge state table takes them
    #: instead of reading 300k edge dicts again (None: not known)
    edge_columns: Any = None
    #: its nodes' values per key (``"id"``, ``"seqTo"``, ...: sequences in node order, a
    #: missing ``supersededBy`` None) when its maker has them (`import_nodes`): storage's node
    #: state table takes them instead of reading 100k node dicts again (None: not known)
    node_columns: dict[str, Any] | None = None


class NormalStore(PlainStore):
    """A store dict `normalised_store` made without anchoring it: checked, in the normal form.
    `MemoryGraph.import_graph` takes one as it is (only anchored), so a caller that checked and
    normalised a file (the CLI's ``import``) does not pay for it twice."""


def _json_native(value: Any) -> bool:
    """Whether `value` is made of dicts with string keys, lists and JSON scalars only (what
    `thaw(deep_freeze(value))` gives back equal)."""
    kind = type(value)
    if kind in _NATIVE_SCALARS:
        return True
    if kind is list:
        return all(_json_native(v) for v in value)
    if kind is dict:
        return all(type(k) is str and _json_native(v) for k, v in value.items())
    return False


def _normal_node(raw: Any) -> bool:
    """Whether a node dict is already what `node_to_dict(node_from_dict(raw))` gives (equal as
    a dict), so it can be taken as it is."""
    if type(raw) is not dict:
        return False
    keys = raw.keys()
    if keys != _NORMAL_KEYS and keys != _NORMAL_KEYS_SUP:
        rest = keys - {"pinned"}
        if raw.get("pinned") is not True or (rest != _NORMAL_KEYS and rest != _NORMAL_KEYS_SUP):
            return False
    get = raw.get
    level = get("level")
    children = get("childrenIds")
    seq_to = get("seqTo")
    fields = get("fields")
    return (
        type(level) is str
        and level != ""
        and type(get("title")) is str
        and type(get("parentId")) is str
        and type(children) is list
        and all(type(c) is str for c in children)
        and (seq_to is None or type(seq_to) is int)
        and type(get("semanticDepth")) is int
        and type(get("semanticRollup")) is bool
        and type(get("archived")) is bool
        and (
            "supersededBy" not in keys or (type(get("supersededBy")) is str and get("supersededBy"))
        )
        and type(fields) is dict
        and all(
            type(k) is str and (type(v) in _NATIVE_SCALARS or _json_native(v))
            for k, v in fields.items()
        )
    )


def _normal_edges(raw_edges: Any, ids: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The edges as `Store.from_dict(...).to_dict()` writes them: types lower-cased, symmetric
    ones in id order, self-edges, edges with a missing end and repeats (the first wins)
    dropped. Called on checked stores only."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for i, raw in enumerate(raw_edges or ()):
        if type(raw) is dict and raw.keys() <= _EDGE_KEYS:
            src, dst, etype, seq_to = (
                raw.get("from"),
                raw.get("to"),
                raw.get("type"),
                raw.get("seqTo"),
            )
        else:
            edge = edge_from_dict(raw, index=i)
            src, dst, etype, seq_to = edge.source, edge.target, edge.type, edge.seq_to
        if src == dst or src not in ids or dst not in ids:
            continue
        keep_normal_edge(out, src, dst, etype, seq_to)
    return list(out.values())


def keep_normal_edge(
    out: dict[tuple[str, str, str], dict[str, Any]],
    src: str,
    dst: str,
    etype: str,
    seq_to: Any,
) -> None:
    """Put an edge into `out` in the normal form (type lower-cased, a symmetric one in id
    order), keyed by ``(from, type, to)``, unless an earlier edge holds the key (the first
    wins): the two quick passes' last step."""
    if not etype.islower():
        etype = etype.lower()
    if etype in SYMMETRIC_RELATIONS and dst < src:
        src, dst = dst, src
    key = (src, etype, dst)
    if key not in out:
        out[key] = (
            {"from": src, "to": dst, "type": etype}
            if seq_to is None
            else {"from": src, "to": dst, "type": etype, "seqTo": seq_to}
        )


def normalised_store(
    data: Mapping[str, Any], seq: int | None = None, messages: int | None = None
) -> dict[str, Any]:
    """``anchor_store(Store.from_dict(data).to_dict(), seq, messages)`` of a store `data` that
    `store_problems` passed (with `seq` None: the normal form alone, not re-anchored, as a
    `NormalStore`). Nodes
    already in the normal form are taken as they are (not copied); others go through
    `node_from_dict` / `node_to_dict`."""
    raw_nodes = data.get("nodes") or {}
    items = raw_nodes.items() if isinstance(raw_nodes, Mapping) else ((None, n) for n in raw_nodes)
    nodes: dict[str, dict[str, Any]] = {}
    for key, raw in items:
        if _normal_node(raw) and (key is None or raw["id"] == key):
            nodes[raw["id"]] = raw
        else:
            node = node_to_dict(node_from_dict(raw, key=key))
            nodes[node["id"]] = node
    edges = _normal_edges(data.get("edges"), nodes)
    node_seq = int(data.get("nodeSeq", data.get("node_seq")) or 0)
    for nid in nodes:
        m = _ID_NUM.fullmatch(nid)
        if m:
            node_seq = max(node_seq, int(m.group(1)))
    counter = int(data.get("seqCounter", data.get("seq_counter")) or 0)
    if seq is None:
        return NormalStore(nodes=nodes, edges=edges, nodeSeq=node_seq, seqCounter=counter)
    return _anchored(nodes, edges, node_seq, counter, int(seq), messages)


def anchored_store(store: NormalStore, seq: int, messages: int | None = None) -> dict[str, Any]:
    """`normalised_store(data, seq, messages)` of the `data` that `store` was made from (a
    `PlainStore`, as plain as `store` is)."""
    return _anchored(
        store["nodes"],
        store["edges"],
        store["nodeSeq"],
        store["seqCounter"],
        int(seq),
        messages,
        plain=store.plain,
        float_free=store.float_free,
        top_message=store.top_message,
        edge_columns=store.edge_columns,
        node_columns=store.node_columns,
    )


def _message_index(node: Mapping[str, Any]) -> int | None:
    """A node's ``fields.message`` when it is a message index (an int, not a bool)."""
    value = node["fields"].get("message")
    return value if type(value) is int else None


def message_shifted(fields: Mapping[str, Any], index: int, message_shift: int) -> dict[str, Any]:
    """A copy of `fields` (whose ``message`` is `index`) with ``message`` moved back by
    `message_shift`; a message before the first one kept loses ``message`` and keeps its old
    index as ``source_message``."""
    shifted = dict(fields)
    if index - message_shift >= 0:
        shifted["message"] = index - message_shift
    else:
        del shifted["message"]
        shifted["source_message"] = index
    return shifted


def shifted_edges(edges: list[dict[str, Any]], columns: Any, shift: int) -> tuple[list[Any], Any]:
    """`edges` with each ``seqTo`` moved back by `shift` (at least 0), and their columns
    (`PlainStore.edge_columns`) the same: only the edges with a ``seqTo`` are copied, found
    in the column."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    seq = columns["seq_to"]
    at = np.flatnonzero(seq.is_valid().to_numpy(zero_copy_only=False)).tolist()
    if not at:
        return edges, columns
    edges = list(edges)
    for i in at:
        e = edges[i]
        edges[i] = {**e, "seqTo": max(0, e["seqTo"] - shift)}
    moved = pc.max_element_wise(pc.subtract(seq, pa.scalar(shift, pa.int64())), 0, skip_nulls=False)
    return edges, columns.set_column(columns.schema.get_field_index("seq_to"), "seq_to", moved)


def _anchored(
    nodes: dict[str, dict[str, Any]],
    edges: list[dict[str, Any]],
    node_seq: int,
    counter: int,
    seq: int,
    messages: int | None,
    *,
    plain: bool = False,
    float_free: bool = False,
    top_message: int | None = None,
    edge_columns: Any = None,
    node_columns: dict[str, Any] | None = None,
) -> PlainStore:
    """`store_file.anchor_store` of a normal-form store, copying only the nodes and edges it
    changes (see there for what moves and why); `top_message`, when given, is the largest
    message index of the nodes (else found here); `edge_columns` (`PlainStore.edge_columns`
    of `edges`) and `node_columns` (`PlainStore.node_columns`) are moved the same way."""
    shift = max(0, counter - seq)
    message_shift = 0
    if messages is not None:
        if top_message is None:
            indices = [i for i in map(_message_index, nodes.values()) if i is not None]
            top_message = max(indices) if indices else None
        if top_message is not None:
            message_shift = max(0, top_message - (int(messages) - 1))
    if message_shift:
        node_columns = None  # (fields are changed)
    elif shift and node_columns is not None:
        node_columns = {
            **node_columns,
            "seqTo": [
                None if v is None else (v - shift if v > shift else 0)
                for v in node_columns["seqTo"]
            ],
        }
    if shift or message_shift:
        moved: dict[str, dict[str, Any]] = {}
        for nid, node in nodes.items():
            seq_to = node["seqTo"]
            if shift and seq_to is not None:
                node = {**node, "seqTo": seq_to - shift if seq_to > shift else 0}
            if message_shift:
                index = _message_index(node)
                if index is not None:
                    node = {**node, "fields": message_shifted(node["fields"], index, message_shift)}
            moved[nid] = node
        nodes = moved
    if shift and edge_columns is not None:
        edges, edge_columns = shifted_edges(edges, edge_columns, shift)
    elif shift:
        edges = [
            e if e.get("seqTo") is None else {**e, "seqTo": max(0, e["seqTo"] - shift)}
            for e in edges
        ]
    out = PlainStore(nodes=nodes, edges=edges, nodeSeq=node_seq, seqCounter=seq)
    out.plain = plain
    out.float_free = float_free
    out.edge_columns = edge_columns
    out.node_columns = node_columns
    return out
