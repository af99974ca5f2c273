"""The LLM router: the model reranks the recall pipeline's best candidates (a bounded count).

The pipeline's fused ranking (``RouteRequest.ranked``: keyword, vector and graph signals) gives
the top ``llm_rerank_count`` candidates; the model picks, in order, the ones that help answer the
user's message (at most ``recall_top_k``); the pipeline then drills the graph from the first few
picks as it does for any router plugin and fits the answer into the prompt budget. When the call
fails, the built-in ranking is returned with the fallback reason ``llm_<reason>`` and the error,
so the recall trace says what happened.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import attrs

from host import hookimpl
from host.settings.setting_values import int_setting
from memgraph_plugin.hook_contract import BUILTIN_ROUTER, Inclusion, RouteRequest, RouteResult
from memgraph_plugin.settings_keys import RECALL

from ..calls import LlmHookPlugin, call_deadline, traced
from ..ops_schema import InvalidOutput, answer_as
from ..prompts import clip, node_line, render
from ..provider import JsonSchema
from ..structured import structured_call

log = logging.getLogger(__name__)

WHY = "llm_rerank"


@attrs.frozen
class RouteOut:
    selected: list[str]


def route_schema(ids: Sequence[str]) -> JsonSchema:
    """``{"selected": [candidate ids]}`` with the ids as an enum (a grammar keeps to them)."""
    return JsonSchema(
        "memgraph_route",
        {
            "type": "object",
            "properties": {
                "selected": {"type": "array", "items": {"type": "string", "enum": list(ids)}}
            },
            "required": ["selected"],
            "additionalProperties": False,
        },
    )


def validate_route(data: Any, ids: Sequence[str], top_k: int) -> list[str]:
    """The picked ids, in order, duplicates dropped, cut to ``top_k``; `InvalidOutput` for an id
    that is not a candidate or a wrong shape."""
    answer = answer_as(data, RouteOut, '{"selected": [...]}')
    allowed = set(ids)
    problems = [
        f"$.selected[{i}]: {value!r} is not one of the candidate ids"
        for i, value in enumerate(answer.selected)
        if value not in allowed
    ]
    if problems:
        raise InvalidOutput(problems)
    return list(dict.fromkeys(answer.selected))[:top_k]


def fused_candidates(request: RouteRequest, limit: int) -> list[Any]:
    """The best ``limit`` candidates of the pipeline's fused ranking (``request.ranked``) as
    node views, always-injected ones left out; read node by node (the pool is never walked)."""
    always = set(request.always_inject_ids)
    out = []
    for item in request.ranked:
        node = request.session.get_node(item.id) if item.id not in always else None
        if node is not None and not node.archived:
            out.append(node)
            if len(out) >= limit:
                break
    return out


class LlmRouter(LlmHookPlugin):
    """Answers ``memgraph_route`` by reranking the fused candidates through the model."""

    hook = "route"

    @hookimpl
    async def memgraph_route(self, request: RouteRequest) -> RouteResult | None:
        """The model's picks among the fused candidates; ``None`` when there is nothing to
        rerank (the built-in router answers)."""
        if not request.query.strip():
            return None
        deadline = call_deadline(request.settings, "memgraph_route")
        candidates = fused_candidates(request, self.settings.rerank_count)
        if not candidates:
            return None
        top_k = int_setting(request.settings, RECALL.recall_top_k)
        n_seeds = int_setting(request.settings, RECALL.recall_seed_count)
        ids = [c.id for c in candidates]
        listed = "\n".join(node_line(c) for c in candidates)
        messages = [
            {"role": "system", "content": render("route_system", top_k=top_k)},
            {
                "role": "user",
                "content": render("route_user", query=clip(request.query, 2000), candidates=listed),
            },
        ]
        outcome = await traced(
            self.trace,
            hook=self.hook,
            model=self.settings.model,
            chat_id=request.chat_id,
            seq=request.seq,
            call=lambda: structured_call(
                self.provider,
                messages,
                route_schema(ids),
                lambda data: validate_route(data, ids, top_k),
                deadline=deadline,
            ),
        )
        if outcome.failed:  # the built-in ranking stands, and the trace says why
            return RouteResult(
                selected=request.ranked,
                router=BUILTIN_ROUTER,
                fallback_reason=f"llm_{outcome.record.reason}",
                error=outcome.record.error,
            )
        picked: list[str] = outcome.value
        count = max(len(picked), 1)
        return RouteResult(
            selected=tuple(
                Inclusion(node_id, WHY, round(1.0 - rank / count, 4))
                for rank, node_id in enumerate(picked)
            ),
            router=f"llm:{self.settings.model}",
            score_mode=WHY,
            seeds=tuple(picked[:n_seeds]),
            drill=tuple(picked[:n_seeds]),
        )
