"""``memgraph-host sillytavern install USER_DIR``: the packaged extension lands where SillyTavern
looks for third-party extensions, and the command says which settings make it work."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.process]

SCRIPT = Path(sys.executable).with_name("memgraph-host")
PACKAGED = Path(__file__).resolve().parents[2] / "memgraph_plugin" / "sillytavern" / "extension"


def _install(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "sillytavern", "install", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_install_copies_the_extension_and_prints_the_settings(tmp_path: Path) -> None:
    user = tmp_path / "data" / "default-user"
    (user / "chats").mkdir(parents=True)
    done = _install(str(user), "--origin", "http://127.0.0.1:8123")
    assert done.returncode == 0, done.stderr
    target = user / "extensions" / "memgraph-memory"
    manifest = json.loads((target / "manifest.json").read_text("utf-8"))
    assert manifest["js"] == "index.js" and manifest["generate_interceptor"]
    for name in ("index.js", "style.css", "chat_identity.js", "direct_mode.js"):
        assert (target / name).read_bytes() == (PACKAGED / name).read_bytes()
    assert str(target) in done.stdout
    assert "http_cors_origins=http://127.0.0.1:8123" in done.stdout  # SillyTavern's origin
    assert "serve_token" in done.stdout and "/v1" in done.stdout
    # again: an older copy is replaced whole (no stale file stays)
    (target / "stale.js").write_text("old", "utf-8")
    again = _install(str(user))
    assert again.returncode == 0 and "replaced" in again.stdout
    assert not (target / "stale.js").exists() and (target / "index.js").exists()
    assert "http_cors_origins=http://127.0.0.1:8000" in again.stdout  # the default origin


def test_install_refuses_a_folder_that_is_not_a_sillytavern_user_folder(tmp_path: Path) -> None:
    missing = _install(str(tmp_path / "nope"))
    assert missing.returncode == 1 and "is not a folder" in missing.stderr
    assert "default-user" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = _install(str(tmp_path / "empty"))
    assert empty.returncode == 1 and "does not look like a SillyTavern user folder" in empty.stderr
    assert not (tmp_path / "empty" / "extensions").exists()
