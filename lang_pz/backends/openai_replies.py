"""What the replies and failures of an OpenAI-compatible server mean, for :class:`~lang_pz.backends.openai.OpenAIBackend`.

- :func:`reply_text`: the text of a chat.completion / text_completion body, checked field by
  field (a server may send any JSON: ``choices`` missing or empty, ``message`` null, a number
  for ``content``); each defect raises :class:`ReplyError` with its kind; :func:`reply_choice`:
  the choice a ``choices`` request got; :func:`reply_in_format`: the reply of a request
  constrained to an env's reply format, checked against it;
- :func:`failure_kind`: which failures are retried, by kind (``"timeout"``, ``"HTTP 503"``,
  ``"malformed JSON"``, ``"cut at max_tokens"``...); not a 5xx that says the request itself is
  invalid (:func:`invalid_request`: llama-cpp-python answers a request it cannot validate with
  HTTP 500 ``"1 validation error ... Input should be 'text' or 'json_object'"``), which the same
  request would get again; :func:`retry_after`: the wait a failed request's server asked for;
- :func:`context_figures`: whether an HTTP error says the prompt is over the model's context,
  and the counts it gives (OpenAI, vLLM and llama-cpp-python's server all use
  ``"This model's maximum context length is N tokens ... (P in the messages, ...)"`` with code
  ``context_length_exceeded``);
- :func:`describe` and :func:`final_error`: what a failure says, and the
  :class:`~lang_pz.error.BackendError` the last failure of a request becomes;
- :func:`public_url`, :func:`dns_failure` / :func:`stop_on_dns_failure` (a host name that does
  not resolve gets :data:`DNS_ATTEMPTS` attempts).
"""

from __future__ import annotations

import json
import re
import socket
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai
from tenacity import RetryCallState

from lang_pz.backends.openai_requests import choice_schema, schema_name  # noqa: F401  (re-exported)
from lang_pz.backends.retry import retry_after_s
from lang_pz.error import BackendError, BackendUnavailableError, InvalidReplyError, PromptTooLongError

_CONTEXT = re.compile(r"context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long", re.IGNORECASE)
_INVALID = re.compile(
    r"validation error|Input should be|Extra inputs are not permitted|invalid[ _]request|response_format", re.IGNORECASE
)
#: The retried failure of a constrained reply cut at ``max_tokens`` (retried with a larger budget).
CUT_AT_MAX_TOKENS = "cut at max_tokens"


class ReplyError(Exception):
    """A 200 whose reply cannot be used (retried; the last one becomes
    :class:`~lang_pz.error.InvalidReplyError`). ``kind`` names the defect."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


def failure_kind(exc: BaseException) -> str | None:
    """What kind of retryable failure ``exc`` is (``"timeout"``, ``"HTTP 503"``...), or
    ``None`` if it is not retried (e.g. HTTP 400/401/404)."""
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection error"
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        retried = code in (408, 429) or (code >= 500 and not invalid_request(exc))
        return f"HTTP {code}" if retried else None
    if isinstance(exc, ReplyError):
        return exc.kind
    return None


def invalid_request(exc: BaseException) -> bool:
    """Whether ``exc`` is an HTTP 500/501 whose body says the request itself is invalid (a
    validation error, an ``invalid_request_error``, a refused ``response_format``): the same
    request gets the same answer, so it is not retried. 502/503/504 never are."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (500, 501):
        return False
    return getattr(exc, "type", None) == "invalid_request_error" or bool(_INVALID.search(str(exc.message)))


def rejects_json_schema(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a server refusing ``response_format`` of type ``json_schema`` and naming
    ``json_object`` instead (llama-cpp-python's server)."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422, 500):
        return False
    text = str(exc.message)
    return "json_object" in text and ("json_schema" in text or "response_format" in text)


def finish_reason(body: Any) -> str | None:
    """The first choice's ``finish_reason`` (``"stop"``, ``"length"``...), or ``None``."""
    choices = body.get("choices") if isinstance(body, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    reason = first.get("finish_reason") if isinstance(first, dict) else None
    return reason if isinstance(reason, str) else None


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server of the failed request ``exc`` asked to wait (its ``Retry-After``
    headers, :func:`~lang_pz.backends.retry.retry_after_s`), or ``None``."""
    response = getattr(exc, "response", None)
    return retry_after_s(getattr(response, "headers", None))


def reply_text(body: Any, chat: bool) -> str:
    """The first choice's text in a chat.completion / text_completion body.

    Raises:
        ReplyError: ``"empty choices"`` or ``"malformed reply"`` (wrong shape or types).
    """
    if not isinstance(body, dict):
        raise ReplyError("malformed reply", f"the body is a JSON {type(body).__name__}, not an object")
    choices = body.get("choices")
    if not choices:
        err = body.get("error")
        raise ReplyError("empty choices", f"no choices in the reply{f' (error: {err!r:.200})' if err else ''}")
    first = choices[0] if isinstance(choices, list) else None
    if chat:
        message = first.get("message") if isinstance(first, dict) else None
        text = message.get("content", "") if isinstance(message, dict) else None
        text = "" if text is None and isinstance(message, dict) else text
    else:
        text = first.get("text") if isinstance(first, dict) else None
    if not isinstance(text, str):
        raise ReplyError("malformed reply", f"no text in the first choice: {first!r:.200}")
    return text


def reply_choice(text: str, choices: Sequence[str], wrapped: bool) -> str:
    """The choice a ``choices`` request got: ``text`` itself (constrained by a grammar or vLLM's
    choice field) or, ``wrapped``, its ``{"choice": ...}`` (constrained by a JSON schema).

    Raises:
        ReplyError: ``"reply outside the choices"`` (not that JSON, or not one of ``choices``).
    """
    choice: Any = text
    if wrapped:
        try:
            choice = json.loads(text)["choice"]
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            raise ReplyError(
                "reply outside the choices",
                f'asked for {{"choice": ...}}, got {text[:300]!r} ({type(exc).__name__}: {exc})',
            ) from None
    if choice not in choices:
        raise ReplyError("reply outside the choices", f"{choice!r:.300} is not one of {list(choices)!r}")
    return str(choice)


def reply_in_format(text: str, pattern: str, stop: Sequence[str], wrapped: bool) -> str:
    """The reply of a request constrained to an env's reply format (``pattern``, a whole-reply
    regex): ``text`` itself (one stop sequence the server left at its end is cut: a completion
    grammar may end a reply with it) or, ``wrapped``, the string of its ``{"reply": ...}`` cut at
    its first stop sequence.

    Raises:
        ReplyError: ``"reply outside the format"`` (not that JSON, or no match of ``pattern``):
            the server did not constrain the reply (e.g. it ignored a field it does not know).
    """
    reply: Any = text
    if wrapped:
        try:
            reply = json.loads(text)["reply"]
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            raise ReplyError(
                "reply outside the format",
                f'asked for {{"reply": ...}}, got {text[:300]!r} ({type(exc).__name__}: {exc})',
            ) from None
        if not isinstance(reply, str):
            raise ReplyError("reply outside the format", f'"reply" is a JSON {type(reply).__name__}, not a string')
        for s in stop:  # the request's stops, applied to the string (not sent: they would cut the JSON)
            reply = reply.split(s, 1)[0] if s else reply
    candidates = [reply] + [reply[: -len(s)] for s in stop if s and reply.endswith(s)]
    for candidate in candidates:
        if re.fullmatch(pattern, candidate) is not None:
            return candidate
    raise ReplyError("reply outside the format", f"{reply!r:.300} does not match the reply format {pattern[:200]!r}")


def token_count(usage: Any, name: str) -> int:
    """``usage[name]`` if it is an int >= 0, else 0 (token counts are reported, not trusted)."""
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def context_figures(exc: openai.APIStatusError) -> tuple[int | None, int | None] | None:
    """``(prompt tokens, context window)`` if ``exc`` says the prompt is over the model's context
    (either may be ``None`` when the message does not give it), else ``None``."""
    if exc.status_code not in (400, 413, 422):
        return None
    text = str(exc.message)
    if getattr(exc, "code", None) != "context_length_exceeded" and not _CONTEXT.search(text):
        return None

    def first(*patterns: str) -> int | None:
        for p in patterns:
            m = re.search(p, text, re.IGNORECASE)
            if m:
                return int(m.group(1))
        return None

    return (
        first(r"(\d+) in (?:the messages|your prompt)", r"requested tokens \((\d+)\)", r"resulted in (\d+) tokens"),
        first(r"maximum context length is (\d+)", r"context window of (\d+)", r"context length of (\d+)"),
    )


#: Attempts a host name that does not resolve gets (a DNS failure rarely heals within a minute).
DNS_ATTEMPTS = 2


def public_url(url: str) -> str:
    """``url`` without user:password and query string (which may carry credentials)."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def dns_failure(exc: BaseException | None) -> socket.gaierror | None:
    """The ``socket.gaierror`` (host name did not resolve) behind a connection error, if any."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, socket.gaierror):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def stop_on_dns_failure(state: RetryCallState) -> bool:
    """tenacity stop: a request has failed :data:`DNS_ATTEMPTS` times on name resolution."""
    exc = state.outcome.exception() if state.outcome is not None else None
    return state.attempt_number >= DNS_ATTEMPTS and dns_failure(exc) is not None


def describe(exc: BaseException) -> str:
    """What the failure ``exc`` says, on one line: ``HTTP <status>: <server message>``, the
    :class:`ReplyError`, or the transport error with its cause. Not redacted: the caller
    removes credentials before showing it."""
    if isinstance(exc, openai.APIStatusError):
        said = re.sub(r"^Error code: \d+ - ", "", str(exc.message))  # the client's prefix: the status is given
        said = re.split(r'\s+File "[^"]*", line \d+', said, maxsplit=1)[0]  # a traceback a Python server appends
        text = f"HTTP {exc.status_code}: {said}"
    elif isinstance(exc, ReplyError):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}"
        cause = exc.__cause__
        if isinstance(exc, openai.APIConnectionError) and cause is not None:
            text += f" ({type(cause).__name__}: {cause})"
    return " ".join(text.split())


def final_error(exc: BaseException, failures: Sequence[str], where: str, what: str, host: str | None) -> BackendError:
    """The lang_pz error for the final failure ``exc`` of a request.

    Args:
        exc: the last attempt's failure.
        failures: the kinds (:func:`failure_kind`) of the earlier, retried failures.
        where: names the endpoint and model, e.g. ``"LLM endpoint http://host/v1 (model 'm')"``.
        what: ``exc`` described (:func:`describe`), credentials removed.
        host: the endpoint's host name, for a DNS failure's message.

    Returns:
        ``exc`` itself if it is a :class:`~lang_pz.error.BackendError`;
        :class:`~lang_pz.error.InvalidReplyError` (the attempts ran out on an unusable reply) or
        :class:`~lang_pz.error.BackendUnavailableError` (on the transport or an HTTP status),
        counting the failures by kind; :class:`~lang_pz.error.PromptTooLongError` (the server
        says the prompt is over the model's context); else :class:`~lang_pz.error.BackendError`
        with the server's message and, for 401/403/404, what to check.
    """
    if isinstance(exc, BackendError):
        return exc
    kind = failure_kind(exc)
    if kind is not None:  # retried until the attempts ran out
        counts = Counter([*failures, kind])
        tally = ", ".join(f"{n} {k}" for k, n in counts.most_common())
        msg = f"{where} failed {sum(counts.values())} attempt(s) ({tally}); last: {what}."
        if isinstance(exc, ReplyError):
            return InvalidReplyError(
                msg + " Its replies are not usable chat completions: check that it supports "
                "response_format (use structured_output='json_object' for llama-cpp-python's "
                "server) and raise max_attempts if the failures are rare."
            )
        if dns_failure(exc) is not None:
            return BackendUnavailableError(
                msg + f" The host name {host!r} does not resolve (DNS): check its "
                "spelling in the base_url argument or OPENAI_BASE_URL, and the network."
            )
        return BackendUnavailableError(
            msg + " Check that the server is running and reachable at that address (the "
            "base_url argument or OPENAI_BASE_URL), or raise timeout_s / max_attempts."
        )
    if isinstance(exc, openai.APIStatusError):
        figures = context_figures(exc)
        if figures is not None:
            return PromptTooLongError(
                f"{where}: the prompt does not fit the model's context ({what}); shorten "
                "the prompt or lower max_tokens, or serve the model with a larger context",
                prompt_tokens=figures[0],
                context_window=figures[1],
            )
        msg = f"{where} refused the request: {what}"
        if rejects_json_schema(exc):
            msg += (
                ". This server does not take response_format json_schema: use structured_output='json_object' "
                "(or 'auto', the default, which asks the server at start-up)"
            )
        elif exc.status_code >= 500:
            msg += ". The server says the request itself is invalid: it was not retried"
        elif exc.status_code in (401, 403):
            msg += ". Check the API key (set OPENAI_API_KEY or pass api_key=; local servers usually need none)"
        elif exc.status_code == 404:
            msg += ". Check the model name and that base_url ends with /v1"
        return BackendError(msg)
    return BackendError(f"{where}: {what}")
