"""The property-based suite (`fuzz_machine.ChatMachine`) at a modest size for ``make test``;
``MEMGRAPH_FUZZ_EXAMPLES`` raises it (``bench/fuzz.py`` runs 10,000 steps)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from .fuzz_machine import ChatMachine

TestChatMachine = ChatMachine.TestCase
TestChatMachine.settings = settings(
    max_examples=int(os.environ.get("MEMGRAPH_FUZZ_EXAMPLES", "5")),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
