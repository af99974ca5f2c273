"""The settings of hosts sharing one bucket (``chat_lease_*``), declared in the host's schema."""

from __future__ import annotations

from host.settings.settings_schema import Kind, declare

CHAT_LEASE_TABLE = "chat_lease_table"
CHAT_LEASE_SECONDS = "chat_lease_seconds"
CHAT_LEASE_ENDPOINT = "chat_lease_endpoint"
DEFAULT_LEASE_SECONDS = 30.0

declare(
    CHAT_LEASE_TABLE,
    Kind.STRING,
    None,
    "DynamoDB table of the chat leases, for several hosts over one bucket (storage_uri on S3): "
    "a chat is served by one host at a time, and its messages are kept in the bucket too "
    "(docs/deploy.md). Unset: chats are locked per data dir and their messages stay in it.",
)
declare(
    CHAT_LEASE_SECONDS,
    Kind.NUMBER,
    DEFAULT_LEASE_SECONDS,
    "How long a chat lease lasts unless renewed (the holder renews it every third of this); "
    "a host that stops renewing (killed, cut off) loses its chats to another host after it. "
    "Must be well above the clock skew between hosts.",
    minimum=1,
)
declare(
    CHAT_LEASE_ENDPOINT,
    Kind.STRING,
    None,
    "DynamoDB endpoint URL of chat_lease_table (default: AWS's for the region of "
    "storage_options); credentials and region come from storage_options.",
)
