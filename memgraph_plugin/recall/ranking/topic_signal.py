"""The topic signal: "what martial arts has John done?" reaches "I'm doing kickboxing", which
shares no word with it, through word meaning rather than wording.

A question that names a person is read for its topic words (its content words without the
person's names and the asking words: "martial", "arts"). Each of that person's messages (the
``involved_in`` edges of their character sheet, the newest ``GRAPH_SCAN``) is scored by how
close its own content words come to each topic word: for every topic word the best cosine
between its WordLlama vector and a word of the message, averaged over the topic words
(max-over-words, as late-interaction retrievers do). The whole-message average that the vector
signal uses dilutes a one-word hit like "kickboxing" in a long message; the best word does not.

Word vectors come from the `wordllama` embedding profile, one per distinct word, kept in a
process-wide table (`WordTable`); a message's words are read once and kept by node id, checked
against its text. A recall reads only the named people's messages, as the place signal does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from itertools import zip_longest
from typing import Any

import numpy as np

from memgraph_plugin.embedding.registry import profile_name
from memgraph_plugin.embedding.wordllama import (
    PROFILE_NAME,
    WordLlamaProfile,
    WordLlamaUnavailable,
)
from memgraph_plugin.extraction.titles import content_words

from .people import known_names
from .signals import GRAPH_SCAN, Hit, usable

__all__ = ["ASKING_WORDS", "WordTable", "topic_hits", "topic_list", "topic_table", "topic_words"]

log = logging.getLogger(__name__)

INVOLVED = "involved_in"
#: Question words that ask rather than say what about ("what kind of ... has X done").
_ASKING_TEXT = """
what which who whom whose when where why how kind kinds type types sort sorts has have had
did does do done doing many much both some any ever also
"""
ASKING_WORDS = frozenset(_ASKING_TEXT.split())
#: Messages the list holds at most: its best few. A longer list (10, 40) lifted more of the
#: person's own lines over the other speaker's answers (single-hop -2 to -3 on the tuned-on
#: three), for no more multi-hop.
TOPIC_DEPTH = 5
TABLE_WORDS = 65_536  # distinct words the table holds before it starts afresh
MESSAGES_KEPT = 100_000  # messages whose word rows are kept before the table starts afresh

Embed = Callable[[list[str]], np.ndarray]


def _plain(word: str) -> str:
    return word.lower().removesuffix("'s").removesuffix("’s")


def message_words(text: str) -> list[str]:
    """A message's distinct content words, lower case (`titles.content_words`)."""
    return list(dict.fromkeys(_plain(w) for w in content_words(text)))


def topic_words(query: str, people: Sequence[Any]) -> list[str]:
    """The question's content words without the named people's names and the asking words."""
    names = {part for p in people for name in known_names(p) for part in name.split()}
    out = [w for w in message_words(query) if w not in names and w not in ASKING_WORDS]
    return [w for w in out if w.isalpha()]


class WordTable:
    """word -> unit vector by an embedding profile, each word embedded once; message id ->
    the rows of its words, kept while its text is the same. Bounded: a call that finds more
    than `TABLE_WORDS` words (or `MESSAGES_KEPT` messages) held starts it afresh."""

    def __init__(self, embed: Embed, dim: int) -> None:
        self._embed = embed
        self._dim = dim
        self._lock = threading.Lock()
        self._clear()

    def _clear(self) -> None:
        self.generation = getattr(self, "generation", -1) + 1  # bumped at each fresh start
        self._row: dict[str, int] = {}
        self._matrix = np.zeros((1024, self._dim), dtype=np.float32)
        self._messages: dict[str, tuple[int, np.ndarray]] = {}

    @property
    def matrix(self) -> np.ndarray:
        return self._matrix

    def rows(self, words: Sequence[str]) -> np.ndarray:
        """The table rows of `words` (embedded now when new)."""
        new = [w for w in dict.fromkeys(words) if w not in self._row]
        if new:
            vectors = np.asarray(self._embed(new), dtype=np.float32)
            start = len(self._row)
            need = start + len(new)
            if need > self._matrix.shape[0]:
                grown = np.zeros((max(need, 2 * self._matrix.shape[0]), self._dim), np.float32)
                grown[:start] = self._matrix[:start]
                self._matrix = grown
            self._matrix[start:need] = vectors
            for i, w in enumerate(new):
                self._row[w] = start + i
        return np.fromiter((self._row[w] for w in words), dtype=np.int64, count=len(words))

    def message_rows(self, node_id: str, text: str) -> np.ndarray:
        """The rows of a message's content words, read once per message text."""
        key = hash(text)
        held = self._messages.get(node_id)
        if held is not None and held[0] == key:
            return held[1]
        rows = self.rows(message_words(text))
        self._messages[node_id] = (key, rows)
        return rows

    def scores(self, query_words: Sequence[str], messages: Sequence[tuple[str, str]]) -> np.ndarray:
        """Each message's topic score: for each query word its best cosine with a word of the
        message, averaged over the query words (0 for a message without content words)."""
        with self._lock:
            # a full table starts afresh between calls, never within one: the rows read
            # below stay valid (one call adds the words of GRAPH_SCAN messages at most)
            if len(self._row) > TABLE_WORDS or len(self._messages) > MESSAGES_KEPT:
                self._clear()
            per_message = [self.message_rows(i, t) for i, t in messages]
            q_rows = self.rows(query_words)
            matrix = self._matrix
            q = np.ascontiguousarray(matrix[q_rows].T)  # (dim, query words), C order
            out = np.zeros(len(messages), dtype=np.float32)
            filled = [i for i, r in enumerate(per_message) if r.size]
            if not filled or not len(q_rows):
                return out
            flat = np.concatenate([per_message[i] for i in filled])
            uniq, where = np.unique(flat, return_inverse=True)
            sims = matrix[uniq] @ q  # (distinct words, query words)
            lengths = np.fromiter((per_message[i].size for i in filled), np.int64, len(filled))
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            best = np.maximum.reduceat(sims[where], starts, axis=0)  # (messages, query words)
            out[filled] = best.mean(axis=1)
            return out


_tables: dict[str, WordTable] = {}
_tables_lock = threading.Lock()


def topic_table(settings: Mapping[str, Any]) -> WordTable | None:
    """The process's `WordTable` when the settings use the `wordllama` profile, whose word
    vectors carry meaning (None otherwise: no topic signal; hashed words only match as
    spelled, which the keyword signal does already)."""
    if profile_name(settings) != PROFILE_NAME:
        return None
    with _tables_lock:
        table = _tables.get(PROFILE_NAME)
        if table is None:
            profile = WordLlamaProfile()
            table = _tables[PROFILE_NAME] = WordTable(profile.embed, profile.dim)
        return table


def topic_hits(
    session: Any, people: Sequence[str], query: str, k: int, table: WordTable
) -> list[Hit]:
    """The named people's messages closest in meaning to the question's topic words, best
    first (see the module docstring); ``[]`` when it names no person or has no topic word."""
    store = session.store
    sheets = [n for n in (store.node(p) for p in people) if n is not None]
    words = topic_words(query, sheets)
    if not sheets or not words:
        return []
    found: dict[str, str] = {}  # message -> the person it was reached from
    for sheet in sheets:
        for key in store.out_edges(sheet.id, limit=GRAPH_SCAN, newest=True):
            if key[1] == INVOLVED and key[2] not in found:
                found[key[2]] = sheet.id
    messages: list[tuple[str, str]] = []
    seqs: list[int] = []
    for node_id in found:
        node = store.node(node_id)
        text = None if node is None or node.archived else node.fields.get("summary")
        if isinstance(text, str) and text:
            messages.append((node_id, text))
            seqs.append(node.seq_to or 0)
    if not messages:
        return []
    scores = table.scores(words, messages)
    # best first, then the newest (ties by id: `found` is in edge order, the same every time)
    ranked = np.lexsort((-np.asarray(seqs, dtype=np.int64), -scores)).tolist()
    order = [i for i in ranked if scores[i] > 0]
    if len(sheets) > 1:  # several people named ("both"): each one's best messages in turn
        per = [[i for i in order if found[messages[i][0]] == s.id] for s in sheets]
        order = [i for rank in zip_longest(*per) for i in rank if i is not None]
    out: list[Hit] = []
    for i in order:  # `usable` read for the few taken only
        node_id = messages[i][0]
        if usable(store.node(node_id)):
            out.append(Hit(node_id, float(scores[i]), via=found[node_id], edge_type=INVOLVED))
            if len(out) >= min(k, TOPIC_DEPTH):
                break
    return out


def topic_list(
    session: Any, settings: Mapping[str, Any], people: Sequence[str], query: str, k: int
) -> list[Hit]:
    """`topic_hits` with the process's word table; ``[]`` without a named person or when the
    settings use another profile than `wordllama` (`topic_table`)."""
    table = topic_table(settings) if people else None
    if table is None:
        return []
    try:
        return topic_hits(session, people, query, k, table)
    except WordLlamaUnavailable as exc:  # the package or its weights are missing: no list
        log.info("topic signal unavailable: %s", exc)
        return []
