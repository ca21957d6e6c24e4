"""A local OpenAI-compatible STUB endpoint for the backend tests (a stub, not a real server: it
checks what is sent and how replies are read back), and the ``GET /v1/models`` bodies of real servers."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lang_pz.test.fake_server import reply_body
from lang_pz.test.llama_server import free_port  # noqa: F401  (the tests import it from here)

#: ``GET /v1/models`` bodies as each server sends them (llama-cpp-python 0.3.36, vLLM's ModelCard,
#: llama.cpp's llama-server).
LLAMA_CPP_PYTHON_MODELS = {
    "object": "list",
    "data": [{"id": "/models/SmolLM2-135M-Instruct.Q4_1.gguf", "object": "model", "owned_by": "me", "permissions": []}],
}
VLLM_MODELS = {
    "object": "list",
    "data": [{"id": "Qwen/Qwen2.5-7B-Instruct", "object": "model", "owned_by": "vllm", "max_model_len": 96}],
}
LLAMA_SERVER_MODELS = {
    "object": "list",
    "data": [
        {"id": "qwen2.5-7b-instruct-q4_k_m.gguf", "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx_train": 32768}}
    ],
}


@dataclass
class Reply:
    """A scripted completion: its text, ``finish_reason`` and reported prompt tokens."""

    text: str
    finish_reason: str = "stop"
    prompt_tokens: int = 1


class RecordingStub:
    """A stub OpenAI-compatible endpoint that records requests and answers from a script.

    Args:
        texts: the replies to completion requests, in order (the last one repeats): a text, a
            :class:`Reply`, ``(status, JSON body)`` for an HTTP error, or a function of the
            request body returning one of these.
        models: the ``GET /v1/models`` body (``None``: HTTP 404), or ``(status, JSON body)``, or a
            list of these answered in order (the last one repeats).
        routes: other ``GET`` routes (path -> JSON body), e.g. ``{"/props": {...}}``.
        tokenize: answer the token-counting routes (one token a word).

    Attributes:
        bodies: ``(path, JSON body)`` of every completion request.
        seen: ``(method, path)`` of every request.
    """

    def __init__(
        self,
        texts: list[Any],
        *,
        models: Any = None,
        routes: dict[str, Any] | None = None,
        tokenize: bool = True,
    ) -> None:
        self.bodies: list[tuple[str, dict]] = []
        self.seen: list[tuple[str, str]] = []
        self.texts = list(texts)
        self.models = models
        self.routes = dict(routes or {})
        self.tokenize = tokenize
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _json(self, status: int, payload: Any) -> None:
                out = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def do_GET(self) -> None:
                stub.seen.append(("GET", self.path))
                models = stub.models
                if isinstance(models, list) and self.path == "/v1/models":
                    models = models.pop(0) if len(models) > 1 else models[0]
                if self.path == "/v1/models" and models is not None:
                    self._json(*models) if isinstance(models, tuple) else self._json(200, models)
                elif self.path in stub.routes:
                    self._json(200, stub.routes[self.path])
                else:
                    self._json(404, {"detail": "Not Found"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.seen.append(("POST", self.path))
                if self.path in ("/extras/tokenize/count", "/tokenize") and stub.tokenize:
                    text = body.get("input", body.get("content", body.get("prompt")))
                    if text is None:
                        text = " ".join(m["content"] for m in body.get("messages", ()))
                    self._json(200, {"count": len(text.split())})
                    return
                if not self.path.endswith("/completions"):
                    self._json(404, {"detail": "Not Found"})
                    return
                stub.bodies.append((self.path, body))
                item = stub.texts.pop(0) if len(stub.texts) > 1 else stub.texts[0]
                item = item(body) if callable(item) else item
                if isinstance(item, tuple):
                    self._json(*item)
                    return
                reply = item if isinstance(item, Reply) else Reply(item)
                out = reply_body(self.path, body.get("model", ""), reply.text)
                out["choices"][0]["finish_reason"] = reply.finish_reason
                out["usage"]["prompt_tokens"] = reply.prompt_tokens
                self._json(200, out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def posts(self, path: str) -> int:
        """How many POST requests ``path`` got."""
        return sum(1 for method, p in self.seen if method == "POST" and p == path)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
