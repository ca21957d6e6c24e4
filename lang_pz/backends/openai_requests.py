"""What :class:`~lang_pz.backends.openai.OpenAIBackend` sends: the endpoint path and JSON body of one request.

A chat request (``messages=``) goes to ``/chat/completions``; a completion-format request
(``prompt=``) to ``/completions``. Structured output differs by server, hence
:data:`StructuredOutput`:

- ``"json_schema"`` (OpenAI, vLLM, Ollama): ``{"type": "json_schema", "json_schema":
  {"name": ..., "schema": S}}``;
- ``"json_object"`` (llama-cpp-python's server): ``{"type": "json_object", "schema": S}``.

A ``choices`` request asks for ``{"choice": <one of the enum>}`` (:func:`choice_schema`); its
``max_tokens`` gets :data:`JSON_CHOICE_TOKENS` more for the JSON around the choice (the caller's
budget is for the choice: an empty skill library's ``"none"`` got 6 tokens, and the server
stopped at ``'{ "choice"'``).
``/completions`` has no standard structured-output field: with ``"json_object"`` constraints
are sent as llama-cpp-python's ``grammar`` field (:func:`completion_grammar`).

An env's reply format (a request's ``grammar`` and ``pattern``, :mod:`lang_pz.text.replies`)
reaches the server as :data:`ConstrainedDecoding` says (:func:`decoding`):

- ``"llama_cpp"``: the GBNF grammar in the body's ``grammar`` field (llama-cpp-python's server
  takes it on ``/completions`` and ``/chat/completions``);
- ``"vllm"``: vLLM's ``structured_outputs`` field (vLLM >= 0.10.2; the only form since 0.12):
  ``{"regex": pattern}``; a ``choices`` request as ``{"choice": [...]}`` and a completion-format
  ``json_schema`` request as ``{"json": schema}`` (the reply is then the choice itself);
- ``"vllm_guided"``: the same in the fields of vLLM before 0.12 (``guided_regex``,
  ``guided_choice``, ``guided_json``);
- ``"json_schema"``: a chat request's ``response_format`` asks for ``{"reply": <a string
  matching the pattern>}`` (:func:`reply_schema`; OpenAI, Ollama and other servers with
  JSON-schema structured output; sent in the ``structured_output`` form) and the backend
  unwraps the string (the request's stop sequences are applied to it, not sent: a ``"`` would
  end the JSON; ``max_tokens`` gets :data:`JSON_REPLY_TOKENS` more); completion-format requests stay free text (``/completions`` has no
  standard field for a schema);
- ``"off"``: free text (the env's fallback handles what does not parse);
- ``"auto"`` (default): ``"llama_cpp"`` with ``structured_output="json_object"``, else ``"off"``.

Every constrained reply is checked against the pattern when it comes back (a reply outside
it is retried like any unusable reply): a server that ignores a field it does not know would
otherwise pass free text off as constrained.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from lang_pz.backends.base import GenerationRequest
from lang_pz.backends.llama_cpp import choices_gbnf
from lang_pz.error import BackendError

#: How a server takes a JSON schema (see the module docstring).
StructuredOutput = Literal["json_schema", "json_object"]
#: The ``structured_output`` option: a form, or ``"auto"`` (the start-up check asks the server).
StructuredOutputOption = Literal["auto", "json_schema", "json_object"]
#: How a server is asked to keep a reply to an env's reply format (see the module docstring).
ConstrainedDecoding = Literal["auto", "llama_cpp", "vllm", "vllm_guided", "json_schema", "off"]
CONSTRAINED_DECODING: tuple[str, ...] = ("auto", "llama_cpp", "vllm", "vllm_guided", "json_schema", "off")
#: Tokens added to ``max_tokens`` for the ``{"reply": ...}`` around a reply (``"json_schema"`` mode).
JSON_REPLY_TOKENS = 16
#: Tokens added to ``max_tokens`` for the ``{"choice": ...}`` around a chat request's choice
#: (``{ "choice": "`` and ``" }`` take 7 on SmolLM2's tokenizer; a JSON grammar allows spaces).
JSON_CHOICE_TOKENS = 16
_VLLM_FIELDS = {
    "vllm": ("structured_outputs", {"regex": "regex", "choice": "choice", "json": "json"}),
    "vllm_guided": (None, {"regex": "guided_regex", "choice": "guided_choice", "json": "guided_json"}),
}


@dataclass(frozen=True)
class Decoding:
    """How one request is constrained, and so how its reply reads back.

    Attributes:
        mode: the resolved :data:`ConstrainedDecoding` (never ``"auto"``).
        choice_json: a ``choices`` reply is ``{"choice": ...}`` (else the choice itself).
        reply_json: a reply-format reply is ``{"reply": ...}`` (the ``"json_schema"`` mode).
        reply_checked: the reply was constrained to ``request.pattern`` and is checked against it.
    """

    mode: str
    choice_json: bool
    reply_json: bool
    reply_checked: bool


def resolve_mode(mode: str, structured_output: StructuredOutput) -> str:
    """``mode`` with ``"auto"`` resolved (``"llama_cpp"`` for a ``"json_object"`` server, else ``"off"``).

    Raises:
        ValueError: ``mode`` is not one of :data:`CONSTRAINED_DECODING`.
    """
    if not isinstance(mode, str) or mode not in CONSTRAINED_DECODING:
        close = (
            difflib.get_close_matches(mode.replace("-", "_").lower(), CONSTRAINED_DECODING, n=1)
            if isinstance(mode, str)
            else []
        )
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"constrained_decoding must be one of {', '.join(map(repr, CONSTRAINED_DECODING))}, got {mode!r}{hint}"
        )
    if mode == "auto":
        return "llama_cpp" if structured_output == "json_object" else "off"
    return mode


def decoding(request: GenerationRequest, structured_output: StructuredOutput, mode: str) -> Decoding:
    """How ``request`` is sent under ``mode`` (see the module docstring)."""
    mode = resolve_mode(mode, structured_output)
    chat = request.messages is not None
    vllm = mode in _VLLM_FIELDS
    if request.pattern is None and request.grammar is None:
        checked = False
    elif mode == "llama_cpp":
        checked = request.grammar is not None and request.pattern is not None
    elif vllm:
        checked = request.pattern is not None
    elif mode == "json_schema":
        checked = chat and request.pattern is not None
    else:
        checked = False
    return Decoding(mode, choice_json=chat and not vllm, reply_json=checked and mode == "json_schema", reply_checked=checked)


def json_tokens(request: GenerationRequest, how: Decoding) -> int:
    """Tokens added to ``request.max_tokens`` for the JSON the server wraps the reply in:
    :data:`JSON_REPLY_TOKENS` around a reply format's ``{"reply": ...}``, :data:`JSON_CHOICE_TOKENS`
    around a chat choice's ``{"choice": ...}``, else 0."""
    if how.reply_json:
        return JSON_REPLY_TOKENS
    return JSON_CHOICE_TOKENS if how.choice_json and request.choices is not None else 0


def schema_pattern(regex: str) -> str:
    """``regex`` (a :mod:`lang_pz.text.replies` pattern) as a JSON-schema ``pattern``: anchored
    (``^...$``), plain groups for ``(?:``, escaped characters written out, and regex
    metacharacters as one-character classes (``[.]``): llama.cpp's schema converter, behind
    llama.cpp's and Ollama's servers, takes no ``(?:``, mangles ``\\xHH`` outside a character
    class and copies ``\\.`` into a GBNF literal, where llama.cpp refuses it (its server process
    then ends). The language is the same."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\" and i + 1 < len(regex):
            m = re.match(r"x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})", regex[i + 1 :])
            if m is None:
                out.append(regex[i : i + 2])
                i += 2
                continue
            ch = chr(int(m.group(1) or m.group(2), 16))
            i += 1 + m.end()
            if ord(ch) < 0x20 or ord(ch) == 0x7F or ch in "[]\\^-":
                out.append(f"\\x{ord(ch):02X}" if in_class else f"[\\x{ord(ch):02X}]")
            elif not in_class and ch in ".$|?*+(){}":
                out.append(f"[{ch}]")  # not "\\.": the converter copies such escapes into GBNF, which refuses them
            else:
                out.append(ch)
            continue
        if not in_class and regex.startswith("(?:", i):
            out.append("(")
            i += 3
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "^" + "".join(out) + "$"


def reply_schema(pattern: str) -> dict[str, Any]:
    """The JSON schema a reply format is sent as in the ``"json_schema"`` mode: ``{"reply":
    <a string matching pattern>}``."""
    return {
        "title": "reply",
        "type": "object",
        "properties": {"reply": {"type": "string", "pattern": schema_pattern(pattern)}},
        "required": ["reply"],
        "additionalProperties": False,
    }


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


def _vllm_field(body: dict[str, Any], mode: str, kind: str, value: Any) -> None:
    container, names = _VLLM_FIELDS[mode]
    if container is None:
        body[names[kind]] = value
    else:
        body.setdefault(container, {})[names[kind]] = value


def request_body(
    request: GenerationRequest,
    model: str,
    structured_output: StructuredOutput,
    endpoint: str,
    constrained_decoding: str = "auto",
) -> tuple[str, dict[str, Any]]:
    """``(path, body)``: where ``request`` is posted (``"/chat/completions"`` or
    ``"/completions"``) and its JSON body (constraints as :func:`decoding` says).

    Raises:
        BackendError: a constrained completion request the server cannot take
            (:func:`completion_grammar`).
        ValueError: an unknown ``constrained_decoding``.
    """
    how = decoding(request, structured_output, constrained_decoding)
    chat = request.messages is not None
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "temperature": float(request.temperature),
    }
    if request.seed is not None:
        body["seed"] = int(request.seed)
    if request.stop and not how.reply_json:
        body["stop"] = list(request.stop)
    body["max_tokens"] = request.max_tokens + json_tokens(request, how)
    if how.mode in _VLLM_FIELDS:
        if request.choices is not None:
            _vllm_field(body, how.mode, "choice", list(dict.fromkeys(request.choices)))
        elif request.json_schema is not None:
            if chat:
                body["response_format"] = response_format(request.json_schema, structured_output)
            else:
                _vllm_field(body, how.mode, "json", request.json_schema)
        elif request.pattern is not None:
            _vllm_field(body, how.mode, "regex", request.pattern)
    elif chat:
        if request.choices is not None:
            body["response_format"] = response_format(choice_schema(request.choices), structured_output)
        elif request.json_schema is not None:
            body["response_format"] = response_format(request.json_schema, structured_output)
        elif request.grammar is not None and how.mode == "llama_cpp":
            body["grammar"] = request.grammar  # llama-cpp-python's server takes a GBNF grammar on chat too
        elif how.reply_checked and how.mode == "json_schema":
            assert request.pattern is not None
            body["response_format"] = response_format(reply_schema(request.pattern), structured_output)
    else:
        plain = request.grammar is not None or request.pattern is not None
        if plain:
            grammar = request.grammar if how.mode == "llama_cpp" else None
        elif how.mode == "llama_cpp" and request.choices is not None:
            grammar = choices_gbnf(request.choices)  # a llama.cpp server, whatever structured_output says
        else:
            grammar = completion_grammar(request, structured_output, endpoint)
        if grammar is not None:
            body["grammar"] = grammar
    if chat:
        assert request.messages is not None
        body["messages"] = [{"role": m.role, "content": m.content} for m in request.messages]
    else:
        body["prompt"] = request.prompt
    return ("/chat/completions" if chat else "/completions"), body
