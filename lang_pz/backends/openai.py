"""A backend for any OpenAI-compatible HTTP endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Retries are ours (``tenacity``, exponential backoff), not the ``openai`` client's: only
transient failures are retried (connection errors, timeouts, HTTP 408/429/5xx). After the
last attempt a :class:`~lang_pz.error.BackendUnavailableError` names the endpoint and model.
Any other API error (400, 401, 404...) raises :class:`~lang_pz.error.BackendError` at once
with the server's message. The API key never appears in a message, ``repr`` or cache identity.

Structured output differs by server, hence ``structured_output``:

- ``"json_schema"`` (OpenAI, vLLM, Ollama): ``{"type": "json_schema", "json_schema":
  {"name": ..., "schema": S}}``;
- ``"json_object"`` (llama-cpp-python's server): ``{"type": "json_object", "schema": S}``.

A ``choices`` request asks for ``{"choice": <one of the enum>}`` and returns the choice string.
Completion-format requests (``prompt=``) go to ``/completions``, which has no standard
structured-output field: with ``structured_output="json_object"`` (llama-cpp-python's server)
constraints are sent as its ``grammar`` field (a JSON schema needs llama-cpp-python installed
locally to be converted); with ``"json_schema"`` such requests raise :class:`BackendError`.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit, urlunsplit

import openai
from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from lang_pz.backends.base import (
    Generation,
    GenerationRequest,
    LLMBackend,
    PromptFormat,
)
from lang_pz.backends.cache import ResponseCache, resolve_cache
from lang_pz.backends.llama_cpp import choices_gbnf
from lang_pz.error import BackendError, BackendUnavailableError

StructuredOutput = Literal["json_schema", "json_object"]
T = TypeVar("T")
_PLACEHOLDER_KEY = "EMPTY"
_KEYISH = re.compile(r"\b(sk|key|tok)-[A-Za-z0-9_\-*]{8,}")


def choice_schema(choices: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The JSON schema a ``choices`` request is sent as: ``{"choice": <enum>}``."""
    return {
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": list(dict.fromkeys(choices))}},
        "required": ["choice"],
        "additionalProperties": False,
    }


def is_transient(exc: BaseException) -> bool:
    """Connection errors, timeouts, HTTP 408, 429 and 5xx."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    return False


def _public_url(url: str) -> str:
    """``url`` without user:password and query string (which may carry credentials)."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _schema_name(schema: dict[str, Any]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))
    return name[:64] or "response"


class OpenAIBackend(LLMBackend):
    """Any OpenAI-compatible chat/completions endpoint via the ``openai`` package.

    Args:
        model: the model name the server serves.
        base_url: endpoint root, e.g. ``http://127.0.0.1:8000/v1``; default
            ``$OPENAI_BASE_URL``, else OpenAI's.
        api_key: default ``$OPENAI_API_KEY``; local servers need none (a placeholder is sent).
        timeout_s: per-attempt HTTP timeout in seconds.
        max_retries: attempts in all (>= 1), the first included, for transient failures.
        backoff_s: wait before the 2nd attempt in seconds; doubles each attempt (max 60 s).
        structured_output: how the server takes a JSON schema (see the module docstring).
        prompt_format: which request form the served model follows best.
        cache: ``True`` (default) = the persistent default :class:`ResponseCache`;
            ``False``/``None`` = no cache; a directory or a :class:`ResponseCache` to use.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        structured_output: StructuredOutput = "json_schema",
        prompt_format: PromptFormat = "chat",
        cache: ResponseCache | str | Path | bool | None = True,
    ) -> None:
        super().__init__()
        if not model:
            raise ValueError("OpenAIBackend needs a model name, e.g. model='gpt-4o-mini'")
        if structured_output not in ("json_schema", "json_object"):
            raise ValueError(
                f"structured_output must be 'json_schema' or 'json_object', "
                f"got {structured_output!r}"
            )
        if prompt_format not in ("chat", "completion"):
            raise ValueError(f"prompt_format must be 'chat' or 'completion', got {prompt_format!r}")
        if max_retries < 1:
            raise ValueError(f"max_retries counts attempts and must be >= 1, got {max_retries}")
        self.model = model
        self.prompt_format = prompt_format
        self.structured_output: StructuredOutput = structured_output
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self._uses_placeholder_key = not key
        self._secret = key or _PLACEHOLDER_KEY
        self._client = openai.OpenAI(
            api_key=self._secret,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
            timeout=self.timeout_s,
            max_retries=0,
        )
        self.base_url = _public_url(str(self._client.base_url))
        self.cache = resolve_cache(cache)

    # -- public helpers -------------------------------------------------------------------

    def cache_identity(self) -> dict[str, Any]:
        """Endpoint (without credentials), model, prompt format and structured-output mode."""
        return {
            "backend": type(self).__name__,
            "model": self.model,
            "base_url": self.base_url,
            "prompt_format": self.prompt_format,
            "structured_output": self.structured_output,
        }

    def __repr__(self) -> str:
        return (
            f"OpenAIBackend(model={self.model!r}, base_url={self.base_url!r}, "
            f"structured_output={self.structured_output!r}, max_retries={self.max_retries})"
        )

    def close(self) -> None:
        """Close the HTTP client and the cache handle."""
        self._client.close()
        if self.cache is not None:
            self.cache.close()

    # -- internals -------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        if not self._uses_placeholder_key and self._secret:
            text = text.replace(self._secret, "<OPENAI_API_KEY>")
        return _KEYISH.sub("<redacted>", text)

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.structured_output == "json_object":
            return {"type": "json_object", "schema": schema}
        return {
            "type": "json_schema",
            "json_schema": {"name": _schema_name(schema), "schema": schema},
        }

    def _completion_grammar(self, request: GenerationRequest) -> str | None:
        if request.choices is None and request.json_schema is None:
            return None
        if self.structured_output != "json_object":
            raise BackendError(
                f"{self.base_url} ({self.model}): choices=/json_schema= on a completion-format "
                "request (prompt=) has no standard OpenAI form; use messages= (chat), or "
                "structured_output='json_object' for a llama-cpp-python server"
            )
        if request.choices is not None:
            return choices_gbnf(request.choices)
        try:
            from llama_cpp.llama_grammar import json_schema_to_gbnf
        except ImportError as exc:
            raise BackendError(
                "a json_schema= completion request to a llama.cpp server needs "
                "llama-cpp-python installed locally to build the grammar "
                "(pip install 'lang_pz[embedded]'), or use messages= (chat)"
            ) from exc
        return json_schema_to_gbnf(json.dumps(request.json_schema))

    def _leaks(self, exc: BaseException) -> bool:
        """Whether ``exc`` (e.g. a server echoing the request) contains the real API key."""
        if self._uses_placeholder_key:
            return False
        body = getattr(exc, "body", None)
        return self._secret in str(exc) or self._secret in repr(body)

    def _call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` with our retry policy and turn openai errors into lang_pz errors.

        The lang_pz error is raised outside the ``except`` blocks and chained ``from`` the
        openai exception, unless that exception contains the API key: then it is dropped.
        """
        retrying = Retrying(
            stop=stop_after_attempt(self.max_retries),
            wait=wait_exponential(multiplier=self.backoff_s, max=60.0),
            retry=retry_if_exception(is_transient),
            reraise=False,
        )
        where = f"LLM endpoint {self.base_url} (model {self.model!r})"
        try:
            return retrying(fn)
        except RetryError as err:
            cause = err.last_attempt.exception()
            attempts = err.last_attempt.attempt_number
            what = (
                f"HTTP {cause.status_code}: {self._redact(str(cause))}"
                if isinstance(cause, openai.APIStatusError)
                else f"{type(cause).__name__}: {self._redact(str(cause))}"
            )
            error: BackendError = BackendUnavailableError(
                f"{where} failed after {attempts} attempt(s); last error {what}. Check that "
                "the server is running and reachable at that address and that the base_url "
                "argument or OPENAI_BASE_URL points to it."
            )
        except openai.APIStatusError as exc:
            cause = exc
            msg = f"{where} refused the request: HTTP {exc.status_code}: {self._redact(str(exc))}"
            if exc.status_code in (401, 403):
                msg += (
                    ". Check the API key (set OPENAI_API_KEY or pass api_key=; local servers "
                    "usually need none)"
                )
            elif exc.status_code == 404:
                msg += ". Check the model name and that base_url ends with /v1"
            error = BackendError(msg)
        except openai.OpenAIError as exc:
            cause = exc
            error = BackendError(f"{where}: {type(exc).__name__}: {self._redact(str(exc))}")
        if cause is not None and self._leaks(cause):
            cause = None
        raise error from cause

    def _generate(self, request: GenerationRequest) -> Generation:
        """Send one request (retrying transient failures).

        Raises:
            BackendUnavailableError: still failing transiently after ``max_retries`` attempts.
            BackendError: a non-transient API error, or a reply that is not valid for
                ``choices``.
        """
        common: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "temperature": float(request.temperature),
        }
        if request.seed is not None:
            common["seed"] = int(request.seed)
        if request.stop:
            common["stop"] = list(request.stop)
        t0 = time.perf_counter()
        if request.messages is not None:
            if request.choices is not None:
                common["response_format"] = self._response_format(choice_schema(request.choices))
            elif request.json_schema is not None:
                common["response_format"] = self._response_format(request.json_schema)
            msgs: list[Any] = [{"role": m.role, "content": m.content} for m in request.messages]
            resp = self._call(lambda: self._client.chat.completions.create(messages=msgs, **common))
            text = (resp.choices[0].message.content or "") if resp.choices else ""
        else:
            grammar = self._completion_grammar(request)
            if grammar is not None:
                common["extra_body"] = {"grammar": grammar}
            prompt = request.prompt
            resp = self._call(lambda: self._client.completions.create(prompt=prompt, **common))
            text = resp.choices[0].text if resp.choices else ""
        latency = time.perf_counter() - t0
        if request.choices is not None:
            text = self._extract_choice(text, request, chat=request.messages is not None)
        usage = getattr(resp, "usage", None)
        return Generation(
            text=text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            latency_s=latency,
            cached=False,
            model=self.model,
        )

    def _extract_choice(self, text: str, request: GenerationRequest, chat: bool) -> str:
        assert request.choices is not None
        choice: Any = text
        if chat:
            try:
                choice = json.loads(text)["choice"]
            except (ValueError, TypeError, KeyError) as exc:
                raise BackendError(
                    f'{self.base_url} ({self.model}) was asked for {{"choice": ...}} '
                    f"and replied {text[:300]!r} ({type(exc).__name__}: {exc})"
                ) from exc
        if choice not in request.choices:
            raise BackendError(
                f"{self.base_url} ({self.model}) replied {choice!r}, not one of "
                f"{list(request.choices)!r}"
            )
        return str(choice)
