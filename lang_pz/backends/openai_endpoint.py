"""The start-up check of an OpenAI-compatible endpoint: who serves there, under which names, with
which context and which structured-output form (:func:`probe`, run once by
:meth:`~lang_pz.backends.openai.OpenAIBackend.check`).

What is asked, in order:

1. ``GET {base_url}/models``, once, with a short timeout: a refused connection, a host name
   that does not resolve or a connect timeout fails at once with
   :class:`~lang_pz.error.BackendUnavailableError` (not after a minute of retries); HTTP 503
   (llama.cpp's server while it loads its model), 502, 504 and 429 are waited out for up to
   :data:`STARTUP_WAIT_S`; 401/403 is an API-key error; 404/405/501 means the server lists no
   models (the name is then not checked, and :attr:`EndpointInfo.notes` says so).
2. Which server it is, from the shape of that list (:func:`server_kind`): vLLM
   (``owned_by: "vllm"``, ``max_model_len``), llama.cpp's ``llama-server``
   (``owned_by: "llamacpp"``), llama-cpp-python's server (``owned_by: "me"`` and
   ``permissions``), OpenAI's API (its host), else ``"unknown"``.
3. The model name against the list (:func:`match_model`). Where the list is authoritative
   (vLLM, OpenAI, Ollama and other servers refuse a name they do not serve) a name it lacks is a
   :class:`~lang_pz.error.BackendError` listing what is served. llama.cpp's servers answer under
   *any* name, so a wrong name would run silently while runs and caches record it: the name must
   name the served model (its listed id, its file name, or a part of the file name such as
   ``smollm2`` for ``.../SmolLM2-135M-Instruct.Q4_1.gguf``), else the same error, which names
   the model served and the fix (the served name, or the server's ``--model_alias`` /
   ``--alias``). A listed name that differs only in case or by Ollama's ``:latest`` is accepted.
4. The context window where the server says it: vLLM's ``max_model_len`` in the model list,
   llama.cpp's ``GET /props`` (``default_generation_settings.n_ctx``, the per-slot context).
   llama-cpp-python's server does not say it (the backend learns it from the server's first
   "maximum context length" reply, or from the ``context_window`` option).
5. The structured-output form (``structured_output="auto"``): ``"json_object"`` (the schema in
   ``response_format.schema``, decoded under a grammar) for llama-cpp-python's server, which
   refuses ``json_schema``; ``"json_schema"`` for every other server.
6. Where the server counts tokens: llama-cpp-python ``POST /extras/tokenize/count``, llama.cpp
   and vLLM ``POST /tokenize`` (at the server root, beside ``/v1``).
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import openai

try:  # the HTTP library the openai client is built on (httpx2 since openai 3; httpx before)
    from httpx2 import Response as HTTPResponse
except ImportError:  # pragma: no cover - older openai releases
    from httpx import Response as HTTPResponse  # type: ignore[assignment]  # the same class, older package

from lang_pz.backends.openai_replies import describe, dns_failure
from lang_pz.backends.openai_requests import StructuredOutput
from lang_pz.error import BackendError, BackendUnavailableError

#: Server kinds :func:`server_kind` tells apart.
LLAMA_CPP_PYTHON = "llama-cpp-python"
LLAMA_CPP = "llama.cpp"
VLLM = "vllm"
OPENAI = "openai"
UNKNOWN = "unknown"
#: Servers that answer under any model name (their list names what they really serve).
ANSWERS_ANY_NAME = (LLAMA_CPP_PYTHON, LLAMA_CPP)
#: Seconds the check waits for a server that answers HTTP 502/503/504/429 (e.g. still loading).
STARTUP_WAIT_S = 30.0
_TOKENIZE_ROUTES = {LLAMA_CPP_PYTHON: "/extras/tokenize/count", LLAMA_CPP: "/tokenize", VLLM: "/tokenize"}
_SERVER_NAMES = {
    LLAMA_CPP_PYTHON: "llama-cpp-python's server",
    LLAMA_CPP: "llama.cpp's llama-server",
    VLLM: "vLLM",
    OPENAI: "OpenAI's API",
    UNKNOWN: "an OpenAI-compatible server",
}


@dataclass(frozen=True)
class EndpointInfo:
    """What the start-up check found (see the module docstring).

    Attributes:
        server: the server kind (:data:`LLAMA_CPP_PYTHON`, :data:`LLAMA_CPP`, :data:`VLLM`,
            :data:`OPENAI` or :data:`UNKNOWN`).
        models: the model ids the server lists, or ``None`` if it lists none.
        served_model: the listed id the model name was matched to (``None``: not checked).
        context_window: the context window in tokens (prompt + reply) the server reports, or ``None``.
        context_source: where ``context_window`` came from (e.g. ``"GET /props"``), or ``""``.
        structured_output: the structured-output form the server takes.
        tokenizer: the URL that counts tokens on this server, or ``None``.
        notes: what the user should know (a name not checked, a list that could not be read).
    """

    server: str
    models: tuple[str, ...] | None
    served_model: str | None
    context_window: int | None
    context_source: str
    structured_output: StructuredOutput
    tokenizer: str | None
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line for the user: server, model, context and structured-output form."""
        ctx = (
            f"context {self.context_window} tokens ({self.context_source})"
            if self.context_window
            else "context not reported"
        )
        model = f"serving {short_name(self.served_model)!r}" if self.served_model else "model not checked"
        return f"{_SERVER_NAMES[self.server]}, {model}, {ctx}, structured output {self.structured_output}"


def server_root(base_url: str) -> str | None:
    """The server's root URL (``base_url`` without its trailing ``/v1``), where llama.cpp and vLLM
    serve ``/props`` and ``/tokenize``; ``None`` if ``base_url`` does not end in ``/v1``."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else None


def server_kind(body: Any, base_url: str) -> str:
    """Which server answered ``GET /v1/models`` with ``body`` (see the module docstring)."""
    if urlsplit(base_url).hostname == "api.openai.com":
        return OPENAI
    entries = [e for e in (body.get("data") if isinstance(body, dict) else None) or [] if isinstance(e, dict)]
    owners = {str(e.get("owned_by", "")) for e in entries}
    if "vllm" in owners or any("max_model_len" in e for e in entries):
        return VLLM
    if "llamacpp" in owners or any(isinstance(e.get("meta"), dict) and "n_ctx_train" in e["meta"] for e in entries):
        return LLAMA_CPP
    if owners == {"me"} and all("permissions" in e for e in entries):
        return LLAMA_CPP_PYTHON
    return UNKNOWN


def _file_name(model_id: str) -> str:
    return PurePosixPath(model_id.replace("\\", "/")).name


def match_model(name: str, ids: Sequence[str], server: str) -> str | None:
    """The listed id ``name`` names, or ``None``.

    A listed id itself, the same id in another case, or ``name:latest`` (Ollama); on a server
    that answers under any name (:data:`ANSWERS_ANY_NAME`) also the id's file name, with or
    without ``.gguf``, or a part of it (``smollm2`` names ``/m/SmolLM2-135M-Instruct.Q4_1.gguf``).
    """
    if name in ids:
        return name
    folded = name.casefold()
    for candidate in ids:
        if candidate.casefold() in (folded, f"{folded}:latest"):
            return candidate
    if server in ANSWERS_ANY_NAME:
        for candidate in ids:
            file = _file_name(candidate).casefold()
            if folded in (file, file.removesuffix(".gguf")) or (len(folded) >= 3 and folded in file):
                return candidate
    return None


def short_name(model_id: str) -> str:
    """The name a user types for ``model_id``: its file name without ``.gguf`` for a path, else the id."""
    file = _file_name(model_id)
    return file.removesuffix(".gguf") if file != model_id or model_id.endswith(".gguf") else model_id


def _model_error(where: str, name: str, ids: Sequence[str], server: str) -> BackendError:
    if server in ANSWERS_ANY_NAME and len(ids) == 1:
        served = short_name(ids[0])
        return BackendError(
            f"{where}: {_SERVER_NAMES[server]} serves one model, {served!r} (listed as {ids[0]!r}), and answers "
            f"under any name, so {name!r} would run {served} while the run and its cache record {name!r}. "
            f"Give the served model's name (--backend openai:{served}, or model={served!r}), or start the server "
            f"with the name you mean (llama-cpp-python: --model_alias {name}; llama-server: --alias {name})"
        )
    folded = {i.casefold(): i for i in ids}
    close = [i for i in ids if name.casefold() in i.casefold()] or [
        folded[c] for c in difflib.get_close_matches(name.casefold(), list(folded), n=1, cutoff=0.5)
    ]
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    shown = ", ".join(repr(i) for i in list(ids)[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
    return BackendError(
        f"{where}: the server serves no model named {name!r}{hint}; it serves {shown}. Give one of these "
        f"(--backend openai:<name>, or model='<name>')"
    )


def _get_json(client: openai.OpenAI, url: str, timeout: openai.Timeout) -> Any:
    raw = client.get(url, cast_to=HTTPResponse, options={"timeout": timeout})
    try:
        return json.loads(raw.content)
    except (ValueError, RecursionError):
        return None


def post_json(client: openai.OpenAI, url: str, body: dict[str, Any], timeout: openai.Timeout) -> Any:
    """POST ``body`` to ``url`` (absolute, or relative to the client's base URL) through ``client``;
    the reply as JSON (``None`` if it is not JSON). Raises what the ``openai`` client raises."""
    raw = client.post(url, body=body, cast_to=HTTPResponse, options={"timeout": timeout})
    try:
        return json.loads(raw.content)
    except (ValueError, RecursionError):
        return None


def _unreachable(where: str, exc: BaseException, what: str, base_url: str) -> BackendUnavailableError:
    host = urlsplit(base_url).hostname
    if dns_failure(exc) is not None:
        fix = f"the host name {host!r} does not resolve (DNS): check its spelling in base_url / OPENAI_BASE_URL"
    elif isinstance(exc, openai.APITimeoutError) and "Connect" not in type(exc.__cause__).__name__:
        return BackendUnavailableError(
            f"{where} accepted the connection but did not answer GET /models in time ({what}): it may be busy "
            "with other requests or stuck; raise timeout_s, or check the server's log"
        )
    elif isinstance(exc, openai.APITimeoutError):
        fix = "nothing answered in time: check the address and port, and that no firewall drops the connection"
    else:
        fix = "nothing accepts connections there: start the server, or check the port in base_url / OPENAI_BASE_URL"
    return BackendUnavailableError(f"{where} is not reachable ({what}); {fix}")


def _model_list(
    client: openai.OpenAI, where: str, base_url: str, timeout: openai.Timeout, sleep: Callable[[float], None]
) -> tuple[Any, str | None]:
    """``(GET /models body, None)``, or ``(None, why)`` when the server lists no models."""
    deadline = time.monotonic() + STARTUP_WAIT_S
    while True:
        try:
            return _get_json(client, "models", timeout), None
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:  # APITimeoutError is a subclass
            raise _unreachable(where, exc, describe(exc), base_url) from None
        except openai.APIStatusError as exc:
            code = exc.status_code
            if code in (404, 405, 501):
                hint = "" if server_root(base_url) else " (does base_url end with /v1?)"
                return None, f"GET /models: HTTP {code}{hint}"
            if code in (401, 403):
                raise BackendError(
                    f"{where} refused the start-up check ({describe(exc)}): check the API key (set "
                    "OPENAI_API_KEY or pass api_key=; local servers usually need none)"
                ) from None
            if code in (429, 502, 503, 504) and time.monotonic() < deadline:
                sleep(1.0)
                continue
            raise BackendError(f"{where} failed the start-up check GET /models: {describe(exc)}") from None


def _props_context(client: openai.OpenAI, root: str, timeout: openai.Timeout) -> int | None:
    """llama.cpp's per-slot context from ``GET /props``, or ``None``."""
    try:
        props = _get_json(client, f"{root}/props", timeout)
    except openai.OpenAIError:
        return None
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    n = settings.get("n_ctx") if isinstance(settings, dict) else props.get("n_ctx")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def probe(
    client: openai.OpenAI,
    base_url: str,
    model: str,
    *,
    where: str,
    connect_timeout_s: float,
    read_timeout_s: float,
    sleep: Callable[[float], None] = time.sleep,
    structured_output: str = "auto",
) -> EndpointInfo:
    """Check the endpoint at ``base_url`` for ``model`` (see the module docstring).

    Args:
        client: the backend's ``openai`` client (its base URL is ``base_url``).
        base_url: the endpoint root, without credentials.
        model: the model name requests will carry.
        where: names the endpoint and model in messages.
        connect_timeout_s: limit on opening the connection, in seconds (short: a host that drops
            packets is an error in seconds).
        read_timeout_s: limit on each answer, in seconds (a llama.cpp server answers
            ``/v1/models`` only between generations, so this is the requests' ``timeout_s``).
        sleep: waits between polls of a server that is still loading (tests pass a recorder).
        structured_output: the backend's option; a form the server does not take is noted.

    Raises:
        BackendUnavailableError: nothing answers at ``base_url`` (refused, DNS, timeout), or the
            server still answers 502/503/504/429 after :data:`STARTUP_WAIT_S`.
        BackendError: the server refuses the API key, fails the check otherwise (its message is
            quoted), or does not serve ``model`` (the message lists what it serves).
    """
    timeout = openai.Timeout(read_timeout_s, connect=connect_timeout_s)
    body, no_list = _model_list(client, where, base_url, timeout, sleep)
    if no_list is None and not isinstance(body, dict):
        no_list = "GET /models: not a JSON object"
    kind = server_kind(body, base_url)
    entries = [e for e in (body.get("data") if isinstance(body, dict) else None) or [] if isinstance(e, dict)]
    ids = tuple(str(e["id"]) for e in entries if isinstance(e.get("id"), str))
    notes = []
    served = None
    if no_list is not None or not ids:
        notes.append(
            f"the server lists no models ({no_list or 'GET /models: an empty list'}): the name {model!r} was not checked"
        )
    else:
        served = match_model(model, ids, kind)
        if served is None:
            raise _model_error(where, model, ids, kind)
    context, source = None, ""
    root = server_root(base_url)
    if kind == VLLM:
        entry = next((e for e in entries if e.get("id") == served), entries[0] if entries else {})
        n = entry.get("max_model_len")
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            context, source = n, "max_model_len in GET /v1/models"
    elif kind == LLAMA_CPP and root is not None:
        context = _props_context(client, root, timeout)
        source = "GET /props" if context else ""
    route = _TOKENIZE_ROUTES.get(kind)
    takes: StructuredOutput = "json_object" if kind == LLAMA_CPP_PYTHON else "json_schema"
    if structured_output not in ("auto", takes) and kind != UNKNOWN:
        notes.append(
            f"structured_output={structured_output!r} is set, but {_SERVER_NAMES[kind]} takes {takes!r}: requests "
            "with a schema or choices may be refused; drop the option (the default 'auto' follows the server)"
        )
    return EndpointInfo(
        server=kind,
        models=ids if no_list is None else None,
        served_model=served,
        context_window=context,
        context_source=source,
        structured_output=takes,
        tokenizer=f"{root}{route}" if route and root else None,
        notes=tuple(notes),
    )
