"""The built-in `wordllama` profile (the default): WordLlama's 256-d `l2_supercat` embeddings.

WordLlama (PyPI `wordllama`) is a table of token embeddings distilled from large language models,
averaged over a text's tokens: semantic (paraphrases land near each other), ~60 µs a short text
on one core, and its 256-d weights and tokenizer ship inside the wheel, so it loads with no
download. `WordLlama.load()` looks for the tokenizer in a folder the wheel does not use and then
asks the network; `load(cache_dir=<the package folder>, disable_download=True)` finds both files
in the wheel and never downloads (it raises instead). The model is loaded once per process.

The mean is taken here (`mean_token_vectors`), not by `WordLlamaInference.embed`: that one
tokenizes batches of 32 padded to their longest text and averages the padded 3-d block, which
at an import's 100k texts cost 4 s (2.5 s of it in 3,125 tokenizer calls). Here every text is
tokenized in one call, without padding (the tokenizer's Rust threads share the work), and texts
of one token count are averaged together: the same vectors (tested against the package's).
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

PROFILE_NAME = "wordllama"
CONFIG = "l2_supercat"
DIM = 256
WEIGHTS = f"weights/{CONFIG}_{DIM}.safetensors"
TOKENIZER = f"tokenizers/{CONFIG}_tokenizer_config.json"
MAX_CHARS = 2000  # a text is embedded from its first 2,000 characters (~500 tokens)
TEXTS_PER_CALL = 4096  # texts per tokenizer call (their encodings held meanwhile)
CHUNK_TOKENS = 1 << 15  # token vectors gathered at once (8 MB at 256-d float32)

_lock = threading.Lock()
_model: Any = None
_tokenizers: dict[int, Any] = {}  # id(model) -> its tokenizer without padding


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
        vectors = mean_token_vectors(model, [texts[i][:MAX_CHARS] for i in rows])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        vectors[(norms <= 0).ravel()] = 0.0
        out[rows] = vectors
        return out

    def __repr__(self) -> str:
        return f"WordLlamaProfile(dim={self.dim}, name={self.name!r})"


def mean_token_vectors(model: Any, texts: Sequence[str]) -> np.ndarray:
    """What ``model.embed(texts, norm=False)`` gives (each text's mean token vector; a text of
    no tokens: zeros), from one tokenizer call per `TEXTS_PER_CALL` texts, without padding."""
    out = np.zeros((len(texts), model.embedding.shape[1]), dtype=np.float32)
    tokenizer = _unpadded(model)
    for at in range(0, len(texts), TEXTS_PER_CALL):
        part = list(texts[at : at + TEXTS_PER_CALL])
        encodings = tokenizer.encode_batch(part, add_special_tokens=False)
        _mean_into(out[at : at + len(part)], model.embedding, [e.ids for e in encodings])
    return out


def _mean_into(out: np.ndarray, table: np.ndarray, ids: list[list[int]]) -> None:
    """Each text's mean token vector (`ids`: its token ids) into `out`. Texts of one token count
    are averaged together, a (texts, tokens, dim) block at a time: the package's sum over its
    padded block without the padding, so the same float32 sums."""
    counts = np.fromiter(map(len, ids), np.int64, len(ids))
    flat = np.fromiter(chain.from_iterable(ids), np.int64, int(counts.sum()))
    np.clip(flat, 0, table.shape[0] - 1, out=flat)  # as the package clamps out-of-range ids
    starts = np.cumsum(counts) - counts
    order = np.argsort(counts, kind="stable")
    for run in np.split(order, np.flatnonzero(np.diff(counts[order])) + 1):
        length = int(counts[run[0]]) if run.shape[0] else 0
        if not length:  # no tokens: zeros, as the package's mask gives
            continue
        step = max(1, CHUNK_TOKENS // length)
        for at in range(0, run.shape[0], step):
            rows = run[at : at + step]
            block = table[flat[starts[rows, None] + np.arange(length)]]
            out[rows] = block.sum(axis=1, dtype=np.float32) / np.float32(length)


def _unpadded(model: Any) -> Any:
    """`model`'s tokenizer without padding (a copy: the model's own stays as it was)."""
    tokenizer = _tokenizers.get(id(model))
    if tokenizer is None:
        from tokenizers import Tokenizer

        with _lock:
            tokenizer = Tokenizer.from_str(model.tokenizer.to_str())
            tokenizer.no_padding()
            _tokenizers[id(model)] = tokenizer
    return tokenizer
