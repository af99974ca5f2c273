"""The explorer page on a server with namespace keys, in a real headless Chromium: opened with
``#key=KEY`` it sends the key on every call (the live commit stream included), lists and draws
the key's namespace's chats only, and keeps the key out of its address."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import serve_process, write_nodes
from .test_explorer_browser import chromium

pytestmark = [pytest.mark.browser, pytest.mark.process, pytest.mark.slow]

ALICE = "alice-page-key-0123456789"


def test_the_page_with_a_key_shows_its_namespace_and_redraws_live(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_nodes(data, "ns/alice/harbor", "Mira:character_sheet", "Harbor storm:event:Mira")
    write_nodes(data, "ns/bob/vault", "Zanzibar:character_sheet")
    keys = tmp_path / "keys.toml"
    keys.write_text(f'[[key]]\nkey = "{ALICE}"\nnamespace = "alice"\n', encoding="utf-8")
    with serve_process(data, "--set", f"namespace_keys_file={keys}") as url, chromium() as browser:
        tab = browser.new_page(viewport={"width": 1280, "height": 800})
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.goto(url + "#key=" + ALICE)
        expect(tab.locator("body")).to_have_attribute("data-ready", "1", timeout=30_000)
        expect(tab.locator("#chat-select")).to_have_value("harbor")
        expect(tab.locator("#chat-select option")).to_have_count(1)  # not Bob's vault
        expect(tab.locator("#status")).to_contain_text("2 nodes")
        assert ALICE not in tab.url
        write_nodes(data, "ns/alice/harbor", "Old lighthouse:location_state")
        expect(tab.locator("#status")).to_contain_text("3 nodes", timeout=30_000)
        assert errors == []
        bare = browser.new_page()
        bare.goto(url)  # another tab has no key: the server asks for one
        expect(bare.locator("#graph-error")).to_contain_text("needs a key", timeout=30_000)
