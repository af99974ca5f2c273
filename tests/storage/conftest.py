"""Storage fixtures: `target` runs a test once on a local folder and once on a real S3-compatible
server (moto server mode, one per test process, on a free loopback port)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.storage.targets import S3Server, Target, local_target


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    server = S3Server()
    yield server
    server.stop()


@pytest.fixture(params=["local", "s3"])
def target(request: pytest.FixtureRequest, tmp_path) -> Target:
    if request.param == "s3":
        return request.getfixturevalue("s3_server").target()
    return local_target(tmp_path)


@pytest.fixture
def s3_target(s3_server: S3Server) -> Target:
    return s3_server.target()
