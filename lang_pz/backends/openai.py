"""A backend for any OpenAI-compatible HTTP endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Every failure of a request surfaces as a :class:`~lang_pz.error.BackendError` subclass whose
message names the endpoint (base URL without credentials) and the model, never the API key.
Retries are ours (``tenacity``; the ``openai`` client's own are off). Retried, with the
waits of :mod:`lang_pz.backends.retry` (exponential backoff, seeded jitter, ``Retry-After``):

- transport failures: connection refused or reset, timeouts, a body cut short;
- HTTP 408, 429 and 5xx;
- a 200 whose reply cannot be used: a body that is not JSON, no ``choices``, no text in the
  first choice, or (for a ``choices`` request) a reply that is not one of the choices.

After ``max_attempts`` attempts the error is :class:`~lang_pz.error.BackendUnavailableError`
(the last failure was the transport or an HTTP status) or
:class:`~lang_pz.error.InvalidReplyError` (the last reply was unusable); its message counts the
failures by kind. A host name that does not resolve (DNS) gets only ``DNS_ATTEMPTS`` (2)
attempts. Not retried: other HTTP errors (400, 401, 404...) raise
:class:`~lang_pz.error.BackendError` at once with the server's message, and a prompt over the
model's context (HTTP 400 ``context_length_exceeded``, as OpenAI, vLLM and llama-cpp-python's
server report it) raises :class:`~lang_pz.error.PromptTooLongError` with the token counts the
server gave.

Defaults: ``timeout_s=60`` (the longest a whole non-streamed reply may take),
``connect_timeout_s=5``, ``max_attempts=8``, waits of about 0.5, 1, 2, 4, 8, 16, 30 s
(``backoff_s=0.5`` doubling to ``max_backoff_s=30``, +-50 % jitter): a request rides out about
a minute of outage, and a server's ``Retry-After`` is honoured up to ``max_retry_after_s=60``.

Structured output differs by server, hence ``structured_output`` (``"json_schema"`` for
OpenAI, vLLM, Ollama; ``"json_object"`` for llama-cpp-python's server); how each request is
sent is :mod:`lang_pz.backends.openai_requests`, what replies and failures mean is
:mod:`lang_pz.backends.openai_replies`. A ``choices`` request returns the choice string.
Completion-format requests (``prompt=``) with ``choices=``/``json_schema=`` need
``structured_output="json_object"`` (sent as llama-cpp-python's ``grammar``; a JSON schema
needs llama-cpp-python installed locally to be converted); with ``"json_schema"`` they raise
:class:`BackendError` (``constrained_decoding="vllm"`` sends them in vLLM's own fields instead).

An env's reply format (``info["reply_format"]``, the request's ``grammar`` and ``pattern``) is
sent as ``constrained_decoding`` says: ``"llama_cpp"`` (the GBNF ``grammar`` field),
``"vllm"`` / ``"vllm_guided"`` (vLLM's ``structured_outputs`` / ``guided_*`` fields with the
regex), ``"json_schema"`` (a ``{"reply": ...}`` schema with the regex as its ``pattern``, for
OpenAI and Ollama), ``"off"`` (free text); ``"auto"`` is ``"llama_cpp"`` on a
``"json_object"`` server, else ``"off"``. A constrained reply outside the format is retried
like any unusable reply (:mod:`lang_pz.backends.openai_requests` has the details).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openai

try:  # the HTTP library the openai client is built on (httpx2 since openai 3; httpx before)
    from httpx2 import Response as _HTTPResponse
except ImportError:  # pragma: no cover - older openai releases
    from httpx import Response as _HTTPResponse  # type: ignore[assignment]  # the same class, older package
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, stop_any

from lang_pz.backends.base import (
    Generation,
    GenerationRequest,
    LLMBackend,
    PromptFormat,
)
from lang_pz.backends.cache import ResponseCache, resolve_cache
from lang_pz.backends.openai_replies import (
    ReplyError,
    describe,
    failure_kind,
    final_error,
    public_url,
    reply_choice,
    reply_in_format,
    reply_text,
    retry_after,
    stop_on_dns_failure,
    token_count,
)
from lang_pz.backends.openai_requests import ConstrainedDecoding, StructuredOutput, decoding, request_body, resolve_mode
from lang_pz.backends.retry import Backoff, RetrySchedule, number_in_range
from lang_pz.error import BackendError

_PLACEHOLDER_KEY = "EMPTY"
_OPENAI_HOST = "api.openai.com"
_KEYISH = re.compile(r"\b(sk|key|tok)-[A-Za-z0-9_\-*]{8,}")
log = logging.getLogger(__name__)


class OpenAIBackend(LLMBackend):
    """Any OpenAI-compatible chat/completions endpoint via the ``openai`` package.

    Args:
        model: the model name the server serves.
        base_url: endpoint root, e.g. ``http://127.0.0.1:8000/v1``; default
            ``$OPENAI_BASE_URL``, else OpenAI's.
        api_key: default ``$OPENAI_API_KEY``; local servers need none (a placeholder is sent),
            OpenAI's own API does (refused at construction without one).
        timeout_s: per-attempt limit in seconds on reading the reply (for a non-streamed reply:
            the whole generation), writing the request and waiting for a pooled connection.
        connect_timeout_s: per-attempt limit in seconds on opening the connection.
        max_attempts: attempts in all (>= 1), the first included (see the module docstring for
            what is retried).
        backoff_s: wait after the first failure in seconds; doubles after each failure.
        max_backoff_s: cap on the exponential wait in seconds.
        jitter: relative spread in [0, 1] of each wait.
        max_retry_after_s: cap in seconds on a server's ``Retry-After``.
        retry_seed: seeds the jitter (same seed, same waits).
        structured_output: how the server takes a JSON schema (see the module docstring).
        constrained_decoding: how the server is asked to keep replies to an env's reply format
            (a request's ``grammar``/``pattern``): ``"llama_cpp"`` (GBNF ``grammar`` field),
            ``"vllm"`` (``structured_outputs``, vLLM >= 0.10.2), ``"vllm_guided"``
            (``guided_regex``/``guided_choice``/``guided_json``, vLLM < 0.12), ``"json_schema"``
            (a ``{"reply": ...}`` JSON schema with a ``pattern``: OpenAI, Ollama), ``"off"``
            (free text) or ``"auto"`` (``"llama_cpp"`` with ``structured_output="json_object"``,
            else ``"off"``); details in :mod:`lang_pz.backends.openai_requests`. Constrained
            replies are checked against the format and retried when outside it.
        prompt_format: which request form the served model follows best.
        cache: ``True`` (default) = the persistent default :class:`ResponseCache`;
            ``False``/``None`` = no cache; a directory or a :class:`ResponseCache` to use.

    Attributes:
        retries: ``Counter`` of retried failures by kind (``"HTTP 429"``, ``"timeout"``...).

    Raises:
        ValueError: an argument out of range (the message names it), or a base URL that is
            not ``http(s)://host...``.
        BackendError: no API key for OpenAI's own endpoint (``api.openai.com``, the default
            when neither ``base_url`` nor ``$OPENAI_BASE_URL`` is given).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        connect_timeout_s: float = 5.0,
        max_attempts: int = 8,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        jitter: float = 0.5,
        max_retry_after_s: float = 60.0,
        retry_seed: int = 0,
        structured_output: StructuredOutput = "json_schema",
        constrained_decoding: ConstrainedDecoding = "auto",
        prompt_format: PromptFormat = "chat",
        cache: ResponseCache | str | Path | bool | None = True,
    ) -> None:
        super().__init__()
        if not model:
            raise ValueError("OpenAIBackend needs a model name, e.g. model='gpt-4o-mini'")
        if structured_output not in ("json_schema", "json_object"):
            raise ValueError(f"structured_output must be 'json_schema' or 'json_object', got {structured_output!r}")
        resolve_mode(constrained_decoding, structured_output)  # ValueError naming the valid modes
        if prompt_format not in ("chat", "completion"):
            raise ValueError(f"prompt_format must be 'chat' or 'completion', got {prompt_format!r}")
        if api_key is not None and not isinstance(api_key, str):
            raise ValueError(f"api_key must be a str (or None: $OPENAI_API_KEY), got a {type(api_key).__name__}")
        self.timeout_s = number_in_range("timeout_s", timeout_s, 1e-3)
        self.connect_timeout_s = number_in_range("connect_timeout_s", connect_timeout_s, 1e-3)
        self.schedule = RetrySchedule(max_attempts, backoff_s, max_backoff_s, jitter, max_retry_after_s, retry_seed)
        self.model = model
        self.prompt_format = prompt_format
        self.structured_output: StructuredOutput = structured_output
        self.constrained_decoding: ConstrainedDecoding = constrained_decoding
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._uses_placeholder_key = not key
        self._secret = key or _PLACEHOLDER_KEY
        url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if url is not None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                where = "base_url" if base_url else "$OPENAI_BASE_URL"
                raise ValueError(
                    f"{where} {public_url(url)!r} is not an http(s) URL with a host; give e.g. 'http://127.0.0.1:8000/v1'"
                )
        self._client = openai.OpenAI(
            api_key=self._secret,
            base_url=url,
            timeout=openai.Timeout(self.timeout_s, connect=self.connect_timeout_s),
            max_retries=0,
        )
        self.base_url = public_url(str(self._client.base_url))
        if self._uses_placeholder_key and urlsplit(self.base_url).hostname == _OPENAI_HOST:
            raise BackendError(
                f"OpenAIBackend(model={model!r}) would call OpenAI's API ({self.base_url}) with no API key: "
                "set OPENAI_API_KEY in the environment (or pass api_key=), or point it at a local "
                "OpenAI-compatible server with OPENAI_BASE_URL=http://127.0.0.1:8000/v1 (or base_url=...), "
                "which needs no key"
            )
        self._backoff = Backoff(self.schedule, retry_after)
        self._sleep = time.sleep  # tenacity's sleep; tests record the waits here
        self.retries: Counter[str] = Counter()
        self._retries_lock = threading.Lock()
        self.cache = resolve_cache(cache)

    # -- public helpers -------------------------------------------------------------------

    @property
    def max_attempts(self) -> int:
        """Attempts a request gets in all."""
        return self.schedule.max_attempts

    def cache_identity(self) -> dict[str, Any]:
        """Endpoint (without credentials), model, prompt format, structured-output mode and (when
        set) the constrained-decoding mode."""
        extra = {} if self.constrained_decoding == "auto" else {"constrained_decoding": self.constrained_decoding}
        return {
            **extra,
            "backend": type(self).__name__,
            "model": self.model,
            "base_url": self.base_url,
            "prompt_format": self.prompt_format,
            "structured_output": self.structured_output,
        }

    def may_cache(self, gen: Generation) -> bool:
        """False for a reply containing the API key (an endpoint that echoes the request): it is
        returned, but a cache folder is no place for the key."""
        if self._uses_placeholder_key or self._secret not in gen.text:
            return True
        log.warning("%s: a reply contains the API key; it is not cached", self._where)
        return False

    def __repr__(self) -> str:
        return (
            f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, "
            f"structured_output={self.structured_output!r}, constrained_decoding={self.constrained_decoding!r}, timeout_s={self.timeout_s:g}, "
            f"max_attempts={self.max_attempts})"
        )

    def __getstate__(self) -> None:
        raise TypeError(
            "an OpenAIBackend holds an API key and is not pickled; build one per process "
            "(e.g. make_backend(spec) in each worker)"
        )

    def close(self) -> None:
        """Close the HTTP client and the cache handle."""
        self._client.close()
        if self.cache is not None:
            self.cache.close()

    # -- internals -------------------------------------------------------------------------

    @property
    def _where(self) -> str:
        return f"LLM endpoint {self.base_url} (model {self.model!r})"

    def _redact(self, text: str) -> str:
        if not self._uses_placeholder_key and self._secret:
            text = text.replace(self._secret, "<OPENAI_API_KEY>")
        return _KEYISH.sub("<redacted>", text)

    def _leaks(self, exc: BaseException) -> bool:
        """Whether ``exc`` (e.g. a server echoing the request) contains the real API key."""
        if self._uses_placeholder_key:
            return False
        body = getattr(exc, "body", None)
        return self._secret in str(exc) or self._secret in repr(body)

    def _describe(self, exc: BaseException) -> str:
        return self._redact(describe(exc))[:500]

    def _generate(self, request: GenerationRequest) -> Generation:
        """Send one request, retrying what is retryable (see the module docstring).

        Raises:
            BackendUnavailableError: transport or HTTP failures through all attempts.
            InvalidReplyError: the last of all attempts got an unusable reply.
            PromptTooLongError: the server says the prompt is over the model's context.
            BackendError: any other failure (HTTP 400/401/404..., a bad request).
        """
        chat = request.messages is not None
        how = decoding(request, self.structured_output, self.constrained_decoding)
        path, common = request_body(
            request, self.model, self.structured_output, f"{self.base_url} ({self.model})", self.constrained_decoding
        )
        # The body is plain JSON already: posted as it is, without the client's typed-parameter
        # transform (measured: about 40 % of the client's CPU per request, which bounds how many
        # requests one process keeps in flight).

        def attempt() -> tuple[str, dict[str, Any]]:
            raw = self._client.post(path, body=common, cast_to=_HTTPResponse)
            try:
                body = json.loads(raw.content)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, "[[[[..."
                head = raw.content[:120]
                raise ReplyError("malformed JSON", f"{exc} in a body starting {head!r}") from None
            text = reply_text(body, chat)
            if request.choices is not None:
                text = reply_choice(text, request.choices, how.choice_json)
            elif how.reply_checked:
                assert request.pattern is not None
                text = reply_in_format(text, request.pattern, request.stop, how.reply_json)
            return text, body

        failures: list[str] = []

        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome is not None else None
            kind = failure_kind(exc) if exc is not None else "?"
            failures.append(kind or "?")
            with self._retries_lock:
                self.retries[kind or "?"] += 1
            log.info(
                "%s: attempt %d failed (%s); retrying in %.2f s",
                self._where,
                state.attempt_number,
                self._describe(exc) if exc else "?",
                state.upcoming_sleep,
            )

        retrying = Retrying(
            stop=stop_any(stop_after_attempt(self.schedule.max_attempts), stop_on_dns_failure),  # type: ignore[arg-type]  # stop_any calls any stop callable; its hint says stop_base
            wait=self._backoff,
            retry=retry_if_exception(lambda e: failure_kind(e) is not None),
            before_sleep=before_sleep,
            sleep=self._sleep,
            reraise=True,
        )
        t0 = time.perf_counter()
        try:
            text, body = retrying(attempt)
        except Exception as exc:  # every failure becomes a BackendError naming the endpoint
            caught = exc
        else:
            usage = body.get("usage")
            return Generation(
                text=text,
                prompt_tokens=token_count(usage, "prompt_tokens"),
                completion_tokens=token_count(usage, "completion_tokens"),
                latency_s=time.perf_counter() - t0,
                cached=False,
                model=self.model,
                retries=len(failures),
            )
        error = final_error(caught, failures, self._where, self._describe(caught), urlsplit(self.base_url).hostname)
        if error is caught:
            raise error
        raise error from (None if isinstance(caught, ReplyError) or self._leaks(caught) else caught)
