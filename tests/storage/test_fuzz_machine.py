"""The property-based suite (`fuzz_machine.ChatMachine`) at a modest size for ``make test``;
``MEMGRAPH_FUZZ_EXAMPLES`` raises it (``bench/fuzz.py`` runs 10,000 steps, randomly).

Here the examples are derandomized (the same ones every run): ``make test`` checks the same
sequences each time instead of drawing new ones, so a run's outcome does not depend on chance.
The random exploration is ``bench/fuzz.py``'s job; what it finds is reported there."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, settings

from memgraph_plugin.turn.pipeline import pipeline_for

from .fuzz_machine import CHATS, ChatMachine

TestChatMachine = ChatMachine.TestCase
TestChatMachine.pytestmark = [pytest.mark.slow]
TestChatMachine.settings = settings(
    max_examples=int(os.environ.get("MEMGRAPH_FUZZ_EXAMPLES", "5")),
    stateful_step_count=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def _run_steps(steps: Callable[[ChatMachine], None]) -> None:
    """One fixed sequence of the machine's rules, its invariants checked after every step."""
    machine = ChatMachine()
    try:
        steps(machine)
    finally:
        machine.teardown()


def _checked(machine: ChatMachine) -> None:
    machine.stored_equals_memory_and_history_is_contiguous()
    machine.chat_files_read_back()


def test_a_deleted_node_imported_then_a_turn_is_not_a_lost_node() -> None:
    """bench/fuzz.py's 10 'the turn rolled the import back' breaks: a node deleted
    before the import (``delete`` archives it: soft delete) was counted as lost after the turn,
    though the turn changed nothing about it. Shrunk from a 10,000-step run."""

    def steps(machine: ChatMachine) -> None:
        create = {"op": "create", "type": "event", "fields": {"summary": "a"}}
        machine.batch("c1", [create], None)
        machine.batch("c1", [{"op": "delete", "node_id": "n_1"}], None)
        _checked(machine)
        machine.import_then_turn("c1", "c1")  # was: AssertionError ... lost {'n_1'}
        _checked(machine)
        nodes = machine._session("c1").store.to_dict()["nodes"]
        assert nodes["n_1"]["archived"] and len(nodes) > 1  # still deleted; the turn wrote

    _run_steps(steps)


def test_raw_batches_past_the_chat_and_rollbacks_then_an_import_and_a_turn() -> None:
    """The rule: after an import a turn undoes nothing at or before it,
    whatever seqs earlier raw batches claimed (here 30 and 25 in a chat at message seq 1) and
    whichever versions were rolled back to first."""
    event = {"op": "create", "type": "event", "fields": {"summary": "Eileen"}}

    def steps(machine: ChatMachine) -> None:
        for chat in CHATS:
            machine.say(chat, "\u2028", "hi")
            machine._run(pipeline_for(machine.host).run_turn(chat, "hello", "Hello."))
            machine.batch(chat, [event], 30)
            machine.batch(chat, [event, {"op": "delete", "node_id": "n_1"}], 25)
        machine.rollback(CHATS[0], 2, False)
        machine.rollback(CHATS[1], 12, True)
        _checked(machine)
        for source in CHATS:
            machine.import_then_turn(CHATS[0], source)
            _checked(machine)
        machine.reopen()
        machine.import_then_turn(CHATS[1], CHATS[0])
        _checked(machine)

    _run_steps(steps)
