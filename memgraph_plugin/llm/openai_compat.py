"""The provider for any OpenAI-compatible chat-completions server, on the ``openai`` SDK.

Works with Ollama, llama.cpp's server, vLLM, LM Studio, OpenRouter and OpenAI itself: only
``base_url``, the model name and (optionally) a key differ. Retries are ours, not the SDK's, so
the waits follow the settings: 429 and 5xx answers, timeouts and refused connections are retried
``retries`` times with doubling waits, a ``Retry-After`` header wins (capped at
``backoff_max_s``). Structured output asks for ``json_schema``; a server that rejects that
(HTTP 400/404/415/422/501) is asked again with ``json_object``, then with no response format, and
the provider remembers what worked.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import openai

# the SDK imports this lazily on the first call (over a second): paid here, at start-up (only
# with an LLM configured), not inside a hook's deadline
import openai.resources.chat.completions  # noqa: F401

from host.plugins.circuit_breaker import CircuitBreaker

from .provider import (
    ChatMessage,
    Completion,
    JsonSchema,
    LlmError,
    LlmHttpError,
    LlmModelNotFound,
    LlmOutputError,
    LlmSkipped,
    LlmTimeout,
    LlmUnreachable,
)
from .settings import LlmSettings

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]

#: What a server says when it does not support a response format.
_FORMAT_REJECTED = frozenset({400, 404, 415, 422, 501})
_FORMATS = ("json_schema", "json_object", "text")


def retry_after_seconds(headers: Any, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` header asks."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return str(exc.message or exc)


def _model_missing(status: int, said: str, model: str) -> bool:
    """A 404 (or 400) saying the model does not exist, not that a response format is refused."""
    low = said.lower()
    if status not in (400, 404):
        return False
    missing = "not found" in low or "does not exist" in low or "no such model" in low
    return missing and ("model" in low or model.lower() in low)


class OpenAICompatibleProvider:
    """`LlmProvider` for one ``base_url`` + model. ``sleep`` is how waits happen (tests record)."""

    def __init__(self, settings: LlmSettings, *, sleep: Sleep | None = None) -> None:
        self.settings = settings
        self._sleep: Sleep = sleep or asyncio.sleep
        start = _FORMATS.index(settings.response_format)
        self._formats = list(_FORMATS[start:])  # what is still worth trying, best first
        # ``down_after`` calls in a row that could not reach the server, or one answer that
        # the model does not exist, stop the calls for ``cooloff_s``: every hook answers
        # offline at once meanwhile (`LlmSkipped`, traced but not logged one by one)
        self.breaker: CircuitBreaker[LlmError] = CircuitBreaker(
            cooloff=settings.cooloff_s, threshold=settings.down_after
        )

    @property
    def name(self) -> str:
        return f"{self.settings.model} @ {self.settings.base_url}"

    def _client(self) -> openai.AsyncOpenAI:
        s = self.settings
        return openai.AsyncOpenAI(
            base_url=s.base_url, api_key=s.api_key(), timeout=s.timeout_s, max_retries=0
        )

    @staticmethod
    def _response_format(kind: str, schema: JsonSchema) -> dict[str, Any] | None:
        if kind == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {
                    "name": schema.name,
                    "schema": dict(schema.schema),
                    "strict": False,
                },
            }
        if kind == "json_object":
            return {"type": "json_object"}
        return None

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        schema: JsonSchema | None = None,
        deadline: float | None = None,
    ) -> Completion:
        """One answer, with the retries and the response-format fallback described above, all
        within ``deadline`` (a `time.monotonic()` instant; each attempt's timeout shrinks to
        what is left, and no wait runs past it)."""
        trip = self.breaker.blocking()
        if trip is not None:  # cooling off: no request
            raise LlmSkipped(
                "model_not_found" if trip.cause.reason == "model_not_found" else "server_down",
                f"not called for another {self.breaker.seconds_left(trip):.0f} s after: "
                f"{trip.cause} (extraction goes on offline)",
            )
        try:
            answer = await self._complete(messages, schema, deadline)
        except (LlmUnreachable, LlmTimeout, LlmModelNotFound) as exc:
            missing = exc.reason == "model_not_found"
            if self.breaker.failed(exc, at_once=missing) is None:
                raise
            if missing:
                log.warning(
                    "LLM %s: %s; not called for %g s (the offline defaults answer; check "
                    "llm_model)", self.name, exc, self.breaker.cooloff,
                )  # fmt: skip
            else:
                log.warning(
                    "LLM %s: %d call(s) in a row failed (%s); not called for %g s, the offline "
                    "defaults answer meanwhile",
                    self.name, self.breaker.failures, exc, self.breaker.cooloff,
                )  # fmt: skip
            raise
        if self.breaker.answered() is not None:
            log.warning("LLM %s: answering again", self.name)
        return answer

    async def _complete(
        self, messages: Sequence[ChatMessage], schema: JsonSchema | None, deadline: float | None
    ) -> Completion:
        notes: list[str] = []
        attempts = 0
        async with self._client() as client:
            while True:
                kind = self._formats[0] if schema is not None else "text"
                extra: dict[str, Any] = {}
                if schema is not None:
                    response_format = self._response_format(kind, schema)
                    if response_format is not None:
                        extra["response_format"] = response_format
                try:
                    response, used = await self._with_retries(client, messages, extra, deadline)
                except LlmHttpError as exc:
                    if isinstance(exc, LlmModelNotFound):
                        raise
                    if schema is None or exc.status not in _FORMAT_REJECTED:
                        raise
                    if len(self._formats) == 1:
                        raise
                    rejected = self._formats.pop(0)
                    note = f"{rejected} rejected ({exc}); trying {self._formats[0]}"
                    log.warning("LLM %s: %s", self.name, note)
                    notes.append(note)
                    attempts += exc.attempts
                    continue
                attempts += used
                return Completion(
                    text=self._text(response),
                    model=str(getattr(response, "model", "") or self.settings.model),
                    attempts=attempts,
                    response_format=kind,
                    notes=tuple(notes),
                )

    def _text(self, response: Any) -> str:
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise LlmOutputError(f"LLM server at {self.settings.base_url} answered with no choices")
        message = choices[0].message
        text = getattr(message, "content", None)
        if not text:
            refusal = getattr(message, "refusal", None)
            why = f"refused: {refusal}" if refusal else "an empty message"
            raise LlmOutputError(f"model {self.settings.model} answered with {why}")
        return str(text)

    def _left(self, deadline: float | None, attempt: int) -> float:
        """Seconds the next request may take: the timeout, or less when the deadline is near."""
        if deadline is None:
            return self.settings.timeout_s
        left = deadline - time.monotonic()
        if left <= 0:
            error = LlmTimeout(
                f"LLM server at {self.settings.base_url}: no time left within the hook's "
                f"deadline ({attempt - 1} attempt(s))"
            )
            error.attempts = attempt - 1
            raise error
        return min(self.settings.timeout_s, left)

    async def _with_retries(
        self,
        client: openai.AsyncOpenAI,
        messages: Sequence[ChatMessage],
        extra: dict[str, Any],
        deadline: float | None,
    ) -> tuple[Any, int]:
        """The response and the attempts it took; 429/5xx/timeouts/refusals retried."""
        s = self.settings
        attempt = 0
        while True:
            attempt += 1
            wait: float | None = None
            timeout = self._left(deadline, attempt)
            try:
                response = await client.chat.completions.create(
                    model=s.model,
                    messages=list(messages),  # type: ignore[arg-type]
                    temperature=s.temperature,
                    max_tokens=s.max_tokens,
                    timeout=timeout,
                    **extra,
                )
                return response, attempt
            except openai.APITimeoutError as exc:
                error: LlmError = LlmTimeout(
                    f"LLM server at {s.base_url} did not answer within {timeout:g} s "
                    f"({attempt} attempt(s))"
                )
                error.__cause__ = exc
            except openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                error = LlmUnreachable(
                    f"cannot reach the LLM server at {s.base_url} "
                    f"({type(cause).__name__}: {cause}); is it running? (llm_base_url)"
                )
                error.__cause__ = exc
            except openai.APIStatusError as exc:
                status = exc.status_code
                said = _server_message(exc)
                if _model_missing(status, said, s.model):
                    error = LlmModelNotFound(
                        status,
                        f"model {s.model!r} not found on the LLM server at {s.base_url} (setting "
                        f"llm_model is wrong?): HTTP {status}: {said}",
                    )
                else:
                    error = LlmHttpError(
                        status, f"LLM server at {s.base_url} answered HTTP {status}: {said}"
                    )
                error.__cause__ = exc
                if status != 429 and status < 500:
                    error.attempts = attempt
                    raise error from exc
                wait = retry_after_seconds(exc.response.headers)
            if wait is None:
                wait = s.backoff_s * (2 ** (attempt - 1))
            wait = min(wait, s.backoff_max_s)
            out_of_time = deadline is not None and time.monotonic() + wait >= deadline
            if attempt > s.retries or out_of_time:
                error.attempts = attempt
                raise error
            log.info("LLM %s: %s; retry %d in %.2f s", self.name, error, attempt, wait)
            await self._sleep(wait)
