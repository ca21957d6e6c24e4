"""A local fake OpenAI-compatible endpoint that answers validly and injects faults on purpose.

For testing clients of OpenAI-compatible servers (lang_pz's :class:`OpenAIBackend`, or yours)
without a model or a network: :class:`FakeOpenAIServer` serves ``POST /v1/chat/completions``,
``POST /v1/completions`` and ``GET /v1/models`` on 127.0.0.1 from a thread (stdlib
``http.server``). It is not a model: every valid reply is the *first* admissible answer.

- a ``choices`` request (a ``{"choice": <enum>}`` schema, or a llama.cpp ``grammar`` of string
  alternatives) gets the first choice;
- a JSON-schema request (``response_format`` of type ``json_schema`` or ``json_object`` with a
  ``schema``) gets a minimal document valid for the schema (:func:`minimal_instance`);
- anything else gets the text ``"ok"``.

With probability ``fault_rate`` a request gets a fault instead, of a kind drawn uniformly from
``faults`` among those that apply to it (``invalid_reply`` applies only to constrained
requests). The draws come from ``random.Random(seed)`` in the order requests arrive, so a
client that sends requests one at a time meets the same faults on every run. ``script`` fixes
the fate of the first requests instead (a fault kind, or ``None`` for a valid reply).

========================  ============================================================
kind                      what the client receives
========================  ============================================================
``timeout``               nothing for ``stall_s`` seconds (set the client's timeout below)
``http_429``              HTTP 429 with ``Retry-After: <retry_after>``
``http_500``              HTTP 500
``http_503``              HTTP 503
``reset``                 the connection reset (TCP RST) after the request is read
``truncated``             a 200 whose body stops half-way (``Content-Length`` is the full size)
``empty_choices``         a 200 whose ``choices`` is ``[]``
``malformed_json``        a 200 whose body is not JSON
``invalid_reply``         a 200 whose reply is outside the choices / not valid for the schema
========================  ============================================================

Example::

    with FakeOpenAIServer(fault_rate=0.3, seed=0) as server:
        backend = OpenAIBackend("fake", base_url=server.url, timeout_s=0.5)
        ...
        print(server.faults)   # Counter of injected faults by kind
"""

from __future__ import annotations

import http.server
import json
import random
import re
import socket
import struct
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

FAULT_KINDS: tuple[str, ...] = (
    "timeout",
    "http_429",
    "http_500",
    "http_503",
    "reset",
    "truncated",
    "empty_choices",
    "malformed_json",
    "invalid_reply",
)

_INVALID_CHOICE = "<not one of the choices>"


def minimal_instance(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """A small JSON value valid for ``schema`` (the JSON-Schema subset pydantic emits).

    Handles ``$ref`` into ``$defs``, ``const``, ``enum`` (the first value), ``anyOf``/``oneOf``
    (the first branch), ``allOf`` (merged), objects (every required property; every property
    when none is required), arrays (``minItems`` items), strings (``"ok"``, padded to
    ``minLength`` and cut to ``maxLength``), numbers (0 moved into ``minimum``/``maximum``),
    booleans and null.
    """
    root = schema if root is None else root
    if "$ref" in schema:
        ref = str(schema["$ref"])
        target: Any = root
        for part in ref.removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return minimal_instance(target, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return minimal_instance(schema[key][0], root)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(part)
        return minimal_instance(merged, root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        props: dict[str, Any] = schema.get("properties", {})
        names = schema.get("required") or list(props)
        return {n: minimal_instance(props.get(n, {}), root) for n in names}
    if kind == "array":
        n = int(schema.get("minItems", 0))
        return [minimal_instance(schema.get("items", {}), root) for _ in range(n)]
    if kind == "string":
        lo, hi = int(schema.get("minLength", 0)), schema.get("maxLength")
        text = "ok".ljust(lo, "k")
        return text if hi is None else text[: int(hi)]
    if kind in ("integer", "number"):
        x: float = 0
        if "minimum" in schema:
            x = max(x, schema["minimum"])
        if "exclusiveMinimum" in schema:
            x = max(x, schema["exclusiveMinimum"] + 1)
        if "maximum" in schema:
            x = min(x, schema["maximum"])
        return int(x) if kind == "integer" else x
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "ok"


def _grammar_first_literal(grammar: str) -> str | None:
    """The first alternative of a ``root ::= "a" | "b"`` grammar (GBNF escapes decoded)."""
    m = re.match(r'\s*root\s*::=\s*"((?:[^"\\]|\\.)*)"\s*(\||$)', grammar)
    if m is None:
        return None
    return re.sub(
        r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)",
        lambda e: chr(int(e.group(1)[1:], 16)) if len(e.group(1)) > 1 else e.group(1),
        m.group(1),
    )


def _schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    rf = body.get("response_format")
    if not isinstance(rf, dict):
        return None
    if rf.get("type") == "json_schema":
        return (rf.get("json_schema") or {}).get("schema")
    if rf.get("type") == "json_object":
        return rf.get("schema") or {}
    return None


def _is_choice_schema(schema: dict[str, Any] | None) -> bool:
    props = (schema or {}).get("properties", {})
    return list(props) == ["choice"] and "enum" in props["choice"]


def valid_reply(path: str, body: dict[str, Any]) -> tuple[str, str]:
    """``(text, kind)``: the reply text a correct server gives to ``body`` and the kind of
    request: ``"choice"`` (choices or a grammar of alternatives), ``"schema"`` or ``"text"``."""
    if not path.endswith("/chat/completions"):
        grammar = body.get("grammar")
        if isinstance(grammar, str):
            first = _grammar_first_literal(grammar)
            return (first, "choice") if first is not None else ("{}", "schema")
        return "ok", "text"
    schema = _schema_of(body)
    if schema is None:
        return "ok", "text"
    return json.dumps(minimal_instance(schema)), "choice" if _is_choice_schema(schema) else "schema"


def invalid_reply(path: str, body: dict[str, Any]) -> str:
    """A reply a correct server would never give to a constrained request."""
    if path.endswith("/chat/completions"):
        return json.dumps({"choice": _INVALID_CHOICE}) if _is_choice_schema(_schema_of(body)) else "not json {"
    return _INVALID_CHOICE


def reply_body(path: str, model: str, text: str, *, empty: bool = False) -> dict[str, Any]:
    """An OpenAI-shaped chat.completion / text_completion body holding ``text``."""
    chat = path.endswith("/chat/completions")
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
    if chat:
        choice["message"] = {"role": "assistant", "content": text}
    else:
        choice.update(text=text, logprobs=None)
    return {
        "id": "fake-1",
        "object": "chat.completion" if chat else "text_completion",
        "created": 0,
        "model": model,
        "choices": [] if empty else [choice],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class FakeOpenAIServer:
    """A fake OpenAI-compatible endpoint on ``127.0.0.1`` with seeded fault injection.

    Args:
        fault_rate: probability in [0, 1] that a request gets a fault.
        faults: the fault kinds to draw from (default: all of :data:`FAULT_KINDS`).
        seed: seeds the fault draws.
        stall_s: how long a ``timeout`` fault keeps the client waiting, in seconds (make the
            client's timeout shorter).
        retry_after: the ``Retry-After`` header of ``http_429`` replies (``None``: no header).
        script: the fates of the first requests, in order (a kind, or ``None`` = valid);
            random draws start after it.
        latency_s: seconds every valid reply waits before it is sent (a stand-in for a real
            endpoint's round trip L; requests are served concurrently, each waiting L).
        port: TCP port (0 = any free port).

    Attributes:
        url: the endpoint root to give clients as ``base_url`` (ends with ``/v1``).
        requests: POST requests received.
        faults: ``Counter`` of injected faults by kind.
        log: per POST request, ``(path, fault kind or None, request kind)``; the request kind is
            ``"choice"``, ``"schema"`` or ``"text"``.

    Raises:
        ValueError: a rate outside [0, 1] or an unknown fault kind.
    """

    def __init__(
        self,
        fault_rate: float = 0.0,
        faults: Sequence[str] = FAULT_KINDS,
        *,
        seed: int = 0,
        stall_s: float = 2.0,
        retry_after: str | None = "0",
        script: Sequence[str | None] = (),
        latency_s: float = 0.0,
        port: int = 0,
    ) -> None:
        if not 0.0 <= fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be in [0, 1], got {fault_rate!r}")
        unknown = sorted((set(faults) | {k for k in script if k is not None}) - set(FAULT_KINDS))
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; known: {list(FAULT_KINDS)}")
        self.fault_rate = float(fault_rate)
        self.fault_kinds = tuple(faults)
        self.stall_s = float(stall_s)
        if latency_s < 0:
            raise ValueError(f"latency_s must be >= 0 seconds, got {latency_s!r}")
        self.latency_s = float(latency_s)
        self.in_flight = 0
        self.max_in_flight = 0
        self.retry_after = retry_after
        self.requests = 0
        self.faults: Counter[str] = Counter()
        self.log: list[tuple[str, str | None, str]] = []
        self._script = list(script)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a stalled handler must not hold up close()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def _draw(self, path: str, kind: str) -> str | None:
        with self._lock:
            self.requests += 1
            if self._script:
                fault = self._script.pop(0)
            else:
                kinds = [k for k in self.fault_kinds if kind != "text" or k != "invalid_reply"]
                fault = None
                if kinds and self._rng.random() < self.fault_rate:
                    fault = kinds[self._rng.randrange(len(kinds))]
            if fault is not None:
                self.faults[fault] += 1
            self.log.append((path, fault, kind))
            return fault

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # headers and body are two writes: without TCP_NODELAY, Nagle's algorithm and the
                # client's delayed ACK add about 40 ms to every reply (a stand-in must not be slow)
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _send(
                self, status: int, data: bytes, headers: dict[str, str] | None = None, length: int | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data) if length is None else length))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                self._send(status, json.dumps(payload).encode(), headers)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                path = self.path.rstrip("/")
                if not path.endswith("/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                    assert isinstance(body, dict)
                except (ValueError, AssertionError):
                    self._json(400, {"error": {"message": "request body is not a JSON object"}})
                    return
                text, kind = valid_reply(path, body)
                fault = fake._draw(path, kind)
                model = str(body.get("model", "fake"))
                self.close_connection = fault in ("timeout", "reset", "truncated")
                if fault == "timeout":
                    fake._closing.wait(fake.stall_s)
                elif fault == "reset":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    return
                elif fault in ("http_429", "http_500", "http_503"):
                    status = int(fault[-3:])
                    hdr = {"Retry-After": fake.retry_after} if status == 429 and fake.retry_after is not None else {}
                    self._json(status, {"error": {"message": f"injected {fault}", "type": "server_error"}}, hdr)
                    return
                elif fault == "truncated":
                    data = json.dumps(reply_body(path, model, text)).encode()
                    self._send(200, data[: len(data) // 2], length=len(data))
                    return
                elif fault == "malformed_json":
                    self._send(200, b'{"id": "fake-1", "choices": [{"index": 0, "mess')
                    return
                elif fault == "invalid_reply":
                    text = invalid_reply(path, body)
                if fake.latency_s:
                    with fake._lock:
                        fake.in_flight += 1
                        fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                    fake._closing.wait(fake.latency_s)
                    with fake._lock:
                        fake.in_flight -= 1
                self._json(200, reply_body(path, model, text, empty=fault == "empty_choices"))

            def handle_one_request(self) -> None:
                try:
                    super().handle_one_request()
                except OSError:  # the client went away (timed out) or the socket was reset
                    self.close_connection = True

            def finish(self) -> None:
                try:
                    super().finish()
                except (OSError, ValueError):  # the socket was reset or closed on purpose
                    pass

        return Handler

    def close(self) -> None:
        """Stop serving (stalled requests are released at once)."""
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FakeOpenAIServer(url={self.url!r}, fault_rate={self.fault_rate}, faults={dict(self.faults)})"
