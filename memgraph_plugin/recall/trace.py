"""Recall traces: one JSON line per recall, one file per chat under ``data_dir/traces/``."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from host.chats.jsonl import split_lines
from host.cli.console import table_text
from host.settings.redaction import redact_known

from ..hook_contract import Inclusion

TRACE_DIR = "traces"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def safe_file_name(chat_id: str) -> str:
    """A file name for a chat id: safe characters kept, the rest ``_``, plus a short hash.

    The hash keeps two ids that differ only in unsafe characters apart; the name never starts with
    a dot, never contains a path separator and stays short.
    """
    if not isinstance(chat_id, str) or not chat_id:
        raise ValueError(f"chat id must be a non-empty string, got {chat_id!r}")
    stem = _SAFE.sub("_", chat_id).lstrip(".")[:60] or "chat"
    digest = hashlib.sha256(chat_id.encode("utf-8")).hexdigest()[:10]
    return f"{stem}-{digest}.jsonl"


@attrs.frozen
class RecallTrace:
    """What one recall saw and decided, for ``memgraph-host trace``."""

    chat_id: str
    seq: int
    anchor: tuple[int, int]
    query: str
    router: str
    mode: str
    score_mode: str
    fallback_reason: str | None
    pool_size: int
    recent_window: int
    always_inject_ids: tuple[str, ...]
    seeds: tuple[str, ...]
    selected: tuple[Inclusion, ...]
    shadow: tuple[Inclusion, ...] = ()
    error: str | None = None
    reused: bool = False
    duration_ms: float = 0.0
    time: float = attrs.field(factory=time.time)
    budget_chars: int = 0  # recall_budget_chars when it ran
    injected_chars: int = 0  # the prompt block's length (never above the budget)
    cut: tuple[str, ...] = ()  # picked, but left out to stay within the budget
    pinned_ids: tuple[str, ...] = ()  # of always_inject_ids, those a person pinned
    #: left out as repeats of a row the block kept (the same text, or nearly)
    collapsed: tuple[str, ...] = ()
    #: a context window (the proxy's budget): the oldest kept message's chat index, how many
    #: older messages were dropped from what the model receives, and the tokens that saved
    window_kept_from: int | None = None
    window_dropped: int = 0
    window_tokens_saved: int = 0

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self, recurse=True)
        data["anchor"] = list(self.anchor)
        return data


def trace_from_json(data: dict[str, Any]) -> RecallTrace:
    """Rebuild a trace read back from disk."""
    fields = dict(data)
    fields["anchor"] = tuple(fields.get("anchor", (0, 0)))
    for key in ("always_inject_ids", "seeds", "cut", "pinned_ids", "collapsed"):
        fields[key] = tuple(fields.get(key, ()))
    for key in ("selected", "shadow"):
        fields[key] = tuple(Inclusion(**i) for i in fields.get(key, ()))
    known = {a.name for a in attrs.fields(RecallTrace)}
    return RecallTrace(**{k: v for k, v in fields.items() if k in known})


class TraceLog:
    """Appends traces to, and reads them from, one JSONL file per chat."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path_for(self, chat_id: str) -> Path:
        return self.root / safe_file_name(chat_id)

    def append(self, trace: RecallTrace) -> None:
        """Add ``trace``. A fresh (not reused) trace of the same anchor and query as the newest
        stored one replaces it: the same turn recalled again by a new process (a demo run
        again, a restart) is one recall, not two. Only the file's tail is read."""
        self.root.mkdir(parents=True, exist_ok=True)
        line = redact_known(json.dumps(trace.to_json(), ensure_ascii=False, sort_keys=True))
        path = self.path_for(trace.chat_id)
        with path.open("a+b") as fh:
            end = fh.seek(0, 2)
            start, last = _last_line(fh, end)
            if last is not None and not trace.reused and _same_turn(last, trace):
                fh.truncate(start)
            fh.seek(0, 2)
            if fh.tell() and not _ends_with_newline(fh):
                fh.write(b"\n")  # a line cut short by a crash stays a line of its own
            fh.write(line.encode("utf-8") + b"\n")

    def read(self, chat_id: str, *, last: int | None = None) -> list[RecallTrace]:
        """The chat's traces, oldest first (``last``: only the newest N). A torn line is skipped."""
        path = self.path_for(chat_id)
        if not path.exists():
            return []
        traces = []
        for line in split_lines(path.read_text(encoding="utf-8")):
            try:
                traces.append(trace_from_json(json.loads(line)))
            except (ValueError, TypeError):
                continue  # a line cut short by a crash: keep the rest readable
        return traces[-last:] if last else traces


QUERY_WIDTH = 32
_TAIL = 1 << 16  # a trace line is far shorter than this


def _last_line(fh: Any, end: int) -> tuple[int, dict[str, Any] | None]:
    """(offset where the file's last complete line starts, that line parsed or None)."""
    if end == 0:
        return 0, None
    fh.seek(max(0, end - _TAIL))
    tail = fh.read()
    if not tail.endswith(b"\n"):
        return end, None  # a torn last line: keep it, append after it
    body = tail[:-1]
    cut = body.rfind(b"\n")
    if cut < 0 and end > len(tail):
        return end, None  # longer than the tail window: never replaced
    start = end - len(tail) + cut + 1
    try:
        return start, json.loads(body[cut + 1 :])
    except ValueError:
        return end, None


def _ends_with_newline(fh: Any) -> bool:
    fh.seek(-1, 2)
    return fh.read(1) == b"\n"


def _same_turn(stored: dict[str, Any], trace: RecallTrace) -> bool:
    return (
        stored.get("chat_id") == trace.chat_id
        and stored.get("seq") == trace.seq
        and tuple(stored.get("anchor", ())) == tuple(trace.anchor)
        and stored.get("query") == trace.query
    )


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def render_table(columns: list[str], rows: list[list[str]]) -> str:
    """The rows as a plain-text `rich` table (no trailing blanks)."""
    return table_text(columns, rows)


def format_table(traces: Sequence[RecallTrace]) -> str:
    """A human table of traces, one row each; the last column says why each node is in
    (``seed 0.033 (keyword #1, vector #2)``, ``drill_down from n_9 …``,
    ``via n_3 -[involved_in]- (1 hop)``)."""
    header = (
        "seq",
        "router",
        "mode",
        "fallback",
        "pool",
        "pinned",
        "chars",
        "seeds",
        "query",
        "selected (why)",
    )
    rows = [header]
    for t in traces:
        why = [f"{nid} pinned" for nid in t.pinned_ids]
        picked = "; ".join([*why, *(f"{i.id} {i.describe()}" for i in t.selected)])
        if t.collapsed:
            picked += f"; {len(t.collapsed)} repeated rows collapsed"
        rows.append(
            (
                f"{t.seq}{' (reused)' if t.reused else ''}",
                t.router,
                t.mode,
                t.fallback_reason or "-",
                str(t.pool_size),
                str(len(t.always_inject_ids)),
                f"{t.injected_chars}/{t.budget_chars}" if t.budget_chars else "-",
                ",".join(t.seeds) or "-",
                _clip(t.query, QUERY_WIDTH) or "-",
                picked or "-",
            )
        )
    return render_table(list(rows[0]), [list(r) for r in rows[1:]])
