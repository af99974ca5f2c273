"""Recall through the memory proxy, the path of a person whose chat app points at it
(``bench/recall_locomo.py --path proxy``).

A real ``memgraph-host proxy`` (subprocess, its own data folder, the bench's settings) in front
of a loopback upstream (Starlette on uvicorn, in this process) that answers each request with
the conversation's next assistant turn, as the model of a chat app would have. The client is the
openai SDK, as a script on it or a front end sends: each request carries the whole visible
history (``role``, ``name``: the speaker, ``content``) up to the next assistant turn, and the
proxy stores and extracts what is new after each answer. A chat app sends no message times, so
this path has none: its memory places every message at the moment the replay sent it (minutes,
where the conversation spans months), which costs questions about when things happened.

Then each question goes in as the history plus one user message, and replaces the one before
(an edit of the last message: the proxy rolls the chat back to before it, as a front end's
regenerate or edit does). What the upstream receives is scored: evidence the request's own
messages carry counts as found (the model reads it there; the proxy injects no message the
request carries, so the block holds none of it), then the injected memory block's rows, in the
order the recall ranked them (the proxy's recall trace in its data folder: the block itself
groups rows by type), each matched against the evidence as the in-process paths match their
items.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

PROXY_CHAT_HEADER = "X-Memgraph-Chat"
QUESTION_ANSWER = "I am not sure."


class Upstream:
    """A chat-completions server on loopback (its own thread) that answers with `answer` and
    keeps the newest request body it received."""

    def __init__(self) -> None:
        self.answer = ""
        self.received: dict[str, Any] | None = None
        self.url = ""
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def _app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def completions(request: Request) -> Any:
            self.received = json.loads(await request.body())
            message = {"role": "assistant", "content": self.answer}
            choice = {"index": 0, "finish_reason": "stop", "message": message}
            reply = {"id": "locomo", "object": "chat.completion", "model": "locomo"}
            return JSONResponse({**reply, "choices": [choice]})

        return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])

    def __enter__(self) -> Upstream:
        import uvicorn

        from memgraph_plugin.web.server import bind, url_of

        sock = bind("127.0.0.1", 0)
        self.url = url_of(sock) + "v1"
        config = uvicorn.Config(self._app(), log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        started = threading.Event()

        def serve() -> None:
            async def run() -> None:
                task = asyncio.ensure_future(self._server.serve(sockets=[sock]))
                while not self._server.started and not task.done():
                    await asyncio.sleep(0.01)
                started.set()
                await task

            asyncio.run(run())

        self._thread = threading.Thread(target=serve, name="locomo upstream", daemon=True)
        self._thread.start()
        if not started.wait(60):
            raise RuntimeError("the loopback upstream did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(60)


class ProxyRun:
    """A `memgraph-host proxy` subprocess with its own data folder, in front of `Upstream`."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.upstream = Upstream()
        self.data = ""
        self.url = ""
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> ProxyRun:
        self.upstream.__enter__()
        self.data = tempfile.mkdtemp(prefix="locomo-proxy-")
        script = str(Path(sys.executable).with_name("memgraph-host"))
        sets = [
            arg
            for key, value in self.settings.items()
            for arg in ("--set", f"{key}={value if isinstance(value, str) else json.dumps(value)}")
        ]
        cmd = [script, "--data-dir", self.data, *sets, "proxy", "--upstream", self.upstream.url]
        self._proc = subprocess.Popen(
            [*cmd, "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        line = self._proc.stdout.readline() if self._proc.stdout else ""
        self.url = next((w for w in line.split() if w.startswith("http")), "")
        if not self.url:
            self.__exit__()
            raise RuntimeError(f"the proxy did not start: {line!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=60)
        self.upstream.__exit__()
        if self.data:
            shutil.rmtree(self.data, ignore_errors=True)

    def last_trace(self, chat: str) -> Any:
        """The chat's newest recall trace, as the proxy wrote it."""
        from memgraph_plugin.recall.trace import TRACE_DIR, TraceLog

        traces = TraceLog(Path(self.data) / TRACE_DIR).read(chat, last=1)
        return traces[-1] if traces else None


def block_rows(body: dict[str, Any]) -> dict[str, str]:
    """Node id -> its table row, for every row of the memory block(s) the proxy injected into
    `body` (the bench sends no system message, so every system message is the proxy's)."""
    rows: dict[str, str] = {}
    for message in body.get("messages", ()):
        if message.get("role") != "system" or not isinstance(message.get("content"), str):
            continue
        for line in message["content"].splitlines():
            if not line.startswith("| "):
                continue
            node_id = line[2:].split(" | ", 1)[0].strip()
            if node_id and node_id != "id" and not node_id.startswith("---"):
                rows.setdefault(node_id, line)
    return rows


def ranked_rows(rows: dict[str, str], selected: Sequence[str]) -> list[str]:
    """The block's rows in the recall's order (`selected`: the trace's picks), then the rest
    (the pinned ones) in block order."""
    first = [rows[i] for i in selected if i in rows]
    seen = set(selected)
    return first + [row for node_id, row in rows.items() if node_id not in seen]


def history_of(turns: Sequence[Any]) -> Iterator[tuple[list[dict[str, str]], str | None]]:
    """`(messages sent, the answer the upstream gives)` per request a chat app makes: one for
    every assistant turn that follows a user turn; the last item carries the whole conversation
    and no answer (the questions are asked on top of it)."""
    history: list[dict[str, str]] = []
    for turn in turns:
        if turn.role == "assistant" and history and history[-1]["role"] == "user":
            yield list(history), turn.raw
        history.append({"role": turn.role, "name": turn.speaker, "content": turn.raw})
    yield history, None


def carried_evidence(evidence: Sequence[str], body: dict[str, Any]) -> frozenset[str]:
    """The (normalised) evidence that the request's own messages (every one but the proxy's
    system messages: the bench sends none) carry, whole."""
    sent = [
        " ".join(str(m.get("content", "")).lower().split())
        for m in body.get("messages", ())
        if m.get("role") != "system"
    ]
    return frozenset(e for e in evidence if any(e in text for text in sent))


async def send_conversation(
    run: ProxyRun, client: Any, turns: Sequence[Any]
) -> list[dict[str, str]]:
    """Every request a chat app makes for the conversation, each answered with its next
    assistant turn (`history_of`); the whole history, for the questions to go on top of."""
    history: list[dict[str, str]] = []
    for sent, answer in history_of(turns):
        history = sent
        if answer is None:
            break
        run.upstream.answer = answer
        await client.chat.completions.create(model="locomo", messages=sent)
    return history


async def ask_through_proxy(
    run: ProxyRun, chat: str, turns: Sequence[Any], questions: Sequence[Any]
) -> list[tuple[Any, tuple[str, ...], float, int, frozenset[str]]]:
    """Send the conversation through the proxy, then ask every question; per question its
    normalised items (in recall order), the recall's milliseconds and injected characters, and
    the evidence the request itself carried to the upstream."""
    import httpx
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        base_url=run.url, api_key="locomo", default_headers={PROXY_CHAT_HEADER: chat}
    )
    history = await send_conversation(run, client, turns)
    async with httpx.AsyncClient(timeout=600) as http:  # the last answer stored and extracted
        base = run.url[: -len("v1")]
        await http.get(base + f"api/chats/{chat}/history", params={"limit": 1})
    out: list[tuple[Any, tuple[str, ...], float, int, frozenset[str]]] = []
    run.upstream.answer = QUESTION_ANSWER
    for q in questions:
        run.upstream.received = None
        asked = [*history, {"role": "user", "content": q.text}]
        await client.chat.completions.create(model="locomo", messages=asked)  # type: ignore[arg-type]
        received = run.upstream.received or {}
        trace = run.last_trace(chat)
        selected = [i.id for i in trace.selected] if trace is not None else []
        rows = ranked_rows(block_rows(received), selected)
        items = tuple(" ".join(row.lower().split()) for row in rows)
        ms = float(trace.duration_ms) if trace is not None else 0.0
        chars = int(trace.injected_chars) if trace is not None else 0
        out.append((q, items, ms, chars, carried_evidence(q.evidence, received)))
    await client.close()
    return out


def evidence_share(evidence: Sequence[str], texts: Sequence[str]) -> float:
    """Share of the (normalised) evidence found in one of `texts` (normalised, whole)."""
    return sum(1 for e in evidence if any(e in t for t in texts)) / len(evidence)


async def cover_through_proxy(
    run: ProxyRun, chat: str, turns: Sequence[Any], questions: Sequence[Any], budgets: Sequence[int]
) -> list[tuple[Any, dict[int, tuple[float, float, int, int]]]]:
    """The conversation sent through the proxy whole, then every question asked under each
    context budget (``X-Memgraph-Context-Tokens``); per question and budget: the share of its
    evidence in the kept turns alone, in the kept turns or the memory block, and the tokens
    forwarded (kept turns, as the proxy's ``X-Memgraph-Context`` header counts them, plus the
    block, estimated) and in the full history."""
    from openai import AsyncOpenAI

    from memgraph_plugin.proxy.request.token_count import estimate_tokens

    client = AsyncOpenAI(
        base_url=run.url, api_key="locomo", default_headers={PROXY_CHAT_HEADER: chat}
    )
    history = await send_conversation(run, client, turns)
    run.upstream.answer = QUESTION_ANSWER
    out: list[tuple[Any, dict[int, tuple[float, float, int, int]]]] = []
    for q in questions:
        per: dict[int, tuple[float, float, int, int]] = {}
        for budget in budgets:
            asked = [*history, {"role": "user", "content": q.text}]
            raw = await client.chat.completions.with_raw_response.create(
                model="locomo",
                messages=asked,  # type: ignore[arg-type]
                extra_headers={"X-Memgraph-Context-Tokens": str(budget)},
            )
            received = run.upstream.received or {}
            kept = [
                " ".join(str(m.get("content", "")).lower().split())
                for m in received.get("messages", ())
                if m.get("role") != "system"
            ]
            rows = [" ".join(r.lower().split()) for r in block_rows(received).values()]
            context = dict(
                part.split("=", 1) for part in raw.headers.get("x-memgraph-context", "").split("; ")
                if "=" in part
            )  # fmt: skip
            kept_tokens = int(context.get("tokens", 0))
            full = kept_tokens + int(context.get("saved", 0))
            block = sum(
                estimate_tokens(str(m.get("content", "")))
                for m in received.get("messages", ())
                if m.get("role") == "system"
            )
            forwarded = kept_tokens + block
            window = evidence_share(q.evidence, kept)
            both = evidence_share(q.evidence, kept + rows)
            per[budget] = (window, both, forwarded, full)
        out.append((q, per))
    await client.close()
    return out
