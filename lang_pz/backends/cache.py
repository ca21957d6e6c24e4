"""A persistent, process-safe response cache for LLM backends (on :mod:`diskcache`).

The key is the SHA-256 of the canonical JSON of the backend's identity (what model, which
settings; see :meth:`lang_pz.backends.base.LLMBackend.cache_identity`) and *every* field of
the :class:`~lang_pz.backends.base.GenerationRequest` (messages, prompt, max_tokens,
temperature, seed, json_schema, choices, stop). A request that samples (``temperature > 0``)
without a seed is nondeterministic and is never cached.

Default location: ``$LANG_PZ_CACHE_DIR/llm`` if that environment variable is set, else
``platformdirs.user_cache_dir("lang_pz")/llm``.

The cache is an optimisation and never ends a run: an entry that cannot be read (a value file
cut short, a garbled value) is a miss, dropped, with a warning; a cache database that cannot be
opened (not a database, unreadable) leaves the backend without a cache, with a warning naming
the folder to delete; a failed write (disk full) is skipped with a warning. Values are stored
as JSON text, not pickles. Identities must never hold secrets: keys whose
name looks like a credential (``api_key``, ``token``, ``secret``...) are refused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import diskcache
import platformdirs

from lang_pz.backends.base import Generation, GenerationRequest

CACHE_DIR_ENV = "LANG_PZ_CACHE_DIR"
_SECRET_WORDS = ("key", "secret", "password", "token", "auth", "credential")


def default_cache_dir() -> Path:
    """``$LANG_PZ_CACHE_DIR/llm`` if the variable is set, else the user cache dir + ``/llm``."""
    root = os.environ.get(CACHE_DIR_ENV) or platformdirs.user_cache_dir("lang_pz")
    return Path(root).expanduser() / "llm"


def is_cacheable(request: GenerationRequest) -> bool:
    """False for nondeterministic requests (``temperature > 0`` and no seed)."""
    return not (request.temperature > 0 and request.seed is None)


def _check_no_secrets(identity: Any, path: str = "identity") -> None:
    if isinstance(identity, dict):
        for k, v in identity.items():
            if any(w in str(k).lower() for w in _SECRET_WORDS):
                raise ValueError(
                    f"cache identity field {path}[{k!r}] looks like a credential; "
                    "identities are stored on disk and must not hold secrets"
                )
            _check_no_secrets(v, f"{path}[{k!r}]")
    elif isinstance(identity, (list, tuple)):
        for i, v in enumerate(identity):
            _check_no_secrets(v, f"{path}[{i}]")


def request_fields(request: GenerationRequest) -> dict[str, Any]:
    """Every field of ``request`` as plain JSON data (numbers normalised: ``0`` == ``0.0``);
    ``grammar`` and ``pattern`` only when set (so requests without them keep their keys)."""
    fields = {
        "messages": (
            None if request.messages is None else [{"role": m.role, "content": m.content} for m in request.messages]
        ),
        "prompt": request.prompt,
        "max_tokens": int(request.max_tokens),
        "temperature": float(request.temperature),
        "seed": None if request.seed is None else int(request.seed),
        "json_schema": request.json_schema,
        "choices": None if request.choices is None else list(request.choices),
        "stop": list(request.stop),
    }
    for name in ("grammar", "pattern"):
        if getattr(request, name) is not None:
            fields[name] = getattr(request, name)
    return fields


def cache_key(identity: dict[str, Any], request: GenerationRequest) -> str:
    """Hex SHA-256 of the canonical JSON of ``identity`` and every field of ``request``.

    Raises:
        ValueError: ``identity`` has a credential-like field, or either part is not JSON data.
    """
    _check_no_secrets(identity)
    try:
        blob = json.dumps(
            {"identity": identity, "request": request_fields(request)},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cache identity or request is not plain JSON data: {exc}") from exc
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Maps (backend identity, request) to the :class:`Generation` it produced, on disk.

    Safe to share between threads and processes (diskcache uses SQLite). Stored values are
    plain dicts (text, token counts, model), so they survive changes to the Python classes.

    Args:
        directory: where to keep the cache; ``None`` means :func:`default_cache_dir`.
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory).expanduser() if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self._warned = False
        self._cache: diskcache.Cache | None
        try:
            self._cache = diskcache.Cache(str(self.directory))
        except Exception as exc:
            self._cache = None
            self._warn(
                f"cannot be opened ({type(exc).__name__}: {exc}); running without a response "
                f"cache. Delete {self.directory} to start a fresh one"
            )

    def _warn(self, what: str) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(f"LLM response cache at {self.directory} {what}", RuntimeWarning, stacklevel=3)

    @property
    def usable(self) -> bool:
        """False when the cache database could not be opened (every lookup is then a miss)."""
        return self._cache is not None

    def get(self, identity: dict[str, Any], request: GenerationRequest) -> Generation | None:
        """The cached reply (``cached=True``, ``latency_s=0.0``), or ``None`` on a miss, for an
        uncacheable request, or for an entry that cannot be read (dropped, with a warning)."""
        if not is_cacheable(request) or self._cache is None:
            return None
        key = cache_key(identity, request)
        try:
            value = self._cache.get(key)
            if value is None:
                return None
            if isinstance(value, str):
                value = json.loads(value)
            if not isinstance(value, dict) or not isinstance(value.get("text"), str):
                raise ValueError(f"not a cached reply: {str(value)[:80]!r}")
            return Generation(
                text=value["text"],
                prompt_tokens=int(value.get("prompt_tokens", 0)),
                completion_tokens=int(value.get("completion_tokens", 0)),
                latency_s=0.0,
                cached=True,
                model=str(value.get("model", "")),
            )
        except Exception as exc:
            self._warn(f"has an unreadable entry ({type(exc).__name__}: {exc}); it is dropped and the request sent again")
            try:
                self._cache.delete(key)
            except Exception:
                pass
            return None

    def put(self, identity: dict[str, Any], request: GenerationRequest, gen: Generation) -> bool:
        """Store ``gen``; returns False (and stores nothing) for an uncacheable request, or when
        the write fails (with a warning)."""
        if not is_cacheable(request) or self._cache is None:
            return False
        value = dataclasses.asdict(gen)
        for name in ("cached", "latency_s", "retries"):
            value.pop(name, None)
        key = cache_key(identity, request)
        try:
            self._cache.set(key, json.dumps(value, ensure_ascii=False))
        except Exception as exc:
            self._warn(f"could not store a reply ({type(exc).__name__}: {exc}); continuing without it")
            return False
        return True

    def clear(self) -> int:
        """Remove every entry; returns how many were removed."""
        return 0 if self._cache is None else int(self._cache.clear())

    def __len__(self) -> int:
        return 0 if self._cache is None else len(self._cache)

    def close(self) -> None:
        """Close the underlying database handle (it reopens on next use)."""
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache(directory={str(self.directory)!r})"


def resolve_cache(cache: ResponseCache | str | Path | bool | None) -> ResponseCache | None:
    """Turn a backend's ``cache=`` argument into a cache.

    ``True`` -> a :class:`ResponseCache` in the default directory; ``False``/``None`` -> no
    cache; a path -> a cache in that directory; a :class:`ResponseCache` -> itself.

    Raises:
        TypeError: any other value.
    """
    if cache is True:
        return ResponseCache()
    if cache is None or cache is False:
        return None
    if isinstance(cache, ResponseCache):
        return cache
    if isinstance(cache, (str, Path)):
        return ResponseCache(cache)
    raise TypeError(f"cache= must be True, False, None, a directory or a ResponseCache, got {cache!r}")
