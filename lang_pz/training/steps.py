"""The method-neutral steps of one training iteration, TorchRL-style: each takes plain objects and
returns plain results, and writes what it makes to the iteration's log if one is given.

=====================  =====================================================================
:func:`collect`        decentralised rollouts: episodes of the batch -> trajectories
:func:`evaluate`       the objective of one episode per seed: the held-out measure (what a user calls)
:func:`play_batch`     an iteration's test, current validation and training episodes -> :class:`Batch`
:func:`rerun`          planned re-runs of episodes' seeds (counterfactual probes, withheld skills)
:func:`gather_evidence` counterfactual re-runs of the batch -> typed :class:`Evidence`
:func:`assess`         the critic over the batch -> one report per episode
=====================  =====================================================================

Validation, the logged mean on held-out seeds the loop's accept step compares, is
:mod:`lang_pz.training.validation` (:func:`~lang_pz.training.validation.validate`,
:func:`~lang_pz.training.validation.validator`).

The first two take the environment (one, or an :class:`~lang_pz.executor.EnvPool`), the
team and what they write to one by one, so they serve outside a run too; the others take the
iteration's :class:`~lang_pz.training.parts.Context` first (environments, executor, objective,
log, failures: ``parts.context(log)``). ``actors`` is a team, or ``env -> team`` that builds a
fresh team for one environment instance; with a pool, a team factory and an executor of several
workers, independent episodes run concurrently, each in its own environment instance and with
its own policy objects. Results and files are in the same order either way.

The accept step is :mod:`lang_pz.training.accept`; a method's own steps are in its package
(:mod:`lang_pz.methods.langmarl.steps`, :mod:`lang_pz.methods.maskills.steps`), and
:meth:`lang_pz.methods.Method.iteration` composes them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from lang_pz.critics.base import Critic, EpisodeEvidence
from lang_pz.critics.counterfactual import Evidence, plan_probes
from lang_pz.error import LangPZError
from lang_pz.executor import Executor, LocalExecutor
from lang_pz.objectives import Objective
from lang_pz.runs import IterationLog
from lang_pz.training.parts import Context
from lang_pz.training.players import Players, Rerun, Team, play_job, rerun_job
from lang_pz.training.progress import progress
from lang_pz.training.state import Failure
from lang_pz.training.validation import validate
from lang_pz.trajectory import Trajectory, TrajectoryBuffer, TrajectoryWriter

E = TypeVar("E")
I = TypeVar("I")  # noqa: E741  (an item)
P = TypeVar("P")
T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


def collect(
    env: Any,
    actors: Team,
    seeds: Sequence[int],
    episodes: Sequence[int],
    *,
    log: IterationLog | None = None,
    on_episode: Callable[[Trajectory], None] | None = None,
    executor: Executor | None = None,
    desc: str = "episodes",
) -> list[Trajectory]:
    """Play one episode per ``(seed, episode number)`` (decentralised execution: each policy sees
    only its own observation), concurrently when ``env`` is a pool and ``actors`` a team factory.

    With a ``log``, finished episodes of an interrupted attempt are kept (their records
    verbatim; not replayed), and each new episode's records are appended to
    ``trajectories.jsonl`` as soon as it finishes (an unfinished one never reaches the file); at
    the end the file is in episode order, whatever the order of completion.

    Args:
        env: the language environment, or an :class:`~lang_pz.executor.EnvPool`.
        actors: agent -> policy for every possible agent, or ``env -> team``.
        seeds: the episodes' reset seeds (as long as ``episodes``).
        episodes: the episodes' numbers (as long as ``seeds``).
        log: the iteration's log, if any.
        on_episode: called with each new trajectory as it finishes (not for kept ones).
        executor: runs the episodes (default: one after another).

    Returns:
        The trajectories in episode order.

    Raises:
        ValueError: ``seeds`` and ``episodes`` differ in length, or an episode number repeats.
    """
    if len(seeds) != len(episodes):
        raise ValueError(f"{len(seeds)} seeds for {len(episodes)} episodes: give one seed per episode")
    repeated = sorted({e for e in episodes if list(episodes).count(e) > 1})
    if repeated:
        raise ValueError(
            f"episode numbers {repeated} repeat: each episode needs its own number (its records are keyed by it)"
        )
    kept = {t.episode: t for t in (log.kept if log is not None else [])}
    todo = [(s, ep) for s, ep in zip(seeds, episodes) if ep not in kept]
    players = Players(env, actors, executor)
    writer = log.trajectory_writer() if log is not None else None
    bar = progress(len(todo), desc, Context(log=log).calls)

    def finished(_i: int, result: tuple[Trajectory, TrajectoryBuffer]) -> None:
        traj, buf = result
        if writer is not None:
            buf.flush_to(writer)
        if log is not None:
            log.save_usage()  # the calls of a kept episode are counted if the attempt is interrupted
        if on_episode is not None:
            on_episode(traj)
        bar.update()

    try:
        played = players.executor.map(functools.partial(play_job, players), todo, on_result=finished, remote=True)
    finally:
        bar.close()
        if writer is not None:
            writer.close()
    new = {t.episode: t for t, _ in played}
    if log is not None and players.executor.workers > 1:
        log.sort_trajectories()
    return [kept.get(ep) or new[ep] for ep in episodes]


def evaluate(
    env: Any,
    actors: Team,
    seeds: Sequence[int],
    *,
    objective: Objective | None = None,
    writer: TrajectoryWriter | None = None,
    episode0: int = 0,
    executor: Executor | None = None,
) -> list[float]:
    """The objective (default: team return) of one episode per seed: the held-out measure, e.g. of
    a run's final policies (``examples/evaluate_run.py``) or of a candidate in a loop of your own
    (``docs/tutorials/loop.md``); episodes concurrently as in :func:`collect`, each one's records
    appended to ``writer`` at once. The loop's own validation, the same measure averaged and written
    to the run's log, is :func:`lang_pz.training.validation.validate`."""
    players = Players(env, actors, executor)

    played = players.executor.map(
        functools.partial(play_job, players), [(s, episode0 + i) for i, s in enumerate(seeds)], remote=True
    )
    for _traj, buf in played:
        if writer is not None:
            buf.flush_to(writer)
    return [objective(t) if objective is not None else t.team_return for t, _ in played]


@dataclass(frozen=True)
class Batch:
    """What an iteration plays before it learns anything (:func:`play_batch`).

    Attributes:
        trajectories: the training episodes, in episode order.
        value: the current parameter's validation value (``None`` without validation).
        tested: its held-out test value (``None`` without test seeds).
    """

    trajectories: list[Trajectory]
    value: float | None
    tested: float | None


def play_batch(
    ctx: Context,
    actors: Team,
    seeds: Sequence[int],
    episodes: Sequence[int],
    *,
    value: float | Callable[[], float | None] | None,
    test_seeds: Sequence[int] = (),
    on_episode: Callable[[Trajectory], None] | None = None,
    desc: str = "episodes",
) -> Batch:
    """An iteration's first step: the held-out test of ``actors``
    (:func:`~lang_pz.training.validation.validate` with ``test=True``), the current value (``value()``, unless the value is already known) and the
    training episodes (:func:`collect`). They are independent, so with a concurrent executor they
    run side by side; serially, in that order.
    """
    ex, log = ctx.executor, ctx.log
    with ThreadPoolExecutor(2) as side:
        submit = side.submit if ex.workers > 1 or not isinstance(ex, LocalExecutor) else _now
        tested = submit(
            validate,
            ctx.envs_of("test"),
            actors,
            test_seeds,
            objective=ctx.objective,
            log=log,
            label="current",
            test=True,
            executor=ex,
        )
        current = submit(value) if callable(value) else _now(lambda: value)
        trajectories = collect(ctx.envs, actors, seeds, episodes, log=log, executor=ex, on_episode=on_episode, desc=desc)
        return Batch(trajectories, current.result(), tested.result())


def _now(fn: Callable[..., Any], *args: Any, **kw: Any) -> Future[Any]:
    """A call made at once, as a finished future (the serial form of ``pool.submit``)."""
    done: Future[Any] = Future()
    try:
        done.set_result(fn(*args, **kw))
    except BaseException as exc:
        done.set_exception(exc)
    return done


def rerun(ctx: Context, actors: Team, plans: Sequence[tuple[Trajectory, Rerun[T]]], *, seed: int = 0) -> list[T]:
    """Play every planned re-run ``(factual trajectory, plan)`` (concurrently as in :func:`collect`,
    each in its own environment with a fresh team): the one runner of counterfactual probes
    (:func:`gather_evidence`) and withheld-skill re-runs (MASkills' evidence), with a progress
    line (:func:`~lang_pz.training.progress.progress`).

    Returns:
        Each plan's result, in plan order.
    """
    players = Players(ctx.envs, actors, ctx.executor)
    bar = progress(len(plans), "re-runs", ctx.calls)  # the longest silent stage of a run without one
    try:
        job = functools.partial(rerun_job, players, ctx.objective, seed)
        return players.executor.map(job, list(plans), remote=True, on_result=lambda _i, _r: bar.update())
    finally:
        bar.close()


def gather_evidence(
    ctx: Context,
    actors: Team,
    trajectories: Sequence[Trajectory],
    groups: Sequence[Sequence[str]],
    replacements: Sequence[str],
    *,
    seed: int = 0,
    steps: Sequence[int] | None = None,
) -> list[Evidence]:
    """Counterfactual re-runs of each trajectory's seed with each group's decisions replaced
    (:func:`~lang_pz.critics.counterfactual.plan_probes`; COMA's difference reward by simulation,
    Foerster et al. 2018, Sec. 4): the re-runs of the whole batch at once (:func:`rerun`), logged
    to ``counterfactuals.jsonl`` in plan order.

    Returns:
        One :class:`~lang_pz.critics.counterfactual.Evidence` per trajectory, in order (empty
        when there are no ``replacements`` or no groups: nothing is run).
    """
    if not (replacements and groups):
        return [Evidence(episode=t.episode) for t in trajectories]
    plans = [(t, p) for t in trajectories for p in plan_probes(t, groups, replacements, steps=steps)]
    probes = rerun(ctx, actors, plans, seed=seed)
    out = []
    for traj in trajectories:
        mine = [c for (t, _), c in zip(plans, probes) if t is traj]
        for c in mine:
            ctx.record("counterfactuals", {"episode": traj.episode, **c.model_dump(mode="json")})
        out.append(Evidence(episode=traj.episode, counterfactuals=mine))
    return out


def assess(
    ctx: Context,
    critic: Critic[E, R],
    trajectories: Sequence[Trajectory],
    policies: Mapping[str, str],
    evidence: Sequence[EpisodeEvidence[E]] = (),
) -> list[R]:
    """The critic's report on every trajectory (centralised credit in language), the calls of
    the batch concurrently on the context's executor; reports logged to ``credits.jsonl`` in
    episode order.

    ``evidence`` (e.g. from :func:`gather_evidence`) is matched to trajectories by episode
    number; the critic is shown each one's :meth:`~lang_pz.critics.base.EpisodeEvidence.shown`.
    A critic failure (:class:`~lang_pz.error.LangPZError`, e.g. a reply that never validated) is
    logged to ``critic_errors.jsonl`` and recorded in ``ctx.failures`` (stage ``critic``), never
    replaced by a default credit.

    Returns:
        The reports of the episodes that were assessed, in episode order.
    """
    by_episode = {e.episode: e for e in evidence}

    def one(traj: Trajectory) -> R:
        found = by_episode.get(traj.episode)
        return critic.assess(traj, policies, found.shown() if found is not None else ())

    def failed(traj: Trajectory, exc: LangPZError) -> None:
        ctx.fail(
            Failure("critic", f"episode {traj.episode}", str(exc)),
            "critic_errors",
            {"episode": traj.episode, "error": str(exc)},
        )

    reports = []
    for traj, report in each(ctx, "critic", trajectories, one, failed):
        reports.append(report)
        ctx.record("credits", {"episode": traj.episode, **report.model_dump(mode="json", exclude={"generations"})})
    return reports


def each(
    ctx: Context, desc: str, items: Sequence[I], step: Callable[[I], T], failed: Callable[[I, LangPZError], None]
) -> list[tuple[I, T]]:
    """``step`` of each item, concurrently on the context's executor, with a progress line
    (:func:`~lang_pz.training.progress.progress`); an item whose step raised
    :class:`~lang_pz.error.LangPZError` is handed to ``failed`` (to record it) and left out.

    Returns:
        ``(item, result)`` of the items that succeeded, in ``items`` order.
    """
    bar = progress(len(items), desc, ctx.calls)

    def one(item: I) -> T | LangPZError:
        try:
            return step(item)
        except LangPZError as exc:
            return exc

    try:
        results = ctx.executor.map(one, items, on_result=lambda _i, _r: bar.update())
    finally:
        bar.close()
    out: list[tuple[I, T]] = []
    for item, res in zip(items, results):
        if isinstance(res, LangPZError):
            failed(item, res)
        else:
            out.append((item, res))
    return out
