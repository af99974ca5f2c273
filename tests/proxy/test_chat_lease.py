"""The chat lease in DynamoDB and the chats' message files in the bucket, on moto's server:
one holder at a time, a lease that lapses is taken over and its old holder's renewal and
give-back are refused (fencing), and a message file whose copy is not the newest is never
written over the bucket's."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from host.chats.chat_files import chat_file_name
from memgraph_plugin.hosts.aws_clients import make_client
from memgraph_plugin.hosts.chat_lease import LeaseTable, Taken, create_table
from memgraph_plugin.hosts.chat_objects import ChatObjects, StaleCopy
from tests.storage.targets import BUCKET, S3Server

pytestmark = [pytest.mark.s3]


def _tables(s3_server: S3Server, seconds: float) -> tuple[LeaseTable, LeaseTable]:
    client = make_client("dynamodb", s3_server.options, s3_server.endpoint)
    name = f"leases-{uuid.uuid4().hex[:8]}"
    create_table(client, name)
    return (LeaseTable(client, name, "s3://b/db", seconds),
            LeaseTable(client, name, "s3://b/db", seconds))  # fmt: skip


def test_one_holder_at_a_time_and_the_give_back_names_the_writer(s3_server: S3Server) -> None:
    first, second = _tables(s3_server, 60)
    taken = first.take("c")
    assert isinstance(taken, Taken) and taken.fence == 1 and taken.etag is None
    assert second.take("c") == first.owner  # refused, naming the holder
    assert first.renew("c", taken.fence)
    assert first.give_back("c", taken.fence, '"etag-1"')
    again = second.take("c")
    assert isinstance(again, Taken)
    assert (again.fence, again.etag, again.writer, again.took_over) == (
        2, '"etag-1"', first.owner, False,
    )  # fmt: skip
    assert isinstance(first.take("other chat"), Taken)  # chats are leased one by one


def test_a_lapsed_lease_is_taken_over_and_its_old_holder_fenced(s3_server: S3Server) -> None:
    first, second = _tables(s3_server, 1)
    old = first.take("c")
    assert isinstance(old, Taken)
    deadline = time.monotonic() + 30
    while not isinstance(new := second.take("c"), Taken):  # until the lease lapses
        assert time.monotonic() < deadline, "the lease never lapsed"
        time.sleep(0.1)
    assert new.took_over and new.fence == old.fence + 1
    assert not first.renew("c", old.fence)
    assert not first.give_back("c", old.fence, '"stale"')
    assert second.give_back("c", new.fence, None)


def test_a_stale_copy_never_replaces_the_bucket_s_message_file(
    s3_server: S3Server, tmp_path: Path
) -> None:
    client = make_client("s3", s3_server.options)
    prefix = uuid.uuid4().hex
    one = ChatObjects(client, BUCKET, prefix, tmp_path / "one")
    two = ChatObjects(client, BUCKET, prefix, tmp_path / "two")
    name = chat_file_name("c")
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / name).write_text('{"chat_id": "c"}\n{"role": "user", "text": "a"}\n')
    first = one.push("c", None)
    assert one.push("c", first) == first  # unchanged: no PUT, same ETag
    assert two.pull("c", first) and (tmp_path / "two" / name).read_text().endswith('"a"}\n')
    (tmp_path / "two" / name).write_text(
        '{"chat_id": "c"}\n{"role": "user", "text": "a"}\n{"role": "assistant", "text": "b"}\n'
    )
    second = two.push("c", first)
    assert second != first
    (tmp_path / "one" / name).write_text('{"chat_id": "c"}\n{"role": "user", "text": "stale"}\n')
    with pytest.raises(StaleCopy):
        one.push("c", first)
    fresh = ChatObjects(client, BUCKET, prefix, tmp_path / "fresh")
    assert fresh.pull_all() == 1
    assert (tmp_path / "fresh" / name).read_text().endswith('"b"}\n')
