"""The public steps of one training iteration, TorchRL-style: each takes plain objects and returns
plain results, and writes what it makes to the iteration's log if one is given.

=====================  =====================================================================
:func:`collect`        decentralised rollouts: episodes of the batch -> trajectories
:func:`play_batch`     an iteration's test, current validation and training episodes -> :class:`Batch`
:func:`gather_evidence` counterfactual re-runs of one episode -> typed :class:`Evidence`
:func:`assess`         the critic over the batch -> one :class:`CriticReport` per episode
:func:`propose`        per agent: a gradient per episode, their aggregate with momentum, a
                       candidate text (the optimiser's three stages)
:func:`validate`       the objective on held-out seeds (the trust region of an update)
=====================  =====================================================================

Every step that plays episodes takes ``env`` (one environment, or an
:class:`~lang_pz.executor.EnvPool`) and ``actors`` (a team, or ``env -> team`` that builds a fresh
team for one environment instance); with a pool, a team factory and an ``executor`` of several
workers, its independent episodes run concurrently, each in its own environment instance and
with its own policy objects. Results and files are in the same order either way.

The accept step (validation-gated acceptance, the evidence gate, momentum) is in
:mod:`lang_pz.training.accept`; :func:`lang_pz.training.train` composes all of them, and a
custom loop can compose them differently (``examples/custom_loop.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from lang_pz.critics.base import Critic, CriticReport, EpisodeEvidence
from lang_pz.critics.counterfactual import Evidence, plan_probes
from lang_pz.error import LangPZError
from lang_pz.executor import Executor, LocalExecutor
from lang_pz.objectives import Objective
from lang_pz.optimisers.gradient import PolicyUpdate
from lang_pz.optimisers.momentum import Momentum
from lang_pz.optimisers.textual import TextualPolicyOptimiser
from lang_pz.runs import IterationLog
from lang_pz.training.players import Players, Reference, Rerun, Team, play_job, rerun_job
from lang_pz.trajectory import Trajectory, TrajectoryBuffer, TrajectoryWriter

E = TypeVar("E")
T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


def _bar(n: int, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=n, desc=desc, leave=False, disable=None)  # None: no bar when stderr is not a terminal


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
    bar = _bar(len(todo), desc)

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
    """The objective (default: team return) of one episode per seed: the held-out measure
    (episodes concurrently as in :func:`collect`; each one's records appended to ``writer`` at once)."""
    players = Players(env, actors, executor)

    played = players.executor.map(
        functools.partial(play_job, players), [(s, episode0 + i) for i, s in enumerate(seeds)], remote=True
    )
    for _traj, buf in played:
        if writer is not None:
            buf.flush_to(writer)
    return [objective(t) if objective is not None else t.team_return for t, _ in played]


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
    episodes concurrently as in :func:`collect`.

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
    played = players.executor.map(functools.partial(play_job, players), list(zip(seeds, numbers, recorded)), remote=True)
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
    env: Any,
    actors: Team,
    seeds: Sequence[int],
    episodes: Sequence[int],
    *,
    value: float | Callable[[], float | None] | None,
    test_seeds: Sequence[int] = (),
    objective: Objective | None = None,
    log: IterationLog | None = None,
    executor: Executor | None = None,
    on_episode: Callable[[Trajectory], None] | None = None,
    desc: str = "episodes",
) -> Batch:
    """An iteration's first step: the held-out test of ``actors`` (:func:`validate` with
    ``test=True``), the current value (``value()``, unless the value is already known) and the
    training episodes (:func:`collect`). They are independent, so with a concurrent executor they
    run side by side; serially, in that order.
    """
    ex = executor or LocalExecutor(1)
    with ThreadPoolExecutor(2) as side:
        submit = side.submit if ex.workers > 1 or not isinstance(ex, LocalExecutor) else _now
        tested = submit(
            validate, env, actors, test_seeds, objective=objective, log=log, label="current", test=True, executor=ex
        )
        current = submit(value) if callable(value) else _now(lambda: value)
        trajectories = collect(env, actors, seeds, episodes, log=log, executor=ex, on_episode=on_episode, desc=desc)
        return Batch(trajectories, current.result(), tested.result())


def _now(fn: Callable[..., Any], *args: Any, **kw: Any) -> Future[Any]:
    """A call made at once, as a finished future (the serial form of ``pool.submit``)."""
    done: Future[Any] = Future()
    try:
        done.set_result(fn(*args, **kw))
    except BaseException as exc:
        done.set_exception(exc)
    return done


def rerun(
    env: Any,
    actors: Team,
    plans: Sequence[tuple[Trajectory, Rerun[T]]],
    *,
    objective: Objective | None = None,
    seed: int = 0,
    executor: Executor | None = None,
) -> list[T]:
    """Play every planned re-run ``(factual trajectory, plan)`` (concurrently as in :func:`collect`,
    each in its own environment with a fresh team): the one runner of counterfactual probes
    (:func:`gather_evidence`) and withheld-skill re-runs (MASkills' evidence).

    Returns:
        Each plan's result, in plan order.
    """
    players = Players(env, actors, executor)
    return players.executor.map(functools.partial(rerun_job, players, objective, seed), list(plans), remote=True)


def gather_evidence(
    env: Any,
    actors: Team,
    trajectories: Sequence[Trajectory],
    groups: Sequence[Sequence[str]],
    replacements: Sequence[str],
    *,
    objective: Objective | None = None,
    seed: int = 0,
    steps: Sequence[int] | None = None,
    log: IterationLog | None = None,
    executor: Executor | None = None,
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
    probes = rerun(env, actors, plans, objective=objective, seed=seed, executor=executor)
    out = []
    for traj in trajectories:
        mine = [c for (t, _), c in zip(plans, probes) if t is traj]
        if log is not None:
            for c in mine:
                log.log("counterfactuals", {"episode": traj.episode, **c.model_dump(mode="json")})
        out.append(Evidence(episode=traj.episode, counterfactuals=mine))
    return out


def assess(
    critic: Critic[E, R],
    trajectories: Sequence[Trajectory],
    policies: Mapping[str, str],
    evidence: Sequence[EpisodeEvidence[E]] = (),
    *,
    log: IterationLog | None = None,
    executor: Executor | None = None,
) -> tuple[list[R], int]:
    """The critic's report on every trajectory (centralised credit in language), the calls of
    the batch concurrently with an ``executor``; reports logged in episode order.

    ``evidence`` (e.g. from :func:`gather_evidence`) is matched to trajectories by episode
    number; the critic is shown each one's :meth:`~lang_pz.critics.base.EpisodeEvidence.shown`.
    A critic failure (:class:`~lang_pz.error.LangPZError`, e.g. a reply that never validated)
    is logged to ``critic_errors.jsonl`` and counted, never replaced by a default credit.

    Returns:
        ``(reports of the episodes that were assessed, number of failures)``.
    """
    by_episode = {e.episode: e for e in evidence}
    bar = _bar(len(trajectories), "critic")

    def one(traj: Trajectory) -> R | LangPZError:
        found = by_episode.get(traj.episode)
        try:
            return critic.assess(traj, policies, found.shown() if found is not None else ())
        except LangPZError as exc:
            return exc

    results = (executor or LocalExecutor(1)).map(one, trajectories, on_result=lambda _i, _r: bar.update())
    bar.close()
    reports: list[R] = []
    failures = 0
    for traj, res in zip(trajectories, results):
        if isinstance(res, LangPZError):
            failures += 1
            if log is not None:
                log.log("critic_errors", {"episode": traj.episode, "error": str(res)})
            continue
        reports.append(res)
        if log is not None:
            log.log("credits", {"episode": traj.episode, **res.model_dump(mode="json", exclude={"generations"})})
    return reports, failures


def propose(
    optimiser: TextualPolicyOptimiser,
    policies: Mapping[str, str],
    agents: Sequence[str],
    reports: Sequence[CriticReport],
    momentum: Momentum | None = None,
    *,
    log: IterationLog | None = None,
    executor: Executor | None = None,
) -> tuple[dict[str, PolicyUpdate], int]:
    """One optimiser step per agent credited in ``reports`` (the agents concurrently with an
    ``executor``): the language gradient per episode, their aggregate with the agent's momentum
    (read, not written: see :func:`lang_pz.training.accept.commit_momentum`), the candidate text
    (LangMARL's language policy gradient). Agents no report credits get no step.

    A stage failure is logged to ``optimiser_errors.jsonl`` and counted; that agent keeps its policy.
    The candidates that differ from the current policies are written to ``candidates/``.

    Returns:
        ``(agent -> update for the agents that got one, number of failures)``.
    """
    credited = [a for a in agents if any(a in r.credits for r in reports)]
    bar = _bar(len(credited), "optimiser")

    def one(agent: str) -> PolicyUpdate | LangPZError:
        try:
            return optimiser.update(agent, policies[agent], reports, momentum, executor=executor)
        except LangPZError as exc:
            return exc

    results = (executor or LocalExecutor(1)).map(one, credited, on_result=lambda _i, _r: bar.update())
    bar.close()
    updates: dict[str, PolicyUpdate] = {}
    failures = 0
    for agent, res in zip(credited, results):
        if isinstance(res, LangPZError):
            failures += 1
            if log is not None:
                log.log("optimiser_errors", {"agent": agent, "error": str(res)})
            continue
        updates[agent] = res
        if log is not None:
            log.log("gradients", res.model_dump(mode="json", exclude={"generations"}))
    changed = {a: u.new for a, u in updates.items() if u.changed}
    if log is not None and changed:
        log.write_candidates(changed)
    return updates, failures
