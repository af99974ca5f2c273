"""A data dir that fills up or turns read-only under a real ``memgraph-host proxy`` process: the
JSON API answers 507 JSON with the ``STORAGE_*`` code, and after a restart the chat holds exactly
the messages the client was told were stored (a small tmpfs mounted by the test: root only)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tmpfs import fill_disk, small_tmpfs

from .proxy_process import ProxyProcess
from .upstream import Upstream

CHAT = "lighthouse log"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 48 MB tmpfs of its own, unmounted at the end."""
    with small_tmpfs(tmp_path / "disk", "48m") as mount:
        yield mount


def _add(proxy: ProxyProcess, text: str) -> Any:
    with proxy.api() as api:
        return api.post(f"/api/chats/{CHAT}/messages", json={"role": "user", "text": text})


def _history(proxy: ProxyProcess) -> list[str]:
    with proxy.api() as api:
        answer = api.get(f"/api/chats/{CHAT}/history", params={"limit": 1000})
    assert answer.status_code == 200, answer.text
    return [m["text"] for m in answer.json()["messages"]]


def _told_stored(answer: Any, text: str) -> list[str]:
    """The messages an add's answer says were stored; a refusal must be 507 JSON, STORAGE_*."""
    if answer.status_code == 200:
        return [text]
    assert answer.status_code == 507, answer.text
    body = answer.json()
    assert body["code"] in ("STORAGE_FULL", "STORAGE_READ_ONLY"), body
    assert body["error"] and "Traceback" not in body["error"]
    return [m["text"] for m in body.get("stored", [])]


def test_a_full_disk_answers_507_and_keeps_only_what_it_said(
    small_disk: Path, upstream: Upstream
) -> None:
    data = small_disk / "data"
    proxy = ProxyProcess(data, upstream.url)
    told: list[str] = []
    filler = None
    try:
        for n in range(3):
            text = f"Night {n}: the lamp burned until dawn."
            assert _add(proxy, text).status_code == 200
            told.append(text)
        filler = fill_disk(small_disk)
        codes = []
        for n in range(4):  # the chat file's last page may still take a line: its commit fails
            text = f"Storm night {n}: the lens cracked at the {n}th hour."
            answer = _add(proxy, text)
            codes.append(answer.status_code)
            told += _told_stored(answer, text)
        assert 507 in codes, codes
        with proxy.api() as api:  # a forget whose rollback cannot be written keeps the chat
            forget = api.post(f"/api/chats/{CHAT}/forget", json={"from": 1})
        assert forget.status_code in (200, 507), forget.text
        if forget.status_code == 200:
            told = told[:1]
        else:
            assert forget.json()["code"] == "STORAGE_FULL"
        assert _history(proxy) == told
    finally:
        proxy.stop()
        if filler is not None:
            filler.unlink()
    again = ProxyProcess(data, upstream.url)
    try:
        assert _history(again) == told
        assert _add(again, "Calm night: the new lens arrived.").status_code == 200
    finally:
        again.stop()


def test_a_read_only_data_dir_answers_507_and_loses_nothing(
    small_disk: Path, upstream: Upstream
) -> None:
    data = small_disk / "data"
    told = [f"Night {n}: the keeper wrote the weather down." for n in range(4)]
    writer = ProxyProcess(data, upstream.url)
    try:
        for text in told:
            assert _add(writer, text).status_code == 200
    finally:
        writer.stop()
    view = small_disk.parent / "read-only-view"  # the same data dir, mounted read-only
    view.mkdir()
    subprocess.run(["mount", "--bind", str(data), str(view)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True)
        proxy = ProxyProcess(view, upstream.url)
        try:
            assert _history(proxy) == told
            answer = _add(proxy, "A note the disk cannot take.")
            assert _told_stored(answer, "A note the disk cannot take.") == []
            assert answer.json()["code"] == "STORAGE_READ_ONLY"
            with proxy.api() as api:  # a regenerate's cut that cannot be written cuts nothing
                forget = api.post(f"/api/chats/{CHAT}/forget", json={"from": 2})
            assert forget.status_code == 507, forget.text
            assert forget.json()["code"] == "STORAGE_READ_ONLY"
            assert _history(proxy) == told
        finally:
            proxy.stop()
    finally:
        subprocess.run(["umount", "-l", str(view)], check=False)
    again = ProxyProcess(data, upstream.url)
    try:
        assert _history(again) == told
    finally:
        again.stop()
