"""Recall traces on disk: safe names, append/read round trip, torn lines, the human table."""

from memgraph_plugin.recall.hybrid_router import Inclusion
from memgraph_plugin.recall.trace import RecallTrace, TraceLog, format_table, safe_file_name


def _trace(chat_id: str, seq: int, **kw) -> RecallTrace:
    base = dict(
        chat_id=chat_id,
        seq=seq,
        anchor=(2 * seq - 2, seq),
        query="where is Mara?",
        router="builtin-hybrid",
        mode="canary",
        score_mode="keyword+recency",
        fallback_reason=None,
        pool_size=7,
        recent_window=2,
        always_inject_ids=("n_1",),
        seeds=("n_4",),
        selected=(
            Inclusion("n_4", "seed", 0.5),
            Inclusion("n_6", "graph_expansion", 0, "n_4", "related", 1),
        ),
    )
    base.update(kw)
    return RecallTrace(**base)


def test_safe_file_name_keeps_ids_apart_and_inside_the_folder():
    names = {safe_file_name(c) for c in ["a/b", "a_b", "../../etc/passwd", ".hidden", "日本"]}
    assert len(names) == 5
    for name in names:
        assert "/" not in name and not name.startswith(".") and name.endswith(".jsonl")


def test_round_trip_last_n_and_torn_line(tmp_path):
    log = TraceLog(tmp_path / "traces")
    for seq in range(1, 5):
        log.append(_trace("chat/1", seq, reused=seq == 4))
    log.append(_trace("other", 1, fallback_reason="rollout_off"))
    with log.path_for("chat/1").open("a") as fh:
        fh.write('{"chat_id": "chat/1", "se')  # a write cut short by a crash
    traces = log.read("chat/1")
    assert [t.seq for t in traces] == [1, 2, 3, 4]
    assert traces[0] == _trace("chat/1", 1, time=traces[0].time)
    assert [t.seq for t in log.read("chat/1", last=2)] == [3, 4]
    assert log.read("other")[0].fallback_reason == "rollout_off"
    assert log.read("missing") == []
    table = format_table(traces)
    assert "4 (reused)" in table and "n_6 via n_4 -[related]- (1 hop)" in table
    assert table.count("\n") == 4


def test_the_trace_says_how_many_rows_collapsed(tmp_path):
    log = TraceLog(tmp_path / "traces")
    log.append(_trace("c", 1, collapsed=("n_2", "n_3")))
    (trace,) = log.read("c")
    assert trace.collapsed == ("n_2", "n_3")
    assert "2 repeated rows collapsed" in format_table([trace])
