"""Message times as transcripts write them -> ISO 8601 on the event (`time_iso`), the text kept."""

from __future__ import annotations

import pytest

from memgraph_plugin.extraction.offline import extract_message_ops
from memgraph_plugin.extraction.text.times import iso_time
from memgraph_plugin.recall.query import time_of


@pytest.mark.parametrize(
    ("written", "iso"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00"),  # LoCoMo
        ("10:04 am on 23 Jan, 2023", "2023-01-23T10:04:00"),
        ("May 8, 2023 1:56pm", "2023-05-08T13:56:00"),  # SillyTavern send_date
        ("May 8, 2023 12:05 am", "2023-05-08T00:05:00"),
        ("Sept 5, 2021", "2021-09-05"),
        ("2023-05-08@13h56m30s", "2023-05-08T13:56:30"),
        ("2023-05-08", "2023-05-08"),  # ISO 8601
        ("2023-05-08T13:56:00Z", "2023-05-08T13:56:00+00:00"),
        ("2023-05-08 13:56", "2023-05-08T13:56:00"),
        ("8 May, 2023 13:56", "2023-05-08T13:56:00"),
        ("1683554160", "2023-05-08T13:56:00+00:00"),  # Unix seconds
        ("1683554160000", "2023-05-08T13:56:00+00:00"),  # Unix milliseconds
        ("1683554160.25", "2023-05-08T13:56:00+00:00"),
        ("2023-05-08 @13h 56m 30s 123ms", "2023-05-08T13:56:30"),  # older SillyTavern
        ("8 May 2023 at 1:56 pm", "2023-05-08T13:56:00"),
        ("May 2023", None),  # no day: not a date to place
        ("Tuesday", None),
        ("yesterday", None),
        ("day 3", None),
        ("1:56 pm", None),  # no date: nothing to place
        ("31 February 2023", None),  # not a real date
        ("13:00 pm on 8 May, 2023", None),
        ("2023", None),
    ],
)
def test_common_transcript_forms_read_as_iso(written: str, iso: str | None) -> None:
    assert iso_time(written) == iso


def test_the_event_keeps_the_written_time_and_gains_its_iso_form() -> None:
    [event] = extract_message_ops("We met at noon.", time="1:56 pm on 8 May, 2023", index=0)[:1]
    assert event["fields"]["time"] == "1:56 pm on 8 May, 2023"
    assert event["fields"]["time_iso"] == "2023-05-08T13:56:00"
    assert time_of(event["fields"]).isoformat() == "2023-05-08T13:56:00"  # recall's time cue
    [vague] = extract_message_ops("Later.", time="day 3", index=1)[:1]
    assert vague["fields"]["time"] == "day 3" and "time_iso" not in vague["fields"]
    assert time_of(vague["fields"]) is None
