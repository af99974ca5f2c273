"""A person's corrections on a store (engine/write/curation.py): pin, restore, merge; the pin
flag through the JSON shape, and the pinned set kept from the change log."""

from __future__ import annotations

from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.json_records import node_to_dict
from memgraph_plugin.engine.read.pinned import pinned_ids
from memgraph_plugin.engine.write.batch import apply_batch
from memgraph_plugin.engine.write.curation import merge_nodes, restore_node, set_pinned
from memgraph_plugin.storage.format.json_shapes import node_to_json


def _store() -> tuple[Store, dict[str, str]]:
    store = Store()
    ops = [
        {"op": "create", "type": "character_sheet", "title": "Mira", "ref": "mira"},
        {"op": "create", "type": "character_sheet", "title": "Mirabel", "ref": "bel",
         "fields": {"aliases": ["Bel"], "traits": "brave"}},
        {"op": "create", "type": "location_state", "title": "Lighthouse", "ref": "house"},
        {"op": "create", "type": "event", "title": "Storm", "ref": "storm",
         "fields": {"summary": "a storm"}},
        {"op": "link_upsert", "source_ref": "bel", "links": [
            {"target_ref": "storm", "relation": "involved_in", "direction": "outgoing"},
            {"target_ref": "house", "relation": "located_at", "direction": "outgoing"},
            {"target_ref": "mira", "relation": "knows", "direction": "outgoing"}]},
        {"op": "link_upsert", "source_ref": "mira", "links": [
            {"target_ref": "storm", "relation": "involved_in", "direction": "outgoing"}]},
    ]  # fmt: skip
    result = apply_batch(store, ops)
    assert not result.rejected, result.rejected
    return store, dict(result.refs)


def test_pin_and_unpin_are_kept_in_the_node_and_its_json() -> None:
    store, ids = _store()
    mira = ids["mira"]
    assert pinned_ids(store) == ()
    assert "pinned" not in node_to_dict(store.node(mira))  # the contract's keys, unpinned
    assert "pinned" not in node_to_json(store.node(mira))
    result = set_pinned(store, mira, True)
    assert result.applied and result.changed and result.node_ids == (mira,)
    assert store.node(mira).pinned and pinned_ids(store) == (mira,)
    assert node_to_dict(store.node(mira))["pinned"] is True
    assert node_to_json(store.node(mira))["pinned"] is True
    again = Store.from_dict(store.to_dict())  # export / import keeps the pin
    assert again.node(mira).pinned and pinned_ids(again) == (mira,)
    assert not set_pinned(store, mira, True).changed  # pinned already: nothing to commit
    set_pinned(store, mira, False)
    assert not store.node(mira).pinned and pinned_ids(store) == ()
    missing = set_pinned(store, "n_999", True)
    assert not missing.applied and missing.rejected[0].error.code == "NODE_NOT_FOUND"


def test_an_archived_pin_is_not_injected_and_restore_brings_the_node_back() -> None:
    store, ids = _store()
    storm = ids["storm"]
    set_pinned(store, storm, True)
    assert pinned_ids(store) == (storm,)
    apply_batch(store, [{"op": "delete", "node_id": storm}])
    assert pinned_ids(store) == ()
    refused = set_pinned(store, storm, False)
    assert refused.rejected[0].error.code == "NODE_ARCHIVED"
    back = restore_node(store, storm)
    assert back.applied and not store.node(storm).archived
    assert pinned_ids(store) == (storm,)  # the pin stayed on the record
    assert restore_node(store, storm).rejected[0].error.code == "VALIDATION_SKIP"


def test_merge_moves_edges_keeps_names_and_archives_the_duplicate() -> None:
    store, ids = _store()
    mira, bel = ids["mira"], ids["bel"]
    version = store.version
    result = merge_nodes(store, mira, bel)
    assert result.applied and result.changed and store.version == version + 1
    kept, gone = store.node(mira), store.node(bel)
    assert gone.archived and gone.superseded_by == mira
    assert list(kept.fields["aliases"]) == ["Bel", "Mirabel"]
    assert kept.fields["traits"] == "brave"  # a field Mira lacked
    edges = {(e.source, e.type, e.target) for e in store.edges_of(mira)}
    assert edges == {
        (mira, "involved_in", ids["storm"]),  # Mirabel's duplicate of Mira's own edge: once
        (mira, "located_at", ids["house"]),
    }  # and Mirabel -knows-> Mira would be a self-loop: dropped
    assert store.edges_of(bel) == ()
    assert result.removed == 3 and result.added == 1
    assert store.name_index().known_as("character_sheet", "mirabel") == {mira}


def test_merge_refuses_other_types_and_itself_and_changes_nothing() -> None:
    store, ids = _store()
    version = store.version
    other = merge_nodes(store, ids["mira"], ids["house"])
    assert other.rejected[0].error.code == "TYPE_MISMATCH"
    assert "absorb" in other.rejected[0].error.message
    itself = merge_nodes(store, ids["mira"], ids["mira"])
    assert itself.rejected[0].error.code == "VALIDATION_SKIP"
    assert store.version == version and len(store.edges_of(ids["bel"])) == 3
