"""curator: finds one entity stored twice and merges the two through the write API.

Between turns (``curate(chat)``, which the turn driver calls; with the setting
``curator_on_commit`` also after every commit) it looks at the
entity types (those with an ``aliases`` column), probes each entity's names with ``find_by_name``,
and treats two nodes of one type as the same entity when they share a name, when a CJK name of
one contains a CJK name of the other, or (people) when one's name is the start or end of the
other's ("Mara" / "Captain Mara Voss"). Each group merges into its oldest node in ONE
``apply_extraction_batch``: the duplicates are archived (``delete``), the survivor takes the
fullest title, every name as an alias and the newest value of each other column (``edit``), and
the duplicates' edges are re-linked to it (``link_upsert``). Published as ``curator``:
``curate(chat)``, ``last_report(chat_id)``, ``reports(chat_id)``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from host import hookimpl
from host.settings.settings_schema import setting, settings_room
from sample_plugins._registry_access import attach_worker, chat_of, detach_worker, run_soon
from sample_plugins._text import ASCII_WORD, CJK_CHAR, CJK_RUN, split_values
from sample_plugins._worker import Worker

log = logging.getLogger("sample_plugins.curator")

WORKER_NAME = "curator.worker"
API_NAME = "curator"
VERSION = "1.0"
MAX_PASSES = 4


@settings_room
class CuratorKeys:
    curator_on_commit: bool = setting(
        False, "Curator sample plugin: also curate after every commit."
    )


AUTO_SETTING = "curator_on_commit"

INTERNAL_EDGES = frozenset({"contains", "semantic_contains"})
HONORIFICS = frozenset(
    [
        "the",
        "captain",
        "capt",
        "sister",
        "brother",
        "mother",
        "father",
        "lady",
        "lord",
        "sir",
        "dame",
        "old",
        "young",
        "magistrate",
        "master",
        "mistress",
        "doctor",
        "dr",
        "mr",
        "mrs",
        "ms",
        "miss",
        "madam",
        "elder",
    ]
)


# ---- reports ---------------------------------------------------------------------------------


@attrs.frozen
class Merge:
    """One merge: duplicates folded into a survivor."""

    type: str
    survivor_id: str
    title: str  # the survivor's title after the merge
    merged_ids: tuple[str, ...]
    merged_titles: tuple[str, ...]
    aliases: tuple[str, ...]
    relinked: int  # links moved to the survivor
    reason: str


@attrs.frozen
class CurationReport:
    """What one ``curate`` call changed in one chat."""

    chat_id: str | None
    merges: tuple[Merge, ...] = ()
    rejected: tuple[str, ...] = ()  # "code: message" of ops the batch refused
    skipped: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.merges)

    def describe(self) -> list[str]:
        """One line per merge (and per refused op), for the demo."""
        lines = [
            f"merged {', '.join(map(repr, m.merged_titles))} ({', '.join(m.merged_ids)}) "
            f"into {m.survivor_id}, now {m.title!r}; {m.relinked} link(s) moved ({m.reason})"
            for m in self.merges
        ]
        return lines + [f"refused: {r}" for r in self.rejected]


# ---- identity rules --------------------------------------------------------------------------


def names(node: Any) -> list[str]:
    """Title, then aliases, of a node view; duplicates (case-insensitive) dropped."""
    found = [node.title, *split_values((node.fields or {}).get("title"))]
    found += split_values((node.fields or {}).get("aliases"))
    seen: dict[str, str] = {}
    for name in found:
        if name and _norm(name) not in seen:
            seen[_norm(name)] = name
    return list(seen.values())


def _norm(name: str) -> str:
    return " ".join(name.lower().split())


def core_tokens(name: str) -> list[str]:
    """A person's name without honorifics: ``Captain Mara Voss`` -> ``[mara, voss]``."""
    return [t for t in ASCII_WORD.findall(name.lower()) if t not in HONORIFICS]


def same_entity(a: Any, b: Any, *, person: bool) -> str | None:
    """Why ``a`` and ``b`` are one entity, or ``None``."""
    names_a = {_norm(n) for n in names(a)}
    names_b = {_norm(n) for n in names(b)}
    shared = sorted(names_a & names_b)
    if shared:
        return f"shared name {shared[0]!r}"
    for x in names_a:
        for y in names_b:
            if CJK_CHAR.search(x) and CJK_CHAR.search(y):
                short, long = sorted((x, y), key=len)
                if len(short) >= 2 and short in long:
                    return f"CJK name {short!r} inside {long!r}"
    if person:
        ta, tb = core_tokens(a.title), core_tokens(b.title)
        short, long = sorted((ta, tb), key=len)
        if (
            short
            and len(short) < len(long)
            and (long[: len(short)] == short or long[-len(short) :] == short)
        ):
            return f"{a.title!r} and {b.title!r} name the same person"
    return None


def probes(node: Any) -> list[str]:
    """What to ask ``find_by_name`` for one node: its names, their words (3+ letters, no
    honorifics) and their CJK character pairs."""
    found: dict[str, None] = {}
    for name in names(node):
        if len(name.strip()) >= 2:
            found[name] = None
        for token in core_tokens(name):
            if len(token) >= 3:
                found[token] = None
        for run in CJK_RUN.findall(name):
            for i in range(len(run) - 1):
                found[run[i : i + 2]] = None
    return list(found)


def _id_key(node_id: str) -> tuple[int, str]:
    tail = node_id.rsplit("_", 1)[-1]
    return (int(tail), node_id) if tail.isdigit() else (1 << 62, node_id)


def _timeline_key(node: Any) -> tuple:
    return (node.seq_to is None, node.seq_to or 0, _id_key(node.id))


# ---- the per-host worker ---------------------------------------------------------------------


class Curator(Worker[CurationReport]):
    """The curator of one host: the commit-hook receiver and the published ``curator`` API.

    Reports are kept when a curate merged something (or had refused ops).
    """

    def __init__(self, host: Any) -> None:
        super().__init__(host, "curator", log)
        self._busy: set[str | None] = set()
        self._dirty: dict[str | None, set[str]] = {}  # nodes written since the chat's last curate
        self._scanned: set[str | None] = set()  # chats curated in full once by this worker

    @hookimpl(optionalhook=True)
    def memgraph_commit(self, chat_id: str, commit: Any) -> Any:
        """Note the nodes the commit wrote; with ``curator_on_commit``, curate (not own commits)."""
        node_ids = getattr(commit, "node_ids", None)
        if node_ids is None:
            self._scanned.discard(chat_id)  # no detail: the next curate looks at everything
        else:
            self._dirty.setdefault(chat_id, set()).update(node_ids)
        if chat_id in self._busy or not self.host.settings.get(AUTO_SETTING, False):
            return None
        return run_soon(self.curate(chat_id), self._tasks)

    async def curate(self, chat: Any, *, full: bool = False) -> CurationReport:
        """Find duplicate entities in the chat's graph and merge them; the report says what.

        The first call for a chat (and ``full=True``) probes every entity; later calls probe the
        entities written since (from ``memgraph_commit``), which is where a new duplicate is.
        """
        chat_id = chat_of(chat)
        if chat_id in self._busy:
            return CurationReport(chat_id, skipped="already curating this chat")
        self._busy.add(chat_id)
        merges: list[Merge] = []
        rejected: list[str] = []
        dirty = self._dirty.pop(chat_id, set())
        probe: set[str] | None = None if full or chat_id not in self._scanned else dirty
        try:
            for _ in range(MAX_PASSES):  # a merge can reveal another (names grow)
                session = await self.memory.open(chat)
                if session is None:
                    self._dirty.setdefault(chat_id, set()).update(dirty)
                    return CurationReport(chat_id, skipped="memory graph unavailable")
                survivors = await self._pass(session, merges, rejected, probe)
                self._scanned.add(chat_id)
                if not survivors:
                    break
                probe = survivors
        finally:
            self._busy.discard(chat_id)
        report = CurationReport(chat_id, tuple(merges), tuple(rejected))
        if merges or rejected:
            self._keep(chat_id, report)
        for merge in merges:
            log.info(
                "curator: merged %s into %s %r (%s)",
                list(merge.merged_ids),
                merge.survivor_id,
                merge.title,
                merge.reason,
            )
        return report

    async def _pass(
        self, session: Any, merges: list[Merge], rejected: list[str], probe: set[str] | None
    ) -> set[str]:
        """One look for duplicates (of the ``probe`` nodes; ``None``: all); the survivors made."""
        survivors: set[str] = set()
        for spec in session.get_schema().types:
            if "aliases" not in spec.table_columns or spec.compression_mode == "hierarchical":
                continue
            person = spec.type == "character_sheet"
            for group, reason in self._groups(session, spec.type, person=person, probe=probe):
                merge = await self._merge(session, spec, group, reason, rejected)
                if merge is not None:
                    merges.append(merge)
                    survivors.add(merge.survivor_id)
        return survivors

    def _groups(
        self, session: Any, type_name: str, *, person: bool, probe: set[str] | None = None
    ) -> list[tuple[list, str]]:
        """Duplicate groups of one type (found through ``find_by_name``), oldest node first.

        Each probed node asks ``find_by_name`` for each of its names and their parts (words,
        CJK pairs), so the partner is found whichever of the two names contains the other.
        """
        nodes = {n.id: n for n in session.list_visible_candidates(types=[type_name])}
        parent = {i: i for i in nodes}
        reasons: dict[str, str] = {}

        def root(i: str) -> str:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        asked: dict[str, tuple] = {}  # one find_by_name per distinct probe and pass

        def find(query: str) -> tuple:
            key = query.lower()
            if key not in asked:
                asked[key] = session.find_by_name(query=query, types=[type_name]).matches
            return asked[key]

        probed = [n for n in nodes.values() if probe is None or n.id in probe]
        for node in sorted(probed, key=_timeline_key):
            for query in probes(node):
                for match in find(query):
                    if match.id == node.id or match.id not in nodes:
                        continue
                    if root(match.id) == root(node.id):
                        continue
                    why = same_entity(node, nodes[match.id], person=person)
                    if why:
                        a, b = root(node.id), root(match.id)
                        keep, drop = sorted((a, b), key=lambda i: _timeline_key(nodes[i]))
                        parent[drop] = keep
                        reasons[keep] = "; ".join(filter(None, [reasons.get(keep), why]))
        groups: dict[str, list] = {}
        for i in nodes:
            groups.setdefault(root(i), []).append(nodes[i])
        return [
            (sorted(members, key=_timeline_key), reasons.get(r, ""))
            for r, members in sorted(groups.items(), key=lambda kv: _timeline_key(nodes[kv[0]]))
            if len(members) > 1
        ]

    async def _merge(
        self, session: Any, spec: Any, group: Sequence[Any], reason: str, rejected: list[str]
    ) -> Merge | None:
        survivor, duplicates = group[0], list(group[1:])
        member_ids = {n.id for n in group}
        title = max((n.title for n in group), key=lambda t: (len(t), t))
        aliases: dict[str, str] = {}
        for node in group:
            for name in names(node):
                if _norm(name) != _norm(title):
                    aliases.setdefault(_norm(name), name)
        set_fields: dict[str, Any] = {"aliases": list(aliases.values())}
        if "title" in spec.table_columns:
            set_fields["title"] = title
        newest_first = sorted(group, key=_timeline_key, reverse=True)
        for column in spec.table_columns:
            if column in ("title", "aliases"):
                continue
            for node in newest_first:
                value = (node.fields or {}).get(column)
                if value not in (None, "", (), []):
                    if value != (survivor.fields or {}).get(column):
                        set_fields[column] = list(value) if isinstance(value, tuple) else value
                    break
        links = []
        for dup in duplicates:
            links.extend(self._edges_of(session, dup.id, member_ids))
        links = list(
            {
                (t, r, d): {"target_node_id": t, "relation": r, "direction": d} for t, r, d in links
            }.values()
        )
        ops: list[dict[str, Any]] = [{"op": "delete", "node_id": d.id} for d in duplicates]
        ops.append({"op": "edit", "node_id": survivor.id, "title": title, "set_fields": set_fields})
        if links:
            ops.append({"op": "link_upsert", "source_node_id": survivor.id, "links": links})
        result = await session.apply_extraction_batch(ops=ops)
        for entry in result.rejected:
            rejected.append(f"{entry.error.code}: {entry.error.message}")
            log.warning("curator: op refused: %s %s", entry.error.code, entry.error.message)
        if not any(op.get("op") == "delete" for op in _ops(result.applied)):
            return None
        return Merge(
            spec.type,
            survivor.id,
            title,
            tuple(d.id for d in duplicates),
            tuple(d.title for d in duplicates),
            tuple(set_fields["aliases"]),
            len(links),
            reason,
        )

    @staticmethod
    def _edges_of(session: Any, node_id: str, skip: set[str]) -> list[tuple[str, str, str]]:
        """``(neighbour, relation, direction seen from node_id)`` for the node's raw edges.

        With the read API's ``get_neighbors`` when the session offers it; otherwise from the
        documented session reads (raw expansion, then a two-node edge summary per neighbour).
        """
        get_neighbors = getattr(session, "get_neighbors", None)
        if get_neighbors is not None:
            return [
                (n.node.id, n.edge_type, "outgoing" if n.direction == "out" else "incoming")
                for n in get_neighbors(node_id, direction="both", project_to="raw")
                if n.edge_type not in INTERNAL_EDGES and n.node.id not in skip | {node_id}
            ]
        # the node's relations: its edge summary over the whole visible graph (a neighbour that
        # is a leaf of a rollup counts through the rollup)
        visible = frozenset(n.id for n in session.list_visible_candidates()) | {node_id}
        summary = session.get_edge_summary(node_id, visible_node_ids=visible, limit=1)
        relations = sorted({r.relation for r in summary.relations} - INTERNAL_EDGES)
        if not relations:
            return []
        neighbours = session.expand_from_seeds(
            [node_id],
            hops=1,
            edge_types=relations,
            project_to="raw",
            include_children=False,
            exclude_internal=True,
        )
        found = []
        for neighbour in neighbours:
            if neighbour.id == node_id or neighbour.id in skip:
                continue
            pair = session.get_edge_summary(node_id, visible_node_ids=[node_id, neighbour.id])
            for rel in pair.relations:
                if rel.relation in INTERNAL_EDGES:
                    continue
                direction = "outgoing" if rel.direction == "out" else "incoming"
                found.append((neighbour.id, rel.relation, direction))
        return found


def _ops(applied: Iterable[Any]) -> list[Mapping[str, Any]]:
    return [op for op in applied if isinstance(op, Mapping)]


# ---- module plugin hooks ---------------------------------------------------------------------


@hookimpl
def host_startup(host: Any) -> None:
    """Give this host its curator worker and publish it as ``curator``."""
    attach_worker(
        host, Curator(host), name=WORKER_NAME, api_name=API_NAME, version=VERSION, module=__name__
    )


@hookimpl
def host_shutdown(host: Any) -> None:
    detach_worker(host, name=WORKER_NAME)
