"""Ask an LLM for a JSON object, validate it, and retry with the errors shown.

Everything the critic and the optimiser get from the model goes through :func:`ask_structured`:
the request carries the pydantic model's JSON schema (constrained decoding makes a
well-formed reply likely on backends that support it), the reply is parsed by pydantic, an
optional semantic check runs, and on failure the request is rebuilt with the error messages
so far (the prompt can show them to the model). After ``max_attempts`` failures it raises
:class:`~lang_pz.error.SchemaValidationError`; nothing is ever replaced by a default — the
anti-pattern of handing an unparsable critique to every agent is what this module prevents.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import pydantic

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend
from lang_pz.error import SchemaValidationError

M = TypeVar("M", bound=pydantic.BaseModel)

#: Longest error message passed back to the prompt (long pydantic dumps confuse small models).
MAX_ERROR_CHARS = 300


def format_validation_error(exc: Exception) -> str:
    """A short, one-line description of a pydantic or semantic validation error."""
    if isinstance(exc, pydantic.ValidationError):
        parts = []
        for err in exc.errors()[:3]:
            loc = ".".join(str(x) for x in err.get("loc", ())) or "reply"
            msg = err.get("msg", "invalid")
            if err.get("type") == "json_invalid":
                msg = "the reply is not valid JSON" + (f" ({err.get('ctx', {}).get('error')})" if err.get("ctx") else "")
            parts.append(f"{loc}: {msg}")
        if exc.error_count() > 3:
            parts.append(f"and {exc.error_count() - 3} more error(s)")
        text = "; ".join(parts)
    else:
        text = str(exc)
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 3] + "..."


def _reject_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    dups = sorted({k for k in keys if keys.count(k) > 1})
    if dups:
        raise ValueError(f"duplicate key(s) {', '.join(repr(k) for k in dups)}: give each key once")
    return dict(pairs)


#: The deepest nesting of arrays and objects a reply may have; a deeper one is refused before
#: parsing, whatever the interpreter's recursion limit (which other libraries raise).
MAX_JSON_DEPTH = 64


def _nesting_depth(raw: str) -> int:
    """The deepest ``[``/``{`` nesting of ``raw`` outside strings (an upper bound for broken JSON)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_json_reply(model: type[M], raw: str) -> M:
    """Parse ``raw`` into ``model``; a key repeated in one JSON object is an error.

    Raises:
        pydantic.ValidationError: the JSON does not match the model.
        ValueError: not JSON, nested too deeply for the parser, or a duplicated key.
    """
    if _nesting_depth(raw) > MAX_JSON_DEPTH:  # e.g. a small model repeating "[" until max_tokens
        raise ValueError("the reply nests arrays or objects too deeply: give one flat JSON object")
    try:
        data = json.loads(raw, object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not valid JSON ({exc.msg} at char {exc.pos})") from exc
    except RecursionError:
        raise ValueError("the reply nests arrays or objects too deeply: give one flat JSON object") from None
    return model.model_validate(data)


def rejection_note(errors: Sequence[str]) -> str:
    """Text telling the model why its last reply was rejected (``""`` on the first attempt)."""
    return f"\nYour previous reply was rejected: {errors[-1]}\nFix this in your new reply." if errors else ""


def attempt_sampling(errors: Sequence[str], temperature: float, retry_temperature: float, seed: int) -> dict[str, Any]:
    """``temperature`` and ``seed`` of attempt ``len(errors)``: the first at ``temperature``, the
    retries at least ``retry_temperature`` (a greedy retry of a nearly identical prompt tends to
    repeat the mistake), each with its own seed ``seed + attempt``."""
    attempt = len(errors)
    return {
        "temperature": temperature if attempt == 0 else max(temperature, retry_temperature),
        "seed": seed + attempt,
    }


def ask_structured(
    backend: LLMBackend,
    build_request: Callable[[list[str]], GenerationRequest],
    model: type[M],
    *,
    what: str,
    max_attempts: int = 3,
    validate: Callable[[M], None] | None = None,
) -> tuple[M, list[Generation]]:
    """Get a reply that validates against ``model`` (and ``validate``), retrying on failure.

    Args:
        backend: the LLM backend.
        build_request: ``errors -> request``; ``errors`` holds the error message of every
            failed attempt so far (empty on the first), for the prompt to show. The request's
            ``json_schema`` must be ``model.model_json_schema()`` (it is set if left ``None``).
        model: the pydantic model the reply must parse into.
        what: what is being asked for, for the error message (e.g. ``"critic report"``).
        max_attempts: attempts before giving up (>= 1).
        validate: extra semantic check; raises ``ValueError`` with a message for the model.

    Returns:
        ``(parsed reply, every Generation made, oldest first)``.

    Raises:
        SchemaValidationError: no attempt validated; carries the last raw reply and all errors.
        ValueError: ``max_attempts < 1`` or a request with a different JSON schema.
        BackendError: the backend failed (not retried here).
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
    schema = model.model_json_schema()
    errors: list[str] = []
    generations: list[Generation] = []
    raw = ""
    for _ in range(max_attempts):
        request = build_request(list(errors))
        if request.json_schema is None:
            request = replace(request, json_schema=schema)
        elif request.json_schema != schema:
            raise ValueError(f"{what}: the request's json_schema is not {model.__name__}.model_json_schema()")
        gen = backend.generate(request)
        generations.append(gen)
        raw = gen.text
        try:
            parsed = parse_json_reply(model, raw)
            if validate is not None:
                validate(parsed)
        except ValueError as exc:  # pydantic.ValidationError is a ValueError
            errors.append(format_validation_error(exc))
            continue
        return parsed, generations
    raise SchemaValidationError(what, raw, errors)


def generation_usage(generations: Sequence[Generation]) -> dict[str, float]:
    """Summed ``calls``, ``prompt_tokens``, ``completion_tokens`` and ``latency_s`` (seconds,
    rounded to ms) of ``generations`` (e.g. those :func:`ask_structured` returned)."""
    return {
        "calls": len(generations),
        "prompt_tokens": sum(g.prompt_tokens for g in generations),
        "completion_tokens": sum(g.completion_tokens for g in generations),
        "latency_s": round(sum(g.latency_s for g in generations), 3),
    }


def repeated_phrase(text: str, n: int = 4, times: int = 3) -> str | None:
    """The first ``n``-word phrase occurring at least ``times`` times in ``text``, else ``None``.

    Small models degenerate into repeating a phrase until the length limit; a validator can
    reject that with a message the model can act on.
    """
    words = text.lower().split()
    grams = Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    for gram, count in grams.items():
        if count >= times:
            return " ".join(gram)
    return None
