"""LLM backends: one request/reply interface, a response cache, and three implementations.

- :class:`LlamaCppBackend` — the embedded default (SmolLM2-135M in process, no network);
- :class:`OpenAIBackend` — any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp);
- :class:`ScriptedBackend` — scripted replies, for unit tests only.

``LlamaCppBackend`` and ``OpenAIBackend`` are imported on first use, so ``import
lang_pz.backends`` does not load llama.cpp or the ``openai`` client. Build one from a string
with :func:`make_backend`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lang_pz.backends.base import (
    Generation,
    GenerationRequest,
    LLMBackend,
    Message,
    PromptFormat,
    TokenUsage,
)
from lang_pz.backends.cache import ResponseCache, default_cache_dir
from lang_pz.backends.scripted import ScriptedBackend

if TYPE_CHECKING:
    from lang_pz.backends.llama_cpp import LlamaCppBackend
    from lang_pz.backends.openai import OpenAIBackend

__all__ = [
    "Generation",
    "GenerationRequest",
    "LLMBackend",
    "LlamaCppBackend",
    "Message",
    "OpenAIBackend",
    "PromptFormat",
    "ResponseCache",
    "ScriptedBackend",
    "TokenUsage",
    "default_cache_dir",
    "make_backend",
]

_LAZY = {
    "LlamaCppBackend": "lang_pz.backends.llama_cpp",
    "OpenAIBackend": "lang_pz.backends.openai",
}

BACKEND_SPECS = ("embedded", "openai:<model>")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_backend(spec: str, **kwargs: Any) -> LLMBackend:
    """Build a backend from a spec string.

    Args:
        spec: ``"embedded"`` -> :class:`LlamaCppBackend`; ``"openai:<model>"`` ->
            :class:`OpenAIBackend` for that model (everything after the first colon, so
            ``"openai:llama3.2:1b"`` is the model ``llama3.2:1b``).
        **kwargs: passed to the backend's constructor (e.g. ``base_url=``, ``cache=``).

    Raises:
        ValueError: an unknown or malformed spec (the message lists the valid forms).
        DependencyNotInstalled: ``"embedded"`` without ``lang_pz[embedded]`` installed.
    """
    name, sep, rest = str(spec).strip().partition(":")
    if name == "embedded" and not sep:
        from lang_pz.backends.llama_cpp import LlamaCppBackend

        return LlamaCppBackend(**kwargs)
    if name == "openai" and sep and rest:
        from lang_pz.backends.openai import OpenAIBackend

        return OpenAIBackend(model=rest, **kwargs)
    hint = ""
    if name == "openai":
        hint = " (the model is missing: e.g. 'openai:gpt-4o-mini')"
    raise ValueError(
        f"unknown backend spec {spec!r}{hint}; valid forms: "
        + ", ".join(repr(s) for s in BACKEND_SPECS)
    )
