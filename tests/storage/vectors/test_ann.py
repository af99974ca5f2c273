"""The ANN path on a small threshold: LanceDB IVF_PQ candidates + exact delta, exact scores."""

from __future__ import annotations

import numpy as np

from memgraph_plugin.chats.chat_cache import PersistedChats
from memgraph_plugin.embedding import HashingProfile, NodeEmbedder
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.models import Node
from memgraph_plugin.storage import ChatState, LanceStorage, StorageSettings
from memgraph_plugin.storage.vectors.vector_ann import LanceAnn, hybrid_search
from tests.storage.helpers import node

WORDS = [
    "harbor",
    "storm",
    "guild",
    "betrayal",
    "garden",
    "picnic",
    "dragon",
    "castle",
    "river",
    "forest",
    "merchant",
    "gold",
]


def _chats(
    tmp_path, threshold: int, profile: HashingProfile | None = None, *, checkpoint_every: int
) -> PersistedChats:
    """Loaded chats over ``tmp_path/db`` whose vector search takes ANN past `threshold` nodes."""
    return PersistedChats(
        LanceStorage(StorageSettings(uri=str(tmp_path / "db"), checkpoint_every=checkpoint_every)),
        store_from_dict=lambda data: Store.from_dict(data),
        profile=profile or HashingProfile(dim=64),
        ann_threshold=threshold,
    )


def _put_events(store: Store, rng: np.random.Generator, ids: list[str]) -> None:
    """An event titled with four random `WORDS` for each id (in the caller's transaction)."""
    for nid in ids:
        text = " ".join(rng.choice(WORDS, size=4))
        store.put_node(Node(id=nid, type="event", title=text, fields={"summary": text}))


async def _two_checkpointed_batches(writer: PersistedChats, seed: int) -> None:
    """Chat "big": two commits of 200 random-word events (``n_<batch>_<i>``), the second
    checkpointed with every vector (its snapshot waited for)."""
    rng = np.random.default_rng(seed)
    for batch in range(2):
        chat = await writer.open("big")
        with chat.store.transaction():
            _put_events(chat.store, rng, [f"n_{batch}_{i}" for i in range(200)])
        await writer.persist("big", chat.store.take_changeset(), applied=200)
        assert writer.storage.maintenance.wait_idle()  # the snapshot, in the background


def test_ann_search_matches_exact_search(tmp_path):
    st = LanceStorage(StorageSettings(uri=str(tmp_path / "db")))
    emb = NodeEmbedder(HashingProfile(dim=64))
    rng = np.random.default_rng(3)
    nodes = {}
    for i in range(400):
        words = rng.choice(WORDS, size=4)
        nodes[f"n_{i}"] = node(f"n_{i}", " ".join(words), type="event" if i % 3 else "thread")
    state = ChatState(
        chat_id="big",
        version=1,
        data={"nodes": nodes, "edges": [], "nodeSeq": 400, "seqCounter": 0},
    )
    block = emb(nodes.values())
    st.checkpoint_sync("big", state, block)
    # another chat shares the table but never shows up
    st.checkpoint_sync(
        "other",
        ChatState(
            chat_id="other",
            version=1,
            data={
                "nodes": {"o_1": node("o_1", "harbor storm")},
                "edges": [],
                "nodeSeq": 1,
                "seqCounter": 0,
            },
        ),
        emb([node("o_1", "harbor storm")]),
    )

    index = emb.new_index()
    emb.apply(index, nodes.values(), block)
    # after the checkpoint: one node archived, one new node (both only in memory: "dirty")
    nodes["n_1"] = node("n_1", nodes["n_1"]["title"], archived=True)
    nodes["n_new"] = node("n_new", "harbor storm betrayal")
    changed = [nodes["n_1"], nodes["n_new"]]
    emb.apply(index, changed, emb(changed))

    ann = LanceAnn(st._nodes_table(64), 64, threshold=300)
    assert ann.ensure_index() and ann.has_index()
    q = emb.embed_query("harbor storm betrayal")
    chain = st.snapshot_chain("big", 1)  # the snapshot's row sets
    got = hybrid_search(
        index, ann, chat_id="big", ckpt_version=chain, dirty={"n_1", "n_new"}, query=q, k=10
    )
    exact = index.search(q, k=10)
    assert got[0][0] == "n_new" == exact[0][0]
    assert "n_1" not in [g[0] for g in got] and "o_1" not in [g[0] for g in got]
    assert len({g[0] for g in got} & {e[0] for e in exact}) >= 7  # ANN recall
    for node_id, score in got:  # scores are the exact cosine
        assert abs(score - float(index.vector(node_id) @ q)) < 1e-5
    threads = hybrid_search(
        index, ann, chat_id="big", ckpt_version=chain, dirty=set(), query=q, k=5, types=["thread"]
    )
    assert threads and all(nodes[i]["type"] == "thread" for i, _ in threads)


def test_ann_needs_256_rows(tmp_path):
    st = LanceStorage(StorageSettings(uri=str(tmp_path / "db")))
    emb = NodeEmbedder(HashingProfile(dim=64))
    nodes = {f"n_{i}": node(f"n_{i}") for i in range(10)}
    st.checkpoint_sync(
        "c",
        ChatState(
            chat_id="c",
            version=1,
            data={"nodes": nodes, "edges": [], "nodeSeq": 10, "seqCounter": 0},
        ),
        emb(nodes.values()),
    )
    assert LanceAnn(st._nodes_table(64), 64).ensure_index() is False


async def test_vector_search_switches_to_ann_past_the_threshold(tmp_path):
    def chats(threshold: int) -> PersistedChats:
        return _chats(tmp_path, threshold, checkpoint_every=2)

    writer = chats(10_000)
    await _two_checkpointed_batches(writer, seed=5)  # the second holds every vector
    exact = await writer.vector_search("big", query="harbor storm betrayal", types=None, k=10)
    assert writer._ann is None  # below the threshold: exact numpy search only

    reader = chats(300)
    first = await reader.vector_search("big", query="harbor storm betrayal", types=None, k=10)
    assert reader.last_search_mode == "exact" and first == exact  # the index builds meanwhile
    assert await reader.ann_built()
    got = await reader.vector_search("big", query="harbor storm betrayal", types=None, k=10)
    assert reader.last_search_mode == "ann"  # the IVF_PQ path ran
    assert len({g[0] for g in got} & {e[0] for e in exact}) >= 7
    other = chats(300)  # another process: uses the index as built, no rebuild
    await other.vector_search("big", query="harbor", types=None, k=3)
    assert other.last_search_mode == "ann" and other._ann_build is None
    exact_scores = dict(exact)
    for node_id, score in got:
        if node_id in exact_scores:
            assert abs(score - exact_scores[node_id]) < 1e-5


async def test_ann_after_reload_sees_nodes_changed_since_the_checkpoint(tmp_path):
    """A reloaded chat whose journal has commits after its checkpoint: those nodes are searched
    exactly (they are not in the checkpoint's vector rows, or only with their old text)."""
    def chats(threshold: int) -> PersistedChats:
        return _chats(tmp_path, threshold, checkpoint_every=2)

    writer = chats(10_000)
    await _two_checkpointed_batches(writer, seed=11)  # version 2 holds every vector
    chat = await writer.open("big")
    with chat.store.transaction():  # version 3: only in the journal
        chat.store.put_node(
            Node(id="n_new", type="event", title="zebra lighthouse", fields={"summary": "zebra"})
        )
        old = chat.store.node("n_0_5")
        chat.store.put_node(Node(id=old.id, type="event", title="kraken quasar", fields={}))
    await writer.persist("big", chat.store.take_changeset(), applied=2)
    assert writer.storage.checkpointed_version("big") == 2

    reader = chats(300)
    await reader.vector_search("big", query="zebra lighthouse", types=None, k=5)
    assert await reader.ann_built()
    got = await reader.vector_search("big", query="zebra lighthouse", types=None, k=5)
    assert reader.last_search_mode == "ann"  # the IVF_PQ path ran
    assert got[0][0] == "n_new"
    got = await reader.vector_search("big", query="kraken quasar", types=None, k=5)
    assert got[0][0] == "n_0_5"


async def test_ann_never_takes_candidates_of_another_profile(tmp_path):
    """The checkpoint's vector rows were made by another profile of the same dimension: the
    search must not trust them (every node is searched exactly instead)."""
    writer = _chats(tmp_path, 10_000, HashingProfile(dim=64, name="first"), checkpoint_every=1)
    rng = np.random.default_rng(12)
    chat = await writer.open("big")
    with chat.store.transaction():
        _put_events(chat.store, rng, [f"n_{i}" for i in range(400)])
        chat.store.put_node(Node(id="n_x", type="event", title="zebra lighthouse", fields={}))
    await writer.persist("big", chat.store.take_changeset(), applied=401)  # checkpointed
    assert writer.storage.maintenance.wait_idle()

    class Shuffled(HashingProfile):
        """Same name space, other vectors: every bucket moved."""

        def embed(self, texts):
            return np.roll(super().embed(texts), 17, axis=1)

    reader = PersistedChats(
        LanceStorage(StorageSettings(uri=str(tmp_path / "db"))),
        store_from_dict=lambda data: Store.from_dict(data),
        profile=Shuffled(dim=64, name="second"),
        ann_threshold=300,
    )
    await reader.vector_search("big", query="zebra lighthouse", types=None, k=3)
    assert await reader.ann_built()
    got = await reader.vector_search("big", query="zebra lighthouse", types=None, k=3)
    assert reader.last_search_mode == "ann" and got[0][0] == "n_x"
    q = reader.embedder.embed_query("zebra lighthouse")
    index = reader.cached("big").index
    assert abs(got[0][1] - index.score("n_x", q)) < 1e-6
