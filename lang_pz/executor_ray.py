"""Ray executor: a run's episodes as Ray tasks, on a local or an existing Ray cluster.

Optional extra: ``pip install 'lang_pz[ray]'`` (Ray core only). Select it with
``TrainConfig(executor="ray")`` / ``lang-pz train --executor ray``; ``$RAY_ADDRESS`` (or
``address=``) names an existing cluster, else a local one is started on this machine.

What runs where (the :class:`~lang_pz.executor.Executor` protocol's ``remote`` flag):

- ``remote=True`` tasks (training episodes, counterfactual re-runs, validation and test
  episodes) run as Ray tasks, at most ``workers`` at once. A task carries policy texts and the
  run's config, never a model, an HTTP client or an environment: each worker process builds its
  own environment and actor backend from the config (the backend once per process, wrapped in a
  :class:`~lang_pz.backends.meter.RoleMeter`; API keys come from the worker's environment).
  A worker that dies (killed, out of memory, its machine gone) has its task retried on another
  one (Ray's task ``max_retries``, system failures only; an exception raised by the task itself
  is not retried). Results come back to the driver, which alone writes the run folder: a retried
  episode is written once, in input order, and ``on_result`` sees each result as it arrives.
  The LLM usage a task made on its worker is added to the driver's actor meter (``usage``), so
  the run's metrics count every call; the calls of an attempt whose worker died are not counted.
- ``remote=False`` tasks (critic and optimiser calls, which use this process's backends) run
  here on ``workers`` threads, as :class:`~lang_pz.executor.LocalExecutor` does.

``max_concurrent_requests`` bounds the driver's requests only; on the cluster each episode task
issues the requests of one episode (a parallel env's step asks every agent at once).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lang_pz.backends.base import LLMBackend
from lang_pz.backends.meter import RoleMeter
from lang_pz.error import DependencyNotInstalled, InvalidKwargError
from lang_pz.executor import LocalExecutor, set_worker_backend

T = TypeVar("T")
R = TypeVar("R")

INSTALL_HINT = "pip install 'lang_pz[ray]'"


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise DependencyNotInstalled(f"the ray executor needs Ray, which is not installed: {INSTALL_HINT}") from exc
    return ray


_FACTORIES: dict[str, Callable[[], LLMBackend]] = {}


def register_worker_backend(spec: str, factory: Callable[[], LLMBackend] | None) -> None:
    """Build the actor backend of ``spec`` on Ray workers with ``factory()`` instead of
    :func:`~lang_pz.backends.make_backend` (``None`` removes the entry).

    For backends that no spec string can build (a custom :class:`LLMBackend` subclass, or the
    scripted stand-in of the unit tests) when they are passed to :func:`lang_pz.training.train`
    as objects. The factory is pickled to every worker, so it must be importable there: a
    module-level function or a :func:`functools.partial` of one, e.g.
    ``functools.partial(ScriptedBackend, my_module.reply)``. Read when a run builds its
    :class:`RayExecutor` (:meth:`RayExecutor.for_actor`).
    """
    if factory is None:
        _FACTORIES.pop(spec, None)
    else:
        _FACTORIES[spec] = factory


@dataclass(frozen=True)
class WorkerBackend:
    """How a worker builds the actor backend of a run (data, pickled with every task).

    Attributes:
        spec: the backend spec (``config.backend_spec("actor")``).
        options: its constructor options (``config.backend_options[spec]``; never credentials).
        price_per_mtok: ``(input, output)`` US dollars per million tokens, for the usage report.
        factory: builds the backend instead of ``make_backend(spec, **options)`` (see
            :func:`register_worker_backend`).
        token: identifies this recipe: a worker process reused by a later run rebuilds its backend.
    """

    spec: str
    options: Mapping[str, Any] = field(default_factory=dict)
    price_per_mtok: tuple[float, float] = (0.0, 0.0)
    factory: Callable[[], LLMBackend] | None = None
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def build(self) -> RoleMeter:
        """A new metered backend (called on the worker)."""
        from lang_pz.backends import make_backend

        inner = self.factory() if self.factory is not None else make_backend(self.spec, **dict(self.options))
        return RoleMeter(inner, "actor", self.price_per_mtok)


_INSTALLED: dict[str, tuple[str, RoleMeter]] = {}


def _install(recipe: WorkerBackend) -> RoleMeter:
    """This worker process's actor backend for ``recipe``, where the episode code finds it
    (:func:`lang_pz.executor.set_worker_backend`'s per-process cache)."""
    have = _INSTALLED.get(recipe.spec)
    if have is None or have[0] != recipe.token:
        if have is not None:
            have[1].inner.close()
        _INSTALLED[recipe.spec] = (recipe.token, recipe.build())
        set_worker_backend(recipe.spec, _INSTALLED[recipe.spec][1])
    return _INSTALLED[recipe.spec][1]


def _run_task(fn: Callable[[Any], Any], item: Any, recipe: WorkerBackend | None) -> tuple[Any, dict[str, float] | None]:
    """One remote task on a worker: ``(fn(item), the actor backend's usage during it)``
    (a worker runs one task at a time, so the difference is this task's)."""
    meter = _install(recipe) if recipe is not None else None
    snap = meter.snapshot() if meter is not None else None
    result = fn(item)
    return result, (meter.since(snap) if meter is not None and snap is not None else None)


def _add_usage(meter: LLMBackend, delta: Mapping[str, float]) -> None:
    """Add a worker's usage (the shape of :meth:`RoleMeter.since`) to the driver's ``meter``."""
    if isinstance(meter, RoleMeter):
        meter.add_usage(dict(delta))
    else:
        meter.usage.merge(dict(delta))


class RayExecutor:
    """Episodes as Ray tasks, LLM calls on local threads (see the module docstring).

    Args:
        workers: Ray tasks in flight at once, and threads for local tasks (>= 1).
        address: the Ray cluster to join (default ``$RAY_ADDRESS``; if neither is set, a cluster
            started with ``ray start`` on this machine, else a new local one, without a dashboard).
            Ignored if Ray is already initialised in this process (a test or notebook's ``ray.init``).
        backend: how workers build the actor backend (default: each task's own config decides,
            through :func:`lang_pz.executor.worker_backend`, unmetered).
        usage: the driver's backend (the run's actor meter) that workers' LLM usage is added to.
        task_cpus: CPUs Ray reserves per task (fractions allowed: 0.5 runs two latency-bound
            episodes per core).
        max_retries: re-runs of a task whose worker died (system failures only).
        init_options: more keyword arguments of ``ray.init`` (e.g. ``num_cpus``, ``runtime_env``).

    Raises:
        DependencyNotInstalled: Ray is not installed (``pip install 'lang_pz[ray]'``).
        ValueError: ``workers < 1``, ``task_cpus <= 0`` or ``max_retries < 0``.
        ConnectionError: the cluster at ``address`` cannot be reached (raised by Ray).
    """

    def __init__(
        self,
        workers: int = 2,
        address: str | None = None,
        *,
        backend: WorkerBackend | None = None,
        usage: LLMBackend | None = None,
        task_cpus: float = 1.0,
        max_retries: int = 3,
        init_options: Mapping[str, Any] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if task_cpus <= 0:
            raise ValueError(f"task_cpus must be > 0 CPUs, got {task_cpus}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        ray = _ray()
        self.workers = workers
        self.backend, self.usage = backend, usage
        self.task_cpus, self.max_retries = float(task_cpus), max_retries
        self._local = LocalExecutor(workers)
        self._started = False
        if not ray.is_initialized():
            address = address or os.environ.get("RAY_ADDRESS") or None
            options = {"include_dashboard": False} if address is None else {}
            ray.init(address=address, **{**options, **dict(init_options or {})})
            self._started = True
        self._task = ray.remote(_run_task).options(num_cpus=self.task_cpus, max_retries=max_retries)

    @classmethod
    def for_actor(
        cls,
        spec: str,
        options: Mapping[str, Any],
        price_per_mtok: Sequence[float] | None,
        workers: int,
        usage: LLMBackend | None = None,
        *,
        actor_given: bool = False,
        **kwargs: Any,
    ) -> RayExecutor:
        """The executor of a run whose actors use the backend ``spec``: workers build it (or the
        factory registered for it) and report their usage to ``usage``.

        Args:
            spec: the actor backend spec (``TrainConfig.backend_spec("actor")``).
            options: its constructor options (never credentials).
            price_per_mtok: ``(input, output)`` US dollars per million tokens (``None``: free).
            workers: tasks at once (``TrainConfig.worker_count()``).
            usage: the driver's actor meter.
            actor_given: the actor backend was passed to ``train``/``build`` as an object.
            **kwargs: more :class:`RayExecutor` arguments.

        Raises:
            InvalidKwargError: ``actor_given`` and no factory is registered for ``spec``
                (workers cannot receive a backend object; they would silently play another model).
        """
        factory = _FACTORIES.get(spec)
        if actor_given and factory is None:
            raise InvalidKwargError(
                f"the actor backend was passed as an object, but Ray workers build their own from the spec "
                f"{spec!r}: give a spec that builds it (e.g. 'openai:<model>' with backend_options), or register "
                f"a picklable factory with lang_pz.executor_ray.register_worker_backend({spec!r}, factory)"
            )
        price = (float(price_per_mtok[0]), float(price_per_mtok[1])) if price_per_mtok else (0.0, 0.0)
        recipe = WorkerBackend(spec, dict(options), price, factory)
        return cls(workers, backend=recipe, usage=usage, **kwargs)

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        *,
        on_result: Callable[[int, R], None] | None = None,
        remote: bool = False,
    ) -> list[R]:
        """See :meth:`lang_pz.executor.Executor.map`.

        With ``remote=True``, ``fn`` (pickled once, to Ray's object store) and each item go to
        the cluster. The first failure (a task's own exception, re-raised as its original type;
        or Ray's ``WorkerCrashedError`` once retries are spent) is raised after the tasks in
        flight have finished; no task starts after it.
        """
        if not remote:
            return self._local.map(fn, items, on_result=on_result)
        ray = _ray()
        from ray.exceptions import RayError

        items = list(items)
        results: list[Any] = [None] * len(items)
        if not items:
            return results
        fn_ref = ray.put(fn)
        pending: dict[Any, int] = {}
        queue = iter(range(len(items)))
        error: BaseException | None = None

        def submit() -> None:
            i = next(queue, None)
            if i is not None:
                pending[self._task.remote(fn_ref, items[i], self.backend)] = i

        for _ in range(self.workers):
            submit()
        while pending:
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            i = pending.pop(ref)
            try:
                value, used = ray.get(ref)
            except RayError as exc:  # the task's own exception, or its worker died max_retries + 1 times
                error = error or exc
                continue
            if used is not None and self.usage is not None:
                _add_usage(self.usage, used)
            results[i] = value
            if error is None:
                try:
                    if on_result is not None:
                        on_result(i, value)
                except BaseException as exc:
                    error = exc
                    continue
                submit()
        if error is not None:
            raise error
        return results

    def close(self) -> None:
        """Shut Ray down if this executor started it."""
        if self._started:
            _ray().shutdown()
            self._started = False

    def __repr__(self) -> str:
        return f"RayExecutor(workers={self.workers}, task_cpus={self.task_cpus}, max_retries={self.max_retries})"
