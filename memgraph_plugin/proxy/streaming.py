"""An ASGI response that relays an async stream of chunks as they come and notices a client
that goes away (the stream is cancelled once, so its clean-up can still await)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping
from typing import Any


class RelayStream:
    """Sends `chunks` as they arrive; a client disconnect cancels the stream (asyncio
    cancellation: the generator's ``finally`` runs, once, and may await)."""

    def __init__(
        self, chunks: AsyncGenerator[bytes, None], status: int, headers: Mapping[str, str]
    ) -> None:
        self.chunks = chunks
        self.status = status
        self.headers = [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()
        ]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        stream = asyncio.ensure_future(self._stream(send))
        watch = asyncio.ensure_future(disconnected(receive))
        try:
            await asyncio.wait({stream, watch}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not stream.done():
                stream.cancel()
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await stream
            with contextlib.suppress(asyncio.CancelledError):
                await watch

    async def _stream(self, send: Any) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status,
                        "headers": self.headers})  # fmt: skip
            async for chunk in self.chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await self.chunks.aclose()


async def disconnected(receive: Any) -> None:
    """Returns once the client has gone (ASGI ``http.disconnect``; the request body read
    already, nothing else comes before it)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
