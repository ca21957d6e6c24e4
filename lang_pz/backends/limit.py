"""A bound on LLM requests in flight, shared by every role of a run.

Concurrent steps (:mod:`lang_pz.executor`) may issue many requests at once; one
:class:`RequestLimit` per run caps how many are in flight together across the actor, critic and
optimiser backends, so a run can saturate an endpoint without exceeding what it serves (or a
rate limit).
"""

from __future__ import annotations

import threading
from typing import Any

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend


class RequestLimit(LLMBackend):
    """Forwards to ``inner``; at most ``semaphore``'s count of requests wait on the model at once.

    Cache hits of ``inner`` are served without waiting only if ``inner`` is itself a caching
    backend (its cache sits inside the limit); use one ``threading.BoundedSemaphore`` for every
    backend of a run.

    Args:
        inner: the backend doing the work.
        semaphore: the shared bound.
    """

    def __init__(self, inner: LLMBackend, semaphore: threading.Semaphore) -> None:
        super().__init__()
        self.inner = inner
        self.semaphore = semaphore
        self.model = inner.model
        self.prompt_format = inner.prompt_format
        self.max_concurrency = inner.max_concurrency

    def generate(self, request: GenerationRequest) -> Generation:
        """Wait for a free slot, then forward to ``inner``."""
        with self.semaphore:
            gen = self.inner.generate(request)
        self.usage.add(gen)
        return gen

    def check(self) -> Any:
        """``inner``'s start-up check."""
        return self.inner.check()

    @property
    def context_window(self) -> int | None:
        """``inner``'s context window (policies fit their prompts to it)."""
        return self.inner.context_window

    def count_tokens(self, request: GenerationRequest) -> int | None:
        """``inner``'s token count."""
        return self.inner.count_tokens(request)

    def _generate(self, request: GenerationRequest) -> Generation:  # pragma: no cover - generate overrides
        return self.inner.generate(request)

    def close(self) -> None:
        """Close ``inner``."""
        self.inner.close()
