"""The one provider interface every LLM use goes through (extract, route, summarise).

A provider sends a list of chat messages and returns the model's text; when ``schema`` is given
it asks for JSON matching it (structured output). Failures are `LlmError`s whose ``reason`` is a
short code the traces record (``unreachable``, ``timeout``, ``http_500``, ``bad_output`` ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

ChatMessage = Mapping[str, str]
"""``{"role": "system" | "user" | "assistant", "content": text}``"""


@attrs.frozen
class JsonSchema:
    """A named JSON schema the answer must match (``name``: ``[a-zA-Z0-9_-]``, as servers ask)."""

    name: str
    schema: Mapping[str, Any]


@attrs.frozen
class Completion:
    """One answer: its text, the model that wrote it, and how it was obtained."""

    text: str
    model: str
    attempts: int = 1  # HTTP attempts, retries after 429/5xx/timeouts included
    response_format: str = "text"  # text, json_schema or json_object
    notes: tuple[str, ...] = ()  # e.g. "json_schema rejected (400 ...); used json_object"


@runtime_checkable
class LlmProvider(Protocol):
    """What `memgraph_extract`, `memgraph_route` and `memgraph_summarise` call an LLM through."""

    @property
    def name(self) -> str:
        """``model @ base_url``, for logs and traces."""
        ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        schema: JsonSchema | None = None,
        deadline: float | None = None,
    ) -> Completion:
        """The model's answer to ``messages`` (JSON text when ``schema`` is given), given up
        with `LlmTimeout` at ``deadline`` (a `time.monotonic()` instant) at the latest."""
        ...


class LlmError(Exception):
    """An LLM call failed; ``reason`` is the short code traces record, the message says more."""

    attempts: int = 1  # HTTP attempts made before giving up

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class LlmSkipped(LlmError):
    """A call not made: the provider's circuit breaker is open after repeated failures
    (``quiet``: the warning was given once, when the calls stopped)."""

    quiet = True
    attempts = 0


class LlmUnreachable(LlmError):
    """No connection to the server (refused, DNS, TLS): the message names the URL."""

    def __init__(self, message: str) -> None:
        super().__init__("unreachable", message)


class LlmTimeout(LlmError):
    """The server did not answer within the timeout, on every attempt."""

    def __init__(self, message: str) -> None:
        super().__init__("timeout", message)


class LlmHttpError(LlmError):
    """The server answered with an error status (after the retries 429/5xx get)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"http_{status}", message)
        self.status = status


class LlmModelNotFound(LlmHttpError):
    """The server does not know the model (a 404 naming it): a wrong ``llm_model``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message)
        self.reason = "model_not_found"


class LlmOutputError(LlmError):
    """The model's answer could not be used (not JSON, or not valid against the schema)."""

    def __init__(self, message: str, *, reason: str = "bad_output") -> None:
        super().__init__(reason, message)
