"""The attempts of one request to an OpenAI-compatible endpoint: post, read the reply, retry
what is retryable (:func:`send`, used by :class:`~lang_pz.backends.openai.OpenAIBackend`).

A failure is retried when :func:`~lang_pz.backends.openai_replies.failure_kind` names it, after
the wait of :class:`~lang_pz.backends.retry.Backoff`, until ``max_attempts`` (a host name that
does not resolve: :data:`~lang_pz.backends.openai_replies.DNS_ATTEMPTS`).

A constrained reply (choices, a JSON schema, an env's reply format) that does not read back and
was cut at ``max_tokens`` (``finish_reason`` ``"length"``) is sent again *at once* with twice
the budget: the same greedy request would be cut at the same place. The budget grows up to
:data:`MAX_BUDGET_GROWTH` times the first and to what the context leaves (the context window
minus the prompt tokens the server reported); when it cannot grow,
:class:`~lang_pz.error.InvalidReplyError` is raised without further attempts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, stop_any

from lang_pz.backends.base import GenerationRequest
from lang_pz.backends.openai_replies import (
    CUT_AT_MAX_TOKENS,
    ReplyError,
    failure_kind,
    finish_reason,
    reply_choice,
    reply_in_format,
    reply_text,
    stop_on_dns_failure,
    token_count,
)
from lang_pz.backends.openai_requests import Decoding
from lang_pz.backends.retry import Backoff
from lang_pz.error import InvalidReplyError

#: A constrained reply cut at ``max_tokens`` is retried with at most this many times the first budget.
MAX_BUDGET_GROWTH = 8


def read_reply(raw: bytes, request: GenerationRequest, how: Decoding) -> tuple[str, dict[str, Any]]:
    """``(text, body)`` of a 200 reply: the choice, the reply in the env's format, or the text.

    Raises:
        ReplyError: the body is not JSON or not a completion, or the reply is outside the
            choices / the format, or a cut JSON document (see the module docstring).
    """
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, "[[[[..."
        raise ReplyError("malformed JSON", f"{exc} in a body starting {raw[:120]!r}") from None
    text = reply_text(body, request.messages is not None)
    if request.choices is not None:
        text = reply_choice(text, request.choices, how.choice_json)
    elif how.reply_checked:
        assert request.pattern is not None
        text = reply_in_format(text, request.pattern, request.stop, how.reply_json)
    elif request.json_schema is not None and finish_reason(body) == "length":
        try:
            json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise ReplyError("malformed reply", f"{exc} in {text[:200]!r}") from None
    return text, body


def grown_budget(budget: int, first: int, context: int | None, prompt_tokens: int) -> int | None:
    """The next ``max_tokens`` for a reply cut at ``budget`` (``None``: it cannot grow).

    Twice ``budget``, at most :data:`MAX_BUDGET_GROWTH` x ``first`` and, when the context window
    and the prompt's tokens are known, what the context leaves.
    """
    grown = min(2 * budget, MAX_BUDGET_GROWTH * first)
    if context is not None and prompt_tokens:
        grown = min(grown, context - prompt_tokens)
    return grown if grown > budget else None


def send(
    post: Callable[[dict[str, Any]], bytes],
    body: dict[str, Any],
    request: GenerationRequest,
    how: Decoding,
    *,
    context: int | None,
    max_attempts: int,
    backoff: Backoff,
    sleep: Callable[[float], None],
    on_retry: Callable[[RetryCallState, str], None],
    where: str,
) -> tuple[str, dict[str, Any]]:
    """Post ``body`` until a usable reply comes back; ``(text, reply body)``.

    Args:
        post: sends a body and returns the reply's bytes (raises what the ``openai`` client raises).
        body: the request's JSON body (its ``max_tokens`` is the first budget).
        request: the request (how its reply is read).
        how: how it was constrained (:func:`~lang_pz.backends.openai_requests.decoding`).
        context: the model's context window in tokens, if known (bounds a grown budget).
        max_attempts: attempts in all.
        backoff: the waits between attempts.
        sleep: waits (tests record them).
        on_retry: called with the failed attempt's state and its kind before each retry.
        where: names the endpoint and model in messages.

    Raises:
        Exception: the last attempt's failure, as raised (the caller makes it a
            :class:`~lang_pz.error.BackendError`); :class:`~lang_pz.error.InvalidReplyError` for
            a cut reply whose budget cannot grow.
    """
    first = budget = int(body["max_tokens"])

    def attempt() -> tuple[str, dict[str, Any]]:
        nonlocal budget
        raw = post({**body, "max_tokens": budget})
        try:
            return read_reply(raw, request, how)
        except ReplyError as exc:
            try:
                reply = json.loads(raw)
            except (ValueError, RecursionError):
                raise exc from None
            if finish_reason(reply) != "length":
                raise
            grown = grown_budget(budget, first, context, token_count(reply.get("usage"), "prompt_tokens"))
            if grown is None:
                raise InvalidReplyError(
                    f"{where}: the reply was cut at max_tokens={budget} ({exc}), and the budget cannot grow further "
                    f"(at most {MAX_BUDGET_GROWTH}x the request's, and what the context leaves): raise the "
                    "request's max_tokens or shorten the prompt"
                ) from None
            before, budget = budget, grown
            raise ReplyError(CUT_AT_MAX_TOKENS, f"{exc}; sent again with max_tokens={budget} (was {before})") from None

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        on_retry(state, (failure_kind(exc) if exc is not None else None) or "?")

    def wait(state: RetryCallState) -> float:  # a larger budget is worth trying at once
        exc = state.outcome.exception() if state.outcome is not None else None
        return 0.0 if isinstance(exc, ReplyError) and exc.kind == CUT_AT_MAX_TOKENS else backoff(state)

    retrying = Retrying(
        stop=stop_any(stop_after_attempt(max_attempts), stop_on_dns_failure),  # type: ignore[arg-type]  # stop_any calls any stop callable; its hint says stop_base
        wait=wait,
        retry=retry_if_exception(lambda e: failure_kind(e) is not None),
        before_sleep=before_sleep,
        sleep=sleep,
        reraise=True,
    )
    return retrying(attempt)
