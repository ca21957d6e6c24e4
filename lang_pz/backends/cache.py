"""A persistent, process-safe response cache for LLM backends (on :mod:`diskcache`).

The key is the SHA-256 of the canonical JSON of the backend's identity (what model, which
settings; see :meth:`lang_pz.backends.base.LLMBackend.cache_identity`) and *every* field of
the :class:`~lang_pz.backends.base.GenerationRequest` (messages, prompt, max_tokens,
temperature, seed, json_schema, choices, stop). A request that samples (``temperature > 0``)
without a seed is nondeterministic and is never cached.

Default location: ``$LANG_PZ_CACHE_DIR/llm`` if that environment variable is set, else
``platformdirs.user_cache_dir("lang_pz")/llm``.

What users share cannot harm them: values are JSON text, and an entry stored any other way (a
pickle, as diskcache's default ``Disk`` writes for objects, or bytes) is refused unread, never
unpickled; so is a value file outside the cache folder. The folder is private
(:func:`lang_pz.cachedir.private_folder`: created 0700, its database files 0600; another
user's folder, or one its group or others may write, is refused with a
:class:`~lang_pz.error.LangPZError`). Identities must never hold secrets: keys whose name looks
like a credential (``api_key``, ``token``, ``secret``...) are refused, and a backend does not
store a reply holding its own API key (:meth:`~lang_pz.backends.base.LLMBackend.may_cache`).

Otherwise the cache is an optimisation and never ends a run: an entry that cannot be read (a
value file cut short, a garbled value, a refused one) is a miss, dropped, with a warning; a
cache database that cannot be opened (not a database, unreadable) leaves the backend without a
cache, with a warning naming the folder to delete; a failed write (disk full) is skipped with a
warning.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import warnings
from pathlib import Path
from typing import Any

import diskcache

from lang_pz.backends.base import Generation, GenerationRequest
from lang_pz.cachedir import cache_root, make_private, private_folder

_SECRET_WORDS = ("key", "secret", "password", "token", "auth", "credential")
#: What diskcache's ``Disk`` names its value files: two levels of folders, then 28 hex digits.
_VALUE_FILE = re.compile(r"[0-9a-f]{2}[/\\][0-9a-f]{2}[/\\][0-9a-f]{28}\.val")
_MODE_NAMES = {diskcache.core.MODE_PICKLE: "a pickle", diskcache.core.MODE_BINARY: "bytes"}


def default_cache_dir() -> Path:
    """``$LANG_PZ_CACHE_DIR/llm`` if the variable is set, else the user cache dir + ``/llm``."""
    return cache_root() / "llm"


class RefusedEntry(ValueError):
    """A cache entry that :class:`JSONDisk` will not read: not JSON text, or a value file
    outside the cache folder."""


class JSONDisk(diskcache.Disk):
    """diskcache's ``Disk`` for JSON text only: it never unpickles, and never touches a file
    outside its folder.

    Reading an entry stored any other way (a pickle: diskcache's default ``Disk`` pickles every
    value that is not a str, bytes or number; bytes; a non-str key) raises
    :class:`RefusedEntry` before anything is decoded, as does a value file whose name is not one
    diskcache makes (e.g. an absolute path written into the database) or that resolves outside
    the folder (a symbolic link); such a file is not deleted either. Storing anything but a str
    raises ``TypeError``. Value files are written mode 0600.
    """

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            raise RefusedEntry("a key stored as a pickle, which lang_pz never writes: refused unread")
        return super().get(key, raw)

    def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> Any:
        if type(value) is not str:
            raise TypeError(f"the response cache stores JSON text only, not a {type(value).__name__}")
        size, mode, filename, db_value = super().store(value, read, key)
        if filename is not None:
            os.chmod(os.path.join(self._directory, filename), 0o600)
        return size, mode, filename, db_value

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode == diskcache.core.MODE_RAW and type(value) is str:
            return value
        if mode == diskcache.core.MODE_TEXT and not read:
            self._value_file(filename)
            return super().fetch(mode, filename, value, read)
        what = _MODE_NAMES.get(mode, f"diskcache mode {mode}")
        raise RefusedEntry(f"an entry stored as {what}, which lang_pz never writes: refused unread")

    def remove(self, file_path: str) -> None:
        try:
            self._value_file(file_path)
        except RefusedEntry:
            return  # not a file of this cache: left alone
        super().remove(file_path)

    def _value_file(self, filename: str | None) -> Path:
        folder = Path(self._directory).resolve()
        if (
            filename is None
            or not _VALUE_FILE.fullmatch(filename)
            or not (folder / filename).resolve().is_relative_to(folder)
        ):
            raise RefusedEntry(f"an entry whose value file {filename!r} is outside the cache folder: refused unread")
        return folder / filename


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

    Safe to share between threads and processes (diskcache uses SQLite), not between users
    (module docstring). Stored values are JSON objects (text, token counts, model), so they
    survive changes to the Python classes.

    Args:
        directory: where to keep the cache; ``None`` means :func:`default_cache_dir`.

    Raises:
        LangPZError: the folder cannot be created, is another user's, or its group or others
            may write it (:func:`lang_pz.cachedir.private_folder`).
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = private_folder(directory if directory is not None else default_cache_dir(), "LLM response cache")
        self._warned = False
        self._cache: diskcache.Cache | None
        database = self.directory / "cache.db"
        try:
            os.close(os.open(database, os.O_CREAT | os.O_WRONLY, 0o600))  # SQLite gives -wal/-shm its mode
            make_private(database, database.with_name("cache.db-wal"), database.with_name("cache.db-shm"))
            self._cache = diskcache.Cache(str(self.directory), disk=JSONDisk)
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
        uncacheable request, or for an entry that cannot be read or is refused (not JSON text:
        dropped unread, with a warning)."""
        if not is_cacheable(request) or self._cache is None:
            return None
        key = cache_key(identity, request)
        try:
            text = self._cache.get(key)  # a str: JSONDisk reads nothing else
            if text is None:
                return None
            value = json.loads(text)
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
            why = str(exc) if isinstance(exc, RefusedEntry) else f"an unreadable entry ({type(exc).__name__}: {exc})"
            self._warn(f"holds {why}; it is dropped and the request sent again")
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
