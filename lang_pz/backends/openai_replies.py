"""What the replies of an OpenAI-compatible server mean, for :class:`~lang_pz.backends.openai.OpenAIBackend`.

- :func:`reply_text`: the text of a chat.completion / text_completion body, checked field by
  field (a server may send any JSON: ``choices`` missing or empty, ``message`` null, a number
  for ``content``); each defect raises :class:`ReplyError` with its kind;
- :func:`failure_kind`: which failures are retried, by kind (``"timeout"``, ``"HTTP 503"``,
  ``"malformed JSON"``...);
- :func:`context_figures`: whether an HTTP error says the prompt is over the model's context,
  and the counts it gives (OpenAI, vLLM and llama-cpp-python's server all use
  ``"This model's maximum context length is N tokens ... (P in the messages, ...)"`` with code
  ``context_length_exceeded``);
- :func:`public_url`, :func:`dns_failure` / :func:`stop_on_dns_failure` (a host name that does
  not resolve gets :data:`DNS_ATTEMPTS` attempts), :func:`schema_name`.
"""

from __future__ import annotations

import re
import socket
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai
from tenacity import RetryCallState

_CONTEXT = re.compile(
    r"context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long", re.IGNORECASE
)


def choice_schema(choices: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The JSON schema a ``choices`` request is sent as: ``{"choice": <enum>}``."""
    return {
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": list(dict.fromkeys(choices))}},
        "required": ["choice"],
        "additionalProperties": False,
    }


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
        return f"HTTP {code}" if code in (408, 429) or code >= 500 else None
    if isinstance(exc, ReplyError):
        return exc.kind
    return None


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


def schema_name(schema: dict[str, Any]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))
    return name[:64] or "response"
