"""Keyword search: the BM25 index (the tokenizer and what it reads of a node: `keyword_text.py`).

Scoring is Okapi BM25 (k1 1.2, b 0.75, Lucene's always-positive IDF) over the distinct query
tokens, divided by the best a document could score for that query (``Σ idf · (k1 + 1)`` over
every distinct query token, found or not), so a score stays in (0, 1]: rare words weigh more than
common ones, a short node more than a long one with the same matches, and a query whose words
are mostly missing scores low.

The index keeps one growable numpy posting array per token (document slot, slot generation, term
frequency). A write only appends the node's postings and retires its old slot (a generation
bump); stale postings are skipped by a generation check and compacted away per token once they
are half of it, so a write costs the same at any chat size. A search sums each query token's
postings per document (into a dense score array when they are many, else sparsely) with numpy
and partitions out the top candidates.

A store loaded from a snapshot hands the index the snapshot's keyword columns (`adopt`): they
become a *base* (`keyword_postings.BasePostings`: token-major postings of slots 0..n-1 built
with one sort, generation 0), built as the store loads with no tokenizing (the id -> slot map
is its one Python structure per node); later writes go to the growable arrays as above and
retire base slots by the same generation bump. Scores are the same floats either way (the
same postings, summed per document in the same token order).

Why one module past 500 lines: the base postings, the growable per-token postings and the slot
maps share one numbering (slots and their generations) that every write and search reads; apart,
each half would reach into the other's arrays.
"""

from __future__ import annotations

import math
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import islice
from typing import Any

import numpy as np
import pyarrow as pa

from ..index.deferred import build_threads
from ..model.models import Node
from ..model.schema import NodeTypeSpec, Schema
from .keyword_columns import KeywordColumns, Vocabulary
from .keyword_postings import BasePostings, Postings
from .keyword_text import keyword_fingerprint, node_text, token_set, tokenize

__all__ = ["KeywordIndex", "idf", "keyword_fingerprint", "node_text", "token_set", "tokenize"]

K1 = 1.2
B = 0.75
_CHUNK = 4096  # nodes tokenized before their tokens are looked up in a stored vocabulary


def idf(docs: int, df: int) -> float:
    """Lucene's BM25 IDF: ``ln(1 + (N - df + 0.5) / (df + 0.5))``, never negative."""
    return math.log(1.0 + (docs - df + 0.5) / (df + 0.5))


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


class KeywordIndex:
    """token -> postings with term frequencies, kept current node by node (`update` / `remove`).

    Tokens are numbered once (`Vocabulary`); a node keeps only its slot and a compact array of
    (token number, frequency) pairs, so an index costs about its postings, not a string per token.
    """

    def __init__(self) -> None:
        self._build_lock = threading.Lock()  # held while adopted columns are built (`_ready`)
        self.clear()

    def clear(self) -> None:
        with self._build_lock:  # not while a thread builds adopted columns into the index
            self._clear()

    def _clear(self) -> None:
        self._weights_memo: tuple[Any, dict[int, float], float] | None = None  # score_of's last
        self._vocab = Vocabulary()
        self._postings: dict[int, Postings] = {}  # token number -> postings added in memory
        self._pending: KeywordColumns | None = None  # adopted columns not built yet
        self._base: BasePostings | None = None
        self._base_ids: pa.ChunkedArray | None = None  # slot -> node id of the base slots
        self._base_n = 0
        self._bdf = np.zeros(0, dtype=np.int32)  # token number -> live base documents
        self._bdead = np.zeros(0, dtype=np.int32)  # token number -> retired base postings
        #: a search's dense score sums and slot marks, kept zeroed between searches (a fresh
        #: array per search cost page faults and a pass over every slot)
        self._scratch: tuple[np.ndarray, np.ndarray] | None = None
        #: node id -> slot; None while only the base's id column knows the base slots (then
        #: no slot but base ones is in use)
        self._slot_of: dict[str, int] | None = {}
        self._slot_ids: list[str | None] = []  # slot -> node id (None: free, or not listed yet)
        #: the loaded store's (id list, id -> row map) given to `adopt` (read only), and whether
        #: `_slot_ids` / `_slot_of` are those very objects (copied before the first write)
        self._shared_ids: tuple[list[str], dict[str, int]] | None = None
        self._slots_shared = False
        self._slot_terms: list[array[int] | None] = []  # slot -> flat token number, frequency
        self._free: list[int] = []
        self._gens = np.zeros(64, dtype=np.int32)  # slot -> generation (bumped on retiring)
        self._lens = np.zeros(64, dtype=np.float32)  # slot -> document length in tokens
        self._total_len = 0
        self._docs = 0

    # -- loading from columns ----------------------------------------------------------------

    def adopt(
        self,
        columns: KeywordColumns | None,
        schema: Schema,
        nodes: int,
        ids: tuple[list[str], dict[str, int]] | None = None,
    ) -> list[str] | None:
        """Take a snapshot's keyword columns as the (empty) index, built here. Returns
        the ids of nodes still to index from their text; None when the columns do not fit (no
        columns, another tokenizer or schema, not one row per node of the `nodes` loaded):
        then every node is indexed from its text, as without columns. `ids`: the columns' ids
        as a list and an id -> row map (the loaded store's, read only): the base slots' map is
        then those, not a copy (copied before the index's first write)."""
        if columns is None or self._docs or self._pending is not None:
            return None
        if columns.fingerprint != keyword_fingerprint(schema) or len(columns.ids) != nodes:
            return None
        if not columns.fits(nodes):
            return None
        self.clear()
        self._pending = columns
        self._shared_ids = ids if ids is not None and len(ids[0]) == nodes else None
        # built on a build thread (numpy sorts, mostly without the GIL): the open ends and
        # the first turn's extraction runs meanwhile; the first read waits for a build under
        # way, or builds it itself if it has not started
        build_threads.submit(self._ready)
        return columns.unknown_ids

    def _ready(self) -> None:
        """Build the adopted columns into the base (once; a read waits for a build under way)."""
        if self._pending is None:
            return
        with self._build_lock:
            self._build(self._pending)

    def _build(self, cols: KeywordColumns | None) -> None:
        if cols is None:  # built by another thread meanwhile
            return
        vocab = Vocabulary(cols.vocab)
        base = BasePostings.from_lists(cols.tids, cols.tfs, len(vocab))
        n = len(cols.ids)
        self._base_ids = cols.ids
        self._vocab, self._base, self._base_n = vocab, base, n
        self._bdf = base.df.copy()
        self._bdead = np.zeros(len(vocab), dtype=np.int32)
        cap = max(n, 64)
        self._gens = np.zeros(cap, dtype=np.int32)
        self._lens = np.zeros(cap, dtype=np.float32)
        self._lens[:n] = base.lens
        empty = np.flatnonzero(base.off[1:] == base.off[:-1])  # no tokens: not a document
        self._gens[empty] = 1
        self._free = empty.tolist()
        self._slot_ids = [None] * n
        self._slot_terms = [None] * n
        self._total_len = int(base.lens.sum(dtype=np.float64))  # whole numbers: exact
        self._docs = n - len(empty)
        self._slot_of = None
        self._pending = None  # last: a reader that finds it None finds the base built

    def _held(self, slot: int) -> bool:
        """Whether a slot is a base slot still holding its loaded node."""
        return slot < self._base_n and self._gens[slot] == 0

    def _base_pairs(self, slot: int) -> tuple[list[int], list[int]]:
        base = self._base
        assert base is not None
        lo, hi = int(base.off[slot]), int(base.off[slot + 1])
        return base.tids[lo:hi].tolist(), base.tfs[lo:hi].tolist()

    def _slot_map(self) -> dict[str, int]:
        """node id -> slot, made from the base's id column the first time it is needed."""
        self._ready()
        slot_of = self._slot_of
        if slot_of is None:
            assert self._base_ids is not None
            live = np.flatnonzero(self._gens[: self._base_n] == 0)
            shared, self._shared_ids = self._shared_ids, None
            if shared is not None and len(live) == self._base_n:  # each base slot its node's
                self._slot_ids, self._slot_of = shared  # type: ignore[assignment]
                self._slots_shared = True
                return shared[1]
            dead = np.flatnonzero(self._gens[: self._base_n] != 0).tolist()
            if shared is not None:  # the store's map, copied (C), without the dead slots' ids
                slot_of, own_ids = dict(shared[1]), list[str | None](shared[0])
                for i in dead:
                    del slot_of[own_ids[i]]  # type: ignore[arg-type]
                    own_ids[i] = None
                self._slot_of, self._slot_ids = slot_of, own_ids
                return slot_of
            ids: list[str | None] = self._base_ids.to_pylist()
            if len(live) == self._base_n:
                slot_of = dict(zip(ids, range(self._base_n), strict=True))  # type: ignore[arg-type]
            else:
                slot_of = {ids[i]: i for i in live.tolist()}  # type: ignore[misc]
                for i in dead:
                    ids[i] = None
            self._slot_of, self._slot_ids = slot_of, ids  # no slot but base ones in use yet
        return slot_of

    def _own_slots(self) -> dict[str, int]:
        """`_slot_map`, made this index's own (a copy of the store's) before it is written."""
        slot_of = self._slot_map()
        if self._slots_shared:
            self._slots_shared = False
            slot_of = self._slot_of = dict(slot_of)
            self._slot_ids = list(self._slot_ids)
        return slot_of

    def _ids_of(self, slots: np.ndarray) -> list[str | None]:
        """The node ids of live slots."""
        if self._slot_of is None:  # only base slots are in use
            assert self._base_ids is not None
            return self._base_ids.take(pa.array(slots, pa.int64())).to_pylist()
        ids = self._slot_ids
        out: list[str | None] = []
        for s in slots.tolist():
            nid = ids[s]
            if nid is None and self._held(s):
                assert self._base_ids is not None
                nid = self._base_ids[s].as_py()
            out.append(nid)
        return out

    # -- reads -------------------------------------------------------------------------------

    def __len__(self) -> int:
        self._ready()
        return self._docs

    def _df(self, tid: int) -> int:
        """How many documents hold token number `tid` now."""
        df = int(self._bdf[tid]) if tid < self._bdf.shape[0] else 0
        p = self._postings.get(tid)
        return df if p is None else df + p.live

    def knows(self, token: str) -> bool:
        """Whether some indexed node holds `token` (a word variant worth searching for)."""
        self._ready()
        tid = self._vocab.get(token)
        return tid is not None and self._df(tid) > 0

    def _pairs(self, slot: int) -> tuple[list[int], list[int]] | None:
        """(token numbers, frequencies) of a live slot, in first-occurrence order."""
        if self._held(slot):
            return self._base_pairs(slot)
        flat = self._slot_terms[slot]
        return None if flat is None else (list(flat[0::2]), list(flat[1::2]))

    def tokens_of(self, node_id: str) -> frozenset[str]:
        slot = self._slot_map().get(node_id)
        pairs = None if slot is None else self._pairs(slot)
        if pairs is None:
            return frozenset()
        term = self._vocab.term
        return frozenset(term(t) for t in pairs[0])

    # -- writes ------------------------------------------------------------------------------

    def _reserve(self, slots: int) -> None:
        """Grow the per-slot arrays to hold `slots` slots."""
        cap = self._gens.shape[0]
        if slots > cap:
            cap = max(slots, 2 * cap)
            grow = cap - self._gens.shape[0]
            self._gens = np.concatenate([self._gens, np.zeros(grow, dtype=np.int32)])
            self._lens = np.concatenate([self._lens, np.zeros(grow, dtype=np.float32)])

    def _retire(self, node_id: str) -> bool:
        self._weights_memo = None
        slot = self._own_slots().pop(node_id, None)
        if slot is None:
            return False
        self._docs -= 1
        self._total_len -= int(self._lens[slot])
        self._lens[slot] = 0.0
        if self._held(slot):
            base = self._base
            assert base is not None
            tids = base.tids[int(base.off[slot]) : int(base.off[slot + 1])]
            self._bdf[tids] -= 1  # distinct token numbers: no repeated index
            self._bdead[tids] += 1
            self._slot_ids[slot] = None
            self._gens[slot] += 1
            self._free.append(slot)
            return True
        flat = self._slot_terms[slot]
        self._slot_ids[slot] = None
        self._slot_terms[slot] = None
        self._gens[slot] += 1  # its postings are stale from now on
        self._free.append(slot)
        postings = self._postings
        for tid in flat[0::2] if flat is not None else ():
            p = postings[tid]
            p.retire_one(self._gens)
            if p.live == 0:
                del postings[tid]
        return True

    def update(self, node: Node, spec: NodeTypeSpec | None) -> None:
        """Index `node` (replacing what was indexed for its id)."""
        self.update_many(((node, spec),))

    def update_many(self, items: Iterable[tuple[Node, NodeTypeSpec | None]]) -> None:
        """Index many nodes at once (a load): postings are appended once per token."""
        self._weights_memo = None
        slot_of = self._own_slots()
        slot_ids, slot_terms, free = self._slot_ids, self._slot_terms, self._free
        vocab = self._vocab
        known = vocab.ids
        pending: dict[int, list[int]] = {}  # token number -> flat slot, generation, frequency
        placed: list[tuple[int, int]] = []  # (slot, length) of the documents in `pending`
        for chunk in _chunks(items, _CHUNK):
            tokenized = [(node, tokenize(node_text(node, spec))) for node, spec in chunk]
            if vocab.stored:  # stored tokens looked up at once (then all new ones are new)
                vocab.resolve(list({t for _, toks in tokenized for t in toks}))
            for node, toks in tokenized:
                flat = array("i")
                for tok, tf in Counter(toks).items():
                    tid = known.get(tok)
                    if tid is None:
                        tid = vocab.add_new(tok)
                    flat.append(tid)
                    flat.append(tf)
                old = slot_of.get(node.id)
                if old is not None:
                    pairs = self._pairs(old)
                    if (
                        pairs is not None
                        and list(flat[0::2]) == pairs[0]
                        and (list(flat[1::2]) == pairs[1])
                    ):
                        continue  # the same tokens and frequencies as indexed
                    self._flush(pending, placed)
                    pending, placed = {}, []
                    self._retire(node.id)
                if not flat:
                    continue
                if free:  # a retired slot: its generation was bumped when it was retired
                    slot = free.pop()
                    gen = int(self._gens[slot])
                    slot_ids[slot] = node.id
                    slot_terms[slot] = flat
                else:
                    slot, gen = len(slot_ids), 0
                    slot_ids.append(node.id)
                    slot_terms.append(flat)
                placed.append((slot, len(toks)))
                slot_of[node.id] = slot
                for i in range(0, len(flat), 2):
                    entry = pending.get(flat[i])
                    if entry is None:
                        pending[flat[i]] = [slot, gen, flat[i + 1]]
                    else:
                        entry += (slot, gen, flat[i + 1])
        self._flush(pending, placed)

    def _flush(self, pending: dict[int, list[int]], placed: list[tuple[int, int]]) -> None:
        if not placed:
            return
        self._docs += len(placed)
        self._reserve(len(self._slot_ids))
        if len(placed) == 1:
            slot, length = placed[0]
            self._lens[slot] = length
            self._total_len += length
        else:
            block = np.array(placed, dtype=np.int64)
            self._lens[block[:, 0]] = block[:, 1]
            self._total_len += int(block[:, 1].sum())
        postings = self._postings
        for tid, flat in pending.items():
            p = postings.get(tid)
            if p is None:
                p = postings[tid] = Postings(len(flat) // 3)
            p.extend(flat)

    def remove(self, node_id: str) -> None:
        self._retire(node_id)

    # -- search ------------------------------------------------------------------------------

    def _current(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """(slots, term frequencies) of the documents holding token number `tid` now."""
        gens = self._gens
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        base = self._base
        if base is not None and tid < self._bdf.shape[0] and self._bdf[tid]:
            lo, hi = int(base.ptr[tid]), int(base.ptr[tid + 1])
            slots, tfs = base.slots[lo:hi], base.freqs[lo:hi]
            if self._bdead[tid]:
                keep = gens[slots] == 0
                slots, tfs = slots[keep], tfs[keep]
            parts.append((slots, tfs))
        p = self._postings.get(tid)
        if p is not None and p.live:
            parts.append(p.current(gens))
        if len(parts) == 1:
            return parts[0]
        return np.concatenate([s for s, _ in parts]), np.concatenate([f for _, f in parts])

    def search(
        self,
        query: str,
        allowed: Mapping[str, Any] | None,
        k: int | None = None,
        *,
        accept: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """Ranked ``(id, score)`` over the ids in `allowed` (id -> a key that breaks ties, e.g.
        a pool rank; None: every indexed node, ties by id) that `accept` (when given) admits.

        Only scores > 0; score descending, then `allowed` key; cut to `k`.
        """
        self._ready()
        q = token_set(query)
        if not q or not self._docs:
            return []
        docs = self._docs
        avg = self._total_len / docs
        gens, lens = self._gens, self._lens
        best = 0.0
        found: list[tuple[np.ndarray, np.ndarray]] = []  # (slots, score parts) per token
        vocab = self._vocab
        for tok in sorted(q):
            tid = vocab.get(tok)
            df = 0 if tid is None else self._df(tid)
            w = idf(docs, df)
            best += w * (K1 + 1.0)
            if tid is None or not df:
                continue
            slots, tfs = self._current(tid)
            norm = K1 * (1.0 - B + B * lens[slots] / avg)
            found.append((slots, (w * (K1 + 1.0)) * tfs / (tfs + norm)))
        if not found:
            return []
        hits = sum(len(slots) for slots, _ in found)
        if 8 * hits < gens.shape[0]:  # few postings: sum them per document without a dense pass
            all_slots = np.concatenate([slots for slots, _ in found])
            cand, where = np.unique(all_slots, return_inverse=True)
            # adds in token order per document, like the dense sum below (the same floats)
            values = np.bincount(where, weights=np.concatenate([part for _, part in found]))
        else:  # summed in a kept dense array; only the slots the postings name are read
            scratch, self._scratch = self._scratch, None  # a concurrent search makes its own
            n = gens.shape[0]
            if scratch is None or scratch[0].shape[0] < n:
                scratch = (np.zeros(n, dtype=np.float64), np.zeros(n, dtype=np.int32))
            scores, owner = scratch
            for slots, part in found:
                scores[slots] += part  # one posting per document and token: no repeated slot
            all_slots = np.concatenate([slots for slots, _ in found])
            at = np.arange(all_slots.shape[0], dtype=np.int32)
            owner[all_slots] = at  # each slot once: where its last posting is
            cand = all_slots[owner[all_slots] == at]
            values = scores[cand]
            scores[cand] = 0.0  # zero again for the next search
            self._scratch = scratch
        return self._top(cand, values / best, allowed, k, accept)

    def score_of(self, query: str, node_ids: Iterable[str]) -> dict[str, float]:
        """The `search` score of each given node for `query` (0.0 when it matches nothing or
        is not indexed), reading only those nodes: for re-scoring a few known ids."""
        out = dict.fromkeys(node_ids, 0.0)
        self._ready()
        if not self._docs:
            return out
        docs = self._docs
        avg = self._total_len / docs
        key = (query, docs, self._total_len)
        cached = self._weights_memo
        if cached is not None and cached[0] == key:  # the same query again (one recall asks many)
            weights, best = cached[1], cached[2]
        else:
            weights = {}
            best = 0.0
            for tok in token_set(query):
                tid = self._vocab.get(tok)
                df = 0 if tid is None else self._df(tid)
                w = idf(docs, df)
                best += w * (K1 + 1.0)
                if tid is not None and df:
                    weights[tid] = w
            self._weights_memo = (key, weights, best)
        if not weights:
            return out
        slot_of, lens = self._slot_map().get, self._lens
        asked = weights.keys()
        for node_id in out:
            slot = slot_of(node_id)
            pairs = None if slot is None else self._pairs(slot)
            if pairs is None:
                continue
            tokens, counts = pairs  # (token numbers, frequencies), each token once
            shared = asked & tokens  # in C: most nodes share none or one of the query's tokens
            if not shared:
                continue
            norm = K1 * (1.0 - B + B * float(lens[slot]) / avg)
            total = 0.0
            for tid in sorted(shared, key=tokens.index):  # in the node's order, as before
                tf = counts[tokens.index(tid)]
                total += weights[tid] * (K1 + 1.0) * tf / (tf + norm)
            out[node_id] = total / best
        return out

    def _top(
        self,
        cand: np.ndarray,
        values: np.ndarray,
        allowed: Mapping[str, Any] | None,
        k: int | None,
        accept: Callable[[str], bool] | None,
    ) -> list[tuple[str, float]]:
        """The best `k` admitted candidates: take the top `m` by score (with every candidate
        tied at the cut), keep the admitted ones, and widen `m` until `k` are found. Candidates
        tied at the cut all score the same, so of those only the best few by key are ordered
        (a synthetic chat can tie a fifth of its nodes). `accept` (a node read) is asked in rank
        order only until `k` are admitted: the ties at the cut grow with the chat."""
        total = cand.shape[0]
        m = total if k is None else min(total, max(4 * k, 64))
        while True:
            if m < total:
                top = np.argpartition(-values, m - 1)[:m]
                floor = values[top].min()
                above = np.flatnonzero(values > floor)
                tied = np.flatnonzero(values == floor)
            else:
                above, tied = np.arange(total), np.arange(0)
            ranked = sorted(
                (-float(values[i]), key, nid)
                for i, key, nid in self._admitted(above, cand, allowed)
            )
            hits = self._accepted(ranked, accept, k)
            if k is not None and len(hits) < k and len(tied):
                score = -float(values[tied[0]])
                if allowed is None:  # the key is the id: sort the ids alone
                    ids = [nid for nid in self._ids_of(cand[tied]) if nid is not None]
                    ids.sort()
                    keyed = [(score, nid, nid) for nid in ids]
                else:
                    admitted = self._admitted(tied, cand, allowed)
                    keyed = sorted((score, key, nid) for _, key, nid in admitted)
                hits += self._accepted(keyed, accept, k - len(hits))
            if k is None or len(hits) >= k or len(above) + len(tied) >= total:
                break
            m = min(total, m * 4)
        hits.sort()
        if k is not None:
            hits = hits[:k]
        return [(nid, -s) for s, _, nid in hits]

    @staticmethod
    def _accepted(
        ranked: list[tuple[float, Any, str]], accept: Callable[[str], bool] | None, k: int | None
    ) -> list[tuple[float, Any, str]]:
        """The first `k` (None: all) of `ranked` that `accept` admits, in order."""
        if accept is None:
            return ranked if k is None else ranked[:k]
        out = []
        for hit in ranked:
            if accept(hit[2]):
                out.append(hit)
                if k is not None and len(out) >= k:
                    break
        return out

    def _admitted(
        self, sel: np.ndarray, cand: np.ndarray, allowed: Mapping[str, Any] | None
    ) -> Iterator[tuple[int, Any, str]]:
        """(position, tie-break key, id) of the candidates at `sel` that `allowed` admits (its
        value is the tie-break key; without it the id is)."""
        for i, nid in zip(sel.tolist(), self._ids_of(cand[sel]), strict=True):
            if nid is None or (allowed is not None and nid not in allowed):
                continue
            yield i, (nid if allowed is None else allowed[nid]), nid
