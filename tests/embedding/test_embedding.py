"""The hashing profile, the vector index and profile resolution through a real pluggy hook."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pluggy
import pytest

from memgraph_plugin.embedding import (
    HashingProfile,
    NodeEmbedder,
    UnknownProfileError,
    VectorIndex,
    is_searchable,
    node_text,
    resolve_profile,
)
from tests.embedding import hashing_definition as definition
from tests.storage.helpers import node


@pytest.mark.process
def test_hashing_is_normalised_and_offline_deterministic():
    p = HashingProfile()
    vecs = p.embed(["the betrayal at the harbor", "", "龙之谷 的 背叛"])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), [1, 0, 1], atol=1e-5)
    # same bytes in another process (blake2b, not the per-process randomised hash())
    code = (
        "from memgraph_plugin.embedding import HashingProfile;"
        "import sys; sys.stdout.write(HashingProfile().embed(['the betrayal at the harbor'])"
        "[0].tobytes().hex())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    ).stdout
    assert other == vecs[0].tobytes().hex()


def test_hashing_vectors_never_change_across_versions():
    """Stored vectors are reused by profile name: the same text must give the same bytes as the
    profile always did (one feature added at a time, in float32), never merely close ones."""
    p = HashingProfile()
    texts = ["Mira meets the guild at the harbor, the harbor at night", "über café 東京 ß"]
    texts += ["", "!!!"]
    digest = hashlib.blake2b(p.embed(texts).tobytes(), digest_size=16).hexdigest()
    assert digest == "ae99927abcfbd21561c14073f52a5946"  # computed by the one-at-a-time loop

    more = [f"scene {i}: the guild, the guild and the guild again, pier {i * 7}" for i in range(50)]
    for text in texts + more:
        expected = definition.vector(text, p.dim).tobytes()
        assert p.embed_one(text).tobytes() == expected, text


def test_hashing_similarity_follows_wording():
    p = HashingProfile(dim=256)
    a, b, c = p.embed(["Mira betrays the harbor guild", "the guild betrayed by Mira", "picnic"])
    assert a @ b > 0.3 > a @ c
    assert p.embed(["betrayal"])[0] @ p.embed(["betrayals"])[0] > 0.5  # char n-grams


def test_node_text_uses_type_embedding_columns():
    n = node(
        "n_1",
        "Mira",
        type="character_sheet",
        fields={"traits": ["brave", "sly"], "goal": "gold", "secret": "x"},
    )
    assert node_text(n, {"character_sheet": ("traits", "goal")}) == "Mira\nbrave\nsly\ngold"
    assert "x" in node_text(n).split("\n")  # no columns known: every field
    assert not is_searchable(node("a", archived=True))
    assert not is_searchable(node("b", type="recall_trace"))
    assert is_searchable(node("c"))


def _index(n: int = 50, dim: int = 16) -> tuple[VectorIndex, np.ndarray]:
    rng = np.random.default_rng(7)
    m = rng.standard_normal((n, dim)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    idx = VectorIndex(dim, "t")
    idx.upsert(
        [f"n_{i}" for i in range(n)],
        m,
        ["event" if i % 2 else "thread" for i in range(n)],
        [True] * n,
    )
    return idx, m


def test_index_search_is_exact_cosine_topk():
    idx, m = _index()
    q = m[3] + 0.1 * m[8]
    q /= np.linalg.norm(q)
    got = idx.search(q, k=5)
    scores = m @ q
    want = sorted(((f"n_{i}", float(s)) for i, s in enumerate(scores)), key=lambda t: -t[1])[:5]
    assert [g[0] for g in got] == [w[0] for w in want]
    np.testing.assert_allclose([g[1] for g in got], [w[1] for w in want], rtol=1e-5)
    assert len(idx.search(q, k=100)) == 50
    assert idx.search(np.zeros(16), k=3) == []


def test_index_types_flags_removal_and_growth():
    idx, m = _index()
    got = idx.search(m[4], k=50, types=["THREAD"])
    assert got and all(int(i.split("_")[1]) % 2 == 0 for i, _ in got)
    assert idx.search(m[4], k=5, types=["nope"]) == []
    idx.set_flags(["n_4"], ["thread"], [False])
    assert "n_4" not in [i for i, _ in idx.search(m[4], k=50)]
    idx.remove([f"n_{i}" for i in range(40)])
    assert len(idx) == 10
    assert {i for i, _ in idx.search(m[45], k=50)} == {f"n_{i}" for i in range(40, 50)}
    big = np.tile(m[:1], (200, 1))
    idx.upsert([f"x_{i}" for i in range(200)], big, ["event"] * 200, [True] * 200)
    idx.remove([f"x_{i}" for i in range(150)])  # triggers compaction
    ids, matrix = idx.items()
    assert len(ids) == 60 and matrix.shape == (60, 16)
    assert idx.search(m[0], k=1)[0][1] == pytest.approx(1.0, abs=1e-5)


def test_index_from_read_only_arrays_adopts_them_and_follows_writes():
    """An index built from stored vectors takes the matrix as it is (read-only memory, not
    copied); replacing, adding and removing rows afterwards gives the same searches as an
    index written row by row, through a compaction too."""
    rng = np.random.default_rng(5)
    m = rng.standard_normal((120, 16)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    stored = m.copy()
    stored.flags.writeable = False
    ids = [f"n_{i}" for i in range(120)]
    types = np.zeros(120, dtype=np.int64)
    built = VectorIndex.from_arrays("p", ids, stored, ["event"], types, np.ones(120, dtype=bool))
    assert np.shares_memory(built._base.blocks[0], stored)  # adopted, not copied
    plain = VectorIndex(16, "p")
    plain.upsert(ids, m, ["event"] * 120, [True] * 120)
    fresh = rng.standard_normal((30, 16)).astype(np.float32)
    fresh /= np.linalg.norm(fresh, axis=1, keepdims=True)
    for idx in (built, plain):
        idx.upsert([f"n_{i}" for i in range(10)], fresh[:10], ["event"] * 10, [True] * 10)
        idx.upsert([f"x_{i}" for i in range(20)], fresh[10:], ["thread"] * 20, [True] * 20)
        idx.remove([f"n_{i}" for i in range(10, 90)])  # compacts the adopted index
    assert np.array_equal(stored, m)  # the stored vectors were never written
    for q in (fresh[0], fresh[15], m[100]):
        assert built.search(q, k=12) == plain.search(q, k=12)
        assert built.search(q, k=5, types=["thread"]) == plain.search(q, k=5, types=["thread"])
    assert sorted(built.items()[0]) == sorted(plain.items()[0])
    assert np.allclose(built.vector("n_3"), fresh[3]) and np.allclose(built.vector("n_95"), m[95])


def test_node_embedder_fills_an_index():
    emb = NodeEmbedder(HashingProfile())
    nodes = [
        node("n_1", "harbor betrayal"),
        node("n_2", "garden picnic", archived=True),
        node("n_3", "storm at the harbor"),
    ]
    block = emb(nodes)
    assert block is not None and block.ids == ("n_1", "n_2", "n_3")
    idx = emb.new_index()
    emb.apply(idx, nodes, block)
    hits = idx.search(emb.embed_query("harbor"), k=5)
    assert [h[0] for h in hits][:1] in (["n_1"], ["n_3"]) and "n_2" not in [h[0] for h in hits]


class _Specs:
    hookspec = pluggy.HookspecMarker("memgraph_host")

    @hookspec
    def memgraph_embedding_profiles(self):
        """Profiles a plugin offers."""


hookimpl = pluggy.HookimplMarker("memgraph_host")


class _Tiny:
    name = "tiny"
    dim = 8

    def embed(self, texts):
        out = np.zeros((len(texts), 8), dtype=np.float32)
        out[:, 0] = 1.0
        return out


class _Provider:
    @hookimpl
    def memgraph_embedding_profiles(self):
        return [_Tiny()]


class _Broken:
    @hookimpl
    def memgraph_embedding_profiles(self):
        raise RuntimeError("boom")


def test_profiles_resolve_from_settings_names_and_plugins(caplog):
    pm = pluggy.PluginManager("memgraph_host")
    pm.add_hookspecs(_Specs)
    pm.register(_Provider(), name="provider")
    pm.register(_Broken(), name="broken-plugin")
    assert resolve_profile(None, pm) is None
    assert isinstance(resolve_profile("hashing", pm), HashingProfile)
    tiny = resolve_profile("tiny", pm)
    assert tiny is not None and tiny.dim == 8
    assert "broken-plugin" in caplog.text
    with pytest.raises(UnknownProfileError, match="available: hashing, tiny"):
        resolve_profile("nope", pm)
