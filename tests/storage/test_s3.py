"""The `s3://` path's own cases, on a real S3-compatible server (moto server mode on loopback).

The storage tests that take the `target` fixture (journal, checkpoints, history, rollback,
optimize, retention, crash and concurrency processes, two hosts on one database) run on this
server too; this module holds what only an object store has: settings it needs, and clear errors
when the bucket or endpoint is wrong.
"""

from __future__ import annotations

import pytest

from host import Host
from memgraph_plugin.storage import LanceStorage, StorageError
from tests.storage.helpers import change, node
from tests.storage.targets import S3Server, Target

pytestmark = [pytest.mark.s3, pytest.mark.slow]


def test_a_chat_lives_under_its_prefix_in_the_bucket(s3_server: S3Server, s3_target: Target):
    st = s3_target.storage()
    st.commit_sync("c", change(node("n_1"), node_seq=1), base_version=0)
    prefix = s3_target.uri.removeprefix("s3://memgraph-test/") + "/"
    keys = s3_server.keys(prefix)
    assert any(k.startswith(prefix + "commits.lance/") for k in keys)
    assert LanceStorage(s3_target.settings()).load_sync("c").data["nodes"]["n_1"]["id"] == "n_1"
    other = s3_server.target()  # another prefix in the same bucket is another database
    assert other.storage().load_sync("c").version == 0


def test_an_http_endpoint_without_allow_http_is_a_clear_settings_error(s3_target: Target):
    options = {k: v for k, v in s3_target.options.items() if k != "allow_http"}
    with pytest.raises(StorageError) as info:
        Target(s3_target.uri, options).storage()
    assert info.value.code == "BAD_SETTINGS"
    assert "allow_http" in str(info.value) and s3_target.uri in str(info.value)
    # any spelling object_store reads works: TOML's `allow_http = true` arrives as "True"
    Target(s3_target.uri, {**options, "allow_http": "True"}).storage()


def test_a_missing_bucket_names_the_uri_and_what_to_check(s3_target: Target):
    with pytest.raises(StorageError) as info:
        Target("s3://no-such-bucket/db", s3_target.options).storage()
    assert info.value.code == "STORAGE_UNREACHABLE"
    message = str(info.value)
    assert "'s3://no-such-bucket/db'" in message and "bucket does not exist" in message
    assert "IO {" not in message  # not LanceDB's debug dump


async def test_a_host_on_an_unreachable_bucket_reports_it_and_keeps_running(
    tmp_path, s3_target: Target, caplog
):
    settings = Target("s3://no-such-bucket/db", s3_target.options).host_settings()
    host = Host(data_dir=tmp_path / "d", settings=settings, entry_points=False)
    await host.start()
    api = host.registry.get("memory-graph")
    assert await api.open_session(host.get_context("c")) is None
    assert "no-such-bucket" in caplog.text and "bucket does not exist" in caplog.text
    await host.stop()
