"""The LLM summariser: abstractive rollup summaries through the model.

Answers ``memgraph_summarise`` (a first-result hook) before the offline summarisers. When the
call fails it answers ``None``, so the next summariser (the offline, extractive one) writes the
summary, and the LLM trace records the fallback and its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from host import hookimpl

from ...extraction.summary import brief_text
from ..calls import LlmHookPlugin, call_deadline, traced
from ..prompts import clip, render

SUMMARY_LIMIT = 600  # characters of a rollup summary (as the offline summaries)
CHILD_LIMIT = 1200  # characters of each child shown to the model


def fit(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """``text`` cut to ``limit`` characters at a sentence or word end where one is near."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    for mark in (". ", "! ", "? ", "; ", " "):
        at = cut.rfind(mark)
        if at >= limit // 2:
            return cut[: at + 1].rstrip() + "…"
    return cut + "…"


class LlmSummariser(LlmHookPlugin):
    """Answers ``memgraph_summarise`` with the model's summary of a compaction group."""

    hook = "summarise"

    @hookimpl(tryfirst=True)
    async def memgraph_summarise(self, type: str, briefs: Sequence[Any]) -> str | None:
        """The model's summary; ``None`` (the next summariser answers) when it fails."""
        deadline = call_deadline(self.host.settings, "memgraph_summarise")
        texts = [brief_text(b) for b in briefs if b is not None]
        texts = [t for t in texts if t]
        if not texts:
            return None
        children = "\n".join(f"{i}. {clip(t, CHILD_LIMIT)}" for i, t in enumerate(texts, 1))
        messages = [
            {
                "role": "system",
                "content": render("summarise_system", type=type, limit=SUMMARY_LIMIT),
            },
            {
                "role": "user",
                "content": render("summarise_user", type=type, count=len(texts), children=children),
            },
        ]
        outcome = await traced(
            self.trace,
            hook=self.hook,
            model=self.settings.model,
            chat_id=None,
            seq=None,
            call=lambda: self.provider.complete(messages, deadline=deadline),
        )
        if outcome.failed:
            return None
        return fit(outcome.value)
