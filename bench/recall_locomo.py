"""Evidence recall on LoCoMo: the recall pipeline next to Okapi BM25 over the raw turns.

Each conversation is replayed through a real host (LanceDB in a temporary folder) as raw
messages: speaker A's turns are user messages, speaker B's assistant messages, the speaker as the
message's name, a shared photo's caption appended ("[shares a photo: ...]"), session dates as the
message times. Extraction (the built-in offline extractor, every message) and compaction run as
shipped; on a tree without the built-in extractor a clearly named temporary one-event-per-turn
extractor stands in (printed under the table). Then every question (category 5,
adversarial, skipped) is asked as a user message, the pipeline recalls, and the items it injected
are scored in order: an evidence turn counts at k when its text (lower-cased, whitespace
collapsed, first 200 characters) appears in one of the first k injected items.

    python bench/recall_locomo.py [DATA.json] [--limit N | --conversation I,J]
                                  [--path live|ingest|both|proxy|all] [--settings JSON]
                                  [--only conv-26,...] [--cache DIR] [--misses FILE]

``--path``: ``live`` replays each turn through the pipeline (``add_user_message`` /
``add_assistant_message``); ``ingest`` writes the conversation to a JSONL transcript and runs the
code path of ``memgraph-host ingest`` on it (``ingest_file``); ``both`` (the default) measures
each and prints them side by side (issue 27: the two must agree within a point). ``proxy`` sends
the conversation through a real ``memgraph-host proxy`` the way a chat app does, and scores the
memory block the upstream receives (``bench/locomo_proxy.py``: no message times on that path);
``all`` measures the three.

Every chat is built, its host stopped, then reopened from disk for the questions. ``--cache DIR``
keeps each built chat there, keyed on a hash of the code that builds it (memgraph_plugin/ and
host/ outside recall/ and web/), the settings and the path, and reuses it: tuning recall-side code
then runs only the questions (seconds per conversation instead of minutes).

Recall is tuned on three of the five dev conversations (``TUNE_SET``); with both groups in the
run, the table is printed for all, then for the tuned-on and the held-out conversations apart.

Default data: ``../shared/data/locomo-dev.json`` relative to the repository root (never
committed). Prints recall@5/10/20 per category and overall for the pipeline and for BM25
(k1 1.2, b 0.75, over "Speaker: text [caption]" lines, a fixed stop-word list left out), plus
recall latency (p50/p95) and injected characters.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import hashlib
import inspect
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from host import hookimpl  # noqa: E402
from memgraph_plugin.recall.block.render import item_text  # noqa: E402
from memgraph_plugin.settings_keys import RECALL  # noqa: E402
from memgraph_plugin.turn import pipeline_for  # noqa: E402

sys.path.insert(0, str(HERE))
from locomo_proxy import ProxyRun, ask_through_proxy, cover_through_proxy  # noqa: E402

# ``../shared/data/locomo-dev.json`` from the repository root (from a worktree one level deeper,
# such as /work/wt/<branch>, the same folder is two levels up)
DATA_CANDIDATES = tuple(
    base / "shared" / "data" / "locomo-dev.json" for base in (ROOT.parent, ROOT.parent.parent)
)
DEFAULT_DATA = next((p for p in DATA_CANDIDATES if p.exists()), DATA_CANDIDATES[0])
KS = (5, 10, 20)
EXTRACTION: set[str] = set()  # which extraction the replay ran (printed under the table)
#: The dev conversations recall is tuned on; the others are reported apart as held out.
TUNE_SET = frozenset({"conv-26", "conv-30", "conv-41"})
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_TOKEN = re.compile(r"[a-z0-9]+")
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)


@attrs.frozen
class Turn:
    dia_id: str
    speaker: str
    text: str  # the turn's own text: what evidence is matched by
    message: str  # the raw turn as one line: "Speaker: text [shares a photo: caption]"
    raw: str  # the message text when the speaker goes as the message's name
    time: dt.datetime | None
    role: str
    written_time: str = ""  # the session date as LoCoMo writes it ("1:56 pm on 8 May, 2023")


@attrs.frozen
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # normalised evidence texts


def normalise(text: str) -> str:
    """Lower-cased, whitespace collapsed, the first 200 characters: what evidence matching uses."""
    return " ".join(str(text).lower().split())[:200]


def parse_date(text: str) -> dt.datetime | None:
    """LoCoMo's session date ("1:56 pm on 8 May, 2023") as a datetime, or None."""
    m = _DATE.search(text or "")
    if not m:
        return None
    hour, minute, half, day, month, year = m.groups()
    try:
        when = dt.datetime.strptime(f"{day} {month[:3]} {year}", "%d %b %Y")
    except ValueError:
        return None
    h = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    return when.replace(hour=h, minute=int(minute))


def turns_of(sample: dict[str, Any]) -> list[Turn]:
    conv = sample["conversation"]
    a = conv["speaker_a"]
    out: list[Turn] = []
    n = 1
    while f"session_{n}" in conv:
        written = str(conv.get(f"session_{n}_date_time", "") or "")
        when = parse_date(written)
        for t in conv[f"session_{n}"]:
            raw = str(t["text"])
            if t.get("blip_caption"):
                raw += f" [shares a photo: {t['blip_caption']}]"
            role = "user" if t["speaker"] == a else "assistant"
            out.append(
                Turn(
                    t["dia_id"],
                    t["speaker"],
                    t["text"],
                    f"{t['speaker']}: {raw}",
                    raw,
                    when,
                    role,
                    written,
                )
            )
        n += 1
    return out


def questions_of(sample: dict[str, Any], turns: Sequence[Turn]) -> list[Question]:
    by_id = {t.dia_id: normalise(t.text) for t in turns}
    out = []
    for qa in sample["qa"]:
        if qa.get("category") == 5:
            continue
        evidence = tuple(by_id[e] for e in qa.get("evidence", ()) if e in by_id)
        if evidence:
            out.append(Question(str(qa["question"]), int(qa["category"]), evidence))
    return out


def hits_at(
    items: Sequence[str], evidence: Sequence[str], k: int, carried: frozenset[str] = frozenset()
) -> float:
    """Share of the evidence found in the first k items (already normalised, whole text), or
    in `carried` (what the prompt holds without the block: found at any k)."""
    first = items[:k]
    found = sum(1 for e in evidence if e in carried or any(e in item for item in first))
    return found / len(evidence)


# -- Okapi BM25 over the raw turns --------------------------------------------------------------


# the baseline's stop words, fixed here so that tuning recall's list never moves the baseline
_BASELINE_TEXT = """
a an and are as at be but by can could did do does for from had has have he her him his how i if
in into is it its me my no not now of on or our she so than that the their them then there they
this to up us was we were what when where which while who whom whose why will with would you your
"""
BASELINE_STOP = frozenset(_BASELINE_TEXT.split())


def _words(text: str) -> list[str]:
    return [w for w in _TOKEN.findall(text.lower()) if w not in BASELINE_STOP]


class Bm25:
    """Okapi BM25 (k1 1.2, b 0.75) over a list of texts; ``top(query, k)`` -> indices."""

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(_words(t)) for t in texts]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 1.0
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[int]:
        q = set(_words(query))
        scores = []
        for i, d in enumerate(self.docs):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
            for w in q:
                f = d.get(w)
                if f:
                    s += self.idf[w] * f * (self.k1 + 1) / (f + norm)
            if s > 0:
                scores.append((-s, i))
        scores.sort()
        return [i for _, i in scores[:k]]


# -- the pipeline --------------------------------------------------------------------------------


class TemporaryTurnExtractor:
    """TEMPORARY (until the built-in offline extractor lands): one event per message since the
    previous answer, summary = the message text, ``time`` = the message time, and an
    ``involved_in`` edge from the speaker's character sheet."""

    def __init__(self, times: dict[int, dt.datetime | None]) -> None:
        self.times = times  # message index -> time

    @hookimpl
    async def memgraph_extract(self, chat_id: str, message: Any, context: Any) -> list | None:
        if message.role != "assistant":
            return None
        session = await pipeline_for(context.host).open_session(chat_id)
        last = session.store.newest_in_pool("event", 1)
        previous: dict[str, Any] = {"target_node_id": last[0].id} if last else {}
        new = []
        for m in reversed(context.messages[: message.index + 1]):
            if m.role == "assistant" and m.index != message.index:
                break
            new.append(m)
        ops: list[dict[str, Any]] = []
        for i, m in enumerate(reversed(new)):
            speaker, _, text = m.text.partition(": ")
            when = self.times.get(m.index)
            fields: dict[str, Any] = {"summary": m.text}
            if when is not None:
                fields["time"] = when.isoformat()
            ops.append(
                {
                    "op": "create",
                    "type": "event",
                    "title": text[:60],
                    "fields": fields,
                    "ref": f"e{i}",
                }
            )
            ops.append(
                {
                    "op": "create",
                    "type": "character_sheet",
                    "title": speaker,
                    "fields": {"title": speaker},
                    "ref": f"c{i}",
                }
            )
            ops.append(
                {
                    "op": "link_upsert",
                    "source_ref": f"c{i}",
                    "links": [
                        {"target_ref": f"e{i}", "relation": "involved_in", "direction": "outgoing"}
                    ],
                }
            )
            if previous:  # the offline extractor's `follows` link to the message before
                link = {**previous, "relation": "follows", "direction": "outgoing"}
                ops.append({"op": "link_upsert", "source_ref": f"e{i}", "links": [link]})
            previous = {"target_ref": f"e{i}"}
        return ops


def builtin_extraction(pipeline: Any) -> bool:
    """Whether the pipeline takes a message's speaker and time (the built-in offline extractor
    then extracts every message as it comes); else the temporary path replays."""
    return "name" in inspect.signature(pipeline.add_user_message).parameters


async def replay(host: Any, chat: str, turns: Sequence[Turn]) -> str:
    """Every turn through the pipeline as a raw message; returns which extraction ran."""
    pipeline = pipeline_for(host)
    if builtin_extraction(pipeline):
        for t in turns:  # the time as written: the pipeline places it (time_iso)
            add = pipeline.add_user_message if t.role == "user" else pipeline.add_assistant_message
            await add(chat, t.raw, name=t.speaker, time=t.written_time)
        return "built-in"
    times: dict[int, Any] = {}
    host.register_plugin(TemporaryTurnExtractor(times), name="locomo-turns")
    for t in turns:
        times[len(host.chat(chat).messages)] = t.time
        if t.role == "user":
            await pipeline.add_user_message(chat, t.message)
        else:
            await pipeline.add_assistant_message(chat, t.message)
    return "temporary one-event-per-turn"


def normalise_all(text: str) -> str:
    return " ".join(text.lower().split())


@attrs.frozen
class Asked:
    question: Question
    items: tuple[str, ...]  # normalised injected items, in order
    ms: float
    chars: int
    #: evidence the request itself carries (the proxy path: its history), found at any k
    carried: frozenset[str] = frozenset()


def write_transcript(path: Path, turns: Sequence[Turn]) -> Path:
    """The conversation as a JSONL transcript, what a user hands `memgraph-host ingest`: one
    ``{role, name, content, time}`` object per turn, the session date as LoCoMo writes it."""
    lines = (
        json.dumps(
            {"role": t.role, "name": t.speaker, "content": t.raw, "time": t.written_time},
            ensure_ascii=False,
        )
        for t in turns
    )
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


async def ingest(host: Any, chat: str, turns: Sequence[Turn], folder: Path) -> str:
    """The conversation written to a transcript file and read back by `ingest_file`, the code
    path of ``memgraph-host ingest FILE --chat CHAT``."""
    from memgraph_plugin.ingest import ingest_file

    report = await ingest_file(host, write_transcript(folder / f"{chat}.jsonl", turns), chat)
    if report.error is not None:
        raise RuntimeError(f"ingest failed: {report.error}")
    return "built-in (ingest)"


#: what builds a chat's graph (hashed into the cache key); recall/ and the explorer are not
BUILD_SOURCES = (ROOT / "memgraph_plugin", ROOT / "host")
RECALL_SIDE = ("recall", "web")


def build_key(settings: dict[str, Any], path: str) -> str:
    """A hash of every source that builds a chat (all of memgraph_plugin/ and host/ but the
    recall and explorer rooms), the settings and the path: a cached chat is reused only when
    none of them changed."""
    digest = hashlib.sha256(json.dumps([settings, path], sort_keys=True).encode())
    for base in BUILD_SOURCES:
        for file in sorted(base.rglob("*.py")):
            rel = file.relative_to(base)
            if base.name == "memgraph_plugin" and rel.parts[0] in RECALL_SIDE:
                continue
            digest.update(str(rel).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


async def _build(
    data: Path, settings: dict[str, Any], chat: str, turns: Sequence[Turn], path: str
) -> None:
    """The conversation's chat built into `data` (a host data folder), the host stopped."""
    from host import Host

    host = Host(data_dir=data, settings=settings, entry_points=False)
    await host.start()
    try:
        if path == "ingest":
            EXTRACTION.add(await ingest(host, chat, turns, data.parent))
        else:
            EXTRACTION.add(await replay(host, chat, turns))
    finally:
        await host.stop()


async def _replay_one(
    sample: dict[str, Any],
    settings: dict[str, Any],
    path: str = "live",
    cache: Path | None = None,
) -> list[Asked]:
    """Build the chat (or copy it from `cache` when the build sources are unchanged), reopen
    it from disk and ask every question."""
    from host import Host

    turns = turns_of(sample)
    questions = questions_of(sample, turns)
    chat = str(sample.get("sample_id", "conv"))
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        data = Path(tmp) / "data"
        stored = cache / f"{chat}-{path}-{build_key(settings, path)}" if cache else None
        if stored is not None and (stored / "complete").exists():
            shutil.copytree(stored / "data", data)
            EXTRACTION.add(f"cached ({stored.name})")
        else:
            await _build(data, settings, chat, turns, path)
            if stored is not None:
                shutil.rmtree(stored, ignore_errors=True)
                shutil.copytree(data, stored / "data")
                (stored / "complete").write_text("", encoding="utf-8")
        host = Host(data_dir=data, settings=settings, entry_points=False)
        await host.start()
        try:
            pipeline = pipeline_for(host)
            asked: list[Asked] = []
            base = len(host.chat(chat).messages) - 1
            session = await pipeline.open_session(chat)
            specs = session.get_schema().types
            item_chars = RECALL.recall_item_chars
            max_cell = int(settings.get(item_chars.name, item_chars.default))
            for q in questions:
                await pipeline.add_user_message(chat, q.text)
                started = time.perf_counter()
                outcome = await pipeline.recall(chat)
                ms = (time.perf_counter() - started) * 1000
                host.chat(chat).truncate(base)
                injected = outcome.injected if outcome is not None else ()
                items = tuple(normalise_all(item_text(n, specs, max_cell)) for n in injected)
                chars = len(outcome.prompt) if outcome is not None else 0
                asked.append(Asked(q, items, ms, chars))
            return asked
        finally:
            await host.stop()


async def _through_proxy(proxy: ProxyRun, sample: dict[str, Any]) -> list[Asked]:
    """The conversation sent through the proxy, then every question asked through it."""
    turns = turns_of(sample)
    chat = str(sample.get("sample_id", "conv"))
    got = await ask_through_proxy(proxy, chat, turns, questions_of(sample, turns))
    EXTRACTION.add("built-in (proxy)")
    return [Asked(*one) for one in got]


def _bm25_one(sample: dict[str, Any]) -> list[tuple[Question, tuple[str, ...]]]:
    turns = turns_of(sample)
    index = Bm25([t.message for t in turns])
    out = []
    for q in questions_of(sample, turns):
        top = index.top(q.text, max(KS))
        out.append((q, tuple(" ".join(turns[i].message.lower().split()) for i in top)))
    return out


# -- the table -----------------------------------------------------------------------------------


def _table(rows: dict[str, dict[str, list[float]]]) -> Iterator[str]:
    cats = [c for c in (*CATEGORIES.values(), "overall") if any(c in r for r in rows.values())]
    head = ["category", "n"] + [f"{name} R@{k}" for name in rows for k in KS]
    yield "| " + " | ".join(head) + " |"
    yield "|" + "|".join("---" for _ in head) + "|"
    for cat in cats:
        first = next(iter(rows.values()))
        n = len(first.get(cat, {}).get(KS[0], [])) if first.get(cat) else 0
        cells = [cat, str(n)]
        for per in rows.values():
            for k in KS:
                values = per.get(cat, {}).get(k, [])
                cells.append(f"{100 * statistics.fmean(values):.1f}" if values else "-")
        yield "| " + " | ".join(cells) + " |"


def _collect(pairs: Sequence[tuple[Any, ...]]) -> dict[str, dict[int, list[float]]]:
    """R@k per category and overall: (question, items[, evidence carried by the request])."""
    out: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for q, items, *rest in pairs:
        carried = rest[0] if rest else frozenset()
        for k in KS:
            h = hits_at(items, q.evidence, k, carried)
            out[CATEGORIES.get(q.category, str(q.category))][k].append(h)
            out["overall"][k].append(h)
    return out


def _carried_line(path: str, asked: Sequence[Asked]) -> list[str]:
    """For a path whose requests carry evidence themselves (the proxy's): how much, and the
    block's recall@10 of the evidence they do not carry."""
    pieces = [(e in a.carried, a.items, e) for a in asked for e in a.question.evidence]
    if not any(carried for carried, _, _ in pieces):
        return []
    rest = [e for carried, items, e in pieces if not carried and any(e in i for i in items[:10])]
    missing = sum(1 for carried, _, _ in pieces if not carried)
    share = 100 * (len(pieces) - missing) / len(pieces)
    block = f"{100 * len(rest) / missing:.1f}%" if missing else "-"
    return [
        f"{path} path: {share:.1f}% of the evidence turns are in the request's own messages; "
        f"the block holds {block} of the rest in its first 10 rows"
    ]


def _scored(a: Asked) -> tuple[Question, Sequence[str], frozenset[str]]:
    return a.question, a.items, a.carried


def _pct(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else 0.0


async def main_async(args: argparse.Namespace) -> int:
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    if args.conversation is not None:
        samples = [data[i] for i in args.conversation]
    else:
        samples = data[: args.limit] if args.limit else data
    if args.only:
        wanted = {s.strip() for s in args.only.split(",") if s.strip()}
        samples = [s for s in samples if str(s.get("sample_id")) in wanted]
    settings: dict[str, Any] = dict(json.loads(args.settings)) if args.settings else {}
    paths = {"both": ["live", "ingest"], "all": ["live", "ingest", "proxy"]}.get(
        args.path, [args.path]
    )
    with contextlib.ExitStack() as stack:
        proxy = stack.enter_context(ProxyRun(settings)) if "proxy" in paths else None
        if args.context_tokens:
            if paths != ["proxy"] or proxy is None:
                print("--context-tokens measures the proxy path only", file=sys.stderr)
                return 2
            return await _coverage(samples, proxy, args.context_tokens)
        return await _measure(args, samples, settings, paths, proxy)


async def _coverage(samples: list[dict[str, Any]], proxy: ProxyRun, budgets: list[int]) -> int:
    """Per context budget: the share of each question's evidence the upstream receives in the
    kept turns alone (a trimming app's window) and in the kept turns plus the memory block;
    the tokens forwarded at each conversation's end against its full history."""
    started = time.perf_counter()
    window: dict[int, dict[str, list[float]]] = {b: defaultdict(list) for b in budgets}
    both: dict[int, dict[str, list[float]]] = {b: defaultdict(list) for b in budgets}
    ends: list[str] = []
    for sample in samples:
        t0 = time.perf_counter()
        turns = turns_of(sample)
        chat = str(sample.get("sample_id", "conv"))
        got = await cover_through_proxy(proxy, chat, turns, questions_of(sample, turns), budgets)
        for q, per in got:
            cat = CATEGORIES.get(q.category, str(q.category))
            for budget, (in_window, in_both, _, _) in per.items():
                for key in (cat, "overall"):
                    window[budget][key].append(in_window)
                    both[budget][key].append(in_both)
        if got:
            last = got[-1][1]
            shares = [
                f"{b} -> {last[b][2]} of {last[b][3]} tokens "
                f"({100 * last[b][2] / max(1, last[b][3]):.1f}%)"
                for b in budgets
            ]
            ends.append(f"{chat}: " + ", ".join(shares))
        print(f"[{chat}] proxy coverage: {len(got)} questions, "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)  # fmt: skip
    cats = [c for c in (*CATEGORIES.values(), "overall") if window[budgets[0]].get(c)]
    head = ["category", "n", "full history"]
    for b in budgets:
        head += [f"{b}: window", f"{b}: window+block"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for cat in cats:
        cells = [cat, str(len(window[budgets[0]][cat])), "100.0"]
        for b in budgets:
            cells += [f"{100 * statistics.fmean(window[b][cat]):.1f}",
                      f"{100 * statistics.fmean(both[b][cat]):.1f}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "tokens forwarded with the last question (kept turns + block) / full history:"]
    lines += [f"- {line}" for line in ends]
    lines.append(f"{len(samples)} conversations, {time.perf_counter() - started:.0f} s")
    print("\n".join(lines))
    return 0


async def _measure(
    args: argparse.Namespace,
    samples: list[dict[str, Any]],
    settings: dict[str, Any],
    paths: list[str],
    proxy: ProxyRun | None,
) -> int:
    asked: dict[str, list[Asked]] = {p: [] for p in paths}
    bm25: list[tuple[Question, Sequence[str]]] = []
    #: group ("tuned on" / "held out") -> (asked per path, BM25's)
    split: dict[str, tuple[dict[str, list[Asked]], list[tuple[Question, Sequence[str]]]]] = {}
    started = time.perf_counter()
    for sample in samples:
        group = "tuned on" if str(sample.get("sample_id")) in TUNE_SET else "held out"
        per_path, base_of = split.setdefault(group, ({p: [] for p in paths}, []))
        for path in paths:
            t0 = time.perf_counter()
            if path == "proxy":
                assert proxy is not None
                got = await _through_proxy(proxy, sample)
            else:
                got = await _replay_one(sample, settings, path, args.cache)
            asked[path].extend(got)
            per_path[path].extend(got)
            print(
                f"[{sample.get('sample_id')}] {path}: {len(got)} questions, "
                f"{time.perf_counter() - t0:.1f} s",
                file=sys.stderr,
            )
        base = _bm25_one(sample)
        bm25.extend(base)
        base_of.extend(base)
    if args.misses:  # every question whose evidence is not all in the first 10 items
        missed = [
            {
                "path": p,
                "question": a.question.text,
                "category": a.question.category,
                "evidence": list(a.question.evidence),
                "items": list(a.items[:10]),
            }
            for p in paths
            for a in asked[p]
            if hits_at(a.items, a.question.evidence, 10, a.carried) < 1
        ]
        Path(args.misses).write_text(json.dumps(missed, indent=1), encoding="utf-8")
    rows = {f"{p} path": _collect([_scored(a) for a in asked[p]]) for p in paths}
    rows["BM25"] = _collect(bm25)
    lines = list(_table(rows))
    if len(split) > 1:  # the conversations tuned on and the held-out ones, apart
        for group in ("tuned on", "held out"):
            per_path, base_of = split[group]
            ids = sorted(
                str(s.get("sample_id"))
                for s in samples
                if (str(s.get("sample_id")) in TUNE_SET) == (group == "tuned on")
            )
            group_rows = {f"{p} path": _collect([_scored(a) for a in per_path[p]]) for p in paths}
            group_rows["BM25"] = _collect(base_of)
            lines += ["", f"{group} ({', '.join(ids)}):", "", *_table(group_rows)]
    lines.append("")
    for path in paths:
        ms = [a.ms for a in asked[path]]
        chars = [a.chars for a in asked[path]]
        lines.append(
            f"{path} path: recall latency p50 {_pct(ms, 0.5):.1f} ms, p95 {_pct(ms, 0.95):.1f} ms;"
            f" injected characters p50 {_pct(chars, 0.5):.0f}, p95 {_pct(chars, 0.95):.0f}, "
            f"max {max(chars, default=0)}, mean {statistics.fmean(chars or [0]):.0f}; "
            f"{len(asked[path])} questions"
        )
        lines.extend(_carried_line(path, asked[path]))
    lines.append(
        f"{len(samples)} conversations ({', '.join(str(s.get('sample_id')) for s in samples)}), "
        f"{time.perf_counter() - started:.0f} s; extraction: {', '.join(sorted(EXTRACTION))}"
    )
    print("\n".join(lines))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="LoCoMo JSON file")
    parser.add_argument("--limit", type=int, default=0, help="only the first N conversations")
    parser.add_argument("--settings", default="", help="host settings as a JSON object")
    parser.add_argument(
        "--conversation",
        type=lambda v: [int(i) for i in v.split(",")],
        default=None,
        help="only these conversations, by index (comma-separated; overrides --limit)",
    )
    parser.add_argument(
        "--only", default="", help="only these conversations (sample ids, comma-separated)"
    )
    parser.add_argument(
        "--path",
        choices=("live", "ingest", "both", "proxy", "all"),
        default="both",
        help="live: every turn through add_user_message/add_assistant_message; ingest: the "
        "conversation written to a JSONL transcript and read by `memgraph-host ingest`'s code "
        "path (ingest_file); both (default): each, side by side; proxy: every turn sent "
        "through a real `memgraph-host proxy` by the openai SDK (bench/locomo_proxy.py); all: "
        "the three",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="keep each built chat in this folder and reuse it while the sources that build "
        "it (memgraph_plugin/ and host/ outside recall/ and web/) and the settings are "
        "unchanged: only the questions run (for tuning recall)",
    )
    parser.add_argument(
        "--misses", default="", help="write the questions missed at R@10 (JSON) to this file"
    )
    parser.add_argument(
        "--context-tokens",
        type=lambda v: [int(i) for i in v.split(",")],
        default=None,
        help="with --path proxy: ask every question under each of these context budgets "
        "(comma-separated tokens) and print the evidence coverage of the kept turns alone and "
        "with the memory block, and the tokens forwarded",
    )
    args = parser.parse_args(argv)
    if not Path(args.data).exists():
        print(f"no LoCoMo data at {args.data} (give the path as an argument)", file=sys.stderr)
        return 2
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())
