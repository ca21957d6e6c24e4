"""What :class:`~lang_pz.backends.openai.OpenAIBackend` sends: the endpoint path and JSON body of one request.

A chat request (``messages=``) goes to ``/chat/completions``; a completion-format request
(``prompt=``) to ``/completions``. Structured output differs by server, hence
:data:`StructuredOutput`:

- ``"json_schema"`` (OpenAI, vLLM, Ollama): ``{"type": "json_schema", "json_schema":
  {"name": ..., "schema": S}}``;
- ``"json_object"`` (llama-cpp-python's server): ``{"type": "json_object", "schema": S}``.

A ``choices`` request asks for ``{"choice": <one of the enum>}`` (:func:`choice_schema`).
``/completions`` has no standard structured-output field: with ``"json_object"`` constraints
are sent as llama-cpp-python's ``grammar`` field (:func:`completion_grammar`). A ``grammar``
request (an env's reply format) is sent as that ``grammar`` field to a llama.cpp server
(``"json_object"``, chat and completion alike) and as free text elsewhere: wrapping it in a
JSON-schema ``pattern`` would change the reply's form (a JSON document), which the policy's env
would then have to unwrap.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from lang_pz.backends.base import GenerationRequest
from lang_pz.backends.llama_cpp import choices_gbnf
from lang_pz.error import BackendError

#: How a server takes a JSON schema (see the module docstring).
StructuredOutput = Literal["json_schema", "json_object"]


def choice_schema(choices: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The JSON schema a ``choices`` request is sent as: ``{"choice": <enum>}``."""
    return {
        "type": "object",
        "properties": {"choice": {"type": "string", "enum": list(dict.fromkeys(choices))}},
        "required": ["choice"],
        "additionalProperties": False,
    }


def schema_name(schema: dict[str, Any]) -> str:
    """The ``json_schema.name`` OpenAI requires: the schema's title (default ``"response"``),
    reduced to ``[A-Za-z0-9_-]`` and at most 64 characters."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))
    return name[:64] or "response"


def response_format(schema: dict[str, Any], structured_output: StructuredOutput) -> dict[str, Any]:
    """The chat request's ``response_format`` constraining the reply to ``schema``."""
    if structured_output == "json_object":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": schema_name(schema), "schema": schema}}


def completion_grammar(request: GenerationRequest, structured_output: StructuredOutput, endpoint: str) -> str | None:
    """The GBNF ``grammar`` of a completion-format request with ``choices`` or ``json_schema``
    (``None`` without either).

    Args:
        request: the request.
        structured_output: the server's structured-output mode.
        endpoint: names the endpoint in error messages, e.g. ``"http://host/v1 (model)"``.

    Raises:
        BackendError: ``structured_output="json_schema"`` (no standard form for a constrained
            completion request), or a ``json_schema`` with llama-cpp-python not installed
            (its converter builds the grammar).
    """
    if request.grammar is not None:  # a reply format: a grammar where the server takes one, else free text
        return request.grammar if structured_output == "json_object" else None
    if request.choices is None and request.json_schema is None:
        return None
    if structured_output != "json_object":
        raise BackendError(
            f"{endpoint}: choices=/json_schema= on a completion-format "
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


def request_body(
    request: GenerationRequest, model: str, structured_output: StructuredOutput, endpoint: str
) -> tuple[str, dict[str, Any]]:
    """``(path, body)``: where ``request`` is posted (``"/chat/completions"`` or
    ``"/completions"``) and its JSON body.

    Raises:
        BackendError: a constrained completion request the server cannot take
            (:func:`completion_grammar`).
    """
    chat = request.messages is not None
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "temperature": float(request.temperature),
    }
    if request.seed is not None:
        body["seed"] = int(request.seed)
    if request.stop:
        body["stop"] = list(request.stop)
    if chat:
        assert request.messages is not None
        if request.choices is not None:
            body["response_format"] = response_format(choice_schema(request.choices), structured_output)
        elif request.json_schema is not None:
            body["response_format"] = response_format(request.json_schema, structured_output)
        elif request.grammar is not None and structured_output == "json_object":
            body["grammar"] = request.grammar  # llama-cpp-python's server takes a GBNF grammar on chat too
        body["messages"] = [{"role": m.role, "content": m.content} for m in request.messages]
    else:
        grammar = completion_grammar(request, structured_output, endpoint)
        if grammar is not None:
            body["grammar"] = grammar
        body["prompt"] = request.prompt
    return ("/chat/completions" if chat else "/completions"), body
