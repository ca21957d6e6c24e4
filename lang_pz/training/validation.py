"""Validation: the mean objective on held-out seeds, logged, as the training loop measures a
candidate (the trust region of an update).

=====================  =====================================================================
:func:`validate`       the mean objective of a team on held-out seeds, written to the
                       iteration's log (``validation.jsonl``, or ``test.jsonl``), optionally
                       answering from a reference team's episodes of the same seeds
:func:`validator`      ``(parameter, label) -> value``: :func:`validate`, each call answering
                       from the last one's episodes (what :meth:`lang_pz.methods.Method.validator`
                       gives the accept step)
=====================  =====================================================================

To measure a team on held-out seeds yourself, call :func:`lang_pz.training.evaluate` (one value
per seed, nothing logged; ``examples/evaluate_run.py``, ``docs/tutorials/loop.md``): that is the
one held-out measure of the public steps. :func:`validate` is its logged form, which the loop's
play and accept stages use through :func:`validator`; :func:`lang_pz.training.play_batch` calls
it for the held-out test.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from lang_pz.executor import Executor
from lang_pz.objectives import Objective
from lang_pz.runs import IterationLog
from lang_pz.training.parts import Context
from lang_pz.training.players import Players, Reference, Team, play_job
from lang_pz.training.progress import progress
from lang_pz.trajectory import Trajectory

__all__ = ["validate", "validator"]

P = TypeVar("P")


def validate(
    env: Any,
    actors: Team,
    seeds: Sequence[int],
    *,
    objective: Objective | None = None,
    log: IterationLog | None = None,
    label: str = "current",
    test: bool = False,
    executor: Executor | None = None,
    reference: Reference | None = None,
    on_episode: Callable[[Trajectory], None] | None = None,
) -> float | None:
    """Mean objective of ``actors`` on the held-out ``seeds`` (``None`` when there are none),
    episodes concurrently as in :func:`~lang_pz.training.collect`, with a progress line: the
    logged form of :func:`~lang_pz.training.evaluate` the loop uses (to measure a team yourself,
    call ``evaluate``).

    With a ``log``, each episode's value goes to ``validation.jsonl`` (``episode``, ``policies`` =
    ``label``, ``seed``, ``team_return``, ``objective``; episodes numbered on through the
    iteration, in seed order) and its trajectory to ``validation_trajectories.jsonl``; with
    ``test=True`` (the held-out test, which decides nothing) to ``test.jsonl`` only.

    With a ``reference`` (another team's episodes of the same seeds, e.g. the current team's while
    a candidate that changes one agent is validated), each LLM agent answers from the reference
    episode of its seed where it sends the request the reference team's policy sent there
    (:mod:`lang_pz.policies.replay`): only the changed agents and those their change reaches
    are asked. ``on_episode`` gets each trajectory, in seed order (to keep as a later reference).
    """
    if not seeds:
        return None
    numbers = [log.next_validation_episode() if log is not None and not test else i for i, _ in enumerate(seeds)]
    players = Players(env, actors, executor, None if reference is None else reference.team)
    recorded = [None if reference is None else reference.episodes.get(s) for s in seeds]
    bar = progress(len(seeds), "test" if test else f"validation ({label})", Context(log=log).calls)
    try:
        jobs = list(zip(seeds, numbers, recorded))
        played = players.executor.map(
            functools.partial(play_job, players), jobs, remote=True, on_result=lambda _i, _r: bar.update()
        )
    finally:
        bar.close()
    values = []
    writer = log.validation_writer() if log is not None and not test else None
    try:
        for s, (traj, buf) in zip(seeds, played):
            value = objective(traj) if objective is not None else traj.team_return
            if writer is not None:
                buf.flush_to(writer)
            if log is not None:
                log.log(
                    "test" if test else "validation",
                    {
                        "episode": traj.episode,
                        "policies": label,
                        "seed": s,
                        "team_return": round(traj.team_return, 3),
                        "objective": round(value, 3),
                    },
                )
            values.append(value)
            if on_episode is not None:
                on_episode(traj)
    finally:
        if writer is not None:
            writer.close()
    return sum(values) / len(values)


def validator(ctx: Context, team_of: Callable[[P], Team], seeds: Sequence[int]) -> Callable[[P, str], float | None]:
    """``(parameter, label) -> value``: :func:`validate` of ``team_of(parameter)`` on ``seeds``,
    logged under ``label``; each call answers from the episodes of the call before it (a
    :class:`~lang_pz.training.players.Reference`), so a candidate that changes one agent asks only
    that agent and those its change reaches (:mod:`lang_pz.policies.replay`: only a plain
    :class:`~lang_pz.policies.llm.LLMPolicy` is replayed, and only a request its policy sent in the
    reference episode, so the reference never decides a reply that differs). Make one per
    iteration: nothing is carried to the next, so a resumed iteration makes the calls an
    uninterrupted one makes. No ``seeds``: nothing is played and every value is ``None``.
    """
    latest: list[Reference | None] = [None]

    def val(parameter: P, label: str) -> float | None:
        team = team_of(parameter)
        episodes: dict[int, Trajectory] = {}

        def keep(t: Trajectory) -> None:
            assert t.seed is not None  # played from one of the (int) validation seeds
            episodes[t.seed] = t

        value = validate(
            ctx.envs_of("validation"),
            team,
            seeds,
            objective=ctx.objective,
            log=ctx.log,
            label=label,
            executor=ctx.executor,
            reference=latest[-1],
            on_episode=keep,
        )
        latest[-1] = Reference(team, episodes)
        return value

    return val
