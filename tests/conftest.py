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
