"""Counting a request's tokens for the proxy's context budget.

A model family whose tokenizer ships offline in an installed package is counted with it: the
Llama 2 family (``llama-2``, ``llama2``, ``codellama``, ``vicuna`` in the model name), whose
SentencePiece tokenizer the ``wordllama`` wheel carries. Every other model is estimated: one token
per 3.5 UTF-8 bytes, rounded up, plus `MESSAGE_OVERHEAD` per message for its role and separators.
On English chat (the LoCoMo dev conversations) the Llama 2 tokenizer gives 3.9 characters a token
and OpenAI's cl100k about 4.2, so the estimate counts 10-20% high on the whole: a window it fills
stays inside the model's.

Counts are kept per text (a front end sends the same messages every turn; only new ones are
counted), at most `CACHE_TEXTS` of them.
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from .conversation import content_text

BYTES_PER_TOKEN = 3.5
MESSAGE_OVERHEAD = 4
CACHE_TEXTS = 100_000
LLAMA2_NAMES = ("llama-2", "llama2", "llama_2", "codellama", "vicuna")
ESTIMATE = "estimate"
LLAMA2 = "llama-2 tokenizer"

_llama2: Any = None
_llama2_lock = threading.Lock()


def estimate_tokens(text: str) -> int:
    """The documented estimate: UTF-8 bytes / 3.5, rounded up."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / BYTES_PER_TOKEN)


def _llama2_tokenizer() -> Any:
    """The Llama 2 tokenizer inside the wordllama wheel (no download), or None."""
    global _llama2
    with _llama2_lock:
        if _llama2 is None:
            try:
                import wordllama
                from tokenizers import Tokenizer

                folder = os.path.dirname(wordllama.__file__)
                path = os.path.join(folder, "tokenizers", "l2_supercat_tokenizer_config.json")
                tokenizer = Tokenizer.from_file(path)
                tokenizer.no_padding()
                tokenizer.no_truncation()
                _llama2 = tokenizer
            except Exception:  # noqa: BLE001 - no wheel, or a changed one: estimate instead
                _llama2 = False
        return _llama2 or None


class TokenCounter:
    """Counts texts and messages for one tokenizer (`for_model` picks it), caching per text."""

    def __init__(self, count: Callable[[str], int], name: str) -> None:
        self._count = count
        self.name = name
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def text(self, text: str) -> int:
        if len(text) < 16:  # not worth a cache entry
            return self._count(text)
        with self._lock:
            found = self._cache.get(text)
            if found is not None:
                self._cache.move_to_end(text)
                return found
        counted = self._count(text)
        with self._lock:
            self._cache[text] = counted
            while len(self._cache) > CACHE_TEXTS:
                self._cache.popitem(last=False)
        return counted

    def message(self, message: Mapping[str, Any]) -> int:
        """A chat message: its text parts, plus the per-message overhead."""
        text = content_text(message.get("content"))
        return self.text(text) + MESSAGE_OVERHEAD if text else MESSAGE_OVERHEAD


_counters: dict[str, TokenCounter] = {}


def for_model(model: Any) -> TokenCounter:
    """The counter for a request's ``model``: its family's tokenizer when one ships offline,
    else the estimate. One counter (and cache) per tokenizer per process."""
    name = ESTIMATE
    if isinstance(model, str) and any(n in model.lower() for n in LLAMA2_NAMES):
        tokenizer = _llama2_tokenizer()
        if tokenizer is not None:
            name = LLAMA2
    counter = _counters.get(name)
    if counter is None:
        if name == LLAMA2:
            tokenizer = _llama2_tokenizer()

            def count(text: str) -> int:
                return len(tokenizer.encode(text, add_special_tokens=False).ids)
        else:
            count = estimate_tokens
        counter = _counters.setdefault(name, TokenCounter(count, name))
    return counter
