"""A hypothesis state machine over the memory graph's write API, rollback, import and reopen, on
a real LanceDB in a temporary directory. `tests/storage/test_fuzz_machine.py` runs it
at a modest size in ``make test``; ``bench/fuzz.py`` runs it for 10,000 steps.

After every step: a rejected batch (or refused call) left the stored chat byte-identical; the
chat as a fresh database handle reads it equals the one in memory; history versions are
contiguous from 1 (increasing, after a repair that lost history rows); the export is strict JSON
(no NaN / Infinity, valid UTF-8); the chat files read back as written.

After a rollback, the chat in memory is the chat at the target (`state_at_sync`), whether it was
rolled back in memory (by the commits kept, or by what storage says they replaced, after a
reopen) or through storage.

It also steps through: messages holding every Unicode line break; an import followed by a turn (the
import must survive it); a damaged data file (deleted or cut short) that ``check`` must find and
``repair`` must fix, every chat opening afterwards.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import lance
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from host import Host
from host.chats.chat_files import ChatStore
from host.chats.jsonl import UNICODE_LINE_BREAKS
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.errors import MemoryGraphError
from memgraph_plugin.storage import LanceStorage
from memgraph_plugin.storage.integrity.integrity import check_database
from memgraph_plugin.storage.integrity.repair import repair_database
from memgraph_plugin.turn.pipeline import pipeline_for
from memgraph_plugin.versions.rollback_target import target_version

CHATS = ["c1", "x' OR '1'='1"]

# ---- values, good and hostile -------------------------------------------------------------


def mostly(good: Any, bad: Any, weight: int = 6) -> Any:
    """`good` `weight` times in `weight + 1`, else `bad`."""
    # hypothesis favours small integers: the bad branch is the largest one
    return st.integers(0, weight).flatmap(lambda i: bad if i == weight else good)


HOSTILE_TEXT = ["bad \ud800", "\udfff", "nul\x00", "x" * 70_000, "t" * 2_100]
HOSTILE_NUMBERS = [float("nan"), float("inf"), -float("inf"), 2**63, -(2**64)]
texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["Eileen", "the harbor", "艾琳", "Qel; Skyharbor", ""]),
)
scalars = st.one_of(
    texts, st.integers(-1000, 1000), st.floats(allow_nan=False, allow_infinity=False), st.none()
)
hostile = st.sampled_from(HOSTILE_TEXT + HOSTILE_NUMBERS)
values = mostly(
    st.one_of(
        scalars,
        st.lists(scalars, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b"]), scalars, max_size=2),
    ),
    st.one_of(hostile, st.lists(hostile, min_size=1, max_size=2)),
    weight=12,
)
field_names = mostly(
    st.sampled_from(["status", "note", "aliases", "goal"]), st.just("k\udfff"), weight=20
)
fields = st.dictionaries(field_names, values, max_size=3)
good_ids = st.sampled_from([f"n_{i}" for i in range(1, 9)])
ids = mostly(good_ids, st.sampled_from(["n\x00", "", "nope", None]))
types = mostly(st.sampled_from(["event", "event", "event", "thread"]), st.just("bogus"))
relations = mostly(
    st.sampled_from(["related", "allied_with", "mentions"]),
    st.sampled_from(["contains", "", "re\ud800"]),
)
directions = mostly(st.sampled_from(["outgoing", "incoming", "bidirectional"]), st.just("up"))
refs = mostly(st.sampled_from(["a", "b"]), st.just("r\x01"))
titles = mostly(texts, hostile, weight=10)
junk = st.sampled_from([{"op": "explode"}, 5, None, "create", {"op": "create"}])


@st.composite
def creates(draw: Any) -> dict[str, Any]:
    op: dict[str, Any] = {"op": "create", "type": draw(types)}
    op["fields"] = {**draw(fields), "summary": draw(mostly(texts.filter(bool), hostile, 10))}
    if draw(st.booleans()):
        op["title"] = draw(titles)
    if draw(st.booleans()):
        op["ref"] = draw(refs)
    if draw(st.booleans()):
        op["links"] = [
            {
                "target_node_id": draw(ids),
                "relation": draw(relations),
                "direction": draw(directions),
            }
        ]
    return op


@st.composite
def other_ops(draw: Any) -> Any:
    kind = draw(
        st.sampled_from(["edit", "edit", "delete", "link_upsert", "link_upsert", "link_delete"])
    )
    if kind == "edit":
        op = {"op": "edit", "node_id": draw(ids)}
        if draw(st.booleans()):
            op["set_fields"] = draw(fields)
        if draw(st.booleans()):
            op["title"] = draw(titles)
        if draw(st.booleans()):
            op["clear_fields"] = draw(st.lists(field_names, max_size=2))
        return op
    if kind == "delete":
        return {"op": "delete", "node_id": draw(ids)}
    if kind == "link_upsert":
        source = draw(
            st.one_of(
                ids.map(lambda i: {"source_node_id": i}), refs.map(lambda r: {"source_ref": r})
            )
        )
        link = {
            "target_node_id": draw(ids),
            "relation": draw(relations),
            "direction": draw(directions),
        }
        return {"op": "link_upsert", **source, "links": [link]}
    if kind == "link_delete":
        return {
            "op": "link_delete",
            "source_node_id": draw(ids),
            "target_node_id": draw(ids),
            "relation": draw(relations),
        }
    return draw(junk)


ops = st.lists(mostly(st.one_of(creates(), creates(), other_ops()), junk), min_size=1, max_size=5)
max_seqs = mostly(st.one_of(st.none(), st.integers(0, 30)), st.sampled_from([2**63, -1, "7"]))


def _refuse(name: str) -> Any:
    raise ValueError(f"not strict JSON: {name}")


def _text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def _content(data: dict[str, Any]) -> str:
    """`_text` with the edges in key order: their order follows the write history (an edge a
    rollback puts back comes last), not the state."""
    edges = sorted(data.get("edges") or (), key=lambda e: json.dumps(e, sort_keys=True))
    return _text({**data, "edges": edges})


def _archived_flags(data: dict[str, Any]) -> dict[str, bool]:
    """Each node id of a store dict with whether it is archived (deleted: soft delete)."""
    return {nid: bool(node.get("archived")) for nid, node in data["nodes"].items()}


def _live_data_files(folder: Path) -> list[Path]:
    """The data files the table's newest version reads (older ones wait for cleanup: damaging
    one of those damages nothing)."""
    if not folder.is_dir():
        return []
    fragments = lance.dataset(str(folder)).get_fragments()
    return sorted(folder / "data" / f.path for frag in fragments for f in frag.metadata.files)


class ChatMachine(RuleBasedStateMachine):
    """Two chats on one host over one database; the host may be reopened at any step."""

    #: counts over every machine run in this process (bench/fuzz.py prints them)
    totals: ClassVar[dict[str, int]] = {
        "steps": 0,
        "rejected": 0,
        "applied": 0,
        "reopens": 0,
        "messages": 0,
        "imports_then_turns": 0,
        "damaged_files": 0,
    }

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="memgraph-fuzz-"))
        self.loop = asyncio.new_event_loop()
        self.since_reopen = 0
        self.since_damage = 0
        self.history_gaps = False  # a repair lost history rows a snapshot covers
        self.host = self._start()
        self.disk = LanceStorage(str(self.dir / "d" / "lancedb"))  # a second, fresh handle

    # ---- plumbing

    def _run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def _start(self) -> Host:
        host = Host(data_dir=self.dir / "d", entry_points=False, builtins=True)
        self._run(host.start())
        return host

    @property
    def service(self) -> Any:
        return self.host.registry.get("memory-graph")

    def _session(self, chat: str) -> Any:
        return self._run(self.service.open_session(self.host.get_context(chat)))

    def _stored(self, chat: str) -> tuple[str, int]:
        """The stored chat as a fresh handle reads it (canonical JSON) and its history length."""
        return _text(self.disk.load_sync(chat).data), len(self.disk.history_sync(chat))

    def _refused(self, chat: str, before: tuple[str, int], memory_before: str) -> None:
        """A rejected batch or refused call changed nothing, stored or in memory."""
        ChatMachine.totals["rejected"] += 1
        assert self._stored(chat) == before, "a rejected write changed the stored chat"
        memory = _text(self._session(chat).store.to_dict())
        assert memory == memory_before, "a rejected write changed the chat in memory"

    def _step(self) -> None:
        ChatMachine.totals["steps"] += 1
        self.since_reopen += 1
        self.since_damage += 1

    # ---- rules

    @rule(chat=st.sampled_from(CHATS), batch=ops, max_seq=max_seqs)
    def batch(self, chat: str, batch: list[Any], max_seq: Any) -> None:
        self._step()
        session = self._session(chat)
        before, memory_before = self._stored(chat), _text(session.store.to_dict())
        try:
            result = self._run(session.apply_extraction_batch(ops=batch, max_seq=max_seq))
        except MemoryGraphError as exc:
            assert exc.code == "BAD_ARGS", exc
            self._refused(chat, before, memory_before)
            return
        ChatMachine.totals["rejected"] += len(result.rejected)
        ChatMachine.totals["applied"] += len(result.applied)
        if not result.applied:
            assert not result.changed
            self._refused(chat, before, memory_before)
            ChatMachine.totals["rejected"] -= 1  # its ops are counted above
        else:
            history = self.disk.history_sync(chat)
            if result.changed:
                assert history and history[-1].version == result.version
                assert history[-1].seq == result.seq

    @rule(chat=st.sampled_from(CHATS), pick=st.integers(-2, 12), by_seq=st.booleans())
    def rollback(self, chat: str, pick: int, by_seq: bool) -> None:
        self._step()
        before = self._stored(chat)
        memory_before = _text(self._session(chat).store.to_dict())
        target = {"seq": pick} if by_seq else {"version": pick}
        marks = self.disk.marks_sync(chat)
        try:
            commit = self._run(self.service.rollback(chat, **target))
        except MemoryGraphError:
            self._refused(chat, before, memory_before)
            return
        if commit is None:
            return
        # the chat in memory (rolled back there, or reloaded) is the chat at the target
        version = target_version(
            chat, marks, version=target.get("version"), seq=target.get("seq"),
            newest_seq=self.service.message_seq(chat),
        )  # fmt: skip
        wanted = Store.from_dict(self.disk.state_at_sync(chat, version=version).data).to_dict()
        memory = self._session(chat).store.to_dict()
        assert _content(memory) == _content(wanted), (chat, version)

    @rule(
        chat=st.sampled_from(CHATS),
        source=st.sampled_from(CHATS),
        damage=st.sampled_from(["none", "none", "dangling", "nan", "type", "empty", "shape"]),
    )
    def import_graph(self, chat: str, source: str, damage: str) -> None:
        self._step()
        data = Store.from_dict(self.disk.load_sync(source).data).to_dict()
        if damage == "dangling":
            data["edges"].append({"from": "n_1", "to": "n_404", "type": "related"})
        elif damage == "nan":
            data["nodes"]["n_77"] = {"id": "n_77", "type": "event", "fields": {"x": float("nan")}}
        elif damage == "type":
            data["nodes"]["n_78"] = {"id": "n_78", "type": 7}
        elif damage == "empty":
            data = {"nodes": {}, "edges": []}
        elif damage == "shape":
            data = {"foo": 1}
        before = self._stored(chat)
        memory_before = _text(self._session(chat).store.to_dict())
        try:
            self._run(self.service.import_graph(chat, data))
        except MemoryGraphError as exc:
            assert damage in ("dangling", "nan", "type", "shape"), exc
            self._refused(chat, before, memory_before)
        else:
            assert damage in ("none", "empty")

    @rule(chat=st.sampled_from(CHATS), brk=st.sampled_from(UNICODE_LINE_BREAKS), text=texts)
    def say(self, chat: str, brk: str, text: str) -> None:
        """A message holding a Unicode line break."""
        self._step()
        ChatMachine.totals["messages"] += 1
        self.host.chat(chat).add_message("user", f"{text}{brk}{text}{brk}")

    @rule(chat=st.sampled_from(CHATS), source=st.sampled_from(CHATS))
    def import_then_turn(self, chat: str, source: str) -> None:
        """An import, then a turn in that chat: the turn must not roll the import away."""
        self._step()
        data = Store.from_dict(self.disk.load_sync(source).data).to_dict()
        if not data.get("nodes"):
            return
        try:
            self._run(self.service.import_graph(chat, data))
        except MemoryGraphError as exc:  # e.g. CONFLICT: nothing to check
            assert exc.code != "BAD_ARGS", exc
            return
        ChatMachine.totals["imports_then_turns"] += 1
        imported = _archived_flags(self._session(chat).store.to_dict())
        at_import = self.disk.marks_sync(chat)[-1][0]
        self._run(pipeline_for(self.host).run_turn(chat, "what happened?", "It went on."))
        after = _archived_flags(self._session(chat).store.to_dict())
        lost = {i for i in imported if i not in after}
        assert not lost, f"the turn rolled the import back: lost {lost}"
        # a node the import brought live stays live, one it brought deleted (archived by an
        # earlier `delete` op: soft delete) stays deleted; neither is a loss
        flipped = {i for i, archived in imported.items() if after[i] != archived}
        assert not flipped, f"the turn changed whether imported nodes are deleted: {flipped}"
        undone = [m for m in self.disk.marks_sync(chat) if m[0] > at_import and m[2] == "rollback"]
        assert not undone, f"the turn rolled back after the import (version {at_import}): {undone}"

    @precondition(lambda self: self.since_damage >= 15)
    @rule(
        table=st.sampled_from(["commits", "commits", "snapshots", "snap_nodes", "snap_edges"]),
        how=st.sampled_from(["delete", "truncate"]),
        which=st.integers(0, 50),
    )
    def damage_a_file(self, table: str, how: str, which: int) -> None:
        """A data file deleted or cut short: check finds it, repair fixes the database."""
        self._step()
        self.since_damage = 0
        self._run(self.host.stop())
        self.disk.close()
        uri = str(self.dir / "d" / "lancedb")
        files = _live_data_files(Path(uri) / f"{table}.lance")
        if files:
            ChatMachine.totals["damaged_files"] += 1
            target = files[which % len(files)]
            if how == "delete":
                target.unlink()
            else:
                with target.open("r+b") as handle:
                    handle.truncate(target.stat().st_size // 2)
            tables = [p.name[: -len(".lance")] for p in Path(uri).glob("*.lance")]
            found = check_database(uri, tables)
            assert not found.ok and any(target.name in " ".join(f.files) for f in found.damaged), (
                found.lines()
            )
            repaired = repair_database(uri, tables)
            assert repaired.after.ok, repaired.after.lines()
            # history rows lost with the state whole: a snapshot covers them (an import writes
            # one at its version, so a lost import row reads like rows pruned behind a snapshot)
            if any(c.state_whole for c in found.chats) or (
                table == "commits" and any(f.rows for f in found.damaged if f.table == "commits")
            ):
                self.history_gaps = True
        self.disk = LanceStorage(uri)
        self.host = self._start()
        for chat in CHATS:
            assert self._session(chat) is not None, f"chat {chat!r} does not open after repair"

    @precondition(lambda self: self.since_reopen >= 6)
    @rule()
    def reopen(self) -> None:
        self._step()
        self.since_reopen = 0
        ChatMachine.totals["reopens"] += 1
        self._run(self.host.stop())
        self.host = self._start()

    # ---- invariants

    @invariant()
    def stored_equals_memory_and_history_is_contiguous(self) -> None:
        for chat in CHATS:
            state = self.disk.load_sync(chat)
            stored = Store.from_dict(state.data).to_dict()
            memory = self._session(chat).store.to_dict()
            assert _text(stored) == _text(memory), f"chat {chat!r}: disk and memory differ"
            versions = [r.version for r in self.disk.history_sync(chat)]
            if self.history_gaps:
                assert versions == sorted(set(versions)), versions
            else:
                assert versions == list(range(1, len(versions) + 1)), versions
            if self.history_gaps:  # the newest rows may be among those lost, the state not
                assert not versions or state.version >= versions[-1], (state.version, versions)
            else:
                assert state.version == (versions[-1] if versions else state.version)
            text = json.dumps(stored, ensure_ascii=False)
            json.loads(text, parse_constant=_refuse)  # strict JSON
            text.encode("utf-8")  # no lone surrogate reached the store

    @invariant()
    def chat_files_read_back(self) -> None:
        fresh = ChatStore(self.dir / "d" / "chats")
        for chat in CHATS:
            assert fresh.chat(chat).messages == self.host.chat(chat).messages

    def teardown(self) -> None:
        try:
            self._run(self.host.stop())
        finally:
            self.loop.close()
            shutil.rmtree(self.dir, ignore_errors=True)
