"""Where a step's episodes are played: leased environments, fresh teams, an executor.

:class:`Players` is what :mod:`lang_pz.training.steps` hands its executor: for each episode it
leases an environment instance from an :class:`~lang_pz.executor.EnvPool` and builds a fresh
team for it (or, on a remote worker, builds both from the run's config); :class:`Reference`
names another team's episodes of the same seeds that a re-run or a validation may answer from
(:mod:`lang_pz.policies.replay`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from lang_pz.executor import EnvPool, Executor, LocalExecutor
from lang_pz.objectives import Objective
from lang_pz.policies.base import Policy
from lang_pz.policies.replay import replaying
from lang_pz.rollout import rollout
from lang_pz.training.team import TeamSpec, worker_env
from lang_pz.trajectory import Trajectory, TrajectoryBuffer

Team = Mapping[str, Policy] | Callable[[Any], Mapping[str, Policy]]


@dataclass(frozen=True)
class Reference:
    """Episodes a later :func:`~lang_pz.training.validation.validate` of the same seeds may answer from.

    Attributes:
        team: the team that played them (agent -> policy, or ``env -> team``).
        episodes: seed -> its trajectory.
    """

    team: Team
    episodes: Mapping[int, Trajectory]


class Players:
    """Where one step's episodes are played: leased environments, fresh teams, an executor.

    Pickled for a remote worker (with a :class:`~lang_pz.training.team.TeamSpec` as ``actors``)
    it leaves its environments behind; the worker plays in its own (:func:`worker_env`).
    """

    def __init__(self, env: Any, actors: Team, executor: Executor | None, played: Team | None = None) -> None:
        self.pool = env if isinstance(env, EnvPool) else None
        self.env, self.actors, self.played = env, actors, played
        # a remote executor always plays through its workers; threads only pay with more than one
        concurrent = (
            self.pool is not None
            and callable(actors)
            and executor is not None
            and (executor.workers > 1 or not isinstance(executor, LocalExecutor))
        )
        self.executor: Executor = executor if concurrent and executor is not None else LocalExecutor(1)

    def __getstate__(self) -> dict[str, Any]:
        if not isinstance(self.actors, TeamSpec):
            raise TypeError(
                "episodes run on remote workers need a TeamSpec team (Parts.actors), not "
                f"{type(self.actors).__name__}: a worker builds its own policies from the config"
            )
        spec = self.pool.spec if self.pool is not None else None
        return {"actors": self.actors, "played": self.played, "pool": None, "env": None, "executor": None, "spec": spec}

    @contextmanager
    def lease(self) -> Iterator[tuple[Any, Mapping[str, Policy]]]:
        """An environment instance and a fresh team for it, for one episode."""
        if self.pool is None:
            if self.env is None:  # a remote worker's unpickled Players: __getstate__ requires a TeamSpec
                assert isinstance(self.actors, TeamSpec)
                env = _worker_env(self.actors, getattr(self, "spec", None))
            else:
                env = self.env
            yield env, self.team(env)
            return
        with self.pool.lease() as env:
            yield env, self.team(env)

    def team(self, env: Any) -> Mapping[str, Policy]:
        """The team for ``env`` (``actors(env)`` for a factory)."""
        return self.actors(env) if callable(self.actors) else self.actors


_WORKER_ENVS: dict[str, Any] = {}


def _worker_env(team: TeamSpec, spec: tuple[str, dict[str, Any]] | None = None) -> Any:
    """This process's environment for the run of ``team``, or of ``spec`` (``(env_id, kwargs)``
    of the pool the step played in: a phase's own split), built once per process."""
    if spec is None:
        key = team.config.model_dump_json(include={"env_id", "env_kwargs"})
        build = lambda: worker_env(team.config)  # noqa: E731
    else:
        key = json.dumps(spec, sort_keys=True, default=repr)
        from lang_pz.registration import make

        build = lambda: make(spec[0], **spec[1])  # noqa: E731
    if key not in _WORKER_ENVS:
        _WORKER_ENVS[key] = build()
    return _WORKER_ENVS[key]


def play(
    players: Players, seed: int | None, episode: int, recorded: Trajectory | None = None
) -> tuple[Trajectory, TrajectoryBuffer]:
    """One episode from ``seed`` in a leased environment: its trajectory and its buffered records.
    With ``recorded`` (an episode of the same seed played by ``players.played``), the LLM agents
    answer from it where they ask what was asked there (:func:`lang_pz.policies.replay.replaying`)."""
    buf = TrajectoryBuffer()
    with players.lease() as (env, team):
        if recorded is not None and players.played is not None:
            played = players.played
            team = replaying(
                team,
                recorded,
                played.llm_team() if isinstance(played, TeamSpec) else played(env) if callable(played) else played,
            )
        return rollout(env, team, seed=seed, episode=episode, writer=buf), buf


def play_job(players: Players, job: tuple[Any, ...]) -> tuple[Trajectory, TrajectoryBuffer]:
    """:func:`play` of one ``(seed, episode[, recorded])`` job (what an executor maps)."""
    return play(players, *job)


R_co = TypeVar("R_co", covariant=True)


class Rerun(Protocol[R_co]):
    """One planned re-run of a factual episode's seed with some policies changed: a
    counterfactual :class:`~lang_pz.critics.counterfactual.Probe` (its result a
    :class:`~lang_pz.critics.counterfactual.Counterfactual`) or a withheld skill
    (:class:`~lang_pz.skills.evidence.WithheldSkill`, a skill's measured utility)."""

    def rerun(
        self,
        env: Any,
        policies: Mapping[str, Policy],
        factual: Trajectory,
        objective: Objective | None = None,
        seed: int = 0,
    ) -> R_co:
        """Play it in ``env`` with ``policies`` (the team that played ``factual``) and measure it."""
        ...


def rerun_job(players: Players, objective: Objective | None, seed: int, job: tuple[Trajectory, Rerun[R_co]]) -> R_co:
    """One re-run ``(factual trajectory, plan)`` in a leased environment with a fresh team (what an
    executor maps; :func:`lang_pz.training.steps.rerun`)."""
    trajectory, plan = job
    with players.lease() as (env, team):
        return plan.rerun(env, team, trajectory, objective, seed)
