"""Compaction the pipeline runs itself when no plugin did it after a commit.

Rule (``recall_compaction`` setting): ``auto`` (default) — after a batch's commit hooks have run
(the compactor sample plugin compacts there), any hierarchical type still over its threshold is
compacted here; ``off`` — the pipeline never compacts. Summaries come from the
``memgraph_summarise`` hook (the built-in offline extractor plugin answers it with the most
informative sentences of the children), else from the same extractive summary below.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from memgraph_plugin.extraction.summary import SUMMARY_BUDGET, informative_summary
from memgraph_plugin.extraction.titles import rollup_facts, rollup_title

from ..recall.hookcalls import first
from ..settings_keys import RECALL

log = logging.getLogger(__name__)

MAX_DEPTH_SCAN = 16
SUMMARY_LIMIT = SUMMARY_BUDGET


def extractive_summary(briefs: Sequence[Any]) -> str:
    """Offline fallback: the children's most informative sentences within the rollup budget
    (`memgraph_plugin.extraction.summary.informative_summary`: names, numbers, dates, rare
    words; was: the first sentence of each child)."""
    return informative_summary(briefs, budget=SUMMARY_LIMIT)


async def summarise(host: Any, type_name: str, briefs: Sequence[Any]) -> str:
    """The summary of one group: the first plugin's answer, else the extractive fallback."""
    answer, _failures = await first(host, "memgraph_summarise", type=type_name, briefs=list(briefs))
    if answer is not None and isinstance(answer.value, str) and answer.value.strip():
        return answer.value
    return extractive_summary(briefs) or f"{len(briefs)} {type_name} nodes"


def rollup_fields(session: Any, group: Any, summary: str) -> dict[str, Any]:
    """A rollup's title from its content (who, when, what: `titles.rollup_title`) and what it
    keeps of its children for its parent's title (`titles.rollup_facts`)."""
    store = session.store
    children = [n for n in (store.node(i) for i in group.child_ids) if n is not None]
    facts = rollup_facts(children)
    return {**facts, "title": rollup_title(facts, summary)}


def hierarchical_types(session: Any) -> list[str]:
    return [s.type for s in session.get_schema().types if s.compression_mode == "hierarchical"]


def compaction_enabled(host: Any) -> bool:
    """Whether the pipeline compacts at all (``recall_compaction`` is not ``off``)."""
    return (
        str(
            host.settings.get(RECALL.recall_compaction.name, RECALL.recall_compaction.default)
        ).lower()
        != "off"
    )


def due_groups(session: Any) -> int:
    """How many groups are due now at the lowest depth of each hierarchical type that has any
    (a lower bound of the work left: each rollup tier makes the next one's groups)."""
    total = 0
    for type_name in hierarchical_types(session):
        for depth in range(MAX_DEPTH_SCAN):
            groups = session.compaction_due(type=type_name, depth=depth)  # no record made
            if groups:
                total += groups
                break
    return total


async def compact_leftovers(host: Any, session: Any, *, limit: int | None = None) -> list[str]:
    """Compact every group still eligible (at most `limit` groups), depth by depth; returns
    the new rollup ids. The groups of one type and depth are written as one commit
    (`compact_groups`): after a large import thousands of groups are due at once (the turn
    pipeline leaves such a backlog to `catch_up.CatchUp`, a chunk at a time)."""
    if not compaction_enabled(host):
        return []
    created: list[str] = []
    for type_name in hierarchical_types(session):
        made_at: set[int] = set()
        for depth in range(MAX_DEPTH_SCAN):
            if limit is not None and len(created) >= limit:
                return created
            if limit is None:
                groups = session.compaction_candidates(type=type_name, depth=depth).groups
            else:  # the oldest groups only: no sort of every root of a long chat per chunk
                left = limit - len(created)
                groups = session.compaction_candidates(type=type_name, depth=depth, limit=left)
                groups = groups.groups
            if not groups and depth > 0 and depth not in made_at and limit is None:
                break  # (a chunk of a backlog scans on: an earlier chunk made the tiers above)
            summarised: list[tuple[list[str], str, dict[str, Any]]] = []
            for group in groups:
                briefs = [
                    session.get_node_brief(i, include_edge_summary=False) for i in group.child_ids
                ]
                text = await summarise(host, type_name, briefs)
                fields = rollup_fields(session, group, text)
                summarised.append((list(group.child_ids), text, fields))
            if not summarised:
                continue
            outcomes = await session.compact_groups(type=type_name, groups=summarised)
            for group, outcome in zip(groups, outcomes, strict=True):
                if isinstance(outcome, Exception):  # e.g. CHILD_HAS_PARENT
                    log.warning("pipeline compaction of %s skipped: %r", type_name, outcome)
                    continue
                created.append(outcome.rollup_node_id)
                made_at.add(group.depth)
    return created
