"""Where storage tests keep their database: a local folder or a prefix in a real S3-compatible
server (moto's server mode on loopback, started once per test process)."""

from __future__ import annotations

import json
import os
import socket
import uuid
from pathlib import Path
from typing import Any

import attrs

from memgraph_plugin.storage import LanceStorage, StorageSettings

#: children (writer_child, session_child) read their target's storage options from this variable
TARGET_ENV = "MEMGRAPH_TEST_STORAGE"
BUCKET = "memgraph-test"


@attrs.frozen
class Target:
    """A database location plus the `storage_options` it needs (empty for a folder)."""

    uri: str
    options: dict[str, str] = attrs.field(factory=dict)

    @property
    def remote(self) -> bool:
        return "://" in self.uri and not self.uri.startswith("file://")

    def settings(self, **kw: Any) -> StorageSettings:
        return StorageSettings(uri=self.uri, storage_options=dict(self.options), **kw)

    def storage(self, **kw: Any) -> LanceStorage:
        return LanceStorage(self.settings(**kw))

    def host_settings(self, **settings: Any) -> dict[str, Any]:
        """Host settings that put the memory graph's database here."""
        return {"storage_uri": self.uri, "storage_options": dict(self.options), **settings}

    def child_env(self) -> dict[str, str]:
        return {TARGET_ENV: json.dumps({"uri": self.uri, "options": self.options})}


def target_from_env(default_uri: str) -> Target:
    """A child's target: `MEMGRAPH_TEST_STORAGE` when its parent set it, else `default_uri`."""
    raw = os.environ.get(TARGET_ENV)
    if not raw:
        return Target(default_uri)
    data = json.loads(raw)
    return Target(str(data["uri"]), {str(k): str(v) for k, v in data["options"].items()})


def free_port() -> int:
    """A loopback port free when asked (nothing listens on it once this returns)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class S3Server:
    """moto's S3 server on 127.0.0.1 with one bucket; each test gets its own prefix in it."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self.port = free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.options = {
            "aws_access_key_id": "memgraph-test",
            "aws_secret_access_key": "memgraph-test-secret",
            "region": "us-east-1",
            "endpoint": self.endpoint,
            "allow_http": "true",
        }
        import boto3

        boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.options["aws_access_key_id"],
            aws_secret_access_key=self.options["aws_secret_access_key"],
            region_name=self.options["region"],
        ).create_bucket(Bucket=BUCKET)

    def target(self) -> Target:
        return Target(f"s3://{BUCKET}/{uuid.uuid4().hex}", dict(self.options))

    def keys(self, prefix: str) -> list[str]:
        """Object keys under `prefix` (to check what a test left in the bucket)."""
        import boto3

        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.options["aws_access_key_id"],
            aws_secret_access_key=self.options["aws_secret_access_key"],
            region_name=self.options["region"],
        )
        out: list[str] = []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
            out.extend(obj["Key"] for obj in page.get("Contents", ()))
        return out

    def stop(self) -> None:
        self._server.stop()


def local_target(tmp_path: Path) -> Target:
    return Target(str(tmp_path / "db"))
