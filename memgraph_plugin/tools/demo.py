"""``memgraph-host demo``: the sample story, turn by turn, through a real host and LanceDB.

Runs ``sample_plugins/story/story.json`` through a ``Host`` on ``./demo-data`` with the sample
plugins (loaded from the ``sample_plugins`` folder as a plugin dir). The graph is built from the
raw text by the built-in offline extractor; ``--replay`` replays the story's recorded ops instead.
Each turn prints what was injected and why, and what the scout, curator and compactor did. It
ends with the graph's size and an HTML picture of the graph. A second run continues where the
stored chat stopped; ``--fresh`` starts over.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shlex
import shutil
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:  # the turn pipeline loads when the demo runs (listing commands stays cheap)
    from ..turn.pipeline import RecallOutcome
    from ..turn.story import Story
from .graph_picture import edge_counts, write_graph_html


def _sample_plugins_dir() -> Path:
    """Where the installed ``sample_plugins`` package lives (found without importing it): the
    source tree, or site-packages for a wheel, which ships ``story/story.json`` as package data."""
    spec = importlib.util.find_spec("sample_plugins")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if locations:
        return Path(locations[0]).resolve()
    return Path(__file__).resolve().parent.parent / "sample_plugins"


SAMPLE_PLUGINS = _sample_plugins_dir()
STORY_PATH = SAMPLE_PLUGINS / "story" / "story.json"
DEFAULT_DATA = Path("demo-data")
MARKER = ".memgraph-demo"
#: The demo runs offline on the default embedding profile (`wordllama`: semantic vectors from
#: the weights its wheel ships, no download); nothing to override.
DEMO_SETTINGS: dict[str, Any] = {}
PICTURE = "graph.html"
CHAT_ID = "lantern-ledger"
REPLAY_PLUGIN = "demo.replay-extractor"


class DemoError(RuntimeError):
    """The demo cannot run (a folder that is not a demo folder, a broken story)."""


@attrs.frozen
class DemoSummary:
    """What a demo run did and where the graph stands afterwards."""

    turns_total: int
    turns_before: int
    turns_run: int
    nodes_by_type: dict[str, int]
    archived: int
    rollups: int
    edges: int  # relation edges, as the picture draws them (`graph_picture.edge_counts`)
    merges: int  # curator merges during this run
    picture: Path
    final_prompt: str | None = None  # the prompt text the next turn gets (story complete)
    containment_edges: int = 0  # rollup -> child links the picture draws

    @property
    def complete(self) -> bool:
        return self.turns_before + self.turns_run >= self.turns_total


def _prepare_folder(data_dir: Path, fresh: bool) -> None:
    """Create the demo folder, or wipe it for ``--fresh`` (only a folder the demo made)."""
    if data_dir.exists() and any(data_dir.iterdir()) and not (data_dir / MARKER).exists():
        raise DemoError(f"{data_dir} exists and is not a demo folder (no {MARKER}); left alone")
    if fresh and data_dir.exists():
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / MARKER).write_text("created by memgraph-host demo\n", encoding="utf-8")


class _Printer:
    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out

    def __call__(self, text: str = "") -> None:
        self.out(text)


def _clip(text: str, width: int = 96) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _node_line(node: Any, why: str) -> str:
    return f"    {node.id:<6} {node.type:<16} {_clip(node.title, 34):<34} {why}"


def _why(inc: Any, titles: dict[str, str]) -> str:
    if inc is None:
        return ""
    if inc.why == "graph_expansion":
        seed = _clip(titles.get(inc.via, inc.via or "?"), 28)
        hops = f"{inc.hops} hop" + ("" if inc.hops == 1 else "s")
        return f"via {seed!r} ({inc.via}) -[{inc.edge_type}]- {hops}"
    if inc.why == "drill_down":
        return f"best leaf of rollup {inc.via} ({_clip(inc.detail, 40)})"
    return f"{inc.why} ({inc.detail})" if inc.detail else f"{inc.why}, score {inc.score:.2f}"


def _print_recall(p: _Printer, recall: RecallOutcome | None) -> None:
    if recall is None:
        p("  recall: memory graph unavailable")
        return
    route = recall.route
    kinds = Counter(n.type for n in recall.pinned)
    pinned = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none"
    extra = f", fallback: {route.fallback_reason}" if route.fallback_reason else ""
    p(
        f"  recall [{route.router}, {route.mode}, {route.score_mode}{extra}]: "
        f"ranked {len(recall.visible_ids)}, pinned {len(recall.pinned)} ({pinned}), "
        f"recalled {len(recall.recalled)}, {len(recall.prompt)} chars"
    )
    why = recall.why
    titles = {n.id: n.title for n in (*recall.pinned, *recall.pool, *recall.recalled)}
    for node in recall.recalled:
        p(_node_line(node, _why(why.get(node.id), titles)))
    if route.shadow:
        p(f"    shadow expansion (not applied): {', '.join(i.id for i in route.shadow)}")


@attrs.frozen
class _Marks:
    """Where the sample plugins' reports stood before a turn."""

    curator_reports: int
    compactor_report: Any


def _plugin_line(record: Any) -> str:
    """``name (source)``, with the status when the plugin is not running."""
    state = "" if record.ok else f", {record.status}: {record.error or ''}".rstrip(": ")
    return f"{record.name} ({record.source}{state})"


def _api(host: Any, name: str) -> Any:
    return host.registry.get(name)


def _marks(host: Any, chat_id: str) -> _Marks:
    curator, compactor = _api(host, "curator"), _api(host, "compactor")
    reports = curator.reports(chat_id) if curator is not None else ()
    last = compactor.last_report(chat_id) if compactor is not None else None
    return _Marks(len(reports), last)


async def _print_scout(p: _Printer, host: Any, chat_id: str) -> None:
    """Let the scout finish the run the injection change started (it works beside the router,
    on the graph as the recall saw it, before the answer is written) and print what it found."""
    scout = _api(host, "scout")
    if scout is None:
        return
    await scout.drain()
    report = scout.last_report(chat_id)
    for line in report.describe() if report is not None else ["(no report)"]:
        p(f"  scout:     {_clip(line, 110)}")


async def _print_plugins(p: _Printer, host: Any, marks: _Marks, chat_id: str) -> int:
    """Print what the curator merged and the compactor rolled up this turn.

    Returns the number of curator merges this turn.
    """
    merges = 0
    curator = _api(host, "curator")
    if curator is not None:
        for report in curator.reports(chat_id)[marks.curator_reports :]:
            merges += len(report.merges)
            for line in report.describe():
                p(f"  curator:   {_clip(line, 110)}")
    compactor = _api(host, "compactor")
    report = compactor.last_report(chat_id) if compactor is not None else None
    if report is not None and report is not marks.compactor_report:
        for r in report.rollups:
            p(
                f"  compactor: rolled up {len(r.child_ids)} {r.type} nodes "
                f"({', '.join(r.child_ids)}) into {r.rollup_id} at depth {r.depth}: "
                f"{_clip(r.summary, 50)}"
            )
    return merges


async def _graph_size(host: Any, chat_id: str) -> tuple[list[Any], list[Any], list[str]]:
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context(chat_id))
    nodes = list(session.list_nodes(active_only=False))
    edges = list(session.list_edges())
    hier = [s.type for s in session.get_schema().types if s.compression_mode == "hierarchical"]
    return nodes, edges, hier


async def run_demo(
    data_dir: Path = DEFAULT_DATA,
    *,
    fresh: bool = False,
    story_path: Path = STORY_PATH,
    max_turns: int | None = None,
    out: Callable[[str], None] = print,
    settings: dict[str, Any] | None = None,
    plugin_dirs: tuple[Path, ...] = (),
    replay: bool = False,
) -> DemoSummary:
    """Run (or continue) the story; ``max_turns`` stops early (the next run continues).

    The graph is built from the raw text of every message by the built-in offline extractor;
    ``replay`` uses the story's recorded ops instead (the `ReplayExtractor`, a second extractor
    that richer, hand-written extraction looks like). ``plugin_dirs``: more plugin folders to
    load beside the sample plugins (your companion).
    """
    from host import Host

    from ..turn.message_extraction import ReplayExtractor
    from ..turn.story import load_story

    data_dir = Path(data_dir)
    story: Story = load_story(story_path)
    _prepare_folder(data_dir, fresh)
    p = _Printer(out)
    dirs = (SAMPLE_PLUGINS, *(Path(d) for d in plugin_dirs))
    settings = {**DEMO_SETTINGS, **(settings or {})}
    host = Host(data_dir=data_dir, settings=settings, plugin_dirs=dirs)
    if replay:
        host.register_plugin(ReplayExtractor.from_story(story, chat_id=CHAT_ID), name=REPLAY_PLUGIN)
    await host.start()
    try:
        return await _run(host, data_dir, story, max_turns, p)
    finally:
        await host.stop()


async def _run(
    host: Any, data_dir: Path, story: Story, max_turns: int | None, p: _Printer
) -> DemoSummary:
    from ..turn.pipeline import pipeline_for

    pipeline = pipeline_for(host)
    done = await _resume_point(host, pipeline, story)
    total = len(story.turns)
    p(f"# {story.title} — {total} turns, data in {data_dir}")
    p("plugins: " + ", ".join(_plugin_line(r) for r in host.plugin_records()))
    if done:
        p(f"continuing from the stored graph: {done} of {total} turns already in the chat")
    merges = 0
    run = 0
    for number in range(done + 1, total + 1):
        if max_turns is not None and run >= max_turns:
            break
        turn = story.turns[number - 1]
        marks = _marks(host, CHAT_ID)
        p()
        p(f"── turn {number}/{total} " + "─" * 60)
        p(f"  user:      {_clip(turn.user)}")
        await pipeline.add_user_message(CHAT_ID, turn.user)
        _print_recall(p, await pipeline.recall(CHAT_ID))
        await _print_scout(p, host, CHAT_ID)
        p(f"  assistant: {_clip(turn.assistant)}")
        ext = await pipeline.add_assistant_message(CHAT_ID, turn.assistant)
        if ext is not None:
            rej = f", {len(ext.rejected)} rejected" if ext.rejected else ""
            p(f"  extraction: {ext.applied} of {len(ext.ops)} ops applied{rej}")
            if ext.compacted:
                p(f"  pipeline compaction: {', '.join(ext.compacted)}")
        await between_turns(host, CHAT_ID)
        merges += await _print_plugins(p, host, marks, CHAT_ID)
        run += 1
    final_prompt = None
    if done + run >= total:
        p()
        p(f"the story is complete ({total}/{total} turns)" + ("" if run else "; showing state"))
        final_prompt, merged = await _print_final_state(p, host, pipeline)
        merges += merged
    nodes, edges, hier = await _graph_size(host, CHAT_ID)
    picture = write_graph_html(
        data_dir / PICTURE, nodes, edges, hierarchical=hier, title=f"{story.title}: memory graph"
    )
    active = [n for n in nodes if not n.archived]
    counts = edge_counts(nodes, edges)
    summary = DemoSummary(
        turns_total=total,
        turns_before=done,
        turns_run=run,
        nodes_by_type=dict(sorted(Counter(n.type for n in active).items())),
        archived=len(nodes) - len(active),
        rollups=sum(1 for n in active if n.semantic_rollup),
        edges=counts.relations,
        containment_edges=counts.containment,
        merges=merges,
        picture=picture.resolve(),
        final_prompt=final_prompt,
    )
    by_type = ", ".join(f"{k} {v}" for k, v in summary.nodes_by_type.items())
    p()
    p(
        f"graph: {len(active)} active nodes ({by_type}), {summary.rollups} rollups, "
        f"{summary.archived} archived (merged away), {summary.edges} relation edges, "
        f"{summary.containment_edges} containment links; "
        f"{summary.merges} curator merges in this run"
    )
    p(f"recall traces: memgraph-host --data-dir {shlex.quote(str(data_dir))} trace {CHAT_ID}")
    p(
        f"explore it live: memgraph-host --data-dir {shlex.quote(str(data_dir))} serve "
        "(then open http://127.0.0.1:8765/)"
    )
    p(f"picture of the graph: {summary.picture}")
    return summary


async def _print_final_state(p: _Printer, host: Any, pipeline: Any) -> tuple[str | None, int]:
    """What the finished graph gives the next turn: a recall anchored after the last answer
    (query: the last user message), why each node is in, the scout's finds and the prompt text."""
    messages = host.get_context(CHAT_ID).messages
    query = next((m.text for m in reversed(messages) if m.role == "user"), "")
    p(f"memory the next turn receives (query: {_clip(query, 70)!r}):")
    marks = _marks(host, CHAT_ID)
    recall = await pipeline.recall(CHAT_ID)
    _print_recall(p, recall)
    await _print_scout(p, host, CHAT_ID)
    await between_turns(host, CHAT_ID)
    merges = await _print_plugins(p, host, marks, CHAT_ID)
    if recall is None:
        return None, merges
    p("  prompt text:")
    for line in recall.prompt.splitlines():
        p(f"    {line}" if line else "")
    return recall.prompt, merges


async def _resume_point(host: Any, pipeline: Any, story: Story) -> int:
    """How many turns the stored chat already holds (the host keeps chats on disk).

    A user message left without its answer (a run stopped mid-turn) is cut; an answer whose
    extraction never reached the graph is extracted now. A chat of another story is an error.
    """
    chat = host.chat(CHAT_ID)
    messages = host.get_context(CHAT_ID).messages
    for message in messages:
        turn = story.turns[message.index // 2] if message.index // 2 < len(story.turns) else None
        expected = None if turn is None else (turn.user, turn.assistant)[message.index % 2]
        if message.text != expected:
            raise DemoError(
                f"the demo chat in {host.data_dir} is not this story (message {message.index} "
                "differs); run with --fresh to start over"
            )
    if messages and messages[-1].role == "user":
        chat.truncate(messages[-1].index - 1)
    answers = [m for m in host.get_context(CHAT_ID).messages if m.role == "assistant"]
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT_ID))
    written = getattr(getattr(session, "store", None), "seq_counter", len(answers))
    for message in answers[written:]:
        await pipeline.extract(CHAT_ID, message)
    return len(answers)


async def between_turns(host: Any, chat_id: str) -> None:
    """Let the companions finish: wait for work hooks started, then run the curator once."""
    await host.drain(chat_id)  # the commit notifications, delivered by tasks
    for name in ("scout", "curator", "compactor"):
        drain = getattr(_api(host, name), "drain", None)
        if callable(drain):
            await drain()
    curate = getattr(_api(host, "curator"), "curate", None)
    if callable(curate):
        await curate(chat_id)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (the CLI sub-command calls ``run_demo`` the same way)."""
    import argparse

    parser = argparse.ArgumentParser(prog="memgraph-demo")
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    try:
        asyncio.run(run_demo(args.data, fresh=args.fresh))
    except DemoError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 1
    return 0
