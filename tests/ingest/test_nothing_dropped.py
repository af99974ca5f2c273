"""An ingest drops nothing silently: a message over ``max_field_bytes`` is kept whole
as consecutive events, SillyTavern's empty messages are skipped and counted, and a message whose
writes are refused is reported with its ``file:line``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from host import hookimpl
from memgraph_plugin.extraction.text.long_text import json_bytes, split_text
from memgraph_plugin.ingest import ingest_file
from memgraph_plugin.ingest.ingest_command import format_report
from memgraph_plugin.turn import pipeline_for


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


@pytest.mark.parametrize("text", ["word " * 40_000, "é" * 70_000, "\x01" * 20_000, "x" * 99_999])
def test_split_text_keeps_every_character_in_parts_that_fit(text: str) -> None:
    parts = split_text(text, 65_536)
    assert "".join(parts) == text and len(parts) > 1
    assert all(json_bytes(p) <= 65_536 for p in parts)
    assert split_text("short", 65_536) == ["short"]


async def test_a_two_megabyte_message_is_kept_whole(host, tmp_path) -> None:
    big = " ".join(f"Mara walked {i} miles to the Lantern Market." for i in range(48_000))
    assert len(big.encode()) > 2_000_000
    path = _jsonl(tmp_path / "t.jsonl", [
        {"role": "user", "content": "Tell me about Mara."},
        {"role": "assistant", "content": big},
        {"role": "user", "content": "Thanks."},
    ])
    report = await ingest_file(host, path, "c")
    assert report.ok and report.ingested == 3 and report.warnings == ()
    store = (await pipeline_for(host).open_session("c")).store
    parts = sorted(
        (n for n in store.iter_nodes() if n.fields.get("message") == 1),
        key=lambda n: n.fields["part"],
    )
    assert len(parts) > 1 and [p.fields["parts"] for p in parts] == [len(parts)] * len(parts)
    assert "".join(p.fields["summary"] for p in parts) == big  # the whole text, in order
    follows = {(e.source, e.target) for e in store.iter_edges() if e.type == "follows"}
    assert all((b.id, a.id) in follows for a, b in zip(parts, parts[1:], strict=False))


async def test_sillytavern_empty_messages_are_skipped_and_counted(host, tmp_path) -> None:
    path = _jsonl(tmp_path / "st.jsonl", [
        {"user_name": "Ilya", "character_name": "Quill"},
        {"name": "Ilya", "is_user": True, "mes": "Where is Mara?"},
        {"name": "Quill", "is_user": False, "mes": ""},  # an image-only message
        {"name": "Quill", "is_user": False, "mes": "   "},  # an aborted one
        {"name": "Quill", "is_user": False, "mes": "At the Lantern Market."},
    ])
    report = await ingest_file(host, path, "c")
    assert report.ok and (report.ingested, report.empty, report.total) == (2, 2, 2)
    assert "skipped: 2 messages with no text" in format_report(report)
    assert [m.text for m in host.chat("c").messages] == ["Where is Mara?", "At the Lantern Market."]
    again = await ingest_file(host, path, "c")  # a re-run lines up the same messages
    assert again.ok and (again.ingested, again.skipped, again.empty) == (0, 2, 2)


class Oversized:
    """An extractor whose event is over ``max_field_bytes``: its writes are refused."""

    @hookimpl
    def memgraph_extract(self, chat_id, message, context):
        return [{"op": "create", "type": "event", "fields": {"summary": "y" * 70_000}}]


async def test_refused_writes_are_reported_with_file_and_line(host, tmp_path) -> None:
    host.register_plugin(Oversized(), name="oversized")
    path = _jsonl(tmp_path / "t.jsonl", [{"role": "user", "content": "Hello."}])
    report = await ingest_file(host, path, "c")
    assert report.ok and len(report.warnings) == 1
    assert report.warnings[0].startswith(f"{path}:1: 1 writes refused (")
    assert "max_field_bytes" in report.warnings[0]
    assert "warnings: 1 messages had writes refused" in format_report(report)
