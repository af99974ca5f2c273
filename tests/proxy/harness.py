"""The proxy under test: a real host (LanceDB on disk) and the one app on uvicorn, in a thread
with its own event loop, on a free loopback port."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from host import Host
from memgraph_plugin.proxy.completions import Proxy
from memgraph_plugin.proxy.guard.access_keys import AccessKeys
from memgraph_plugin.proxy.ledger.chat_memory import ChatMemory
from memgraph_plugin.proxy.memory_api import MemoryApi
from memgraph_plugin.proxy.settings import ProxySettings
from memgraph_plugin.web.app import build_app
from memgraph_plugin.web.server import bind, url_of, uvicorn_server
from memgraph_plugin.web.settings import HttpSettings

BASE_SETTINGS = {"embedding_profile": "hashing"}
#: The write token of the JSON API under test (X-Memgraph-Token).
TOKEN = "harness-write-token"


class RunningProxy:
    """``url`` is the proxy's ``/v1`` base; `call` runs a coroutine on its loop; ``writer``:
    the header that lets a client use the JSON API's write routes."""

    writer = {"X-Memgraph-Token": TOKEN}

    def __init__(self, data_dir: Path, upstream: str, **settings: Any) -> None:
        self.settings = {**BASE_SETTINGS, "proxy_upstream": upstream, **settings}
        self.data_dir = data_dir
        self.sock = bind("127.0.0.1", 0)
        self.base = url_of(self.sock)
        self.url = self.base + "v1"
        self.loop: asyncio.AbstractEventLoop | None = None
        self.ready: Future[None] = Future()
        self.done: Future[None] = Future()
        self.thread = threading.Thread(target=self._main, daemon=True, name="proxy-under-test")
        self.thread.start()
        self.ready.result(timeout=120)

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
            self.done.set_result(None)
        except BaseException as exc:  # surfaced to the test through `ready` / `done`
            if not self.ready.done():
                self.ready.set_exception(exc)
            self.done.set_exception(exc)

    async def _serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.host = Host(data_dir=self.data_dir, settings=self.settings, entry_points=False)
        await self.host.start()
        self.memory = ChatMemory(self.host)
        settings = ProxySettings.from_settings(self.host.settings)
        self.proxy = Proxy(self.host, settings, self.memory)
        api = MemoryApi(self.host, self.memory, token=TOKEN)
        app = build_app(
            memory_api=api, proxy=self.proxy, bound_host="127.0.0.1",
            http=HttpSettings.from_settings(self.host.settings),
            keys=AccessKeys.from_settings(self.host.settings, settings.api_key),
        )  # fmt: skip
        self.server = uvicorn_server(app)
        self.ready.set_result(None)
        try:
            await self.server.serve(sockets=[self.sock])
        finally:
            await self.proxy.aclose()
            await self.host.stop()

    def call(self, coro: Any, timeout: float = 120) -> Any:
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def idle(self, chat_id: str) -> None:
        """Wait until the chat's answers are stored (its lock is free)."""

        async def wait() -> None:
            async with self.memory.lock(chat_id):
                pass
            await self.memory.drain()

        self.call(wait())

    def messages(self, chat_id: str) -> list[tuple[str, str]]:
        self.idle(chat_id)
        return [(m.role, m.text) for m in self.host.chat(chat_id).messages]

    def graph_text(self, chat_id: str) -> str:
        """Every active node's title and fields, one string (what the graph remembers)."""
        self.idle(chat_id)

        async def read() -> str:
            session = await self.memory.pipeline.open_session(chat_id)
            parts = []
            for node in session.store.iter_nodes():
                if not node.archived:
                    parts.append(node.title)
                    parts.extend(str(v) for v in node.fields.values())
            return "\n".join(parts)

        return self.call(read())

    def stop(self) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(setattr, self.server, "should_exit", True)
        self.done.result(timeout=120)
        self.sock.close()
