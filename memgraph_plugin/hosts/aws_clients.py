"""boto3 clients for the bucket and the lease table, from the storage settings: the same
credentials, region and endpoint LanceDB is given in ``storage_options`` (object_store's
spellings), so one set of settings reaches both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memgraph_plugin.storage.errors import StorageError

#: object_store's spellings of each boto3 argument (lower case)
_KEYS = {
    "aws_access_key_id": ("aws_access_key_id", "access_key_id"),
    "aws_secret_access_key": ("aws_secret_access_key", "secret_access_key"),
    "aws_session_token": ("aws_session_token", "session_token", "token"),
    "region_name": ("region", "aws_region", "aws_default_region"),
    "endpoint_url": ("endpoint", "aws_endpoint", "endpoint_url", "aws_endpoint_url"),
}


def client_arguments(options: Mapping[str, str]) -> dict[str, str]:
    """boto3 client arguments named in `options` (storage_options); absent ones are left to
    boto3's own lookup (environment, instance role)."""
    lowered = {str(k).lower(): str(v) for k, v in options.items()}
    found: dict[str, str] = {}
    for argument, spellings in _KEYS.items():
        value = next((lowered[s] for s in spellings if s in lowered), None)
        if value:
            found[argument] = value
    return found


def make_client(service: str, options: Mapping[str, str], endpoint: str | None = None) -> Any:
    """A boto3 client of `service` (``s3``, ``dynamodb``); `endpoint` replaces the one in
    `options` (the lease table's own endpoint)."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError as exc:  # boto3 is an extra: pip install 'memgraph-host[s3]'
        raise StorageError(
            "chat_lease_table needs boto3: install memgraph-host[s3]", code="BAD_SETTINGS"
        ) from exc
    arguments = client_arguments(options)
    if service != "s3":
        arguments.pop("endpoint_url", None)
    if endpoint:
        arguments["endpoint_url"] = endpoint
    arguments.setdefault("region_name", "us-east-1")
    config = Config(
        retries={"max_attempts": 4, "mode": "standard"},
        connect_timeout=5,
        read_timeout=20,
        max_pool_connections=32,
    )
    return boto3.client(service, config=config, **arguments)  # type: ignore[call-overload]


def error_code(exc: BaseException) -> str:
    """The AWS error code of a botocore `ClientError` (empty for anything else)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, Mapping):
        return ""
    return str(response.get("Error", {}).get("Code", ""))
