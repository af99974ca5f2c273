"""The fact signal reads what an LLM extractor writes too: a sheet whose facts are only in its
table columns (`traits`, as the extraction prompt asks) ranks its evidence messages for "what
are X's hobbies"; a real host with LanceDB and a plugin extractor answering like a model."""

from __future__ import annotations

from pathlib import Path

from host import Host, hookimpl
from memgraph_plugin.recall.ranking.fact_signal import asked_fields
from memgraph_plugin.turn import pipeline_for

CHAT = "c1"
MESSAGES = [
    "We walked to the harbour and watched the boats for an hour.",
    "On Sundays I go down to the river with my rod and wait for trout.",
    "The market was crowded, so we bought bread and went home early.",
    "Chess club tonight: I finally beat old Hallam in twenty moves.",
    "It rained all week and the roof leaked again.",
]


class ModelLikeExtractor:
    """Answers like an LLM extractor: an event per message, and for the two messages about
    Tomas's pastimes his sheet with `traits` filled and an `evidence` link."""

    @hookimpl
    def memgraph_extract(self, chat_id, message, context):
        ops = [{"op": "create", "type": "event", "title": f"message {message.index}",
                "fields": {"summary": message.text, "speaker": "Tomas",
                           "message": message.index}, "ref": "ev"}]
        traits = {MESSAGES[1]: ["hobby: fishing for trout"], MESSAGES[3]: ["hobby: chess"]}.get(
            message.text
        )
        if traits:
            ops.append({"op": "create", "type": "character_sheet", "title": "Tomas",
                        "fields": {"title": "Tomas", "traits": traits}, "ref": "c"})
            ops.append({"op": "link_upsert", "source_ref": "c", "links": [
                {"target_ref": "ev", "relation": "evidence", "direction": "outgoing"}]})
        return ops


def test_questions_asking_for_a_kind_of_fact() -> None:
    assert asked_fields(["tomas", "hobbies"]) == ["hobbies"]
    assert "identity" in asked_fields(["what", "career", "caroline"])
    assert asked_fields(["where", "did", "tomas", "go"]) == []


async def test_hobbies_question_finds_the_evidence_of_model_written_facts(tmp_path: Path) -> None:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    host.register_plugin(ModelLikeExtractor(), name="model-like")
    await host.start()
    try:
        pipeline = pipeline_for(host)
        for text in MESSAGES:
            await pipeline.add_user_message(CHAT, text, name="Tomas")
            await pipeline.add_assistant_message(CHAT, "Noted.", name="Narrator")
        await pipeline.add_user_message(CHAT, "What are Tomas's hobbies?", name="Ilse")
        recall = await pipeline.recall(CHAT)
        why = recall.why
        assert recall.recalled[0].fields.get("summary") == MESSAGES[1]  # the fact signal's #1
        assert MESSAGES[3] in [n.fields.get("summary") for n in recall.injected]
        facts = [i for i in why.values() if "facts" in (i.detail or "")]
        assert facts, "the fact signal put them there"
    finally:
        await host.stop()

