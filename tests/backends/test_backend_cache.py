"""A damaged response cache never ends a run: unreadable entries are misses, an unopenable
database means no cache, failed writes are skipped (each with a warning)."""

from __future__ import annotations

import warnings

import pytest

from lang_pz.backends import Generation, GenerationRequest, ResponseCache, ScriptedBackend
from lang_pz.backends.cache import cache_key

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


def test_values_are_json_text_and_old_pickled_dicts_still_read(tmp_path):
    cache = ResponseCache(tmp_path)
    cache.put(IDENTITY, REQ, Generation(text="new", prompt_tokens=3, retries=2))
    key = cache_key(IDENTITY, REQ)
    assert isinstance(cache._cache.get(key), str) and "retries" not in cache._cache.get(key)
    cache._cache.set(key, {"text": "old", "prompt_tokens": 1, "completion_tokens": 1, "model": "m"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get(IDENTITY, REQ).text == "old"
