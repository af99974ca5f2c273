"""Seq bookkeeping, one rule: a batch that applies nothing commits
nothing; the seq a result reports is the seq history records; the version a result reports is
the journal version `rollback --to` takes."""

from __future__ import annotations

from typing import Any

from host import Host
from tests.hosts import memory_session, started_host
from tests.spies import CommitSpy


def _create(summary: str) -> dict:
    return {"op": "create", "type": "event", "fields": {"summary": summary}}


async def _spied(tmp_path) -> tuple[Host, CommitSpy, Any, Any]:
    """A started host with a commit spy, its memory-graph service and a session on chat "c"."""
    host = await started_host(tmp_path / "d")
    spy = CommitSpy()
    host.register_plugin(spy, name="spy")
    return host, spy, host.registry.get("memory-graph"), await memory_session(host, "c")


async def test_a_fully_rejected_batch_commits_nothing_and_moves_no_seq(tmp_path):
    host, spy, service, s = await _spied(tmp_path)
    await s.apply_extraction_batch(ops=[_create("one")], max_seq=1)
    result = await s.apply_extraction_batch(ops=[{"op": "explode"}], max_seq=10**12)
    assert result.rejected and not result.applied and not result.changed
    assert s.store.seq_counter == 1
    await host.drain()
    assert len(spy.seen) == 1  # no memgraph_commit for the batch that applied nothing
    assert [r.seq for r in await service.history("c")] == [1]

    second = await s.apply_extraction_batch(ops=[_create("two")], max_seq=2)
    history = await service.history("c")
    assert second.seq == history[-1].seq == 2
    # rollback to message 1 keeps message 1's write, drops message 2's
    await service.rollback("c", seq=1)
    s = await memory_session(host, "c")
    assert sorted(n.fields["summary"] for n in s.list_nodes()) == ["one"]
    await host.stop()


async def test_an_empty_batch_fires_no_commit(tmp_path):
    host = await started_host(tmp_path / "d")
    spy = CommitSpy()
    host.register_plugin(spy, name="spy")
    s = await memory_session(host, "c")
    result = await s.apply_extraction_batch(ops=[], max_seq=3)
    await host.drain()
    assert not result.changed and spy.seen == []
    assert await host.registry.get("memory-graph").history("c") == ()
    await host.stop()


async def test_result_seq_is_the_seq_history_records(tmp_path):
    host = await started_host(tmp_path / "d")
    service = host.registry.get("memory-graph")
    s = await memory_session(host, "c")
    await s.apply_extraction_batch(ops=[_create("late")], max_seq=5)
    older = await s.apply_extraction_batch(ops=[_create("older")], max_seq=2)
    assert older.seq == (await service.history("c"))[-1].seq
    await host.stop()


async def test_batch_result_version_is_the_journal_version_after_a_reload(tmp_path):
    host = await started_host(tmp_path / "d")
    s = await memory_session(host, "c")
    for i in range(3):
        await s.apply_extraction_batch(ops=[_create(f"n{i}")], max_seq=i + 1)
    await host.stop()

    again = await started_host(tmp_path / "d")
    service = again.registry.get("memory-graph")
    s2 = await memory_session(again, "c")
    result = await s2.apply_extraction_batch(ops=[_create("after reload")], max_seq=4)
    assert result.version == (await service.history("c"))[-1].version == 4
    nothing = await s2.apply_extraction_batch(ops=[{"op": "explode"}])
    assert nothing.version == 4  # nothing committed: still the chat's journal version
    await service.rollback("c", version=result.version - 1)
    s3 = await memory_session(again, "c")
    assert "after reload" not in [n.fields["summary"] for n in s3.list_nodes()]
    await again.stop()


async def test_a_batch_that_changes_nothing_commits_nothing_and_moves_no_seq(tmp_path):
    """Same-value edit, duplicate link, deleting an absent link, a refused self-link."""
    host, spy, service, s = await _spied(tmp_path)
    first = await s.apply_extraction_batch(
        ops=[
            {**_create("ann"), "ref": "a"},
            {**_create("bob"), "ref": "b", "links": [{"target_ref": "a", "relation": "knows"}]},
        ],
        max_seq=2,
    )
    a, b = first.node_ids
    await s.edit_node(id=a, set_fields={"mood": "calm"})
    before = await service.history("c")
    await host.drain()
    commits = len(spy.seen)
    no_ops = [
        [{"op": "edit", "node_id": a, "set_fields": {"mood": "calm"}}],
        [{"op": "edit", "node_id": a, "title": s.store.node(a).title}],
        [
            {
                "op": "link_upsert",
                "source_node_id": b,
                "links": [{"target_node_id": a, "relation": "knows"}],
            }
        ],
        [{"op": "link_delete", "source_node_id": a, "target_node_id": b, "relation": "likes"}],
        [
            {
                "op": "link_upsert",
                "source_node_id": a,
                "links": [{"target_node_id": a, "relation": "knows"}],
            }
        ],
    ]
    for seq, ops in enumerate(no_ops, start=3):
        result = await s.apply_extraction_batch(ops=ops, max_seq=seq)
        assert not result.changed, ops
        assert result.seq == 2 and s.store.seq_counter == 2, ops
    assert await service.history("c") == before
    await host.drain()
    assert len(spy.seen) == commits
    assert not (await s.edit_node(id=a, set_fields={"mood": "calm"})).changed
    assert (
        await s.upsert_links(source={"id": b}, links=[{"target": {"id": a}, "relation": "knows"}])
    ).applied == 0
    assert (await s.delete_links(source={"id": a}, target={"id": b}, relation="likes")).removed == 0
    assert await service.history("c") == before
    host2 = await started_host(tmp_path / "d")
    assert (await memory_session(host2, "c")).store.seq_counter == 2
    await host2.stop()
    await host.stop()
