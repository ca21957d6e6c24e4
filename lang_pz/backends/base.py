"""The interface every LLM backend implements.

A backend turns one :class:`GenerationRequest` into one :class:`Generation`. Requests are
plain, frozen data so that they can be hashed into a response-cache key; one set of
generation-parameter names is used across backends (as in TorchRL's ``modules/llm``).
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

PromptFormat = Literal["chat", "completion"]


@dataclass(frozen=True)
class Message:
    """One chat message. ``role`` is ``"system"``, ``"user"`` or ``"assistant"``."""

    role: str
    content: str


@dataclass(frozen=True)
class GenerationRequest:
    """What to generate. Exactly one of ``messages`` (chat) or ``prompt`` (raw completion).

    Attributes:
        messages: chat messages, for chat-format requests.
        prompt: raw prompt text, for completion-format requests.
        max_tokens: upper bound on generated tokens (an int > 0).
        temperature: sampling temperature (finite, >= 0; 0 = greedy).
        seed: sampling seed; ``None`` with ``temperature > 0`` makes the reply uncacheable.
        json_schema: if given, the reply must be a JSON document matching this JSON Schema
            (each backend sends it in the form its server accepts).
        choices: if given, the reply must be exactly one of these strings (a grammar on
            llama.cpp; a JSON-schema enum on OpenAI-compatible servers).
        grammar: if given, the reply must be a sentence of this GBNF grammar (root rule ``root``;
            built by :mod:`lang_pz.text.replies`): llama.cpp decodes under it, other backends
            fall back to ``pattern`` or free text.
        pattern: the same reply language as a regular expression (Python / ECMAScript dialect),
            for servers that take a regex or a JSON-schema ``pattern`` instead of a grammar.
        stop: stop sequences.
        role: who asks, for routing and accounting only (never part of the prompt or the
            cache key): ``"actor"``, ``"critic"``, ``"critic.explain"``,
            ``"optimiser.gradient"``, ``"optimiser.aggregate"``, ``"optimiser.update"``, the roles
            of :mod:`lang_pz.skills`, or a user's own name; ``""`` if unset.
    """

    messages: tuple[Message, ...] | None = None
    prompt: str | None = None
    max_tokens: int = 64
    temperature: float = 0.0
    seed: int | None = 0
    json_schema: dict[str, Any] | None = None
    choices: tuple[str, ...] | None = None
    grammar: str | None = None
    pattern: str | None = None
    stop: tuple[str, ...] = ()
    role: str = ""

    def __post_init__(self) -> None:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("GenerationRequest needs exactly one of messages= or prompt=")
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens <= 0:
            raise ValueError(f"max_tokens must be an int > 0, got {self.max_tokens!r}")
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
            raise ValueError(f"temperature must be a finite number >= 0, got {t!r}")
        if self.json_schema is not None and self.choices is not None:
            raise ValueError("give json_schema= or choices=, not both")
        if self.choices is not None and not self.choices:
            raise ValueError("choices= must not be empty")
        if (self.grammar is not None or self.pattern is not None) and (
            self.json_schema is not None or self.choices is not None
        ):
            raise ValueError("give grammar=/pattern= or json_schema=/choices=, not both")


@dataclass(frozen=True)
class Generation:
    """One reply.

    Attributes:
        text: the generated text (for ``choices`` requests: exactly one of the choices).
        prompt_tokens: tokens in the prompt, as counted by the backend.
        completion_tokens: tokens generated.
        latency_s: wall-clock seconds of the call that produced it (0.0 when ``cached``).
        cached: whether it came from the response cache.
        model: the backend's model identifier.
        retries: failed attempts retried before this reply (timeouts, HTTP 429/5xx, unusable
            replies; 0 when ``cached``).
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    model: str = ""
    retries: int = 0


@dataclass
class TokenUsage:
    """Running totals of one backend's calls (thread-safe to update via :meth:`add`)."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, g: Generation) -> None:
        with self._lock:
            self.calls += 1
            self.cached_calls += int(g.cached)
            self.prompt_tokens += g.prompt_tokens
            self.completion_tokens += g.completion_tokens
            self.latency_s += g.latency_s
            self.retries += g.retries

    def merge(self, delta: dict[str, float]) -> None:
        """Add totals measured elsewhere (the shape of :meth:`as_dict`, e.g. a remote worker's)."""
        with self._lock:
            self.calls += int(delta.get("calls", 0))
            self.cached_calls += int(delta.get("cached_calls", 0))
            self.prompt_tokens += int(delta.get("prompt_tokens", 0))
            self.completion_tokens += int(delta.get("completion_tokens", 0))
            self.latency_s += float(delta.get("latency_s", 0.0))
            self.retries += int(delta.get("retries", 0))

    def as_dict(self) -> dict[str, float]:
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": round(self.latency_s, 3),
            "retries": self.retries,
        }


class LLMBackend(ABC):
    """Base class of LLM backends.

    Subclasses implement :meth:`_generate`; :meth:`generate` adds the response cache and the
    token accounting. ``prompt_format`` says which request form the model follows best
    (policies build prompts accordingly).
    """

    model: str = ""
    prompt_format: PromptFormat = "chat"
    #: How many requests the backend serves at once (``None``: no known bound). A rollout uses
    #: no more decision threads than this (more would only wait on the backend's lock).
    max_concurrency: int | None = None

    def __init__(self) -> None:
        self.usage = TokenUsage()
        self.cache: Any = None  # a lang_pz.backends.cache.ResponseCache or None

    def generate(self, request: GenerationRequest) -> Generation:
        """Generate one reply; served from the cache when an identical request was made.

        Raises:
            BackendUnavailableError: the endpoint cannot be reached after retries.
            InvalidReplyError: the endpoint's replies were unusable through every attempt.
            PromptTooLongError: the prompt does not fit the model's context window.
            BackendError: any other backend failure.
        """
        if self.cache is not None:
            hit = self.cache.get(self.cache_identity(), request)
            if hit is not None:
                self.usage.add(hit)
                return hit
        gen = self._generate(request)
        if self.cache is not None and self.may_cache(gen):
            self.cache.put(self.cache_identity(), request, gen)
        self.usage.add(gen)
        return gen

    def check(self) -> Any:
        """Check that the backend can serve requests, before the first one (commands call it
        before their first episode). Nothing to check here; a remote backend checks its endpoint
        (:meth:`lang_pz.backends.openai.OpenAIBackend.check`) and returns what it found.

        Raises:
            BackendError: the backend cannot serve requests (the message says why and the fix).
        """
        return None

    @property
    def context_window(self) -> int | None:
        """The model's context window in tokens (prompt + reply), or ``None`` if unknown."""
        return None

    def count_tokens(self, request: GenerationRequest) -> int | None:
        """Tokens the request's prompt takes in the model's context, or ``None`` if this
        backend cannot count them (e.g. a remote model whose tokenizer is unknown)."""
        return None

    def cache_identity(self) -> dict[str, Any]:
        """Everything about the backend (not the request) that shapes the answer."""
        return {"backend": type(self).__name__, "model": self.model}

    def may_cache(self, gen: Generation) -> bool:
        """Whether ``gen`` may be stored in the response cache: a backend that holds a secret
        (an API key) refuses replies containing it, which are then returned but not stored."""
        return True

    @abstractmethod
    def _generate(self, request: GenerationRequest) -> Generation:
        """Call the model. Must honour every field of ``request``."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (model weights, HTTP clients)."""
