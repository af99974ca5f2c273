"""What the turn pipeline hands recall besides the query: the question's own event (never
injected back: the prompt has it already), which nodes stay out of the pinned scene (that event,
and near-empty messages), and the candidate pool read only when a router plugin reads it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..recall.block.injection_budget import PINNED_SLACK
from ..recall.ranking.fusion import is_filler

__all__ = ["LazyPool", "not_pinned", "question_nodes"]


def question_nodes(session: Any, question: int | None, per_type: int) -> tuple[str, ...]:
    """The question's own event(s), found at the head of the event pool (bounded)."""
    if question is None:
        return ()
    store = session.store
    out: list[str] = []
    for spec in store.schema.types:
        if spec.always_inject:
            for node in store.newest_in_pool(spec.type, per_type + PINNED_SLACK):
                if node.fields.get("message") == question and not node.semantic_rollup:
                    out.append(node.id)
    return tuple(out)


def not_pinned(node: Any, question: int | None) -> bool:
    """Left out of the pinned scene: the question's own event, and near-empty messages."""
    message = node.fields.get("message")
    if question is not None and message == question and not node.semantic_rollup:
        return True
    return is_filler(node)


class LazyPool(Sequence[Any]):
    """The candidate pool (visible minus the recent window, recency order) read on first use:
    the built-in path never reads it, a router plugin that iterates it pays the pool's size."""

    def __init__(self, session: Any, recent: int) -> None:
        self._session = session
        self._recent = recent
        self._views: tuple[Any, ...] | None = None

    def _all(self) -> tuple[Any, ...]:
        if self._views is None:
            self._views = tuple(
                self._session.list_visible_candidates(exclude_recent_messages=self._recent)
            )
        return self._views

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __iter__(self) -> Any:
        return iter(self._all())

    def __repr__(self) -> str:
        return "LazyPool(read)" if self._views is not None else "LazyPool(not read)"
