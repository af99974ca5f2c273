"""A snapshot row set's keyword columns: computed from its node rows (tokenized as the store reads
them), kept in `snap_keywords` as one row per row set, and attached to the node rows when a chain
is read back (`engine/keyword/keyword_columns.py` is what the store builds its index from).

One row per row set: the fingerprint of the tokenizer and searchable fields
(`keyword_fingerprint`), the row set's new vocabulary (`terms`: sorted, newline-separated, ids
from `first_tid` on: a full snapshot starts at 0, a delta continues its chain's ids), and per node
row in `pos` order the number of its distinct tokens (`counts`; -1: none known, e.g. a removed
row), their ids in first-occurrence order and their frequencies (`tids`, `tfs`: int32 blobs;
`tfs` one byte each when every frequency is below 256, known by its length).
A chain's keyword data is used only when every row set of it has its row with one fingerprint.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

import attrs
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from memgraph_plugin.engine.keyword.keyword_columns import KeywordColumns
from memgraph_plugin.engine.keyword.keyword_text import node_text, tokenize, tokenize_many
from memgraph_plugin.engine.keyword.token_columns import flat_tokens, token_texts
from memgraph_plugin.engine.model.schema import Schema
from memgraph_plugin.storage.format.graph_columns import NODE_SCHEMA, bulk_loads, empty_edges

KW_TID, KW_TF = "kw_tid", "kw_tf"  # the columns attached to node state tables
_LIST = pa.list_(pa.int32())

Tokens = list[tuple[str, int]] | None
"""A node row's distinct tokens with their frequencies, first occurrence first (None: unknown)."""


@attrs.frozen(eq=False)
class KeywordRows:
    """The keyword data of one row set (see the module doc)."""

    fingerprint: str
    first_tid: int
    terms: pa.Array = attrs.field(
        converter=lambda t: t if isinstance(t, pa.Array) else pa.array(list(t), pa.string())
    )
    counts: np.ndarray
    tids: np.ndarray
    tfs: np.ndarray

    def to_row(self, chat_id: str, snap: int) -> dict[str, Any]:
        return {
            "chat_id": chat_id,
            "snap": snap,
            "fingerprint": self.fingerprint,
            "first_tid": self.first_tid,
            "terms": "\n".join(self.terms.to_pylist()),
            "counts": np.ascontiguousarray(self.counts, dtype="<i4").tobytes(),
            "tids": np.ascontiguousarray(self.tids, dtype="<i4").tobytes(),
            # frequencies as bytes when they all fit (the usual case): a quarter of the read
            "tfs": np.ascontiguousarray(
                self.tfs, dtype="u1" if not len(self.tfs) or self.tfs.max() < 256 else "<i4"
            ).tobytes(),
        }

    @classmethod
    def from_row(cls, rows: pa.Table, i: int) -> KeywordRows:
        """Row `i` of a `snap_keywords` read (the blobs viewed in place, not copied)."""
        row = rows.slice(i, 1)
        text = row["terms"]
        terms = (
            pc.split_pattern(text, "\n").combine_chunks().flatten()
            if pc.binary_length(text)[0].as_py()
            else pa.array([], pa.string())
        )

        def blob(name: str) -> np.ndarray:
            if name not in row.column_names:  # read without the lists
                return np.zeros(0, dtype="<i4")
            return np.frombuffer(row[name][0].as_buffer(), dtype="<i4")

        tids = blob("tids")
        tfs = np.zeros(0, dtype="<i4")
        if "tfs" in row.column_names:
            raw = row["tfs"][0].as_buffer()
            narrow = raw.size == len(tids) and raw.size != 4 * len(tids)
            tfs = np.frombuffer(raw, dtype="u1" if narrow else "<i4").astype(np.int32, copy=False)
        return cls(
            fingerprint=str(row["fingerprint"][0].as_py()),
            first_tid=int(row["first_tid"][0].as_py()),
            terms=terms,
            counts=blob("counts"),
            tids=tids,
            tfs=tfs,
        )

    def lists(self) -> tuple[pa.Array, pa.Array]:
        """`kw_tid` and `kw_tf` list columns, one entry per node row (null: unknown)."""
        counts = self.counts
        unknown = counts < 0
        off = np.zeros(len(counts) + 1, dtype=np.int32)
        np.cumsum(np.where(unknown, 0, counts), out=off[1:])
        mask = pa.array(unknown) if unknown.any() else None
        offsets = pa.array(off)
        return (
            pa.ListArray.from_arrays(offsets, pa.array(self.tids), mask=mask),
            pa.ListArray.from_arrays(offsets, pa.array(self.tfs), mask=mask),
        )


class _Readable(NamedTuple):
    """What `node_text` reads of a node (its title and fields), from a node row."""

    title: str
    fields: Any


def node_tokens(nodes: pa.Table, schema: Schema) -> list[Tokens]:
    """Per node row: what the keyword index reads of it (`node_text` of the node as a store
    loaded from these columns holds it, tokenized); None for a removed row. Rows in the plain
    form (no ``raw`` JSON) are read straight from their columns, the fields in one JSON parse
    (an import tokenizes 100k nodes); others through a store loaded from them."""
    if nodes.num_rows and nodes["raw"].null_count == nodes.num_rows:
        return _plain_tokens(nodes, schema)
    return _store_tokens(nodes, schema)


def _store_tokens(nodes: pa.Table, schema: Schema) -> list[Tokens]:
    """`node_tokens` through a store loaded from the rows (any row, ``raw`` JSON included)."""
    from memgraph_plugin.engine.graph.store import Store

    removed = nodes["removed"].to_numpy(zero_copy_only=False).astype(bool)
    live = (
        nodes.select(NODE_SCHEMA.names).filter(pa.array(~removed))
        if removed.any()
        else (nodes.select(NODE_SCHEMA.names))
    )
    store = Store.from_columns(live, empty_edges(), 0, 0, schema=schema)
    get = schema.get
    out: list[Tokens] = []
    for nid, gone in zip(nodes["id"].to_pylist(), removed.tolist(), strict=True):
        node = None if gone else store.node(nid)
        if node is None:
            out.append(None)
            continue
        out.append(list(Counter(tokenize(node_text(node, get(node.type)))).items()))
    return out


def _plain_tokens(nodes: pa.Table, schema: Schema) -> list[Tokens]:
    """`node_tokens` of rows without ``raw`` JSON (`_plain_texts`)."""
    texts, removed = _plain_texts(nodes, schema)
    return [
        None if gone else list(Counter(tokens).items())
        for tokens, gone in zip(tokenize_many(texts), removed, strict=True)
    ]


def _plain_texts(
    nodes: pa.Table, schema: Schema, fields: Sequence[Any] | None = None
) -> tuple[list[str], list[bool]]:
    """What the keyword index reads of each row without ``raw`` JSON ("" for a removed row),
    and which rows are removed: the title and parsed fields are what a store loaded from them
    holds (`column_loader` reads the same columns). `fields`: the rows' fields as dicts when
    the caller has them (an import: the store the columns were made from), not parsed again."""
    removed = nodes["removed"].to_pylist()
    if fields is None:
        fields = bulk_loads(nodes["fields"].to_pylist())
    # (a column at a time: `token_texts` gives texts with `node_text`'s tokens)
    texts = token_texts(nodes["type"].to_pylist(), nodes["title"].to_pylist(), fields, schema)
    if any(removed):
        texts = ["" if gone else text for text, gone in zip(texts, removed, strict=True)]
    return texts, removed


def _counted_rows(
    tokens: Sequence[list[str]], removed: Sequence[bool], fingerprint: str
) -> KeywordRows:
    """`_counted_flat` of the rows' token lists (each row's in text order, duplicates kept)."""
    sizes = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    words = pa.array([w for row in tokens for w in row], pa.string())
    rows = np.repeat(np.arange(len(tokens), dtype=np.int64), sizes)
    return _counted_flat(words, rows, removed, fingerprint)


def _counted_flat(
    words: pa.Array, rows: np.ndarray, removed: Sequence[bool], fingerprint: str
) -> KeywordRows:
    """`_sorted_rows` of the rows' tokens, given flat (`token_columns.flat_tokens`: every
    token, row by row in text order, and its row), counted with numpy and pyarrow instead of
    a `Counter` per row: per row its distinct tokens in first-occurrence order with their
    frequencies (a full row set of an import: 100k nodes)."""
    n = len(removed)
    gone = np.asarray(removed, dtype=bool)
    if not len(words):
        counts = np.where(gone, -1, 0).astype(np.int32)
        none = np.empty(0, dtype=np.int32)
        return KeywordRows(fingerprint, 0, pa.array([], pa.string()), counts, none, none)
    encoded = pc.dictionary_encode(words)
    vocab = encoded.dictionary
    size = len(vocab)
    keys = rows.astype(np.int64) * size
    keys += encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    distinct, first, freq = np.unique(keys, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")  # row by row, first occurrence first
    distinct, freq = distinct[order], freq[order]
    by_text = pc.sort_indices(vocab).to_numpy(zero_copy_only=False)
    rank = np.empty(size, dtype=np.int64)
    rank[by_text] = np.arange(size)
    counts = np.bincount(distinct // size, minlength=n)
    return KeywordRows(
        fingerprint,
        0,
        vocab.take(pa.array(by_text)),
        np.where(gone, -1, counts).astype(np.int32),
        rank[distinct % size].astype(np.int32),
        freq.astype(np.int32),
    )


def _assemble(
    tokens: Sequence[Tokens], ids: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts = np.array([-1 if t is None else len(t) for t in tokens], dtype=np.int32)
    tids = np.fromiter((ids[w] for t in tokens if t for w, _ in t), dtype=np.int32)
    tfs = np.fromiter((f for t in tokens if t for _, f in t), dtype=np.int32)
    return counts, tids, tfs


def _sorted_rows(tokens: Sequence[Tokens], fingerprint: str) -> KeywordRows:
    """Keyword rows numbering `tokens` into one sorted vocabulary from 0 (a full row set),
    with pyarrow over the flat token list (UTF-8 byte order is code point order: Python's
    `sorted`)."""
    counts = np.array([-1 if t is None else len(t) for t in tokens], dtype=np.int32)
    words = pa.array([w for t in tokens if t for w, _ in t], pa.string())
    tfs = np.array([f for t in tokens if t for _, f in t], dtype=np.int32)
    distinct = pc.unique(words)
    terms = distinct.take(pc.sort_indices(distinct))
    tids = pc.index_in(words, value_set=terms).to_numpy(zero_copy_only=False)
    return KeywordRows(fingerprint, 0, terms, counts, tids.astype(np.int32), tfs)


def delta_rows(
    tokens: Sequence[Tokens], fingerprint: str, vocab: Sequence[pa.Array]
) -> KeywordRows:
    """A delta's keyword rows: tokens already in the chain's vocabulary keep their ids, new
    ones get ids after it (sorted)."""
    distinct = sorted({w for t in tokens if t for w, _ in t})
    stored = sum(len(p) for p in vocab)
    ids: dict[str, int] = {}
    new: list[str] = []
    if distinct:
        at: list[int | None] = [None] * len(distinct)
        if stored:
            known = pa.concat_arrays([p.cast(pa.string()) for p in vocab])
            at = pc.index_in(pa.array(distinct, pa.string()), value_set=known).to_pylist()
        for word, i in zip(distinct, at, strict=True):
            if i is None:
                ids[word] = stored + len(new)
                new.append(word)
            else:
                ids[word] = i
    return KeywordRows(fingerprint, stored, new, *_assemble(tokens, ids))


def full_rows(
    nodes: pa.Table,
    kept: KeywordColumns | None,
    schema: Schema,
    fingerprint: str,
    fields: Sequence[Any] | None = None,
) -> KeywordRows:
    """A full snapshot's keyword rows for a state table: the loaded chain's token lists reused
    (renumbered into one sorted vocabulary of the tokens in use) when they were made the same
    way; rows without them (journal rows since, or all after a change of tokenizer or schema)
    tokenized here (plain rows: all at once, `token_columns.flat_tokens`; `fields`: their
    fields as dicts, when the caller has them)."""
    n = nodes.num_rows
    if (
        kept is None
        or kept.fingerprint != fingerprint
        or not kept.fits(n)
        or not kept.ids.equals(nodes["id"])
    ):
        if n and nodes["raw"].null_count == n:  # plain rows: counted over the flat tokens
            texts, removed = _plain_texts(nodes, schema, fields)
            return _counted_flat(*flat_tokens(texts), removed, fingerprint)
        return _sorted_rows(node_tokens(nodes, schema), fingerprint)
    unknown = kept.tids.is_null().to_numpy(zero_copy_only=False).astype(bool)
    fresh = node_tokens(nodes.filter(pa.array(unknown)), schema) if unknown.any() else []
    old_vocab = (
        pa.concat_arrays([p.cast(pa.string()) for p in kept.vocab])
        if kept.vocab
        else (pa.array([], pa.string()))
    )
    flat = pc.list_flatten(kept.tids).to_numpy(zero_copy_only=False).astype(np.int64)
    used = np.flatnonzero(np.bincount(flat, minlength=len(old_vocab)))
    words = set(old_vocab.take(pa.array(used)).to_pylist())
    words.update(w for t in fresh if t for w, _ in t)
    terms = sorted(words)
    term_array = pa.array(terms, pa.string())
    remap = np.full(len(old_vocab), -1, dtype=np.int64)
    remap[used] = pc.index_in(old_vocab.take(pa.array(used)), value_set=term_array).to_numpy(
        zero_copy_only=False
    )
    ids = {w: i for i, w in enumerate(terms)} if fresh else {}
    f_counts, f_tids, f_tfs = _assemble(fresh, ids)
    # splice: rows with kept lists take them (renumbered), the others their fresh tokens
    old_counts = pc.fill_null(pc.list_value_length(kept.tids), 0).to_numpy(zero_copy_only=False)
    counts = old_counts.astype(np.int32)
    counts[unknown] = np.maximum(f_counts, 0)
    old_off = np.concatenate([[0], np.cumsum(old_counts)]).astype(np.int64)
    fresh_off = np.concatenate([[0], np.cumsum(np.maximum(f_counts, 0))]).astype(np.int64)
    start = old_off[:-1].copy()
    start[unknown] = len(flat) + fresh_off[:-1]
    source_tids = np.concatenate([remap[flat], f_tids.astype(np.int64)])
    source_tfs = np.concatenate(
        [pc.list_flatten(kept.tfs).to_numpy(zero_copy_only=False).astype(np.int32), f_tfs]
    )
    new_off = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    gather = np.repeat(start - new_off[:-1], counts) + np.arange(int(new_off[-1]))
    counts[unknown] = f_counts  # a removed row stays unknown (never in a state table)
    return KeywordRows(
        fingerprint, 0, terms, counts, source_tids[gather].astype(np.int32), source_tfs[gather]
    )


def with_unknown_keywords(nodes: pa.Table) -> pa.Table:
    """A node table (journal rows) with null `kw_tid` / `kw_tf` columns: tokens not known."""
    n = nodes.num_rows
    return nodes.append_column(KW_TID, pa.nulls(n, _LIST)).append_column(KW_TF, pa.nulls(n, _LIST))


def split_keywords(
    nodes: pa.Table, vocab: tuple[str, list[pa.Array]] | None
) -> tuple[pa.Table, KeywordColumns | None]:
    """A merged node state table without its keyword columns, and those as `KeywordColumns`."""
    if KW_TID not in nodes.column_names:
        return nodes, None
    plain = nodes.drop_columns([KW_TID, KW_TF])
    if vocab is None:
        return plain, None
    fingerprint, parts = vocab
    return plain, KeywordColumns(fingerprint, parts, nodes["id"], nodes[KW_TID], nodes[KW_TF])
