"""The keys file (``namespace_keys_file``): TOML or JSON entries, each key found by its SHA-256;
a bad entry is an error naming the file, its line (TOML) or entry, and the field, never the key.
And `ChatScope`: a namespace's chat ids are stored under its prefix, the default namespace's as
they are."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from host.chats.chat_ids import MAX_CHAT_ID_CHARS, ChatIdError
from host.chats.namespaces import ChatScope, NamespaceError, namespace_of
from memgraph_plugin.proxy.guard.access_keys import AccessKeys, AccessKeysError, read_keys_file

KEY = "a-key-of-twenty-chars"
OTHER = "another-key-0123456789"


def _sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def test_toml_and_json_files_give_the_same_keys(tmp_path: Path) -> None:
    toml = tmp_path / "keys.toml"
    toml.write_text(
        f'[[key]]\nsha256 = "{_sha(KEY).upper()}"\nnamespace = "alice"\nnote = "phone"\n\n'
        f'[[key]]\nkey = "{OTHER}"\nadmin = true\n',
        encoding="utf-8",
    )
    listed = tmp_path / "keys.json"
    listed.write_text(json.dumps({"keys": [
        {"sha256": _sha(KEY), "namespace": "alice"}, {"key": OTHER, "admin": True}]}))  # fmt: skip
    assert read_keys_file(toml) == read_keys_file(listed)
    keys = AccessKeys.of("admin-key-0123456789", toml)
    assert repr(keys) == "AccessKeys(3 keys)" and KEY not in repr(keys.entries)
    alice = keys.resolve({"x-memgraph-key": KEY})
    assert alice is not None and alice.scope == ChatScope("alice") and not alice.admin
    assert alice.by_key and not alice.consumed_auth and not alice.read_only
    bearer = keys.resolve({"authorization": f"Bearer {KEY}"})
    assert bearer is not None and bearer.scope == ChatScope("alice") and bearer.consumed_auth
    admin = keys.resolve({"authorization": "Bearer admin-key-0123456789"})
    assert admin is not None and admin.admin and admin.scope == ChatScope.everything()
    assert keys.resolve({}) is None
    assert keys.resolve({"x-memgraph-key": KEY + "x", "authorization": "Bearer nope"}) is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[key]]\nkey = "K"\nnamespace = "a"\n\n[[key]]\nnamespace = "b"\n',
         ":5: key entry 2: give exactly one of 'sha256' (better) and 'key'"),
        ('[[key]]\nkey = "K"\nnamespace = "a"\nreadonly = true\n',
         ":1: key entry 1: unknown field 'readonly'"),
        ('[[key]]\nkey = "short"\nnamespace = "a"\n',
         ":1: key entry 1: key: a string of at least 16 characters"),
        ('[[key]]\nsha256 = "abc"\nnamespace = "a"\n', ":1: key entry 1: sha256: 64 hex digits"),
        ('[[key]]\nkey = "K"\nnamespace = "a b"\n', ":1: key entry 1: namespace: namespace 'a b'"),
        ('[[key]]\nkey = "K"\nnamespace = "a"\nadmin = true\n',
         ":1: key entry 1: give a 'namespace', or 'admin = true' (not both)"),
        ('[[key]]\nkey = "K"\n', ":1: key entry 1: give a 'namespace', or 'admin = true'"),
        ('[[key]]\nkey = "K"\nnamespace = "a"\nread_only = "yes"\n',
         ":1: key entry 1: read_only: true or false"),
        ('[[key]]\nkey = "K"\nnamespace = "a"\n[[key]]\nkey = "K"\nnamespace = "b"\n',
         ":4: key entry 2: the same key as key entry 1"),
        ('[[key]]\nkey = "K"\nnamespace = \n', "is not TOML: Invalid value (at line 3, column 13)"),
        ('[keys]\nkey = "K"\n', ": unknown table or field 'keys'"),
    ],
)
def test_a_bad_toml_entry_names_its_line_and_field(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(text.replace('"K"', f'"{KEY}"'), encoding="utf-8")
    with pytest.raises(AccessKeysError) as caught:
        read_keys_file(path)
    assert said in str(caught.value) and str(path) in str(caught.value)
    assert KEY not in str(caught.value)


def test_a_bad_json_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text('{"keys": [{"key": 1, "namespace": "a"}]}')
    with pytest.raises(AccessKeysError, match="key entry 1: key: a string"):
        read_keys_file(path)
    path.write_text('{"keys": {}}')
    with pytest.raises(AccessKeysError, match=r"expected a list of keys or \{\"keys\""):
        read_keys_file(path)
    path.write_text("{")
    with pytest.raises(AccessKeysError, match="is not JSON"):
        read_keys_file(path)
    with pytest.raises(AccessKeysError, match="cannot read it"):
        read_keys_file(tmp_path / "missing.toml")


def test_a_scope_maps_ids_to_its_namespace_and_back() -> None:
    alice, default, every = ChatScope.of("alice"), ChatScope.of("default"), ChatScope.everything()
    assert alice.internal("c1") == "ns/alice/c1" and alice.external("ns/alice/c1") == "c1"
    assert alice.internal("../bob/c1") == "ns/alice/../bob/c1"  # still one of Alice's
    assert alice.owns("ns/alice/c1") and not alice.owns("ns/bob/c1") and not alice.owns("c1")
    assert alice.owns("ns/alice/../bob/c1") and namespace_of("ns/alice/../bob/c1") == "alice"
    assert default.internal("c1") == "c1" and default.owns("c1")
    assert not default.owns("ns/alice/c1")
    with pytest.raises(ChatIdError, match="kept for the namespaces"):
        default.internal("ns/alice/c1")
    assert every.internal("ns/alice/c1") == "ns/alice/c1" and every.owns("ns/bob/c1")
    assert alice.visible(["c1", "ns/alice/a", "ns/bob/a", "ns/alice/b"]) == [
        "ns/alice/a", "ns/alice/b"]  # fmt: skip
    longest = "x" * (MAX_CHAT_ID_CHARS - len("ns/alice/"))
    assert len(alice.internal(longest)) == MAX_CHAT_ID_CHARS
    with pytest.raises(ChatIdError, match="the limit in this namespace is"):
        alice.internal(longest + "x")
    with pytest.raises(ChatIdError):
        alice.internal("")
    for bad in ("", "a b", "-a", "a/b", "x" * 65):
        with pytest.raises(NamespaceError):
            ChatScope.of(bad)


def test_a_changed_file_is_read_again_and_one_without_keys_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(f'[[key]]\nkey = "{KEY}"\nnamespace = "alice"\n', encoding="utf-8")
    keys = AccessKeys.of(None, path)
    later = iter(range(10**6, 10**7, 10))  # each look past the recheck interval
    path.write_text(f'[[key]]\nkey = "{OTHER}"\nnamespace = "bob"\n', encoding="utf-8")
    keys.refresh(now=next(later))
    assert keys.resolve({"x-memgraph-key": KEY}) is None
    found = keys.resolve({"x-memgraph-key": OTHER})
    assert found is not None and found.scope == ChatScope("bob")
    path.write_text("# every key gone\n", encoding="utf-8")  # would let every request in
    keys.refresh(now=next(later))
    assert "no key left" in caplog.text and keys.resolve({"x-memgraph-key": OTHER}) is not None
    path.unlink()  # unreadable: the keys stay too
    keys.refresh(now=next(later))
    assert "cannot read it" in caplog.text and keys.resolve({"x-memgraph-key": OTHER}) is not None
