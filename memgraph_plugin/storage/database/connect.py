"""Open a host's LanceDB database, with a clear error when it cannot be reached.

LanceDB's own errors for an object store are one long debug dump (`Failed to connect to
namespace: IO { source: Generic { store: "S3", ... } }`); this names the `storage_uri`, what was
wrong and which `storage_options` to look at.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from memgraph_plugin.storage.errors import StorageError
from memgraph_plugin.storage.settings import StorageSettings

#: storage_options keys that name an S3-compatible endpoint (object_store's spellings)
_ENDPOINT_KEYS = ("endpoint", "aws_endpoint", "endpoint_url", "aws_endpoint_url")
_TRUE = {"1", "true", "yes", "on", "y"}


def _is_object_store(uri: str) -> bool:
    return "://" in uri and not uri.startswith("file://")


def local_folder(uri: str) -> Path | None:
    """The folder a local database URI names (None for an object store)."""
    if _is_object_store(uri):
        return None
    return Path(uri[len("file://") :] if uri.startswith("file://") else uri)


def check_options(uri: str, options: dict[str, str]) -> None:
    """Refuse what LanceDB would only fail on later with an opaque message: a plain-HTTP
    endpoint without `allow_http` (LanceDB refuses HTTP unless told)."""
    lowered = {k.lower(): v for k, v in options.items()}
    endpoint = next((lowered[k] for k in _ENDPOINT_KEYS if k in lowered), None)
    allow = str(lowered.get("allow_http", lowered.get("aws_allow_http", ""))).lower()
    if endpoint and str(endpoint).startswith("http://") and allow not in _TRUE:
        raise StorageError(
            f"storage_uri {uri!r}: storage_options endpoint {endpoint!r} is plain HTTP; "
            'LanceDB refuses it unless storage_options also sets allow_http = "true"',
            code="BAD_SETTINGS",
        )


#: phrases of object_store's errors -> what they mean
_CAUSES = (
    ("NoSuchBucket", "the bucket does not exist"),
    ("404 Not Found", "the bucket does not exist"),
    ("AccessDenied", "access denied (credentials or bucket policy)"),
    ("InvalidAccessKeyId", "unknown access key"),
    ("SignatureDoesNotMatch", "wrong secret key"),
    ("error sending request", "the endpoint did not answer"),
    ("Connection refused", "the endpoint did not answer"),
    ("dns error", "the endpoint's host name does not resolve"),
)


def _summary(exc: BaseException) -> str:
    """What went wrong, from LanceDB's error text: a known cause, and the failed request."""
    text = str(exc)
    cause = next((why for phrase, why in _CAUSES if phrase in text), None)
    request = ""
    at = text.find("uri: Some(")
    if at >= 0:
        end = text.find(")", at)
        request = f"request {text[at + len('uri: Some(') : end]} failed"
    parts = [p for p in (cause, request) if p]
    return "; ".join(parts) if parts else (text if len(text) <= 300 else text[:300] + "...")


def connect_database(settings: StorageSettings, *, consistent: bool = True) -> Any:
    """`lancedb.connect` with every read seeing the newest commit (`read_consistency_interval`
    0), or, with `consistent=False`, tables that stay at the version they were last moved to
    (the journal's inspector travels to old versions: `Journal._added_no_rows`). On an object
    store a failure becomes a `StorageError` naming the URI and the settings to check (bucket,
    endpoint, region, credentials)."""
    import lancedb  # here, on the first write (`table_reads.py`): its import takes ~1 s

    options = dict(settings.storage_options)
    remote = _is_object_store(settings.uri)
    if remote:
        check_options(settings.uri, options)
    try:
        return lancedb.connect(
            settings.uri,
            read_consistency_interval=timedelta(0) if consistent else None,
            storage_options=options or None,
        )
    except (OSError, ValueError, RuntimeError) as exc:
        if not remote:
            raise
        raise unreachable(settings.uri, exc) from exc


def unreachable(uri: str, exc: BaseException) -> StorageError:
    """`STORAGE_UNREACHABLE` for an object store LanceDB could not reach: the URI, the cause and
    the failed request, and the settings to check."""
    return StorageError(
        f"cannot open storage_uri {uri!r}: {_summary(exc)}; check that the bucket "
        "exists and storage_options (endpoint, region, aws_access_key_id / "
        "aws_secret_access_key, allow_http for an http:// endpoint) are right",
        code="STORAGE_UNREACHABLE",
    )
