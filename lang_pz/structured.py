"""Ask an LLM for a reply that must validate against a pydantic model, with retries.

Every critic, gradient and optimiser reply goes through :func:`ask_structured`: the reply is
schema-constrained, parsed and validated by pydantic, checked by an optional semantic
validator, and on failure the request is rebuilt with the errors so far and retried. After
the last attempt a :class:`lang_pz.error.SchemaValidationError` is raised: nothing is ever
silently replaced by a default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend
from lang_pz.error import SchemaValidationError

M = TypeVar("M", bound=BaseModel)


def ask_structured(
    backend: LLMBackend,
    build_request: Callable[[list[str]], GenerationRequest],
    model: type[M],
    *,
    what: str,
    max_attempts: int = 3,
    validate: Callable[[M], None] | None = None,
) -> tuple[M, list[Generation]]:
    """Generate until the reply validates as ``model``; return it and every generation made.

    Args:
        backend: the LLM.
        build_request: makes the request from the error messages of earlier attempts
            (empty on the first attempt), so the prompt can show them.
        model: the pydantic model the reply must parse into (the JSON schema sent is
            ``build_request``'s to choose; usually ``model.model_json_schema()``).
        what: names the reply in error messages (e.g. ``"critic reply"``).
        max_attempts: attempts in all (>= 1).
        validate: extra semantic check; raise ``ValueError`` with a message to reject.

    Raises:
        SchemaValidationError: no attempt validated; carries the last raw reply and all errors.
        lang_pz.error.BackendError: the backend failed.
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
    errors: list[str] = []
    generations: list[Generation] = []
    raw = ""
    for _ in range(max_attempts):
        gen = backend.generate(build_request(list(errors)))
        generations.append(gen)
        raw = gen.text
        try:
            value = model.model_validate_json(raw)
            if validate is not None:
                validate(value)
        except ValidationError as exc:
            errors.append("; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()))
            continue
        except ValueError as exc:
            errors.append(str(exc))
            continue
        return value, generations
    raise SchemaValidationError(what, raw, errors)


def retry_note(errors: list[str]) -> str:
    """Prompt text telling the model why its previous replies were rejected ('' if none)."""
    if not errors:
        return ""
    return "Your previous reply was rejected: " + errors[-1][:300] + "\nReply again, correctly.\n"
