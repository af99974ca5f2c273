"""The settings of hosts sharing one bucket (``chat_lease_*``), declared in the host's schema."""

from __future__ import annotations

import attrs

from host.settings.settings_schema import setting, settings_room


@settings_room
class ChatLeaseKeys:
    chat_lease_table: str | None = setting(
        None,
        "DynamoDB table of the chat leases, for several hosts over one bucket (storage_uri on "
        "S3): a chat is served by one host at a time, and its messages are kept in the bucket too "
        "(docs/deploy.md). Unset: chats are locked per data dir and their messages stay in it.",
    )
    chat_lease_seconds: float = setting(
        30.0,
        "How long a chat lease lasts unless renewed (the holder renews it every third of this); "
        "a host that stops renewing (killed, cut off) loses its chats to another host after it. "
        "Must be well above the clock skew between hosts.",
        minimum=1,
    )
    chat_lease_endpoint: str | None = setting(
        None,
        "DynamoDB endpoint URL of chat_lease_table (default: AWS's for the region of "
        "storage_options); credentials and region come from storage_options.",
    )


_KEYS = attrs.fields(ChatLeaseKeys)
CHAT_LEASE_TABLE = _KEYS.chat_lease_table.name
CHAT_LEASE_SECONDS = _KEYS.chat_lease_seconds.name
CHAT_LEASE_ENDPOINT = _KEYS.chat_lease_endpoint.name
DEFAULT_LEASE_SECONDS: float = _KEYS.chat_lease_seconds.default
