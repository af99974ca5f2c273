"""A structured LLM call: ask, parse the JSON, validate; one retry that quotes the problems.

`structured_call` never returns a half-valid answer: the validator either returns the whole
value or raises, and after the retry also fails the caller gets an `LlmOutputError` (reason
``invalid_output``) naming both problems, so it can fall back to its offline answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs

from .prompts import render
from .provider import ChatMessage, Completion, JsonSchema, LlmOutputError, LlmProvider

T = TypeVar("T")
ERROR_LIMIT = 1500  # characters of validation problems quoted back to the model


@attrs.frozen
class Structured:
    """A validated answer, the completions it took, and what was wrong the first time."""

    value: Any
    completions: tuple[Completion, ...]
    first_error: str | None = None

    @property
    def attempts(self) -> int:
        return sum(c.attempts for c in self.completions)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(n for c in self.completions for n in c.notes)


def parse_json(text: str) -> Any:
    """The JSON in a model's answer: the whole text, or the outermost ``{...}`` in it (models
    wrap JSON in code fences or a sentence). `ValueError` saying what is wrong otherwise."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError as first:
        start, end = stripped.find("{"), stripped.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(stripped[start : end + 1])
            except ValueError:
                pass
        clip = stripped[:120] + ("…" if len(stripped) > 120 else "")
        raise ValueError(f"not valid JSON ({first}); the answer began {clip!r}") from first


def _problem(text: str, validate: Callable[[Any], T]) -> tuple[T | None, str | None]:
    try:
        return validate(parse_json(text)), None
    except ValueError as exc:  # InvalidOutput is a ValueError too
        return None, str(exc)[:ERROR_LIMIT]


async def structured_call(
    provider: LlmProvider,
    messages: Sequence[ChatMessage],
    schema: JsonSchema,
    validate: Callable[[Any], T],
    *,
    deadline: float | None = None,
) -> Structured:
    """The validated answer to ``messages``; retried once with the validation error quoted
    (both within ``deadline``, a `time.monotonic()` instant)."""
    first = await provider.complete(messages, schema=schema, deadline=deadline)
    value, error = _problem(first.text, validate)
    if error is None:
        return Structured(value, (first,))
    again = [
        *messages,
        {"role": "assistant", "content": first.text[:4000]},
        {"role": "user", "content": render("retry", error=error)},
    ]
    second = await provider.complete(again, schema=schema, deadline=deadline)
    value, error2 = _problem(second.text, validate)
    if error2 is None:
        return Structured(value, (first, second), first_error=error)
    exc = LlmOutputError(
        f"invalid output twice: first {error}; after the retry {error2}", reason="invalid_output"
    )
    exc.attempts = first.attempts + second.attempts
    raise exc
