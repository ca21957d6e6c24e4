"""The interface a self-improvement method implements, and the registry ``train()`` picks it from.

:func:`lang_pz.training.train` owns the outer loop (budget, resume, the run folder, progress, the
final test, closing the parts); a :class:`Method` owns what changes between methods: what its
parameter is, how its parts are built, how one iteration runs from the shared steps
(:mod:`lang_pz.training.steps`, :mod:`lang_pz.training.accept`), and how its state is saved and
restored. This is the split of SB3's ``OnPolicyAlgorithm.learn`` (the loop) and ``PPO.train``
(one update), TorchRL's ``Trainer`` and its hooks, and DSPy's ``Teleprompter.compile``.

==============  ================================================================================
``name``        the ``config.method`` that picks it (:func:`register_method`, :func:`method_class`)
``build``       its parts from the config (shared :class:`~lang_pz.training.parts.Parts` + its own)
``start``       the state of a new run; ``restore``: the state after the last completed iteration
``iteration``   one iteration, writing its files, ``done.json`` last -> (metrics, next state)
``team``        ``env -> team`` of a state (the final held-out test plays it)
``finish``      the final files (``final/``) and the result's final fields
==============  ================================================================================

A third method (a prompt-only baseline, a user's variant) is one more subclass, registered by
name or passed to ``train(config, method=MyMethod)``; it gets the loop for free.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from lang_pz.backends import LLMBackend
from lang_pz.error import InvalidKwargError
from lang_pz.runs import IterationLog, RunFolder
from lang_pz.training.parts import Parts
from lang_pz.training.players import Team
from lang_pz.training.state import Callback, IterationMetrics, TrainResult, TrainState

S = TypeVar("S", bound=TrainState)


class Method(ABC, Generic[S]):
    """One self-improvement method, driven by :func:`lang_pz.training.train`.

    Attributes:
        name: the ``config.method`` value that selects it.
        objects: keyword arguments of ``train()`` it accepts instead of the config's specs
            (e.g. ``critic``), passed to :meth:`build`.
        parts: the shared parts of the run (env, pool, executor, role meters, objective, agents).
    """

    name: ClassVar[str]
    objects: ClassVar[tuple[str, ...]] = ()

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.config = parts.config

    @classmethod
    @abstractmethod
    def build(
        cls,
        config: Any,
        *,
        backends: LLMBackend | Mapping[str, LLMBackend] | None = None,
        run: RunFolder | None = None,
        **objects: Any,
    ) -> Method[S]:
        """Build (and check) every part from ``config``; nothing is written.

        Args:
            config: the run's :class:`~lang_pz.training.config.TrainConfig`.
            backends: objects instead of the role backends' specs.
            run: the run folder being resumed (``None`` for a new run).
            **objects: the parts named in :attr:`objects`, given as objects.
        """

    @abstractmethod
    def start(self) -> S:
        """The state of a new run (the starting parameter)."""

    @abstractmethod
    def restore(self, run: RunFolder, done: Sequence[dict[str, Any]]) -> S:
        """The state after the last completed iteration, from its ``done.json`` (``done[-1]``)
        and the files the method wrote.

        Raises:
            RunDirError: a file the state needs cannot be read.
        """

    @abstractmethod
    def iteration(self, state: S, log: IterationLog, callbacks: Sequence[Callback] = ()) -> tuple[IterationMetrics, S]:
        """One iteration from ``state``; writes its files (``done.json`` last, :meth:`conclude`)."""

    @abstractmethod
    def team(self, state: S) -> Team:
        """``env -> team`` playing ``state``'s parameter."""

    def result(self, run_dir: Path, start: S, metrics: list[IterationMetrics]) -> TrainResult:
        """The result of a run that started from ``start`` (its final fields set by :meth:`finish`)."""
        return TrainResult(run_dir=run_dir, initial_policies=dict(start.policies), metrics=metrics)

    def finish(self, run: RunFolder, state: S, result: TrainResult) -> None:
        """Write the final parameter (``final/``) and set ``result``'s final fields."""
        run.finish(state.policies)
        result.final_policies = dict(state.policies)

    def summary(self, metrics: IterationMetrics, state: S) -> str:
        """The end of the iteration's progress line (what was accepted; its labels are agents unless
        the method says otherwise)."""
        verdict = {None: "no candidate", True: "accepted", False: "rejected"}[metrics.accepted]
        return f"{verdict}: {len(metrics.accepted_agents)} of {len(metrics.changed_agents)} changed agent(s)"

    def conclude(
        self, log: IterationLog, metrics: IterationMetrics, state: S, callbacks: Sequence[Callback], **extra: Any
    ) -> None:
        """The iteration's last write (``done.json``: its metrics, the state and ``extra``), then
        the callbacks' ``on_iteration``."""
        log.done({"metrics": asdict(metrics), **state.to_json(), **extra})
        for c in callbacks:
            c.on_iteration(metrics, state)

    def on_episode(self, iteration: int, callbacks: Sequence[Callback]) -> Callable[[Any], None]:
        """``trajectory -> None``: every callback's ``on_episode`` for a training episode."""

        def call(trajectory: Any) -> None:
            for c in callbacks:
                c.on_episode(iteration, trajectory)

        return call

    def close(self) -> None:
        """Close the parts (environment instances, executor workers)."""
        self.parts.close()


_REGISTRY: dict[str, type[Method[Any]]] = {}


def register_method(cls: type[Method[Any]]) -> type[Method[Any]]:
    """Register ``cls`` under ``cls.name`` (usable as a class decorator).

    Raises:
        InvalidKwargError: another class is registered under that name.
    """
    have = _REGISTRY.get(cls.name)
    if have is not None and have is not cls:
        raise InvalidKwargError(
            f"method {cls.name!r} is already registered ({have.__module__}.{have.__qualname__}); give yours another name"
        )
    _REGISTRY[cls.name] = cls
    return cls


def method_class(name: str) -> type[Method[Any]]:
    """The method registered as ``name`` (``config.method``; :mod:`lang_pz.methods` registers the
    built-in ones when imported).

    Raises:
        InvalidKwargError: no method has that name (the message lists the registered ones).
    """
    if name not in _REGISTRY:
        raise InvalidKwargError(f"unknown method {name!r}; registered: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def registered() -> list[str]:
    """The registered method names."""
    return sorted(_REGISTRY)
