"""Shared fixtures (shared values and skip markers: ``tests/support.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def embedded(tmp_path_factory):
    """The REAL embedded model (SmolLM2-135M via llama.cpp), loaded once, with a fresh cache."""
    from lang_pz.backends import LlamaCppBackend

    llm = LlamaCppBackend(cache=tmp_path_factory.mktemp("llm-cache"))
    yield llm
    llm.close()


@pytest.fixture(scope="session", autouse=True)
def private_response_cache(tmp_path_factory):
    """Every test (and every process it starts) caches LLM replies in this session's own folder,
    never in the user's ``~/.cache/lang_pz/llm``: tests kill processes (kill -9, Ray workers) that
    may hold the cache open, and a user's other runs must not share a database with them."""
    import os

    old = os.environ.get("LANG_PZ_CACHE_DIR")
    os.environ["LANG_PZ_CACHE_DIR"] = str(tmp_path_factory.mktemp("lang_pz-cache"))
    yield
    if old is None:
        os.environ.pop("LANG_PZ_CACHE_DIR", None)
    else:
        os.environ["LANG_PZ_CACHE_DIR"] = old
