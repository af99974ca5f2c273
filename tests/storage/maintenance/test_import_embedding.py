"""The import hands its nodes to the embedder: a `NodeEmbedder` reads them as they are (no copy
of 100k dicts), any other embedder gets copies, so one that changes them changes nothing stored."""

from __future__ import annotations

from memgraph_plugin.embedding.embedder import NodeEmbedder
from memgraph_plugin.embedding.hashing import HashingProfile
from memgraph_plugin.embedding.profile import VectorBlock
from memgraph_plugin.embedding.text import node_text
from memgraph_plugin.engine.load.store_import import normalised_store
from memgraph_plugin.storage import LanceStorage, StorageSettings

from .import_child import big_store


def test_an_embedder_that_changes_its_nodes_changes_nothing_stored(tmp_path):
    seen: list[int] = []

    def meddling(nodes):
        seen.append(len(nodes))
        for n in nodes:
            n["title"] = "changed"
        return None

    storage = LanceStorage(StorageSettings(uri=str(tmp_path / "db")), embedder=meddling)
    data = normalised_store(big_store(20, "old"))
    storage.import_sync("c", data)
    assert seen == [20]
    assert all(n["title"] != "changed" for n in data["nodes"].values())
    loaded = storage.load_sync("c").data["nodes"]
    assert all(n["title"] != "changed" for n in loaded.values())
    storage.close()


def test_a_node_embedder_stores_each_nodes_own_vector_at_import(tmp_path):
    embedder = NodeEmbedder(HashingProfile(dim=32))
    storage = LanceStorage(StorageSettings(uri=str(tmp_path / "db")), embedder=embedder)
    data = normalised_store(big_store(30, "old"))
    storage.import_sync("c", data)
    block = storage.load_vectors_sync("c", storage.load_sync("c"), profile=embedder.name)
    assert isinstance(block, VectorBlock) and len(block.ids) == 30
    single = HashingProfile(dim=32)
    for i, nid in enumerate(block.ids):  # no schema: every field of the node is embedded
        expected = single.embed_one(node_text(data["nodes"][nid]))
        assert block.matrix[i].tobytes() == expected.tobytes(), nid
    storage.close()


def test_an_import_whose_embedding_fails_commits_without_vectors(tmp_path, caplog):
    def broken(nodes):
        raise RuntimeError("model crashed")

    storage = LanceStorage(StorageSettings(uri=str(tmp_path / "db")), embedder=broken)
    data = normalised_store(big_store(15, "old"))
    assert storage.import_sync("c", data).version == 1
    assert "embedding failed; chat 'c' commits without vectors" in caplog.text
    state = storage.load_sync("c")
    assert set(state.data["nodes"]) == set(data["nodes"])
    assert storage.load_vectors_sync("c", state, profile=None) is None
    storage.close()


def test_a_reimport_embeds_only_changed_nodes_and_keeps_the_others_vectors(tmp_path):
    embedded: list[int] = []

    class Counting(NodeEmbedder):
        def __call__(self, nodes):
            embedded.append(len(list(nodes)))
            return super().__call__(nodes)

    embedder = Counting(HashingProfile(dim=16))
    storage = LanceStorage(StorageSettings(uri=str(tmp_path / "db")), embedder=embedder)
    first = normalised_store(big_store(12, "old"))
    storage.import_sync("c", first)
    before = storage.load_vectors_sync("c", storage.load_sync("c"), profile=embedder.name)
    second = normalised_store(big_store(12, "old"))
    changed = sorted(second["nodes"])[:3]
    for nid in changed:
        second["nodes"][nid]["title"] = "a new title " + nid
    storage.import_sync("c", second)
    after = storage.load_vectors_sync("c", storage.load_sync("c"), profile=embedder.name)
    assert embedded == [12, 3]
    assert before is not None and after is not None and set(after.ids) == set(before.ids)
    old_rows = {nid: before.matrix[i] for i, nid in enumerate(before.ids)}
    single = HashingProfile(dim=16)
    for i, nid in enumerate(after.ids):
        if nid in changed:
            expected = single.embed_one(node_text(second["nodes"][nid]))
            assert after.matrix[i].tobytes() == expected.tobytes(), nid
        else:
            assert after.matrix[i].tobytes() == old_rows[nid].tobytes(), nid
    storage.close()
