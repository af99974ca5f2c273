"""A chat of (speaker, text) lines told to a real host, user and assistant in turn."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from host import Host
from memgraph_plugin.turn import pipeline_for


async def spoken_chat(
    tmp_path: Path, chat: str, lines: Sequence[tuple[str, str]], *, per_day: int = 1
) -> tuple[Host, object]:
    """A started host whose chat `chat` holds `lines` (even lines the user's), `per_day` lines
    a day from 8 May 2023; the host and its turn pipeline."""
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    await host.start()
    pipeline = pipeline_for(host)
    for i, (speaker, text) in enumerate(lines):
        add = pipeline.add_user_message if i % 2 == 0 else pipeline.add_assistant_message
        await add(chat, text, name=speaker, time=f"2023-05-{8 + i // per_day:02d}T13:56:00")
    return host, pipeline
