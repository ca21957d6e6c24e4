"""A damaged response cache never ends a run: unreadable entries are misses, an unopenable
database means no cache, failed writes are skipped (each with a warning). A shared or planted
one cannot harm its reader: pickled entries are refused unread, folders others can write are
refused, folders and files are private, and replies holding the API key are not stored."""

from __future__ import annotations

import http.server
import json
import os
import re
import sqlite3
import stat
import threading
from pathlib import Path

import diskcache
import pytest

from lang_pz.backends import Generation, GenerationRequest, Message, ResponseCache
from lang_pz.backends.cache import cache_key
from lang_pz.error import LangPZError
from lang_pz.test import ScriptedBackend

IDENTITY = {"backend": "ScriptedBackend", "model": "scripted"}
REQ = GenerationRequest(prompt="Say something long.", max_tokens=8)


def test_a_truncated_value_file_is_a_miss_and_is_dropped(tmp_path):
    cache = ResponseCache(tmp_path)
    assert cache.put(IDENTITY, REQ, Generation(text="y" * 100_000))  # large: diskcache keeps it in a file
    (value_file,) = list(tmp_path.rglob("*.val"))
    value_file.write_bytes(value_file.read_bytes()[:1000])
    with pytest.warns(RuntimeWarning, match="unreadable entry"):
        assert cache.get(IDENTITY, REQ) is None
    assert len(cache) == 0
    backend = ScriptedBackend(["again"], cache=cache)  # a run using that cache goes on
    assert backend.generate(REQ).text == "again" and backend.generate(REQ).cached


@pytest.mark.parametrize("garbage", ["{not json", '{"text": 3}', '["a list"]', '{"text": "t", "prompt_tokens": "x"}'])
def test_a_garbled_value_is_a_miss(tmp_path, garbage):
    cache = ResponseCache(tmp_path)
    cache._cache.set(cache_key(IDENTITY, REQ), garbage)
    with pytest.warns(RuntimeWarning, match="unreadable entry"):
        assert cache.get(IDENTITY, REQ) is None


def test_a_cache_database_that_cannot_be_opened_means_no_cache(tmp_path):
    ResponseCache(tmp_path).close()
    (tmp_path / "cache.db").write_bytes(b"this is not a database " * 100)
    with pytest.warns(RuntimeWarning, match=f"cannot be opened.*Delete {tmp_path}"):
        cache = ResponseCache(tmp_path)
    assert not cache.usable and cache.get(IDENTITY, REQ) is None and len(cache) == 0
    assert not cache.put(IDENTITY, REQ, Generation(text="x"))
    backend = ScriptedBackend(["a", "b"], cache=cache)
    assert [backend.generate(REQ).text for _ in range(2)] == ["a", "b"]


def test_a_failed_write_is_skipped(tmp_path, monkeypatch):
    cache = ResponseCache(tmp_path)

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache._cache, "set", full)
    with pytest.warns(RuntimeWarning, match="could not store"):
        backend = ScriptedBackend(["a"], cache=cache)
        assert backend.generate(REQ).text == "a"


def test_values_are_json_text(tmp_path):
    cache = ResponseCache(tmp_path)
    cache.put(IDENTITY, REQ, Generation(text="new", prompt_tokens=3, retries=2))
    stored = cache._cache.get(cache_key(IDENTITY, REQ))
    assert isinstance(stored, str) and json.loads(stored)["text"] == "new" and "retries" not in stored


# -- what users share cannot harm them ----------------------------------------------------


class _Plant:
    """Unpickling it creates the folder ``marker``: proof that a planted pickle ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


@pytest.mark.parametrize("padding", [0, 100_000], ids=["in-the-database", "in-a-value-file"])
def test_a_pickled_entry_is_refused_unread(tmp_path, padding):
    folder, marker = tmp_path / "llm", tmp_path / "ran"
    folder.mkdir(mode=0o700)
    with diskcache.Cache(str(folder)) as planted:  # diskcache's default Disk pickles this value
        planted.set(cache_key(IDENTITY, REQ), [_Plant(marker), "x" * padding])
    with pytest.warns(RuntimeWarning, match=r"stored as a pickle.*refused unread"):
        backend = ScriptedBackend(["fresh"], cache=folder)
        assert backend.generate(REQ).text == "fresh"
    assert not marker.exists()
    assert backend.generate(REQ).cached  # the planted entry was replaced by the real reply


def test_a_pickled_dict_is_a_miss_too(tmp_path):
    cache = ResponseCache(tmp_path)
    with diskcache.Cache(str(tmp_path)) as planted:
        planted.set(cache_key(IDENTITY, REQ), {"text": "planted"})
    with pytest.warns(RuntimeWarning, match="stored as a pickle"):
        assert cache.get(IDENTITY, REQ) is None
    assert len(cache) == 0


def test_a_value_file_outside_the_folder_is_neither_read_nor_deleted(tmp_path):
    folder, victim = tmp_path / "llm", tmp_path / "victim.txt"
    victim.write_text('{"text": "a file of the user\'s"}')
    cache = ResponseCache(folder)
    cache.put(IDENTITY, REQ, Generation(text="y" * 100_000))
    with sqlite3.connect(folder / "cache.db") as db:  # what a hand-edited database can say
        db.execute("UPDATE Cache SET filename = ?", (str(victim),))
    with pytest.warns(RuntimeWarning, match="value file .* outside"):
        assert cache.get(IDENTITY, REQ) is None
    assert victim.exists()


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702])
def test_a_folder_others_can_write_is_refused(tmp_path, monkeypatch, mode):
    folder = tmp_path / "llm"
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(LangPZError) as err:
        ResponseCache(folder)
    msg = str(err.value)
    assert str(folder) in msg and f"chmod 700 {folder}" in msg and "LANG_PZ_CACHE_DIR" in msg
    monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(tmp_path))
    with pytest.raises(LangPZError, match="writable by"):
        ScriptedBackend(["a"], cache=True)


@pytest.mark.parametrize("file_at", ["root", "root/llm"])
def test_a_file_in_the_way_names_the_folder_and_the_variable(tmp_path, monkeypatch, file_at):
    (tmp_path / file_at).parent.mkdir(exist_ok=True)
    (tmp_path / file_at).touch()
    monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(tmp_path / "root"))
    with pytest.raises(LangPZError, match=r"cannot keep the LLM response cache in .*root/llm.*set LANG_PZ_CACHE_DIR"):
        ResponseCache()


def test_a_folder_of_another_user_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "llm"
    folder.mkdir(mode=0o700)
    if os.geteuid() == 0:
        os.chown(folder, 4242, -1)
    else:
        monkeypatch.setattr(os, "geteuid", lambda: os.stat(folder).st_uid + 1)
    with pytest.raises(LangPZError, match=re.escape(str(folder)) + ".* owned by user"):
        ResponseCache(folder)


def test_folders_are_0700_and_files_0600(tmp_path, monkeypatch):
    monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(tmp_path / "root"))
    os.umask(old := os.umask(0o022))
    try:
        cache = ResponseCache()
        cache.put(IDENTITY, REQ, Generation(text="small"))
        cache.put(IDENTITY, GenerationRequest(prompt="long", max_tokens=8), Generation(text="y" * 100_000))
        assert cache.get(IDENTITY, REQ).text == "small"
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "root").stat().st_mode) == 0o700
    assert stat.S_IMODE(cache.directory.stat().st_mode) == 0o700
    files = [p for p in cache.directory.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"cache.db", "cache.db-wal", "cache.db-shm"} <= names and any(n.endswith(".val") for n in names)
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {p.name: "0o600" for p in files}


def test_a_readable_cache_of_ones_own_is_made_private(tmp_path):
    folder = tmp_path / "llm"
    os.umask(old := os.umask(0o022))
    try:
        with diskcache.Cache(str(folder)) as older:  # 0755 folder, 0644 database
            older.set("k", "v")
    finally:
        os.umask(old)
    ResponseCache(folder).close()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.glob("cache.db*"))


class _EchoServer:
    """An OpenAI-compatible endpoint that answers every request with its Authorization header."""

    def __init__(self) -> None:
        self.requests = 0
        echo = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                echo.requests += 1
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                text = f"you sent {self.headers.get('Authorization')}"
                data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_reply_holding_the_api_key_is_returned_but_not_cached(tmp_path):
    from lang_pz.backends import OpenAIBackend

    secret = "sk-test-DO-NOT-CACHE-0123456789abcdef"
    server = _EchoServer()
    try:
        backend = OpenAIBackend("m", base_url=server.url, api_key=secret, cache=tmp_path, max_attempts=1)
        chat = GenerationRequest(messages=(Message("user", "Repeat my headers."),), max_tokens=8)
        first, second = backend.generate(chat), backend.generate(chat)
        backend.close()
    finally:
        server.close()
    assert secret in first.text and secret in second.text and not second.cached
    assert server.requests == 2 and len(ResponseCache(tmp_path)) == 0
    for f in tmp_path.rglob("*"):
        assert not f.is_file() or secret.encode() not in f.read_bytes()
