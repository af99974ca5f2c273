"""A bounded keyword search over snapshot columns reads common tokens by impact class and still
returns exactly the full search's top k (the same ids, order and float scores), also after
writes retire, reuse and add slots."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from memgraph_plugin.engine import keyword_index as keyword_index_module
from memgraph_plugin.engine.keyword_columns import KeywordColumns
from memgraph_plugin.engine.keyword_impact import ImpactClasses
from memgraph_plugin.engine.keyword_index import KeywordIndex, keyword_fingerprint
from memgraph_plugin.engine.keyword_text import node_text, tokenize
from memgraph_plugin.engine.models import Node
from memgraph_plugin.engine.schema import DEFAULT_SCHEMA

SPEC = DEFAULT_SCHEMA.get("thread")
WORDS = ["harbor", "storm", "lantern", "guild", "seal", "garden", "night", "bridge", "tower",
         "ship", "oath", "crown"]
QUERIES = ["harbor", "harbor storm", "lantern night tower", "oath crown ship seal", "garden",
           "storm storm", "missing harbor"]


def _text(rng: random.Random) -> str:
    # skewed word choice, lengths 1-14: a few common tokens with many ties at equal scores
    return " ".join(rng.choices(WORDS, weights=range(len(WORDS), 0, -1))[0]
                    for _ in range(rng.choice([1, 2, 3, 8, 8, 8, 12, 14])))


def _columns(nodes: list[Node]) -> KeywordColumns:
    tokens = [Counter(tokenize(node_text(n, SPEC))) for n in nodes]
    vocab = sorted({t for c in tokens for t in c})
    at = {t: i for i, t in enumerate(vocab)}
    return KeywordColumns(
        keyword_fingerprint(DEFAULT_SCHEMA),
        (pa.array(vocab),),
        pa.array([n.id for n in nodes]),
        pa.array([[at[t] for t in c] for c in tokens], pa.list_(pa.int32())),
        pa.array([list(c.values()) for c in tokens], pa.list_(pa.int32())),
    )


def _pair(count: int, seed: int) -> tuple[KeywordIndex, KeywordIndex, random.Random]:
    rng = random.Random(seed)
    nodes = [Node(f"n{i}", "thread", title=_text(rng)) for i in range(count)]
    adopted = KeywordIndex()
    assert adopted.adopt(_columns(nodes), DEFAULT_SCHEMA, count) == []
    full = KeywordIndex()
    full.update_many((n, SPEC) for n in nodes)
    return adopted, full, rng


def _same(adopted: KeywordIndex, full: KeywordIndex, pool: dict[str, int]) -> None:
    for query in QUERIES:
        for k in (1, 3, 10, 40):
            assert adopted.search(query, None, k) == full.search(query, None, k), (query, k)
            assert adopted.search(query, pool, k) == full.search(query, pool, k), (query, k)
            odd = adopted.search(query, None, k, accept=lambda i: i.endswith(("1", "3", "7")))
            assert odd == full.search(query, None, k, accept=lambda i: i.endswith(("1", "3", "7")))


def test_bounded_search_by_impact_equals_the_full_search(monkeypatch) -> None:
    monkeypatch.setattr("memgraph_plugin.engine.keyword_impact.BIG", 32)
    reads: list[int] = []
    top = KeywordIndex._top

    def spy(self, cand, values, allowed, k, accept):  # candidates each ranking step reads
        reads.append(cand.shape[0])
        return top(self, cand, values, allowed, k, accept)

    monkeypatch.setattr(keyword_index_module.KeywordIndex, "_top", spy)
    adopted, full, rng = _pair(3000, 11)
    pool = {f"n{i}": rng.randrange(50) for i in range(3000)}  # many ties on the pool key too
    _same(adopted, full, pool)
    assert adopted._classes  # common tokens were read by impact ...
    reads.clear()
    adopted.search("harbor", None, 10)
    full.search("harbor", None, 10)
    assert reads[0] < reads[-1] / 2  # ... reading a fraction of the documents holding them
    # writes: rewrites retire base slots (reused by new nodes), removals, new nodes
    for step in range(400):
        nid = f"n{rng.randrange(3300)}"
        for index in (adopted, full):
            if step % 7 == 0:
                index.remove(nid)
            else:
                index.update(Node(nid, "thread", title=_text(random.Random(step))), SPEC)
    _same(adopted, full, pool)


def test_impact_classes_take_the_best_postings_first() -> None:
    freqs = np.array([1, 3, 1, 2, 1, 1], dtype=np.int32)
    lens = np.array([8, 8, 2, 8, 8, 30], dtype=np.float32)
    classes = ImpactClasses(freqs, lens)
    assert len(classes.tfs) == 5  # (1, 8) twice
    pos, rest = classes.take(2, 1.0, 8.0, 1.2, 0.75)
    taken = sorted(pos.tolist())
    assert taken == [1, 2]  # tf 3 at length 8, then tf 1 at length 2 (> tf 2 at length 8)
    assert rest == pytest.approx(2.2 * 2 / (2 + 1.2))  # tf 2 at length 8: the best left out
    everything, none_left = classes.take(6, 1.0, 8.0, 1.2, 0.75)
    assert sorted(everything.tolist()) == list(range(6)) and none_left == 0.0
