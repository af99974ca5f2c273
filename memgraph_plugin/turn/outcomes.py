"""What a turn gives back: the recall's outcome (what it injected, why, the block), the
extraction's outcome (what a message wrote), and the two together for a whole turn."""

from __future__ import annotations

from typing import Any

import attrs

from host.plugins.notify import HookFailure

from ..hook_contract import Inclusion, RouteResult
from ..recall.prompt_window import PromptWindow
from ..recall.trace import RecallTrace

__all__ = ["ExtractionOutcome", "RecallOutcome", "TurnOutcome", "Window"]


#: A recall inside a context window (`PromptWindow`); None: the whole history is in the prompt.
Window = PromptWindow | None


@attrs.frozen
class RecallOutcome:
    """What one recall injected, why, and the prompt text it rendered."""

    route: RouteResult
    recall_selected_ids: tuple[str, ...]
    visible_ids: tuple[str, ...]  # the candidates the router ranked (and what it picked)
    pinned: tuple[Any, ...]  # NodeViews, timeline order
    recalled: tuple[Any, ...]  # NodeViews, in router (relevance) order, within the budget
    pool: tuple[Any, ...]  # the ranked candidates the router saw (NodeViews, best first)
    prompt: str
    trace: RecallTrace  # also holds the chat, the anchor and the always-inject ids
    reused: bool = False
    query: str = ""  # the whole query (the trace keeps the first 300 characters)
    window: Window = None  # the context window it recalled for, if any

    @property
    def chat_id(self) -> str:
        return self.trace.chat_id

    @property
    def anchor(self) -> tuple[int, int]:
        return self.trace.anchor

    @property
    def always_inject_ids(self) -> tuple[str, ...]:
        return self.trace.always_inject_ids

    @property
    def why(self) -> dict[str, Inclusion]:
        return {i.id: i for i in self.route.selected}

    @property
    def injected(self) -> tuple[Any, ...]:
        """Every injected node in prompt order: recalled (most relevant first), then pinned."""
        return (*self.recalled, *self.pinned)


@attrs.frozen
class ExtractionOutcome:
    """What the extraction of one message wrote."""

    chat_id: str
    seq: int
    ops: tuple[dict[str, Any], ...]
    applied: int
    rejected: tuple[tuple[Any, str, str], ...]  # (op, code, message)
    compacted: tuple[str, ...]  # rollups the pipeline made itself (none when a plugin did it)
    failures: tuple[HookFailure, ...] = ()  # extractors that raised or answered junk
    replaced: bool = False  # the message replaced one the graph held (regenerate/swipe/edit)
    index: int = -1  # the message's index in the chat


@attrs.frozen
class TurnOutcome:
    recall: RecallOutcome | None
    extraction: ExtractionOutcome | None
