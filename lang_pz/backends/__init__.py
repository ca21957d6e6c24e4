"""LLM backends: one request/reply interface, a response cache, and two implementations.

- :class:`LlamaCppBackend` — the embedded default (SmolLM2-135M in process, no network);
- :class:`OpenAIBackend` — any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp).

Stand-ins for tests (a scripted backend, a fault-injecting fake endpoint) are in
:mod:`lang_pz.test`.

``LlamaCppBackend`` and ``OpenAIBackend`` are imported on first use, so ``import
lang_pz.backends`` does not load llama.cpp or the ``openai`` client. Build one from a string
with :func:`make_backend` (options as keyword arguments or from ``$LANG_PZ_BACKEND_OPTIONS``).

Also here: :mod:`~lang_pz.backends.openai_endpoint` (``OpenAIBackend``'s start-up check of the
endpoint), :mod:`~lang_pz.backends.openai_tokens` (counting and fitting prompts),
:mod:`~lang_pz.backends.openai_requests` / :mod:`~lang_pz.backends.openai_replies` /
:mod:`~lang_pz.backends.openai_attempts` (what ``OpenAIBackend`` sends, what replies and
failures mean, and one request's attempts),
:mod:`~lang_pz.backends.retry` (the retry waits of remote backends),
:mod:`~lang_pz.backends.meter` (per-role accounting), :mod:`~lang_pz.backends.limit` (one bound on
requests in flight).
"""

from __future__ import annotations

import difflib
import inspect
import json
import os
from typing import TYPE_CHECKING, Any

from lang_pz._moved import moved_getattr
from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, Message
from lang_pz.backends.cache import ResponseCache

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
    "ResponseCache",
    "make_backend",
]

_LAZY = {
    "LlamaCppBackend": "lang_pz.backends.llama_cpp",
    "OpenAIBackend": "lang_pz.backends.openai",
}

BACKEND_SPECS = ("embedded", "openai:<model>")
#: Environment variable holding default constructor options per backend kind, as JSON, e.g.
#: ``{"openai": {"timeout_s": 20, "max_attempts": 5}, "embedded": {"n_threads": 1}}``.
OPTIONS_ENV = "LANG_PZ_BACKEND_OPTIONS"


_ALIASES = {"max_retries": "max_attempts", "retries": "max_attempts", "timeout": "timeout_s", "threads": "n_threads"}


def _env_options(kind: str) -> dict[str, Any]:
    raw = os.environ.get(OPTIONS_ENV, "").strip()
    if not raw:
        return {}
    try:
        options = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f'${OPTIONS_ENV} is not JSON ({exc}); e.g. \'{{"openai": {{"timeout_s": 20}}}}\'') from None
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise ValueError(
            f"${OPTIONS_ENV} must be a JSON object of backend kind -> options, e.g. "
            f'{{"openai": {{"timeout_s": 20}}, "embedded": {{"n_threads": 1}}}}; got {raw[:200]!r}'
        )
    unknown = sorted(set(options) - {"openai", "embedded"})
    if unknown:
        raise ValueError(f"${OPTIONS_ENV} names unknown backend kind(s) {unknown}; use 'openai' and 'embedded'")
    return dict(options.get(kind, {}))


def _option_names(cls: type[Any], fixed: tuple[str, ...]) -> list[str]:
    return [
        n
        for n, p in inspect.signature(cls.__init__).parameters.items()
        if (p.kind is p.KEYWORD_ONLY or (p.kind is p.POSITIONAL_OR_KEYWORD and n != "self")) and n not in fixed
    ]


def option_names(spec: str) -> list[str]:
    """The constructor options ``make_backend(spec, **options)`` takes (e.g. ``timeout_s`` for
    ``"openai:<model>"``, ``n_threads`` for ``"embedded"``).

    Raises:
        ValueError: an unknown or malformed spec (as :func:`check_backend_spec`).
    """
    check_backend_spec(spec)
    if str(spec).strip() == "embedded":
        from lang_pz.backends.llama_cpp import LlamaCppBackend

        return _option_names(LlamaCppBackend, ())
    from lang_pz.backends.openai import OpenAIBackend

    return _option_names(OpenAIBackend, ("model",))


def _check_options(cls: type[Any], options: dict[str, Any], fixed: tuple[str, ...], source: str = "") -> None:
    valid = _option_names(cls, fixed)
    for name in options:
        if name not in valid:
            close = [_ALIASES[name]] if name in _ALIASES else difflib.get_close_matches(name, valid, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"{source}{cls.__name__} has no option {name!r}{hint} (options: {', '.join(valid)})")


def check_backend_spec(spec: str) -> None:
    """Check the form of a backend spec (``"embedded"`` or ``"openai:<model>"``) without building it.

    Raises:
        ValueError: as :func:`make_backend` for an unknown or malformed spec.
    """
    name, sep, rest = str(spec).strip().partition(":")
    if (name == "embedded" and not sep) or (name == "openai" and sep and rest.strip()):
        return
    hint = ""
    if name == "openai":
        hint = " (the model is missing: e.g. 'openai:gpt-4o-mini')"
    elif name.strip().lower() in ("embedded", "openai"):
        hint = f" (did you mean {name.strip().lower() + (':' + rest if sep else '')!r}?)"
    else:
        close = difflib.get_close_matches(name.strip().lower(), ["embedded", "openai"], n=1, cutoff=0.7)
        hint = f" (did you mean {close[0] + (':' + rest if sep else '')!r}?)" if close else ""
    raise ValueError(f"unknown backend spec {spec!r}{hint}; valid forms: " + ", ".join(repr(s) for s in BACKEND_SPECS))


def make_backend(spec: str, **kwargs: Any) -> LLMBackend:
    """Build a backend from a spec string.

    Args:
        spec: ``"embedded"`` -> :class:`LlamaCppBackend`; ``"openai:<model>"`` ->
            :class:`OpenAIBackend` for that model (everything after the first colon, so
            ``"openai:llama3.2:1b"`` is the model ``llama3.2:1b``).
        **kwargs: options of the backend's constructor, e.g. for ``"embedded"``
            ``n_threads=1, n_ctx=2048``; for ``"openai:..."`` ``base_url=, timeout_s=,
            max_attempts=, backoff_s=`` (see each class for all options and defaults).
            Defaults for them can also come from ``$LANG_PZ_BACKEND_OPTIONS``, a JSON object
            of backend kind -> options (``{"openai": {"timeout_s": 20}, "embedded":
            {"n_threads": 1}}``); ``kwargs`` win over it.

    Raises:
        ValueError: an unknown or malformed spec (the message lists the valid forms), an
            unknown option (with a "did you mean"), an option value out of range, or a
            malformed ``$LANG_PZ_BACKEND_OPTIONS``.
        DependencyNotInstalled: ``"embedded"`` without ``lang_pz[embedded]`` installed.
    """
    name, sep, rest = str(spec).strip().partition(":")
    if name == "embedded" and not sep:
        from lang_pz.backends.llama_cpp import LlamaCppBackend

        from_env = _env_options("embedded")
        _check_options(LlamaCppBackend, from_env, (), source=f"${OPTIONS_ENV} ('embedded'): ")
        _check_options(LlamaCppBackend, kwargs, ())
        options = {**from_env, **kwargs}
        return LlamaCppBackend(**options)
    if name == "openai" and sep and rest.strip():
        rest = rest.strip()  # 'openai: gpt-4o' is the model 'gpt-4o', not ' gpt-4o' (an unknown model to the server)
        from lang_pz.backends.openai import OpenAIBackend

        from_env = _env_options("openai")
        _check_options(OpenAIBackend, from_env, ("model",), source=f"${OPTIONS_ENV} ('openai'): ")
        _check_options(OpenAIBackend, kwargs, ("model",))
        options = {**from_env, **kwargs}
        return OpenAIBackend(model=rest, **options)
    check_backend_spec(spec)
    raise AssertionError(f"backend spec {spec!r} passed check_backend_spec but was not built")  # unreachable


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "PromptFormat": "lang_pz.backends.base.PromptFormat",
    "ScriptedBackend": "lang_pz.test.ScriptedBackend",
    "TokenUsage": "lang_pz.backends.base.TokenUsage",
    "default_cache_dir": "lang_pz.backends.cache.default_cache_dir",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED, lazy=_LAZY)
