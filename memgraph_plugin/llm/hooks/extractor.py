"""The LLM extractor: one chat message in, the graph ops the model writes for it out.

The model sees the chat's node types and relations, a bounded list of nodes the message's words
find (so it links to them instead of duplicating them), the few messages before it and the
message itself. Its answer is validated as a whole (`ops_schema.validate_ops`); when the call or
the validation fails (after one retry), the offline extractor answers instead and the LLM trace
records the fallback and its reason: the batch is the model's whole answer or the offline one,
never a mix.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any

from host import hookimpl
from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA

from ..calls import LlmHookPlugin, call_deadline, traced
from ..ops_schema import EVENT, ops_json_schema, relations, validate_ops
from ..prompts import clip, node_line, render
from ..provider import LlmProvider
from ..settings import LlmSettings
from ..structured import structured_call
from ..trace import LlmTraceLog

log = logging.getLogger(__name__)

KNOWN_LIMIT = 24  # nodes listed to the model (found by the message's words; bounded per call)
RECENT_MESSAGES = 4  # messages before the new one shown for context

OfflineExtract = Callable[[str, Any, Any], Any]
"""``(chat_id, message, context) -> ops | None`` (or an awaitable of it)."""


def describe_types(schema: Any) -> str:
    """One line per node type: ``type: col*, col`` (``*``: required)."""
    lines = []
    for spec in getattr(schema, "types", schema):
        required = set(spec.required_columns)
        cols = ", ".join(f"{c}*" if c in required else c for c in spec.table_columns)
        lines.append(f"- {spec.type}: {cols}")
    return "\n".join(lines)


def stamp_events(ops: list[dict[str, Any]], message: Any) -> list[dict[str, Any]]:
    """The message's own facts on each event the model wrote, as the offline extractor writes
    them: ``speaker``, ``role``, ``time`` (recall's time cues read it) and ``message`` (index).
    The model cannot write these (they are not table columns); the message knows them."""
    facts = {
        "speaker": getattr(message, "name", "") or "",
        "role": getattr(message, "role", "") or "",
        "time": getattr(message, "time", "") or "",
        "message": getattr(message, "index", None),
    }
    facts = {k: v for k, v in facts.items() if v not in ("", None)}
    for op in ops:
        if op.get("type") == EVENT:
            op["fields"] = {**op["fields"], **facts}
    return ops


class LlmExtractor(LlmHookPlugin):
    """Answers ``memgraph_extract`` through the model; ``offline`` is the fallback."""

    hook = "extract"

    def __init__(
        self,
        host: Any,
        provider: LlmProvider,
        settings: LlmSettings,
        *,
        offline: OfflineExtract | None = None,
        trace: LlmTraceLog | None = None,
        service: Any = None,
    ) -> None:
        """`service`: the host's `MemoryGraph` (the chat's known nodes are read through it;
        None: the prompt names no known nodes)."""
        super().__init__(host, provider, settings, trace=trace)
        self.offline = offline
        self.service = service

    @hookimpl
    async def memgraph_extract(self, chat_id: str, message: Any, context: Any) -> list | None:
        """The model's ops for ``message``, else the offline extractor's."""
        deadline = call_deadline(self.host.settings, "memgraph_extract")
        if not str(message.text).strip():
            return await self._offline(chat_id, message, context)
        session = await self._session(context)
        schema = session.get_schema() if session is not None else DEFAULT_SCHEMA
        known = self._known(session, message.text)
        messages = [
            {
                "role": "system",
                "content": render(
                    "extract_system",
                    types=describe_types(schema),
                    relations=", ".join(relations()),
                ),
            },
            {"role": "user", "content": self._user_prompt(message, context, known)},
        ]
        known_ids = {node.id for node in known}
        outcome = await traced(
            self.trace,
            hook=self.hook,
            model=self.settings.model,
            chat_id=chat_id,
            seq=message.seq,
            call=lambda: structured_call(
                self.provider,
                messages,
                ops_json_schema(schema),
                lambda data: validate_ops(data, schema, known_ids=known_ids),
                deadline=deadline,
            ),
        )
        if outcome.failed:
            return await self._offline(chat_id, message, context)
        return stamp_events(outcome.value, message)

    async def _offline(self, chat_id: str, message: Any, context: Any) -> list | None:
        if self.offline is None:
            return None
        value = self.offline(chat_id, message, context)
        return await value if inspect.isawaitable(value) else value

    async def _session(self, context: Any) -> Any | None:
        if self.service is None or context is None:
            return None
        try:
            return await self.service.open_session(context)
        except Exception as exc:  # the model can still extract without the known nodes
            log.info("LLM extractor: no memory-graph session (%r)", exc)
            return None

    @staticmethod
    def _known(session: Any, text: str) -> Sequence[Any]:
        """Up to `KNOWN_LIMIT` non-event nodes the message's words find (an index lookup)."""
        if session is None:
            return ()
        try:
            hits = session.keyword_search(query=text[:2000], k=KNOWN_LIMIT * 2)
        except Exception as exc:
            log.info("LLM extractor: keyword search failed (%r)", exc)
            return ()
        return tuple(h for h in hits if h.type != "event")[:KNOWN_LIMIT]

    @staticmethod
    def _user_prompt(message: Any, context: Any, known: Sequence[Any]) -> str:
        listed = "\n".join(node_line(n) for n in known)
        history = tuple(getattr(context, "messages", ()) or ())
        index = getattr(message, "index", len(history))
        before = history[max(0, index - RECENT_MESSAGES) : index]
        # each earlier message under its speaker's name when the chat has one (else its role)
        recent = "\n".join(f"[{getattr(m, 'name', '') or m.role}] {clip(m.text)}" for m in before)
        speaker = getattr(message, "name", None) or message.role
        return render(
            "extract_user",
            known=listed or "(none)",
            recent=recent or "(none)",
            seq=message.seq,
            speaker=speaker,
            text=message.text,
        )
