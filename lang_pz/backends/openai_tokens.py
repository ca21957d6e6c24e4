"""How many tokens a request's prompt takes on an OpenAI-compatible endpoint.

Three figures, each for its use:

- :func:`upper_bound`: the prompt's UTF-8 bytes plus the chat template's allowance: no token
  is shorter than one byte, so a prompt under it fits for sure and is sent without counting;
- :class:`ServerTokenizer`: the server's own count (llama-cpp-python ``/extras/tokenize/count``,
  llama.cpp and vLLM ``/tokenize``), remembered per text. For a chat request llama.cpp's
  servers count the messages' text, not the chat template the server wraps them in (vLLM
  counts the template too): a lower bound, which is what a refusal before the call may rest on
  (a request is never refused that the server would take);
- :func:`estimate`: without a tokenizer, a conservative count of
  :data:`BYTES_PER_TOKEN_ESTIMATE` bytes a token (measured: English prose with markup about
  3.3 bytes a token on SmolLM2's tokenizer, digits one byte a token) plus the template allowance.

The chat template's allowance (:func:`template_tokens`) is :data:`CHAT_TOKENS_PER_MESSAGE` a
message plus :data:`CHAT_TOKENS_EXTRA` (measured on SmolLM2's template: 30 tokens around one
user message, its default system prompt included; 14 around a system and a user message).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import openai

from lang_pz.backends.base import GenerationRequest
from lang_pz.backends.openai_endpoint import LLAMA_CPP, LLAMA_CPP_PYTHON, VLLM, post_json
from lang_pz.error import PromptTooLongError

#: Template tokens counted for each chat message (role markers, separators).
CHAT_TOKENS_PER_MESSAGE = 8
#: Template tokens counted once per chat request (a default system prompt, the reply's header).
CHAT_TOKENS_EXTRA = 32
#: Bytes a token is assumed to take where the server cannot count (fewer = more tokens counted).
BYTES_PER_TOKEN_ESTIMATE = 2
_MEMO_SIZE = 512


def prompt_text(request: GenerationRequest) -> str:
    """The request's text as one string: the prompt, or the messages' contents one a line."""
    if request.prompt is not None:
        return request.prompt
    return "\n".join(m.content for m in request.messages or ())


def template_tokens(request: GenerationRequest) -> int:
    """Tokens the server adds around the text: 1 (BOS) for a prompt; the chat template's allowance
    for messages (see the module docstring)."""
    if request.messages is None:
        return 1
    return CHAT_TOKENS_PER_MESSAGE * len(request.messages) + CHAT_TOKENS_EXTRA


def upper_bound(request: GenerationRequest) -> int:
    """More tokens than the prompt can take: its UTF-8 bytes plus :func:`template_tokens`."""
    return len(prompt_text(request).encode("utf-8")) + template_tokens(request)


def estimate(request: GenerationRequest) -> int:
    """A conservative count without a tokenizer (see the module docstring)."""
    return math.ceil(len(prompt_text(request).encode("utf-8")) / BYTES_PER_TOKEN_ESTIMATE) + template_tokens(request)


class ServerTokenizer:
    """Counts a request's tokens with the server's own tokenizer.

    Args:
        client: the backend's ``openai`` client.
        url: the server's token-counting URL (:attr:`EndpointInfo.tokenizer`).
        server: the server kind (:data:`LLAMA_CPP_PYTHON`, :data:`LLAMA_CPP` or :data:`VLLM`).
        model: the model name requests carry.
        timeout: limits of one counting request.

    A route the server does not have (HTTP 404/405/501) turns the tokenizer off for good; any
    other failure gives ``None`` for that count (the caller estimates instead).
    """

    def __init__(self, client: openai.OpenAI, url: str, server: str, model: str, timeout: openai.Timeout) -> None:
        self.client = client
        self.url: str | None = url
        self.server = server
        self.model = model
        self.timeout = timeout
        self._memo: dict[tuple[str, bool], int] = {}
        self._lock = threading.Lock()

    def _body(self, request: GenerationRequest) -> tuple[dict[str, Any], bool]:
        """The counting request's body, and whether the count includes the chat template."""
        if self.server == VLLM and request.messages is not None:
            msgs = [{"role": m.role, "content": m.content} for m in request.messages]
            return {"model": self.model, "messages": msgs}, True
        text = prompt_text(request)
        if self.server == LLAMA_CPP_PYTHON:
            return {"model": self.model, "input": text}, False
        if self.server == LLAMA_CPP:
            return {"content": text, "add_special": request.messages is None}, False
        return {"model": self.model, "prompt": text}, request.messages is not None

    def count(self, request: GenerationRequest) -> tuple[int, bool] | None:
        """``(tokens, template included)`` as the server counts them, or ``None`` if it could not."""
        if self.url is None:
            return None
        body, with_template = self._body(request)
        key = (repr(sorted(body.items())), with_template)
        with self._lock:
            if key in self._memo:
                return self._memo[key], with_template
        try:
            reply = post_json(self.client, self.url, body, self.timeout)
        except openai.APIStatusError as exc:
            if exc.status_code in (404, 405, 501):
                self.url = None
            return None
        except openai.OpenAIError:
            return None
        n = None
        if isinstance(reply, dict):
            n = reply.get("count")
            if n is None and isinstance(reply.get("tokens"), list):
                n = len(reply["tokens"])
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            return None
        with self._lock:
            if len(self._memo) >= _MEMO_SIZE:
                self._memo.pop(next(iter(self._memo)))
            self._memo[key] = n
        return n, with_template


def check_fits(
    request: GenerationRequest,
    max_tokens: int,
    context_window: int,
    source: str,
    tokenizer: ServerTokenizer | None,
    where: str,
) -> None:
    """Refuse ``request`` before it is sent if its prompt and ``max_tokens`` cannot fit.

    A prompt under :func:`upper_bound` is sent without counting. Otherwise the server's tokenizer
    counts it (the text alone: a lower bound, so nothing the server would take is refused);
    without a tokenizer the request is sent and the server decides.

    Args:
        request: the request.
        max_tokens: the reply's budget as sent (the request's, plus any JSON around the reply).
        context_window: the model's context window in tokens.
        source: where ``context_window`` came from, for the message.
        tokenizer: the server's tokenizer, or ``None``.
        where: names the endpoint and model in the message.

    Raises:
        PromptTooLongError: the counted prompt and ``max_tokens`` exceed ``context_window``; the
            message names the counts and the fixes.
    """
    if upper_bound(request) + max_tokens <= context_window:
        return
    counted = tokenizer.count(request) if tokenizer is not None else None
    if counted is None:
        return
    n, with_template = counted
    if n + max_tokens <= context_window:
        return
    what = "" if with_template else " (its text alone, before the chat template)"
    raise PromptTooLongError(
        f"{where}: the prompt takes {n} tokens{what} by the server's tokenizer and the reply may take "
        f"max_tokens={max_tokens}: more than the context window of {context_window} tokens ({source}), so it was "
        "not sent. Shorten the prompt (LLMPolicy fits observations by itself), lower max_tokens, or serve the "
        "model with a larger context (llama.cpp: --n_ctx / -c; vLLM: --max-model-len)",
        prompt_tokens=n,
        context_window=context_window,
        max_tokens=max_tokens,
    )
