"""A person's pin: `session.pin_node` is one ``edit`` commit that fires
`memgraph_commit`, every recall injects the pinned node and its trace says so, the pin survives
a new host on the same data dir, and rolling the edit back unpins; a real host with LanceDB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from host import Host, hookimpl
from memgraph_plugin.recall.trace import format_table
from memgraph_plugin.service import memory_graph_for
from memgraph_plugin.turn import pipeline_for

CHAT = "pins"
LINES = [
    "Mira and Tomas sailed past the old lighthouse at dawn.",
    "Tomas repaired the torn sail while Mira steered the boat.",
    "A storm came over the harbour and they sheltered in the lighthouse.",
    "Mira found a brass lantern under the lighthouse stairs.",
    "They argued about the price of fish at the morning market.",
]


class Commits:
    """Records every `memgraph_commit` it hears."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def memgraph_commit(self, chat_id: str, commit: Any) -> None:
        self.seen.append(commit)


async def _host(data_dir: Path) -> Host:
    host = Host(data_dir=data_dir, entry_points=False)
    await host.start()
    return host


async def test_a_pin_is_one_edit_commit_and_every_recall_injects_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    host = await _host(data_dir)
    commits = Commits()
    host.register_plugin(commits, name="commits")
    try:
        pipeline = pipeline_for(host)
        for text in LINES:
            await pipeline.add_user_message(CHAT, text, name="Mira")
        session = await pipeline.open_session(CHAT)
        question = "What did they argue about at the market?"
        before = {n.id for n in (await pipeline.preview(CHAT, question)).injected}
        # a node this question does not bring: only the pin will
        sail = next(n for n in session.list_nodes() if n.id not in before)

        api = memory_graph_for(host)
        versions = len(await api.history(CHAT))
        result = await session.pin_node(id=sail.id)
        assert result.ok and result.changed
        await host.drain(CHAT)
        history = await api.history(CHAT)
        assert len(history) == versions + 1 and history[-1].kind == "edit"
        assert commits.seen[-1].kind == "pin_node" and sail.id in commits.seen[-1].node_ids

        await pipeline.add_user_message(CHAT, question, name="Tomas")
        recall = await pipeline.recall(CHAT)
        assert sail.id in {n.id for n in recall.pinned}
        assert sail.id in recall.trace.pinned_ids
        assert sail.id in recall.trace.always_inject_ids
        assert sail.title in recall.prompt
        assert f"{sail.id} pinned" in format_table([recall.trace])  # `memgraph-host trace`
        pinned_version = history[-1].version
    finally:
        await host.stop()

    host = await _host(data_dir)  # a new process's view: the pin was persisted
    try:
        pipeline = pipeline_for(host)
        session = await pipeline.open_session(CHAT)
        assert session.store.node(sail.id).pinned
        again = await pipeline.preview(CHAT, "anything about fish?")
        assert sail.id in again.trace.pinned_ids
        api = memory_graph_for(host)
        await api.rollback(CHAT, version=pinned_version - 1)  # the explorer's undo
        session = await pipeline.open_session(CHAT)
        assert not session.store.node(sail.id).pinned
        after = await pipeline.preview(CHAT, "anything about fish?")
        assert sail.id not in after.trace.pinned_ids
    finally:
        await host.stop()
