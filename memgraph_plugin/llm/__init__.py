"""LLM support: one provider interface (`LlmProvider`) and an OpenAI-compatible implementation,
used by the extract, route and summarise hooks when ``llm_base_url`` is set (docs/llm.md).

Importing this package imports no SDK: `openai` is loaded only when a provider is made.
"""

from .provider import (
    ChatMessage,
    Completion,
    JsonSchema,
    LlmError,
    LlmHttpError,
    LlmOutputError,
    LlmProvider,
    LlmTimeout,
    LlmUnreachable,
)
from .settings import SETTINGS, LlmSettings, LlmSettingsError, llm_settings

__all__ = [
    "SETTINGS",
    "ChatMessage",
    "Completion",
    "JsonSchema",
    "LlmError",
    "LlmHttpError",
    "LlmOutputError",
    "LlmProvider",
    "LlmSettings",
    "LlmSettingsError",
    "LlmTimeout",
    "LlmUnreachable",
    "llm_settings",
]
