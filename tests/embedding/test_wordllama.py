"""The default `wordllama` profile: semantic, offline (no network, ever), loaded once per process,
and chats moving between profiles (lazily on open, or by `reindex`) without mixing vectors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

from host import Host
from memgraph_plugin.embedding import (
    DEFAULT_PROFILE,
    WordLlamaProfile,
    available_profiles,
    resolve_profile,
)
from memgraph_plugin.embedding import wordllama as wl
from memgraph_plugin.embedding.registry import profile_name


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_paraphrases_are_closer_than_unrelated_texts() -> None:
    p = WordLlamaProfile()
    triples = [
        ("Caroline went to the LGBTQ support group yesterday",
         "Yesterday Caroline attended a support meeting for LGBTQ people",
         "The stock market fell sharply on Monday"),
        ("Melanie painted a sunrise over the lake",
         "Mel made a painting of the sun rising above a lake",
         "The server crashed because the disk was full"),
        ("the healer who saved my life", "a doctor rescued me from dying",
         "two ships traded spices in the harbor"),
    ]
    for anchor, paraphrase, unrelated in triples:
        a, b, c = p.embed([anchor, paraphrase, unrelated])
        assert _cos(a, b) > _cos(a, c) + 0.2, (anchor, _cos(a, b), _cos(a, c))
    # the hashing profile only sees shared wording: it cannot tell the healer from the ships
    vecs = p.embed(["", "   ", "a text", "我看见艾琳走进花园"])
    assert vecs.shape == (4, 256) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), [0, 0, 1, 1], atol=1e-5)


def test_it_is_the_default_and_the_model_loads_once_per_process() -> None:
    assert DEFAULT_PROFILE == "wordllama" == profile_name({})
    assert profile_name({"embedding_profile": "none"}) is None
    assert profile_name({"embedding_profile": "hashing"}) == "hashing"
    assert {"wordllama", "hashing"} <= set(available_profiles())
    a, b = resolve_profile("wordllama"), resolve_profile("wordllama")
    assert isinstance(a, WordLlamaProfile) and a.dim == 256
    a.embed(["warm"])
    model = wl.load_model()
    b.embed(["again"])
    assert wl.load_model() is model  # one model per process, shared by every profile object


_OFFLINE_CHILD = textwrap.dedent(
    """
    import json, logging, socket
    attempts = []
    def blocked(*args, **kwargs):
        attempts.append(repr(args[:2]))
        raise OSError("network blocked by the test")
    socket.socket.connect = blocked
    socket.socket.connect_ex = blocked
    socket.create_connection = blocked
    socket.getaddrinfo = blocked
    from memgraph_plugin.embedding import resolve_profile
    vecs = resolve_profile("wordllama").embed(
        ["the harbor at night", "a night at the port", "my tax return is late"]
    )
    print(json.dumps({
        "attempts": attempts,
        "near": float(vecs[0] @ vecs[1]),
        "far": float(vecs[0] @ vecs[2]),
        "root_handlers": len(logging.getLogger().handlers),
    }))
    """
)


@pytest.mark.process
def test_loads_offline_with_the_network_blocked_and_no_cache(tmp_path) -> None:
    """A fresh process whose sockets all fail, with an empty home (no ~/.cache/wordllama) and no
    offline switches set: the weights and tokenizer come from the wheel, nothing is attempted."""
    env = {"HOME": str(tmp_path), "PATH": "", "PYTHONPATH": "", "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _OFFLINE_CHILD], capture_output=True, text=True, env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["attempts"] == []
    assert report["near"] > report["far"] + 0.2  # the real model, not a stand-in
    assert report["root_handlers"] == 0  # wordllama's logging.basicConfig at import is undone
    assert not list(tmp_path.rglob("*.safetensors"))  # nothing downloaded or cached


def test_a_missing_wheel_file_is_a_clear_error(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(wl, "package_dir", lambda: tmp_path)
    monkeypatch.setattr(wl, "_model", None)
    try:
        wl.load_model()
    except wl.WordLlamaUnavailable as exc:
        assert "l2_supercat_256.safetensors" in str(exc) and "hashing" in str(exc)
    else:
        raise AssertionError("expected WordLlamaUnavailable")
    finally:
        monkeypatch.undo()
    assert wl.load_model() is not None


async def _host(data_dir, **settings) -> Host:
    host = Host(data_dir=data_dir, settings=settings, entry_points=False)
    await host.start()
    return host


async def _session(host: Host, chat_id: str):
    return await host.registry.get("memory-graph").open_session(host.get_context(chat_id))


async def _search(host: Host, query: str, k: int) -> tuple[list[str], Any]:
    """The ids a vector search of chat "c" finds for `query`, and the chat's vector index."""
    hits = await (await _session(host, "c")).vector_search(query=query, k=k)
    return [h.id for h in hits], host.registry.get("memory-graph").persistence.cached("c").index


TEXTS = (
    "Mira betrays the harbor guild to the city watch",
    "a quiet picnic in the garden with bread and wine",
    "the old healer tends the wounded soldiers",
)


async def _write_chat(data_dir, **settings) -> list[str]:
    host = await _host(data_dir, **settings)
    s = await _session(host, "c")
    ids = [(await s.create_node(type="event", fields={"summary": t})).id for t in TEXTS]
    await host.stop()
    return ids


async def test_default_host_searches_by_meaning(tmp_path) -> None:
    ids = await _write_chat(tmp_path / "d")
    host = await _host(tmp_path / "d")
    hits, index = await _search(host, "a doctor caring for injured troops", 3)
    assert hits[0] == ids[2]
    assert index.profile == "wordllama" and index.dim == 256
    await host.stop()


async def test_a_chat_stored_with_hashing_is_re_embedded_on_open_never_mixed(tmp_path) -> None:
    ids = await _write_chat(tmp_path / "d", embedding_profile="hashing")
    host = await _host(tmp_path / "d")  # the default profile now: wordllama
    hits, index = await _search(host, "a doctor caring for injured troops", 1)
    assert hits[0] == ids[2]
    assert index.profile == "wordllama" and index.dim == 256 and len(index) == 3
    storage = host.registry.get("memory-graph").persistence.storage
    state = storage.load_sync("c")
    kept = storage.load_vectors_sync("c", state, profile="hashing")
    assert kept is not None and kept.dim == 384  # the old vectors stay under their own name
    await host.stop()


async def test_reindex_moves_a_chat_between_profiles_with_progress(tmp_path, capsys) -> None:
    ids = await _write_chat(tmp_path / "d", embedding_profile="hashing")
    host = await _host(tmp_path / "d")
    commands = {c.name: c for cs in host.pm.hook.host_cli_commands(host=host) for c in cs or ()}
    reindex = commands["reindex"]
    parser = __import__("argparse").ArgumentParser()
    reindex.add_arguments(parser)
    assert await reindex.run(host, parser.parse_args(["c"])) == 0
    out = capsys.readouterr()
    assert "3 nodes embedded with 'wordllama'" in out.out and "3/3" in out.err
    storage = host.registry.get("memory-graph").persistence.storage
    state = storage.load_sync("c")
    moved = storage.load_vectors_sync("c", state, profile="wordllama")
    assert moved is not None and moved.dim == 256 and set(moved.ids) == set(ids)
    await host.stop()

    back = await _host(tmp_path / "d", embedding_profile="hashing")  # hashing still works
    hits, index = await _search(back, "Mira betrays the guild", 1)
    assert hits[0] == ids[0]
    assert index.profile == "hashing" and index.dim == 384
    await back.stop()


@pytest.mark.parametrize("per_call, tokens", [(4096, 1 << 15), (3, 8)])
def test_the_mean_is_the_packages_own(monkeypatch, per_call: int, tokens: int) -> None:
    """`mean_token_vectors` (one tokenizer call, no padding, texts of one length averaged
    together) gives what `WordLlamaInference.embed` gives, sum for sum; also across
    tokenizer calls and blocks (small `TEXTS_PER_CALL` and `CHUNK_TOKENS`)."""
    monkeypatch.setattr(wl, "TEXTS_PER_CALL", per_call)
    monkeypatch.setattr(wl, "CHUNK_TOKENS", tokens)
    texts = [
        "",
        "\u200b",
        "the harbor at night",
        "Mira met the healer at the harbor; the storm broke the mast.",
        "我看见艾琳走进花园",
        "tabs\tand\nnew lines \u2028 and emoji 😀",
        "word " * 300,
        "the harbor at night",
        *[f"note {i}: " + "x" * i for i in range(0, 40, 3)],
    ]
    model = wl.load_model()
    mine = wl.mean_token_vectors(model, texts)
    theirs = np.asarray(model.embed(texts, norm=False, batch_size=4), dtype=np.float32)
    assert mine.shape == theirs.shape == (len(texts), 256)
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-6)
    assert not mine[0].any() and mine[2].any()
    np.testing.assert_array_equal(mine[2], mine[7])
