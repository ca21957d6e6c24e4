"""A scripted LLM stand-in, FOR UNIT TESTS ONLY.

:class:`ScriptedBackend` returns replies you wrote in advance (a list, in order) or computes
them (a callable), and records every request it was sent, so tests of policies, critics and
optimisers can run instantly and deterministically without a model. It never produces
anything a real model would: do not use it to measure anything.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from lang_pz.backends.base import (
    Generation,
    GenerationRequest,
    LLMBackend,
    PromptFormat,
)
from lang_pz.backends.cache import ResponseCache, resolve_cache
from lang_pz.error import BackendError, PromptTooLongError


def describe_request(request: GenerationRequest, limit: int = 120) -> str:
    """A short, one-line description of ``request`` for error messages."""
    if request.prompt is not None:
        text = f"prompt={request.prompt!r}"
    else:
        last = request.messages[-1] if request.messages else None
        text = f"last message={last.role}:{last.content!r}" if last else "messages=()"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    extra = f", choices={list(request.choices)!r}" if request.choices is not None else ""
    extra += ", json_schema=..." if request.json_schema is not None else ""
    return text + extra


class ScriptedBackend(LLMBackend):
    """Replays scripted replies — a stand-in FOR UNIT TESTS ONLY, not a model.

    Args:
        replies: either a sequence of reply strings, returned in order (one per request;
            running out raises :class:`BackendError` naming the request), or a callable
            ``request -> str`` called for every request.
        prompt_format: the prompt form policies should build for it.
        model: the model name reported in :class:`Generation` and the cache identity.
        cache: no cache by default (``None``); accepts what the real backends accept.
        n_ctx: a context window to simulate, in whitespace-separated words: a request whose
            prompt and ``max_tokens`` exceed it raises :class:`PromptTooLongError` (``None``:
            no limit).

    Attributes:
        requests: every request received, in order (cache hits excluded).

    Token counts (in the returned :class:`Generation` and :meth:`count_tokens`) are
    whitespace-separated word counts.
    A reply to a ``choices`` request must be one of the choices, else :class:`BackendError`.
    """

    def __init__(
        self,
        replies: Iterable[str] | Callable[[GenerationRequest], str],
        *,
        prompt_format: PromptFormat = "completion",
        model: str = "scripted",
        cache: ResponseCache | str | Path | bool | None = None,
        n_ctx: int | None = None,
    ) -> None:
        super().__init__()
        self.n_ctx = n_ctx
        if callable(replies):
            self._fn: Callable[[GenerationRequest], str] | None = replies
            self._replies: list[str] = []
        else:
            if isinstance(replies, str):
                raise TypeError("replies= must be a list of strings or a callable, not one string")
            self._fn = None
            self._replies = list(replies)
            bad = [r for r in self._replies if not isinstance(r, str)]
            if bad:
                raise TypeError(f"scripted replies must be strings, got {bad[0]!r}")
        self.model = model
        self.prompt_format = prompt_format
        self.requests: list[GenerationRequest] = []
        self._next = 0
        self._lock = threading.Lock()
        self.cache = resolve_cache(cache)

    @property
    def context_window(self) -> int | None:
        """``n_ctx`` (in words), or ``None``."""
        return self.n_ctx

    def count_tokens(self, request: GenerationRequest) -> int:
        """Whitespace-separated words of the prompt (all messages' contents for chat)."""
        return len((request.prompt or " ".join(m.content for m in request.messages or ())).split())

    @property
    def remaining(self) -> int:
        """Scripted replies not yet used (0 for a callable script)."""
        return len(self._replies) - self._next

    def _generate(self, request: GenerationRequest) -> Generation:
        """Return the next scripted reply.

        Raises:
            PromptTooLongError: the prompt and ``max_tokens`` exceed ``n_ctx``.
            BackendError: the script is exhausted, the callable returned a non-string, or the
                reply is not one of the request's ``choices``.
        """
        with self._lock:
            self.requests.append(request)
            if self.n_ctx is not None and self.count_tokens(request) + request.max_tokens > self.n_ctx:
                n = self.count_tokens(request)
                raise PromptTooLongError(
                    f"ScriptedBackend: {n} prompt words + max_tokens={request.max_tokens} exceed n_ctx={self.n_ctx}",
                    prompt_tokens=n,
                    context_window=self.n_ctx,
                    max_tokens=request.max_tokens,
                )
            if self._fn is None:
                if self._next >= len(self._replies):
                    raise BackendError(
                        f"ScriptedBackend ran out of replies ({len(self._replies)} scripted) "
                        f"at request #{len(self.requests)}: {describe_request(request)}"
                    )
                text = self._replies[self._next]
                self._next += 1
        if self._fn is not None:
            text = self._fn(request)
            if not isinstance(text, str):
                raise BackendError(
                    f"ScriptedBackend's callable returned {text!r}, not a str, for {describe_request(request)}"
                )
        if request.choices is not None and text not in request.choices:
            raise BackendError(
                f"scripted reply {text!r} is not one of {list(request.choices)!r} for {describe_request(request)}"
            )
        return Generation(
            text=text,
            prompt_tokens=self.count_tokens(request),
            completion_tokens=len(text.split()),
            latency_s=0.0,
            cached=False,
            model=self.model,
        )

    def __repr__(self) -> str:
        kind = "callable" if self._fn is not None else f"{self.remaining} replies left"
        return f"ScriptedBackend({kind}, received={len(self.requests)})"
