"""Offline rollup summaries: the informative sentences within a budget, not first sentences;
the rollup keeps its edges to its children (real host, real LanceDB, the default pipeline)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from host import Host
from memgraph_plugin.extraction.summary import informative_summary
from memgraph_plugin.turn import pipeline_for


def brief(text: str, speaker: str = "") -> SimpleNamespace:
    return SimpleNamespace(summary=text, title="", row_values={"speaker": speaker})


def test_keeps_names_numbers_and_dates_over_first_sentences() -> None:
    briefs = [
        brief("Oh wow, that is so nice. I adopted Rex from the Boston shelter on 3 May 2023.",
              "Mel"),
        brief("Haha, yes it is. Really, really good.", "Caroline"),
        brief("Sure thing. The rent went up to 1,450 dollars after Jon moved out.", "Mel"),
    ]
    text = informative_summary(briefs, budget=160)
    assert len(text) <= 160
    assert "Rex" in text and "3 May 2023" in text and "1,450" in text
    assert "Oh wow" not in text and "Sure thing" not in text  # first sentences lose
    assert text.startswith("Mel: I adopted Rex") and text.index("Rex") < text.index("1,450")
    assert informative_summary(briefs) == informative_summary(briefs)  # deterministic
    assert informative_summary([]) == "" and informative_summary([brief("")]) == ""
    assert len(informative_summary([brief("x" * 500)], budget=50)) == 50


async def test_rollups_keep_facts_and_edges_to_their_children(tmp_path: Path) -> None:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    try:
        pipeline = pipeline_for(host)
        for i in range(12):
            add = pipeline.add_user_message if i % 2 == 0 else pipeline.add_assistant_message
            await add("c", f"Okay sure. Note {i}: the locker code is {4000 + i}.",
                      name="Mel" if i % 2 else "Jon")
        session = await host.registry.get("memory-graph").open_session(host.get_context("c"))
        store = session.store
        rollups = [n for n in store.iter_nodes() if n.semantic_rollup and not n.archived]
        assert rollups
        for rollup in rollups:
            children = [store.node(c) for c in rollup.children_ids]
            for child in children:  # drill down: parent -> child `contains` edges
                assert (rollup.id, child.id, "contains") in {
                    (k[0], k[2], k[1]) for k in store.out_edges(rollup.id)
                }
            summary = rollup.fields["summary"]
            assert "Okay sure" not in summary  # the filler first sentence is dropped ...
            for child in children:  # ... and each child's fact is kept
                fact = child.fields["summary"].split(". ", 1)[1]
                assert fact.split(" is ")[1].rstrip(".") in summary
    finally:
        await host.stop()
