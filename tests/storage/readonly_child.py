"""Child process for test_storage_failures: loads every module as root on a scratch folder, drops
to the unprivileged user ``nobody`` (root ignores file modes), then writes to the folder given
and prints ``WROTE`` or ``ERR <type> <message>``."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile

from host import Host


async def write(data_dir: str, text: str) -> None:
    host = Host(data_dir=data_dir, entry_points=False)
    await host.start()
    session = await host.registry.get("memory-graph").open_session(host.get_context("c"))
    try:
        await session.create_node(type="event", fields={"summary": text})
        print("WROTE", flush=True)
    except Exception as exc:  # noqa: BLE001 - what the test checks
        print("ERR", type(exc).__name__, " ".join(str(exc).split()), flush=True)
    await host.stop()


if __name__ == "__main__":
    asyncio.run(write(tempfile.mkdtemp(), "warm-up"))  # lazy imports done while still root
    os.setgid(65534)
    os.setuid(65534)
    asyncio.run(write(sys.argv[1], "one more"))
