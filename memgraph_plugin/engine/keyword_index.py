"""Keyword search: the tokenizer (ASCII words + CJK character bigrams) and the BM25 index.

A CJK run has no word breaks, so besides the rule "tokens are runs of ASCII letters/digits or CJK
ideographs, length >= 2" a CJK run is cut into overlapping character bigrams: the query "艾琳"
becomes the bigram "艾琳", which is also one of the bigrams of "我看见艾琳走进花园". Query and node
text are tokenized the same way.

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
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from .models import Node
from .schema import NodeTypeSpec

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_SEGMENT = re.compile(rf"[a-z0-9]+|[{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")

K1 = 1.2
B = 0.75
_MIN_POSTINGS = 2  # least capacity of a token's posting array


def tokenize(text: str) -> list[str]:
    """Tokens of `text` in order (duplicates kept): ASCII words and CJK bigrams, length >= 2."""
    out: list[str] = []
    for seg in _SEGMENT.findall(text.lower()):
        if len(seg) < 2:
            continue
        if _IS_CJK.match(seg):
            out.extend(seg[i : i + 2] for i in range(len(seg) - 1))
        else:
            out.append(seg)
    return out


def token_set(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def _flatten(value: Any, out: list[str]) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, (int, float)):
        out.append(str(value))
    elif isinstance(value, Mapping):
        for v in value.values():
            _flatten(v, out)
    elif isinstance(value, Iterable):
        for v in value:
            _flatten(v, out)


def node_text(node: Node, spec: NodeTypeSpec | None) -> str:
    """What keyword search reads of a node: title, its schema columns, its type's keywords."""
    parts: list[str] = [node.title]
    fields = node.fields
    if spec is not None:
        for column in spec.table_columns:
            if column in fields:
                _flatten(fields[column], parts)
        parts.extend(spec.keywords)
    else:
        _flatten(fields, parts)
    return " ".join(parts)


def idf(docs: int, df: int) -> float:
    """Lucene's BM25 IDF: ``ln(1 + (N - df + 0.5) / (df + 0.5))``, never negative."""
    return math.log(1.0 + (docs - df + 0.5) / (df + 0.5))


class _Postings:
    """One token's postings: a growable ``(n, 3)`` int32 array of slot, slot generation and
    term frequency (one array per token keeps a rare token's cost near its few postings)."""

    __slots__ = ("data", "size", "live", "dead")

    def __init__(self, capacity: int) -> None:
        self.data = np.empty((max(capacity, _MIN_POSTINGS), 3), dtype=np.int32)
        self.size = 0  # used rows (live + dead)
        self.live = 0  # documents holding the token now (its document frequency)
        self.dead = 0

    def extend(self, flat: list[int]) -> None:
        """Append postings given as flat ``slot, generation, frequency`` triples."""
        n = len(flat) // 3
        end = self.size + n
        if end > self.data.shape[0]:
            grown = np.empty((max(end, 2 * self.data.shape[0]), 3), dtype=np.int32)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        if n == 1:
            self.data[self.size] = flat
        else:
            self.data[self.size : end] = np.array(flat, dtype=np.int32).reshape(n, 3)
        self.size = end
        self.live += n

    def retire_one(self, slot_gens: np.ndarray) -> None:
        """One of its documents left; compact once stale rows are half of the array."""
        self.live -= 1
        self.dead += 1
        if self.dead > 8 and 2 * self.dead > self.size:
            rows = self.data[: self.size]
            kept = rows[slot_gens[rows[:, 0]] == rows[:, 1]]
            self.size, self.dead = kept.shape[0], 0
            self.data[: self.size] = kept

    def current(self, slot_gens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(slots, term frequencies) of the documents holding the token now."""
        rows = self.data[: self.size]
        if self.dead:
            rows = rows[slot_gens[rows[:, 0]] == rows[:, 1]]
        return rows[:, 0], rows[:, 2]


class KeywordIndex:
    """token -> postings with term frequencies, kept current node by node (`update` / `remove`).

    Tokens are numbered once (`_vocab`); a node keeps only its slot and a compact array of
    (token number, frequency) pairs, so an index costs about its postings, not a string per token.
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self._weights_memo: tuple[Any, dict[int, float], float] | None = None  # score_of's last
        self._vocab: dict[str, int] = {}  # token -> token number
        self._terms: list[str] = []  # token number -> token
        self._postings: dict[int, _Postings] = {}  # token number -> postings (df > 0)
        self._slot_of: dict[str, int] = {}  # node id -> slot
        self._slot_ids: list[str | None] = []  # slot -> node id (None: free)
        self._slot_terms: list[array[int] | None] = []  # slot -> flat token number, frequency
        self._free: list[int] = []
        self._gens = np.zeros(64, dtype=np.int32)  # slot -> generation (bumped on retiring)
        self._lens = np.zeros(64, dtype=np.float32)  # slot -> document length in tokens
        self._total_len = 0

    def __len__(self) -> int:
        return len(self._slot_of)

    def knows(self, token: str) -> bool:
        """Whether some indexed node holds `token` (a word variant worth searching for)."""
        tid = self._vocab.get(token)
        p = None if tid is None else self._postings.get(tid)
        return p is not None and p.live > 0

    def tokens_of(self, node_id: str) -> frozenset[str]:
        slot = self._slot_of.get(node_id)
        if slot is None:
            return frozenset()
        terms, flat = self._terms, self._slot_terms[slot]
        return frozenset(terms[t] for t in flat[0::2]) if flat is not None else frozenset()

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
        slot = self._slot_of.pop(node_id, None)
        if slot is None:
            return False
        flat = self._slot_terms[slot]
        self._total_len -= int(self._lens[slot])
        self._lens[slot] = 0.0
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
        slot_of, slot_ids, slot_terms, free = (
            self._slot_of, self._slot_ids, self._slot_terms, self._free
        )
        vocab, terms_list = self._vocab, self._terms
        pending: dict[int, list[int]] = {}  # token number -> flat slot, generation, frequency
        placed: list[tuple[int, int]] = []  # (slot, length) of the documents in `pending`
        for node, spec in items:
            toks = tokenize(node_text(node, spec))
            flat = array("i")
            for tok, tf in Counter(toks).items():
                tid = vocab.get(tok)
                if tid is None:
                    tid = vocab[tok] = len(terms_list)
                    terms_list.append(tok)
                flat.append(tid)
                flat.append(tf)
            old = slot_of.get(node.id)
            if old is not None:
                if slot_terms[old] == flat:
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
                p = postings[tid] = _Postings(len(flat) // 3)
            p.extend(flat)

    def remove(self, node_id: str) -> None:
        self._retire(node_id)

    # -- search ------------------------------------------------------------------------------

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
        q = token_set(query)
        if not q or not self._slot_of:
            return []
        docs = len(self._slot_of)
        avg = self._total_len / docs
        gens, lens = self._gens, self._lens
        best = 0.0
        found: list[tuple[np.ndarray, np.ndarray]] = []  # (slots, score parts) per token
        vocab, postings = self._vocab, self._postings
        for tok in sorted(q):
            tid = vocab.get(tok)
            p = None if tid is None else postings.get(tid)
            w = idf(docs, 0 if p is None else p.live)
            best += w * (K1 + 1.0)
            if p is None:
                continue
            slots, tfs = p.current(gens)
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
        else:
            scores = np.zeros(gens.shape[0], dtype=np.float64)
            for slots, part in found:
                scores[slots] += part  # one posting per document and token: no repeated slot
            cand = np.flatnonzero(scores)
            values = scores[cand]
        return self._top(cand, values / best, allowed, k, accept)

    def score_of(self, query: str, node_ids: Iterable[str]) -> dict[str, float]:
        """The `search` score of each given node for `query` (0.0 when it matches nothing or
        is not indexed), reading only those nodes: for re-scoring a few known ids."""
        out = dict.fromkeys(node_ids, 0.0)
        if not self._slot_of:
            return out
        docs = len(self._slot_of)
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
                p = None if tid is None else self._postings.get(tid)
                w = idf(docs, 0 if p is None else p.live)
                best += w * (K1 + 1.0)
                if tid is not None and p is not None:
                    weights[tid] = w
            self._weights_memo = (key, weights, best)
        if not weights:
            return out
        slot_of, slot_terms, lens = self._slot_of.get, self._slot_terms, self._lens
        get = weights.get
        for node_id in out:
            slot = slot_of(node_id)
            flat = None if slot is None else slot_terms[slot]
            if flat is None:
                continue
            norm = K1 * (1.0 - B + B * float(lens[slot]) / avg)
            total = 0.0
            pairs = iter(flat)
            for tid, tf in zip(pairs, pairs, strict=True):  # (token number, frequency)
                w = get(tid)
                if w is not None:
                    total += w * (K1 + 1.0) * tf / (tf + norm)
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
        tied at the cut), keep the admitted ones, and widen `m` until `k` are found."""
        ids = self._slot_ids
        total = cand.shape[0]
        m = total if k is None else min(total, max(4 * k, 64))
        while True:
            if m < total:
                top = np.argpartition(-values, m - 1)[:m]
                floor = values[top].min()
                sel = np.flatnonzero(values >= floor)
            else:
                sel = np.arange(total)
            hits = []
            for i in sel.tolist():
                nid = ids[int(cand[i])]
                if nid is None or (allowed is not None and nid not in allowed):
                    continue
                if accept is not None and not accept(nid):
                    continue
                hits.append((-float(values[i]), nid if allowed is None else allowed[nid], nid))
            if k is None or len(hits) >= k or sel.shape[0] >= total:
                break
            m = min(total, m * 4)
        hits.sort()
        if k is not None:
            hits = hits[:k]
        return [(nid, -s) for s, _, nid in hits]
