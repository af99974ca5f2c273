"""The compactor alone on a real host: rollups after commits, depth by depth, no commit loop."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from host import hookimpl
from sample_plugins import compactor
from sample_plugins.compactor import extractive_summary

from .conftest import CHAT, CommitSpy, event, open_session, settle

SUMMARIES = [
    "Ilya lands at the harbour. Juno inspects the satchel.",
    "Ilya meets Quill in the market. The satchel holds a ledger page.",
    "Juno raids the market. Pim helps Ilya escape with the satchel.",
]


def test_extractive_summary_takes_the_key_sentence_of_each_child_in_order() -> None:
    briefs = [SimpleNamespace(summary=s, title=f"t{i}") for i, s in enumerate(SUMMARIES)]
    text = extractive_summary(briefs)
    # one sentence per child, the one about what the group shares (Ilya, the satchel, the
    # market), in the children's order
    assert text == (
        "Juno inspects the satchel. Ilya meets Quill in the market. "
        "Pim helps Ilya escape with the satchel."
    )
    assert extractive_summary(list(reversed(briefs))) != text  # order follows the children
    assert extractive_summary(briefs) == text  # deterministic


def test_extractive_summary_falls_back_to_titles_and_caps_length() -> None:
    briefs = [
        SimpleNamespace(summary="", title="Arrival"),
        None,
        SimpleNamespace(summary="x " * 900),
    ]
    text = extractive_summary(briefs, limit=50)
    assert text.startswith("Arrival.")
    assert len(text) <= 50
    assert extractive_summary([]) == ""


async def _write_events(session: Any, count: int, start: int = 1, host: Any = None) -> None:
    """One batch per event; with `host`, each commit's notification (the compactor's turn) is
    delivered before the next write, as a turn's compaction step waits for it."""
    for i in range(start, start + count):
        result = await session.apply_extraction_batch(
            ops=[event(f"Event {i}", f"Ilya does thing {i}. The ledger moves on {i}.")],
            max_seq=i,
        )
        assert not result.rejected
        if host is not None:
            await settle(host)


async def test_rollups_after_commits_until_no_candidates(make_host) -> None:
    spy = CommitSpy()
    host = await make_host(compactor, spy)
    session = await open_session(host)
    await _write_events(session, 12, host=host)
    await settle(host)

    session = await open_session(host)
    assert session.compaction_candidates(type="event", depth=0).groups == ()
    api = host.registry.get("compactor")
    rollups = [r for report in api.reports(CHAT) for r in report.rollups]
    # 3 leaves kept back, threshold 5, fan-in 3: a group at 8 events (1-3), one at 11 (4-6)
    assert [r.child_ids for r in rollups] == [("n_1", "n_2", "n_3"), ("n_4", "n_5", "n_6")]
    assert all(r.depth == 1 and len(r.child_ids) == 3 for r in rollups)
    for rollup in rollups:
        brief = session.get_node_brief(rollup.rollup_id)
        assert brief is not None and brief.summary == rollup.summary
        assert "Ilya does thing" in rollup.summary
        title = session.get_node_brief(rollup.rollup_id).title
        assert "Summary L" not in title and "Ilya" in title  # titled by its content
    # every commit is one batch or one rollup: the compactor's own commits did not loop
    assert len(spy.seen) == 12 + len(rollups)
    assert api.last_report(CHAT) is api.reports(CHAT)[-1]


async def test_rollups_reach_depth_two(make_host) -> None:
    host = await make_host(compactor)
    session = await open_session(host)
    await _write_events(session, 30)
    await settle(host)
    session = await open_session(host)
    api = host.registry.get("compactor")
    rollups = [r for report in api.reports(CHAT) for r in report.rollups]
    depths = sorted({r.depth for r in rollups})
    assert depths == [1, 2]
    for depth in (0, 1, 2):
        assert session.compaction_candidates(type="event", depth=depth).groups == ()
    # an explicit call finds nothing left to do
    report = await api.compact(CHAT)
    assert report.rollups == () and report.skipped is None


class LoudSummariser:
    @hookimpl
    def memgraph_summarise(self, type: str, briefs: Any) -> str:
        return f"{len(briefs)} {type} nodes, summarised loudly"


async def test_a_summariser_plugin_goes_before_the_offline_one(make_host) -> None:
    host = await make_host(compactor, LoudSummariser())
    session = await open_session(host)
    await _write_events(session, 8)
    await settle(host)
    rollups = [r for rep in host.registry.get("compactor").reports(CHAT) for r in rep.rollups]
    assert rollups and all(r.summary == "3 event nodes, summarised loudly" for r in rollups)


class BrokenSummariser:
    @hookimpl
    def memgraph_summarise(self, type: str, briefs: Any) -> str:
        raise RuntimeError("the model is down")


async def test_a_failing_summariser_is_logged_and_skipped(make_host, caplog) -> None:
    host = await make_host(compactor, BrokenSummariser())
    session = await open_session(host)
    await _write_events(session, 8)
    await settle(host)
    rollups = [r for rep in host.registry.get("compactor").reports(CHAT) for r in rep.rollups]
    assert len(rollups) == 1 and rollups[0].summary.startswith("Ilya does thing 1.")
    assert any("BrokenSummariser" in r.getMessage() for r in caplog.records)


async def test_a_large_import_is_compacted_in_one_commit_per_depth(make_host) -> None:
    spy = CommitSpy()
    host = await make_host(compactor, spy)
    session = await open_session(host)
    ops = [event(f"Event {i}", f"Ilya does thing {i}. The ledger moves on {i}.") for i in range(31)]
    result = await session.apply_extraction_batch(ops=ops, max_seq=31)
    assert not result.rejected
    await settle(host)

    session = await open_session(host)
    rollups = [r for rep in host.registry.get("compactor").reports(CHAT) for r in rep.rollups]
    by_depth: dict[int, int] = {}
    for rollup in rollups:
        by_depth[rollup.depth] = by_depth.get(rollup.depth, 0) + 1
    assert by_depth[1] > 1  # several groups were due at once at depth 0
    # the import, then one commit per depth that made rollups (not one per group)
    assert len(spy.seen) == 1 + len(by_depth)
    for depth in (0, 1, 2):
        assert session.compaction_candidates(type="event", depth=depth).groups == ()
