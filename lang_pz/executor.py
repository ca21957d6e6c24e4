"""Executors: run independent tasks (episodes, re-runs, critic and optimiser calls) concurrently.

With a remote LLM endpoint the time of a training iteration is set by how many round trips
happen one after another, so every independent task of a step runs at once, bounded by
``workers``: the episodes of a batch, the counterfactual re-runs, the validation episodes of a
candidate, the critic calls of a batch and the per-agent optimiser steps. Results always come
back in the order of the inputs, whatever the order of completion, so the files a run writes do
not depend on timing.

- :class:`LocalExecutor`: threads on this machine (``workers=1``: one after another, in the
  caller's thread, as a plain loop);
- :class:`lang_pz.executor_ray.RayExecutor`: Ray tasks on a cluster (optional extra ``ray``).

Environments are not thread-safe: concurrent tasks take their own instance from an
:class:`EnvPool`, which builds one more whenever all are busy (at most one per worker).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs a function over items, possibly concurrently; results in input order."""

    workers: int

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        on_result: Callable[[int, R], None] | None = None,
        remote: bool = False,
    ) -> list[R]:
        """``[fn(x) for x in items]``, computed by up to ``workers`` tasks at once.

        ``on_result(i, result)`` is called (in the caller's thread) as each task finishes, in
        completion order, e.g. to write a finished episode at once. The first task exception is
        raised after the tasks already started have finished. ``remote=True`` marks tasks that
        may run on another machine (``fn`` and the items are picklable and build their own
        environment and backend there: the episodes); the others (LLM calls that use this
        process's backends) always run here.
        """
        ...


class LocalExecutor:
    """Threads on this machine.

    Args:
        workers: tasks at once (>= 1); 1 runs them in the caller's thread, in order.

    Raises:
        ValueError: ``workers < 1``.
    """

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.workers = workers

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        on_result: Callable[[int, R], None] | None = None,
        remote: bool = False,
    ) -> list[R]:
        """See :meth:`Executor.map` (``remote`` makes no difference here)."""
        items = list(items)
        if self.workers == 1 or len(items) <= 1:
            out = []
            for i, x in enumerate(items):
                r = fn(x)
                if on_result is not None:
                    on_result(i, r)
                out.append(r)
            return out
        results: list[Any] = [None] * len(items)
        with ThreadPoolExecutor(max_workers=min(self.workers, len(items))) as pool:
            futures = {pool.submit(fn, x): i for i, x in enumerate(items)}
            error: BaseException | None = None
            for f in as_completed(futures):
                i = futures[f]
                try:
                    results[i] = f.result()
                except BaseException as exc:
                    if error is None:
                        error = exc
                        for other in futures:
                            other.cancel()
                    continue
                if on_result is not None and error is None:
                    on_result(i, results[i])
            if error is not None:
                raise error
        return results

    def __repr__(self) -> str:
        return f"LocalExecutor(workers={self.workers})"


class EnvPool:
    """Environment instances for concurrent tasks: :meth:`lease` one, give it back after.

    Args:
        factory: builds a new instance (same id and kwargs as the others).
        first: an existing instance to lend first.
        spec: ``(env_id, kwargs)`` of the instances, for a remote worker that builds its own
            (``None``: the worker builds the run's env from its team's config).
    """

    def __init__(
        self, factory: Callable[[], Any], first: Any | None = None, spec: tuple[str, dict[str, Any]] | None = None
    ) -> None:
        self.factory, self.spec = factory, spec
        self._idle: list[Any] = [] if first is None else [first]
        self._all: list[Any] = list(self._idle)
        self._lock = threading.Lock()

    @contextmanager
    def lease(self) -> Iterator[Any]:
        """An idle instance (a new one if all are busy), returned to the pool afterwards."""
        with self._lock:
            env = self._idle.pop() if self._idle else None
        if env is None:
            env = self.factory()
            with self._lock:
                self._all.append(env)
        try:
            yield env
        finally:
            with self._lock:
                self._idle.append(env)

    @property
    def size(self) -> int:
        """How many instances exist."""
        return len(self._all)

    def close(self) -> None:
        """Close every instance."""
        for env in self._all:
            env.close()


_WORKER_BACKENDS: dict[str, Any] = {}
_WORKER_LOCK = threading.Lock()


def worker_backend(spec: str, build: Callable[[], Any]) -> Any:
    """This process's actor backend for ``spec``: the one an executor installed
    (:func:`set_worker_backend`), else ``build()``'s, made once per process (a remote worker
    builds its own from the run's spec; keys come from its own environment)."""
    with _WORKER_LOCK:
        if spec not in _WORKER_BACKENDS:
            _WORKER_BACKENDS[spec] = build()
        return _WORKER_BACKENDS[spec]


def set_worker_backend(spec: str, backend: Any) -> None:
    """Make ``backend`` this process's actor backend for ``spec`` (an executor installs the one it
    built for a worker; :func:`worker_backend` then returns it)."""
    with _WORKER_LOCK:
        _WORKER_BACKENDS[spec] = backend
