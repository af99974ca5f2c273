"""scout: a recall policy of its own, and the orchestrator's ``memory_*`` loop tools.

Everything goes through ``host.get_extension_api("memory-graph").open_session(ctx)``. ``scout(ctx)``
rebuilds the router's input as the docs' worked example does (``schema_overview`` and
``candidate_rows``) and ranks the rows with its own deterministic policy: names of the node
mentioned in the latest user message, keyword overlap with it, edge-summary degree as tie-break.
The loop tools ``memory_search``, ``memory_list_recent`` and ``memory_get`` are published as
``orchestrator``; they never return a node that is already injected (the union of the chat's
always-inject and recall-selected ids, kept current by ``memgraph_injection_changed``), and they
answer ``ToolError(code="MEMORY_DISABLED")`` when no session can be opened.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import attrs

from host import hookimpl
from host.settings.settings_schema import setting, settings_room
from sample_plugins._registry_access import attach_worker, chat_of, detach_worker, run_soon
from sample_plugins._text import ASCII_WORD, CJK_RUN, STOP_WORDS, split_values
from sample_plugins._worker import Worker

log = logging.getLogger("sample_plugins.scout")

WORKER_NAME = "scout.worker"
API_NAME = "scout"
TOOLS_NAME = "orchestrator"
VERSION = "1.0"
DEFAULT_PICKS = 5
PREVIEW_LIMIT = 300
OVERVIEW_KEYS = (  # the schema_overview block's fields besides "id", in the docs' order
    "table_name",
    "table_columns",
    "required_columns",
    "force_update",
    "always_inject",
    "editable",
    "compression_mode",
)


@settings_room
class ScoutKeys:
    scout_on_recall: bool = setting(
        True, "Scout sample plugin: run its policy each time a chat's injection changes."
    )
    scout_pool_size: int = setting(
        128,
        """Scout sample plugin: the most candidate rows one run briefs. A chat with more
        candidates gives the newest quarter of this and the keyword hits for the query, so a run
        costs the same at any chat length.""",
        minimum=4,
    )


AUTO_SETTING = "scout_on_recall"
POOL_SETTING = "scout_pool_size"


# ---- value types -----------------------------------------------------------------------------


@attrs.frozen
class ToolError:
    """A loop tool's failure, for the agent to pivot on (``MEMORY_DISABLED``, ``BAD_ARGS``, ...)."""

    code: str
    message: str
    ok: bool = False


@attrs.frozen
class ScoutPick:
    """One node the scout's policy picked, and why."""

    id: str
    type: str
    title: str
    score: float
    reasons: tuple[str, ...]


@attrs.frozen
class ScoutReport:
    """What one ``scout`` run saw and picked for one chat."""

    chat_id: str | None
    query: str
    schema_overview: tuple[Mapping[str, Any], ...] = ()
    candidate_count: int = 0
    excluded: frozenset[str] = frozenset()
    picks: tuple[ScoutPick, ...] = ()
    skipped: str | None = None

    def describe(self) -> list[str]:
        """What the scout found beyond the injected nodes, for the demo."""
        if self.skipped:
            return [f"skipped: {self.skipped}"]
        if not self.picks:
            return [f"nothing new among {self.candidate_count} candidates beyond the injected ones"]
        return [
            f"found {p.title!r} ({p.id}, {p.type}) score {p.score:g}: {'; '.join(p.reasons)}"
            for p in self.picks[:3]
        ]


# ---- text helpers ----------------------------------------------------------------------------


def tokens(text: str) -> set[str]:
    """Content tokens: ASCII words of three letters or more, CJK characters and CJK bigrams."""
    text = (text or "").lower()
    found = {w for w in ASCII_WORD.findall(text) if len(w) >= 3 and w not in STOP_WORDS}
    for run in CJK_RUN.findall(text):
        found.update(run)
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return found


def names_of(brief: Any) -> list[str]:
    """The names a node answers to: its title and its primary-key values (aliases included)."""
    names = [brief.title] if getattr(brief, "title", "") else []
    for value in (getattr(brief, "key_values", None) or {}).values():
        names.extend(split_values(value))
    return list(dict.fromkeys(n for n in names if n))


def mentioned(name: str, text: str) -> bool:
    """Whether ``name`` is mentioned in ``text``: as whole words, or as a substring for CJK."""
    name = name.strip().lower()
    if len(name) < 2:
        return False
    if CJK_RUN.search(name):
        return name in text.lower()
    return re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", text.lower()) is not None


def brief_text(brief: Any) -> str:
    parts = [brief.title or "", brief.summary or ""]
    for mapping in (brief.key_values, brief.row_values):
        for value in (mapping or {}).values():
            parts.extend(split_values(value))
    return " ".join(parts)


def score_brief(brief: Any, query: str, query_tokens: set[str]) -> tuple[float, tuple[str, ...]]:
    """The scout's policy for one candidate row: name mentions (2 each) + keyword overlap."""
    reasons: list[str] = []
    score = 0.0
    hits = [n for n in names_of(brief) if mentioned(n, query)]
    if hits:
        score += 2.0 * len(hits)
        reasons.append("named: " + ", ".join(hits))
    if query_tokens:
        shared = query_tokens & tokens(brief_text(brief))
        if shared:
            score += len(shared) / len(query_tokens)
            reasons.append("keywords: " + ", ".join(sorted(shared)))
    return score, tuple(reasons)


def _degree(brief: Any) -> int:
    summary = getattr(brief, "edge_summary", None)
    return int(getattr(summary, "degree", 0) or 0)


def node_row(node: Any, *, score: float | None = None) -> dict[str, Any]:
    """A tool's JSON-ready row for a node view or brief: id, type, title, preview, time."""
    text = getattr(node, "summary", None)
    if text is None:
        fields = getattr(node, "fields", None) or {}
        text = str(fields.get("summary") or fields.get("state") or fields.get("note") or "")
    preview = f"{node.title}: {text}" if text else node.title
    row: dict[str, Any] = {
        "id": node.id,
        "type": node.type,
        "title": node.title,
        "preview": preview[:PREVIEW_LIMIT],
        "time": getattr(node, "seq_to", getattr(node, "to_seq", None)),
    }
    if score is not None:
        row["score"] = round(score, 4)
    return row


def _plain(value: Any) -> Any:
    """A spec value as JSON-ready data (tuples become lists)."""
    return list(value) if isinstance(value, (tuple, list, frozenset)) else value


def _limit(args: Mapping[str, Any], default: int) -> int:
    try:
        value = int(args.get("limit", default) or default)
    except (TypeError, ValueError):
        return default
    return max(1, min(value, 100))


# ---- the per-host worker ---------------------------------------------------------------------


class Scout(Worker[ScoutReport]):
    """The scout of one host: its recall policy, the loop tools and the exclusion sets."""

    keep = 1  # the latest run per chat is what the demo shows

    def __init__(self, host: Any) -> None:
        super().__init__(host, "scout", log)
        self._injected: dict[str | None, frozenset[str]] = {}
        self.tools = OrchestratorTools(self)

    # exclusion --------------------------------------------------------------------------------

    @hookimpl(optionalhook=True)
    def memgraph_injection_changed(self, chat_id: str, state: Any) -> Any:
        """Keep the chat's exclusion set (always-inject | recall-selected ids); then scout.

        The scout run is a task the host may await (``scout_on_recall = false`` turns it off).
        """
        ids = frozenset(state.always_inject_ids) | frozenset(state.recall_selected_ids)
        self._injected[chat_id] = ids
        if not self.host.settings.get(AUTO_SETTING, True):
            return None
        # the run may start after this turn's extraction: pin the query and the last seq now
        messages = getattr(self.memory.context(chat_id), "messages", ()) or ()
        users = [m.text for m in messages if m.role == "user"]
        last_seq = max((m.seq for m in messages), default=0)
        run = self.scout(chat_id, query=users[-1] if users else "", max_seq=last_seq)
        return run_soon(run, self._tasks)

    def excluded(self, chat: Any, session: Any = None) -> frozenset[str]:
        """Ids already injected into the chat (from the hook, and the session when it tells)."""
        ids = self._injected.get(chat_of(chat), frozenset())
        getter = getattr(session, "get_injection_state", None)
        if getter is not None:
            try:
                state = getter()
                ids = (
                    ids | frozenset(state.always_inject_ids) | frozenset(state.recall_selected_ids)
                )
            except Exception as exc:
                log.debug("scout: injection state unavailable: %r", exc)
        return ids

    # the recall policy ------------------------------------------------------------------------

    @staticmethod
    def schema_overview(session: Any) -> tuple[dict[str, Any], ...]:
        """The ``schema_overview`` block of the router's input, as in the docs' worked example:
        each type spec with ``type`` as ``id`` and without the primary-key columns."""
        return tuple(
            {"id": spec.type} | {key: _plain(getattr(spec, key)) for key in OVERVIEW_KEYS}
            for spec in session.get_schema().types
        )

    @staticmethod
    def candidate_rows(
        session: Any, *, max_seq: int | None = None, ids: Iterable[str] | None = None
    ) -> list[Any]:
        """The ``candidateRows`` block: one brief per visible candidate, in the router's order
        (or per id of ``ids``, in that order).

        The worked example's calls exactly: no ``visible_node_ids``, so edge summaries are taken
        over the chat's recorded visible set (the pool the router saw), else the candidate pool.
        """
        if ids is None:
            window = None if max_seq is None else (None, max_seq)
            ids = [c.id for c in session.list_visible_candidates(seq_window=window)]
        ids = list(ids)
        options = {"include_edge_summary": True, "edge_summary_limit": 8}
        many = getattr(session, "get_node_briefs", None)  # one call sharing work, when offered
        if many is not None:
            rows = list(many(ids, **options))
        else:
            rows = [session.get_node_brief(i, **options) for i in ids]
        return [row for row in rows if row is not None]

    def bounded_pool(
        self, session: Any, query: str, *, max_seq: int | None = None
    ) -> list[str] | None:
        """The candidate ids one run looks at: None (all of them, the worked example) while the
        pool fits ``scout_pool_size``; past it, the newest quarter of that size plus the keyword
        hits for ``query``. A row the policy can score has a name or a word of the query, so the
        keyword hits hold it; each step asks for a bounded count, never the whole pool."""
        size = int(self.host.settings.get(POOL_SETTING, 128))
        window = None if max_seq is None else (None, max_seq)
        newest = session.list_visible_candidates(seq_window=window, limit=size + 1)
        if len(newest) <= size:
            return None
        ids = [v.id for v in newest[: max(1, size // 4)]]
        if query.strip():
            for hit in session.keyword_search(query=query, k=size):
                seq = hit.seq_to
                if max_seq is None or (seq is not None and seq <= max_seq):
                    ids.append(hit.id)
        return list(dict.fromkeys(ids))

    def rank(
        self, rows: list[Any], query: str, excluded: frozenset[str], limit: int
    ) -> list[ScoutPick]:
        """Rows scored by the policy, best first (ties: degree, then id); excluded ids left out."""
        query_tokens = tokens(query)
        scored = []
        for row in rows:
            if row.id in excluded:
                continue
            score, reasons = score_brief(row, query, query_tokens)
            if score > 0:
                scored.append((score, _degree(row), row, reasons))
        scored.sort(key=lambda t: (-t[0], -t[1], t[2].id))
        return [
            ScoutPick(row.id, row.type, row.title, round(score, 4), reasons)
            for score, _, row, reasons in scored[:limit]
        ]

    async def scout(
        self,
        ctx: Any,
        *,
        query: str | None = None,
        limit: int = DEFAULT_PICKS,
        pool: Iterable[str] | None = None,
        max_seq: int | None = None,
    ) -> ScoutReport:
        """Run the policy against ``query`` (default: the latest user message of the chat).

        ``pool`` limits the candidates to those ids; ``max_seq`` to nodes written up to that seq
        (the hook passes the chat's last seq, so a later extraction does not leak in).
        """
        chat_id = chat_of(ctx)
        ctx = self.memory.context(ctx)
        if query is None:
            users = [m.text for m in getattr(ctx, "messages", ()) if m.role == "user"]
            query = users[-1] if users else ""
        session = await self.memory.open(ctx)
        if session is None:
            return ScoutReport(chat_id, query, skipped="memory graph unavailable")
        excluded = self.excluded(chat_id, session)
        bounded = self.bounded_pool(session, query, max_seq=max_seq)
        rows = self.candidate_rows(session, max_seq=max_seq, ids=bounded)
        if pool is not None:
            allowed = frozenset(pool)
            rows = [row for row in rows if row.id in allowed]
        report = ScoutReport(
            chat_id,
            query,
            self.schema_overview(session),
            len(rows),
            excluded,
            tuple(self.rank(rows, query, excluded, limit)),
        )
        self._keep(chat_id, report)
        return report


Args = Mapping[str, Any]
Ids = frozenset[str]
Answer = dict | ToolError
ToolBody = Callable[["OrchestratorTools", Args, Any, Ids], Awaitable[Answer]]


def _tool(body: ToolBody) -> Callable[..., Awaitable[Answer]]:
    """A loop tool ``(args, ctx)``: opens the chat's session (none: ``MEMORY_DISABLED``) and
    hands ``body`` the arguments (a mapping, ``{}`` when missing), the session and the chat's
    injected ids."""

    @functools.wraps(body)
    async def tool(self: OrchestratorTools, args: Any, ctx: Any) -> Answer:
        if args is not None and not isinstance(args, Mapping):
            return ToolError("BAD_ARGS", f"tool arguments must be an object, got {args!r}")
        session = await self._scout.memory.open(ctx)
        if session is None:
            return ToolError("MEMORY_DISABLED", "memory graph is not available for this chat")
        return await body(self, args or {}, session, self._scout.excluded(ctx, session))

    return tool


class OrchestratorTools:
    """The loop tools published as ``orchestrator``; each takes ``(args, ctx)``."""

    def __init__(self, scout: Scout) -> None:
        self._scout = scout

    @_tool
    async def memory_search(self, args: Args, session: Any, excluded: Ids) -> Answer:
        """``{"query", "limit"?}`` -> ``{"nodes": [...]}`` ranked by the scout's policy."""
        query = str(args.get("query") or "").strip()
        if not query:
            return {"nodes": []}
        bounded = self._scout.bounded_pool(session, query)
        rows = {row.id: row for row in self._scout.candidate_rows(session, ids=bounded)}
        picks = self._scout.rank(list(rows.values()), query, excluded, _limit(args, DEFAULT_PICKS))
        return {"nodes": [node_row(rows[p.id], score=p.score) for p in picks]}

    @_tool
    async def memory_list_recent(self, args: Args, session: Any, excluded: Ids) -> Answer:
        """``{"limit"?}`` -> ``{"nodes": [...]}``, newest first, injected nodes left out."""
        limit = _limit(args, 10)
        newest = session.list_visible_candidates(limit=limit + len(excluded))
        fresh = [n for n in newest if n.id not in excluded]
        return {"nodes": [node_row(n) for n in fresh[:limit]]}

    @_tool
    async def memory_get(self, args: Args, session: Any, excluded: Ids) -> Answer:
        """``{"id", "include_neighbors"?}`` -> ``{"node", "neighbors"}``; injected ids refused."""
        node_id = str(args.get("id") or "").strip()
        if not node_id:
            return ToolError("BAD_ARGS", "memory_get needs an 'id'")
        if node_id in excluded:
            return ToolError("ALREADY_INJECTED", f"{node_id} is already in the main context")
        brief = session.get_node_brief(node_id, include_edge_summary=False)
        if brief is None:
            return ToolError("NOT_FOUND", f"no active node {node_id}")
        result: dict[str, Any] = {"node": node_row(brief) | {"fields": _brief_fields(brief)}}
        if args.get("include_neighbors", True):
            seen = {node_id}
            neighbors = []
            for view in session.expand_from_seeds(
                [node_id], hops=1, project_to="raw", include_children=False, exclude_internal=True
            ):
                if view.id in seen or view.id in excluded:
                    continue
                seen.add(view.id)
                neighbors.append({"id": view.id, "type": view.type, "title": view.title})
            result["neighbors"] = neighbors
        return result


def _brief_fields(brief: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for mapping in (brief.key_values, brief.row_values):
        for key, value in (mapping or {}).items():
            fields[key] = list(value) if isinstance(value, tuple) else value
    return fields


# ---- module plugin hooks ---------------------------------------------------------------------


@hookimpl
def host_startup(host: Any) -> None:
    """Give this host its scout; publish it as ``scout`` and its tools as ``orchestrator``."""
    worker = Scout(host)
    attach_worker(
        host, worker, name=WORKER_NAME, api_name=API_NAME, version=VERSION, module=__name__
    )
    host.registry.register(TOOLS_NAME, worker.tools, owner=WORKER_NAME, version=VERSION)


@hookimpl
def host_shutdown(host: Any) -> None:
    detach_worker(host, name=WORKER_NAME)
