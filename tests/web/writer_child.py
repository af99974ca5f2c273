"""A second writer for the explorer tests: creates nodes in a chat through a real Host session.

Usage: python writer_child.py DATA_DIR CHAT "title:type[:linked-title]" ...
Each argument creates a node; with a third part it is linked (`involved_in`) to the node of that
title created earlier in the same call.
"""

from __future__ import annotations

import asyncio
import sys

from host import Host


async def main(data_dir: str, chat: str, specs: list[str]) -> None:
    host = Host(data_dir=data_dir, entry_points=False)
    await host.start()
    try:
        api = host.registry.get("memory-graph")
        session = await api.open_session(host.get_context(chat))
        ids: dict[str, str] = {}
        for spec in specs:
            title, type_, *link = spec.split(":")
            links = (
                [
                    {
                        "target": {"id": ids[link[0]]},
                        "relation": "involved_in",
                        "direction": "outgoing",
                    }
                ]
                if link
                else None
            )
            created = await session.create_node(
                type=type_,
                title=title,
                fields={"summary": f"{title} in the harbour town"},
                links=links,
            )
            ids[title] = created.id
    finally:
        await host.stop()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
