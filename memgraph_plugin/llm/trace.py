"""LLM call traces: one JSON line per extract/route/summarise call through the model, in
``<data_dir>/traces/llm.jsonl``, saying whether the model's answer was used or the offline
default answered instead, and why (``reason``: ``timeout``, ``http_500``, ``invalid_output``...).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import attrs

from host.chats.jsonl import append_lines, split_lines
from host.settings.redaction import redact_known

TRACE_FILE = Path("traces") / "llm.jsonl"

OUTCOME_LLM = "llm"  # the model's answer was used as it came
OUTCOME_RETRIED = "llm_after_retry"  # used, after one retry quoting the validation problems
OUTCOME_FALLBACK = "fallback"  # the offline default answered; ``reason`` says why


@attrs.frozen
class LlmCall:
    """One hook call that went through the model."""

    hook: str
    model: str
    outcome: str
    chat_id: str | None = None
    seq: int | None = None
    reason: str | None = None
    error: str | None = None
    first_error: str | None = None  # what the retry fixed
    attempts: int = 0
    response_format: str = ""
    notes: tuple[str, ...] = ()
    duration_ms: float = 0.0
    time: float = attrs.field(factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LlmCall:
        known = {a.name for a in attrs.fields(cls)}
        fields = {k: v for k, v in data.items() if k in known}
        fields["notes"] = tuple(fields.get("notes", ()))
        return cls(**fields)


class LlmTraceLog:
    """Appends `LlmCall`s to, and reads them from, ``<data_dir>/traces/llm.jsonl``."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / TRACE_FILE

    def append(self, call: LlmCall) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = redact_known(json.dumps(call.to_json(), ensure_ascii=False, sort_keys=True))
        append_lines(self.path, [line + "\n"])

    def read(self, *, chat_id: str | None = None, last: int | None = None) -> list[LlmCall]:
        """The calls, oldest first (``chat_id``: that chat's only; ``last``: the newest N)."""
        if not self.path.exists():
            return []
        calls = []
        for line in split_lines(self.path.read_text(encoding="utf-8")):
            try:
                call = LlmCall.from_json(json.loads(line))
            except (ValueError, TypeError):
                continue  # a line cut short by a crash
            if chat_id is None or call.chat_id == chat_id:
                calls.append(call)
        return calls[-last:] if last else calls
