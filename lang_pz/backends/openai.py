"""A backend for any OpenAI-compatible HTTP endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Before its first request the backend checks the endpoint once (:meth:`OpenAIBackend.check`,
:mod:`~lang_pz.backends.openai_endpoint`): something answers (a refused connection fails at
once, not after a minute of retries), the server serves the model name, its context window
where it says it, the structured-output form it takes (``structured_output="auto"``) and where
it counts tokens. A request that cannot fit the known context window is refused before it is
sent (:mod:`~lang_pz.backends.openai_tokens`); :meth:`~OpenAIBackend.count_tokens` and
:attr:`~OpenAIBackend.context_window` let :class:`~lang_pz.policies.llm.LLMPolicy` fit its
prompts first, as with the embedded model.

Every failure surfaces as a :class:`~lang_pz.error.BackendError` subclass whose message names
the endpoint (base URL without credentials) and the model, never the API key. Retries are ours
(the ``openai`` client's are off; :mod:`~lang_pz.backends.openai_attempts`), with the waits of
:mod:`~lang_pz.backends.retry` (exponential backoff, seeded jitter, ``Retry-After``): transport
failures (refused, reset, timeouts, a body cut short); HTTP 408, 429 and 5xx, except a 500
whose body says the request is invalid (llama-cpp-python's "validation error"); a 200 whose
reply cannot be used (not JSON, no ``choices``, no text, outside the choices or the env's reply
format); a constrained reply cut at ``max_tokens``, sent again at once with twice the budget.
After ``max_attempts`` the error is :class:`~lang_pz.error.BackendUnavailableError` (transport
or HTTP status) or :class:`~lang_pz.error.InvalidReplyError` (unusable replies), counting the
failures by kind; a host name that does not resolve gets ``DNS_ATTEMPTS`` (2). Not retried:
other HTTP errors (400, 401, 404...) raise :class:`~lang_pz.error.BackendError` at once quoting
the server, and a prompt over the context (HTTP 400 ``context_length_exceeded``)
:class:`~lang_pz.error.PromptTooLongError` with the server's counts. With ``"auto"`` structured
output, a server that refuses ``json_schema`` naming ``json_object`` is switched to
``json_object`` and the request sent again (once).

Defaults: ``timeout_s=60`` (a whole non-streamed reply), ``connect_timeout_s=5``,
``max_attempts=8``, waits of about 0.5, 1, 2, 4, 8, 16, 30 s (``backoff_s=0.5`` doubling to
``max_backoff_s=30``, +-50 % jitter): about a minute of outage is ridden out; ``Retry-After``
is honoured up to ``max_retry_after_s=60``. What is sent: :mod:`~lang_pz.backends.openai_requests`;
what replies and failures mean: :mod:`~lang_pz.backends.openai_replies`. See docs/backends.md.
"""

from __future__ import annotations

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
from tenacity import RetryCallState

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, PromptFormat
from lang_pz.backends.cache import ResponseCache, resolve_cache
from lang_pz.backends.openai_attempts import send
from lang_pz.backends.openai_endpoint import EndpointInfo, HTTPResponse, probe
from lang_pz.backends.openai_replies import (
    ReplyError,
    describe,
    final_error,
    public_url,
    rejects_json_schema,
    retry_after,
    token_count,
)
from lang_pz.backends.openai_requests import (
    ConstrainedDecoding,
    StructuredOutput,
    StructuredOutputOption,
    decoding,
    json_tokens,
    request_body,
    resolve_mode,
)
from lang_pz.backends.openai_tokens import ServerTokenizer, check_fits, estimate, template_tokens
from lang_pz.backends.retry import Backoff, RetrySchedule, number_in_range
from lang_pz.error import BackendError, PromptTooLongError

_PLACEHOLDER_KEY = "EMPTY"
_OPENAI_HOST = "api.openai.com"
_KEYISH = re.compile(r"\b(sk|key|tok)-[A-Za-z0-9_\-*]{8,}")
log = logging.getLogger(__name__)

#: The start-up check's notes already said in this process (``"<endpoint>: <note>"``): a command
#: checks an endpoint, then its run builds a backend for it per role and checks it again; each
#: note is logged once.
_SAID: set[str] = set()


class OpenAIBackend(LLMBackend):
    """Any OpenAI-compatible chat/completions endpoint via the ``openai`` package.

    Args:
        model: the model name the server serves (checked against its list at start-up).
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
        structured_output: how the server takes a JSON schema: ``"json_schema"`` (OpenAI, vLLM,
            Ollama, llama-server), ``"json_object"`` (llama-cpp-python's server) or ``"auto"``
            (default: the start-up check picks, see the module docstring).
        constrained_decoding: how the server is asked to keep replies to an env's reply format (a
            request's ``grammar``/``pattern``): ``"llama_cpp"``, ``"vllm"``, ``"vllm_guided"``,
            ``"json_schema"``, ``"off"`` or ``"auto"`` (``"llama_cpp"`` when the structured output
            is ``"json_object"``, else ``"off"``); see :mod:`lang_pz.backends.openai_requests`.
        prompt_format: which request form the served model follows best.
        context_window: the model's context window in tokens (prompt + reply), for servers that
            do not report it (llama-cpp-python's: its ``--n_ctx``); ``None`` (default): what the
            server reports, else what its first "maximum context length" reply says.
        check_endpoint: check the endpoint before the first request (default ``True``; see
            :meth:`check`). ``False`` sends requests unchecked (``"auto"`` structured output is
            then ``"json_schema"``, switched to ``"json_object"`` if the server refuses it).
        cache: ``True`` (default) = the persistent default :class:`ResponseCache`;
            ``False``/``None`` = no cache; a directory or a :class:`ResponseCache` to use.

    Attributes:
        retries: ``Counter`` of retried failures by kind (``"HTTP 429"``, ``"timeout"``...).
        endpoint: what the start-up check found (:class:`EndpointInfo`), ``None`` before it.

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
        structured_output: StructuredOutputOption = "auto",
        constrained_decoding: ConstrainedDecoding = "auto",
        prompt_format: PromptFormat = "chat",
        context_window: int | None = None,
        check_endpoint: bool = True,
        cache: ResponseCache | str | Path | bool | None = True,
    ) -> None:
        super().__init__()
        if not model:
            raise ValueError("OpenAIBackend needs a model name, e.g. model='gpt-4o-mini'")
        if structured_output not in ("auto", "json_schema", "json_object"):
            raise ValueError(f"structured_output must be 'auto', 'json_schema' or 'json_object', got {structured_output!r}")
        resolve_mode(constrained_decoding, "json_schema")  # ValueError naming the valid modes
        if prompt_format not in ("chat", "completion"):
            raise ValueError(f"prompt_format must be 'chat' or 'completion', got {prompt_format!r}")
        if api_key is not None and not isinstance(api_key, str):
            raise ValueError(f"api_key must be a str (or None: $OPENAI_API_KEY), got a {type(api_key).__name__}")
        if context_window is not None and (
            isinstance(context_window, bool) or not isinstance(context_window, int) or context_window < 16
        ):
            raise ValueError(f"context_window is in tokens and must be an int >= 16 (or None), got {context_window!r}")
        if not isinstance(check_endpoint, bool):
            raise ValueError(f"check_endpoint must be true or false, got {check_endpoint!r}")
        self.timeout_s = number_in_range("timeout_s", timeout_s, 1e-3)
        self.connect_timeout_s = number_in_range("connect_timeout_s", connect_timeout_s, 1e-3)
        self.schedule = RetrySchedule(max_attempts, backoff_s, max_backoff_s, jitter, max_retry_after_s, retry_seed)
        self.model = model
        self.prompt_format = prompt_format
        self.structured_output: StructuredOutputOption = structured_output
        self.constrained_decoding: ConstrainedDecoding = constrained_decoding
        self.check_endpoint = check_endpoint
        self._context_option = context_window
        self._learned_context: int | None = None
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
        self._sleep = time.sleep  # tenacity's sleep and the check's polls; tests record the waits here
        self.retries: Counter[str] = Counter()
        self._retries_lock = threading.Lock()
        self.endpoint: EndpointInfo | None = None
        self._tokenizer: ServerTokenizer | None = None
        self._checked = False
        self._check_lock = threading.Lock()
        self._fallback: StructuredOutput | None = None  # "auto" switched by a server's refusal
        self.cache = resolve_cache(cache)

    # -- public helpers -------------------------------------------------------------------

    @property
    def max_attempts(self) -> int:
        """Attempts a request gets in all."""
        return self.schedule.max_attempts

    def check(self) -> EndpointInfo:
        """Check the endpoint now (once; later calls return the first result): reachable, serving
        ``model``, its context window, structured-output form and tokenizer
        (:mod:`lang_pz.backends.openai_endpoint`). Runs before the first request by itself
        unless ``check_endpoint=False``; commands call it before their first episode.

        Raises:
            BackendUnavailableError: nothing answers at the endpoint (fails in seconds).
            BackendError: the server refuses the key or fails the check (its message quoted),
                or does not serve ``model`` (the message lists what it serves).
        """
        with self._check_lock:
            if self.endpoint is None:
                info = probe(
                    self._client, self.base_url, self.model, where=self._where,
                    connect_timeout_s=min(self.connect_timeout_s, 5.0), read_timeout_s=self.timeout_s, sleep=self._sleep,
                    structured_output=self.structured_output,
                )  # fmt: skip
                if info.tokenizer is not None:
                    timeout = openai.Timeout(self.timeout_s, connect=self.connect_timeout_s)
                    self._tokenizer = ServerTokenizer(self._client, info.tokenizer, info.server, self.model, timeout)
                for note in info.notes:
                    if f"{self._where}: {note}" not in _SAID:
                        _SAID.add(f"{self._where}: {note}")
                        log.warning("%s: %s", self._where, note)
                log.info("%s: %s", self._where, info.summary())
                self.endpoint = info
            self._checked = True
            return self.endpoint

    def _ensure_checked(self) -> None:
        if self.check_endpoint and not self._checked:
            self.check()

    @property
    def structured(self) -> StructuredOutput:
        """The structured-output form requests are sent in (``"auto"`` resolved)."""
        if self.structured_output != "auto":
            return self.structured_output
        if self._fallback is not None:
            return self._fallback
        return self.endpoint.structured_output if self.endpoint is not None else "json_schema"

    @property
    def context_window(self) -> int | None:
        """The context window in tokens: the ``context_window`` option, else what the server
        reports (checking the endpoint first), else what its "maximum context length" reply
        said, else ``None``."""
        return self._context()[0]

    def _context(self) -> tuple[int | None, str]:
        if self._context_option is not None:
            return self._context_option, "the context_window option"
        self._ensure_checked()
        if self.endpoint is not None and self.endpoint.context_window is not None:
            return self.endpoint.context_window, f"the server's {self.endpoint.context_source}"
        if self._learned_context is not None:
            return self._learned_context, "the server's earlier 'maximum context length' reply"
        return None, ""

    def count_tokens(self, request: GenerationRequest) -> int:
        """Tokens the request takes in the context besides its ``max_tokens``: the prompt as the
        server counts it (plus an allowance for the chat template where the server counts only the
        text; a conservative estimate where it cannot count, :mod:`lang_pz.backends.openai_tokens`)
        and the JSON the reply is wrapped in (``{"choice": ...}``)."""
        self._ensure_checked()
        counted = self._tokenizer.count(request) if self._tokenizer is not None else None
        wrapper = json_tokens(request, decoding(request, self.structured, self.constrained_decoding))
        if counted is None:
            return estimate(request) + wrapper
        n, with_template = counted
        return (n if with_template else n + template_tokens(request)) + wrapper

    def cache_identity(self) -> dict[str, Any]:
        """Endpoint (without credentials), model, prompt format, structured-output option and
        (when set) the constrained-decoding mode."""
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
        """Check the endpoint (first request only), refuse a request over the context, send it.

        Raises:
            BackendUnavailableError: the endpoint is unreachable at the check, or transport or
                HTTP failures through all attempts.
            InvalidReplyError: the last of all attempts got an unusable reply, or a constrained
                reply was cut at ``max_tokens`` and the budget cannot grow.
            PromptTooLongError: the prompt does not fit the model's context (before the call
                when the context is known, else as the server says).
            BackendError: any other failure (HTTP 400/401/404..., a bad request, a model the
                server does not serve).
        """
        self._ensure_checked()
        try:
            return self._send(request)
        except BackendError as exc:
            if isinstance(exc, PromptTooLongError) and exc.context_window and self._learned_context is None:
                self._learned_context = exc.context_window  # the server said it: later requests are fitted first
            if not (self.structured_output == "auto" and self._fallback is None and rejects_json_schema(exc.__cause__)):
                raise
        log.warning("%s refuses response_format json_schema: sending json_object from now on", self._where)
        self._fallback = "json_object"
        return self._send(request)

    def _send(self, request: GenerationRequest) -> Generation:
        """Send one request, retrying what is retryable (see the module docstring)."""
        structured = self.structured
        how = decoding(request, structured, self.constrained_decoding)
        path, body = request_body(
            request, self.model, structured, f"{self.base_url} ({self.model})", self.constrained_decoding
        )
        context, source = self._context()
        if context is not None:
            check_fits(request, body["max_tokens"], context, source, self._tokenizer, self._where)
        failures: list[str] = []

        def post(sent: dict[str, Any]) -> bytes:
            # The body is plain JSON already: posted as it is, without the client's typed-parameter
            # transform (measured: about 40 % of the client's CPU per request, which bounds how many
            # requests one process keeps in flight).
            return self._client.post(path, body=sent, cast_to=HTTPResponse).content

        def on_retry(state: RetryCallState, kind: str) -> None:
            exc = state.outcome.exception() if state.outcome is not None else None
            failures.append(kind)
            with self._retries_lock:
                self.retries[kind] += 1
            what = self._describe(exc) if exc else "?"
            log.info(
                "%s: attempt %d failed (%s); retrying in %.2f s",
                self._where,
                state.attempt_number,
                what,
                state.upcoming_sleep,
            )

        t0 = time.perf_counter()
        try:
            text, reply = send(
                post, body, request, how, context=context, max_attempts=self.max_attempts, backoff=self._backoff,
                sleep=self._sleep, on_retry=on_retry, where=self._where,
            )  # fmt: skip
        except Exception as exc:  # every failure becomes a BackendError naming the endpoint
            caught = exc  # raised below, outside this block: a key in exc must not ride along as __context__
        else:
            usage = reply.get("usage")
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
