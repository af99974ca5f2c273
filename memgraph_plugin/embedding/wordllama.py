"""The built-in `wordllama` profile (the default): WordLlama's 256-d `l2_supercat` embeddings.

WordLlama (PyPI `wordllama`) is a table of token embeddings distilled from large language models,
averaged over a text's tokens: semantic (paraphrases land near each other), ~60 µs a short text
on one core, and its 256-d weights and tokenizer ship inside the wheel, so it loads with no
download. `WordLlama.load()` looks for the tokenizer in a folder the wheel does not use and then
asks the network; `load(cache_dir=<the package folder>, disable_download=True)` finds both files
in the wheel and never downloads (it raises instead). The model is loaded once per process.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

PROFILE_NAME = "wordllama"
CONFIG = "l2_supercat"
DIM = 256
WEIGHTS = f"weights/{CONFIG}_{DIM}.safetensors"
TOKENIZER = f"tokenizers/{CONFIG}_tokenizer_config.json"
MAX_CHARS = 2000  # a text is embedded from its first 2,000 characters (~500 tokens)
BATCH = 32

_lock = threading.Lock()
_model: Any = None


class WordLlamaUnavailable(RuntimeError):
    """The `wordllama` package or the files its wheel ships are missing."""


def package_dir() -> Path:
    """The installed `wordllama` package folder (importing it without its logging side effect:
    the package calls `logging.basicConfig(level=INFO)` at import, which would configure the
    host's root logger)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    except ImportError as exc:
        raise WordLlamaUnavailable(
            "the 'wordllama' embedding profile needs the wordllama package "
            "(pip install wordllama), or set embedding_profile = 'hashing'"
        ) from exc
    finally:
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
    return Path(wordllama.__file__).resolve().parent


def load_model() -> Any:
    """The process's one `WordLlamaInference`, loaded offline from the wheel on first use."""
    global _model
    if _model is not None:
        return _model
    with _lock:
        if _model is None:
            _model = _load_offline()
    return _model


def _load_offline() -> Any:
    pkg = package_dir()
    missing = [rel for rel in (WEIGHTS, TOKENIZER) if not (pkg / rel).is_file()]
    if missing:
        raise WordLlamaUnavailable(
            f"the installed wordllama package ({pkg}) lacks {', '.join(missing)}: "
            "reinstall it from its wheel, or set embedding_profile = 'hashing'"
        )
    from wordllama import WordLlama

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return WordLlama.load(config=CONFIG, dim=DIM, cache_dir=pkg, disable_download=True)


class WordLlamaProfile:
    """Mean of WordLlama token embeddings, L2-normalised; an empty text gives a zero row."""

    def __init__(self, *, name: str = PROFILE_NAME) -> None:
        self.name = name
        self.dim = DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        rows = [i for i, t in enumerate(texts) if t and not t.isspace()]
        if not rows:
            return out
        model = load_model()
        rows.sort(key=lambda i: len(texts[i]))  # batches of like lengths: little padding
        clipped = [texts[i][:MAX_CHARS] for i in rows]
        vectors = np.asarray(model.embed(clipped, norm=False, batch_size=BATCH), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        vectors[(norms <= 0).ravel()] = 0.0
        out[rows] = vectors
        return out

    def __repr__(self) -> str:
        return f"WordLlamaProfile(dim={self.dim}, name={self.name!r})"
