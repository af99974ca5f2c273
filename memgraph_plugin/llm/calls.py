"""One traced LLM call for a hook: timed, written to the LLM trace, failures turned into a
fallback record instead of an exception (the hook then answers with its offline default), and
given up in time for that fallback to run within the hook's deadline (`call_deadline`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs

from host.plugins.hook_guard import Guard

from .provider import Completion, LlmError, LlmProvider
from .settings import LlmSettings, LlmSettingsError
from .structured import Structured
from .trace import OUTCOME_FALLBACK, OUTCOME_LLM, OUTCOME_RETRIED, LlmCall, LlmTraceLog

log = logging.getLogger(__name__)

#: Share of a hook's deadline (settings ``hook_deadlines`` / ``hook_deadline_seconds``) the model
#: may use, retries included; the rest is left for the offline fallback.
BUDGET_SHARE = 0.75


def call_deadline(settings: Mapping[str, Any], hook_name: str) -> float | None:
    """The `time.monotonic()` instant an LLM call made now for ``hook_name`` must end by."""
    limit = Guard.from_settings(settings).deadline_of(hook_name)
    return None if limit is None else time.monotonic() + BUDGET_SHARE * limit


@attrs.frozen
class CallOutcome:
    """The value (``None`` after a failure) and the trace record of one call."""

    value: Any
    record: LlmCall

    @property
    def failed(self) -> bool:
        return self.record.outcome == OUTCOME_FALLBACK


async def traced(
    trace: LlmTraceLog,
    *,
    hook: str,
    model: str,
    chat_id: str | None,
    seq: int | None,
    call: Callable[[], Awaitable[Structured | Completion]],
) -> CallOutcome:
    """Run ``call``; record what happened; an `LlmError` (or a key that is not set) becomes a
    ``fallback`` record with its reason, logged as a warning naming the hook and the chat."""
    started = time.perf_counter()
    try:
        answer = await call()
    except (LlmError, LlmSettingsError) as exc:
        reason = exc.reason if isinstance(exc, LlmError) else "settings"
        record = LlmCall(
            hook=hook,
            model=model,
            outcome=OUTCOME_FALLBACK,
            chat_id=chat_id,
            seq=seq,
            reason=reason,
            error=str(exc),
            attempts=getattr(exc, "attempts", 0),
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        if not getattr(exc, "quiet", False):  # a skipped call: said once, when calls stopped
            log.warning(
                "LLM %s for chat %s seq %s fell back to the offline default (%s): %s",
                hook, chat_id, seq, reason, exc,
            )  # fmt: skip
        trace.append(record)
        return CallOutcome(None, record)
    if isinstance(answer, Structured):
        value: Any = answer.value
        outcome = OUTCOME_RETRIED if answer.first_error else OUTCOME_LLM
        last = answer.completions[-1]
        extra = {"first_error": answer.first_error, "attempts": answer.attempts}
        notes = answer.notes
    else:
        value, outcome, last = answer.text, OUTCOME_LLM, answer
        extra = {"attempts": answer.attempts}
        notes = answer.notes
    record = LlmCall(
        hook=hook,
        model=last.model or model,
        outcome=outcome,
        chat_id=chat_id,
        seq=seq,
        response_format=last.response_format,
        notes=notes,
        duration_ms=round((time.perf_counter() - started) * 1000, 3),
        **extra,
    )
    trace.append(record)
    return CallOutcome(value, record)


class LlmHookPlugin:
    """What every LLM hook plugin holds: its host, the provider, the LLM settings and the trace."""

    hook = ""  # the hook it answers: "extract", "route" or "summarise"

    def __init__(
        self,
        host: Any,
        provider: LlmProvider,
        settings: LlmSettings,
        *,
        trace: LlmTraceLog | None = None,
    ) -> None:
        self.host = host
        self.provider = provider
        self.settings = settings
        self.trace = trace or LlmTraceLog(host.data_dir)
