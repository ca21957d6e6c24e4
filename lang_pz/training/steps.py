"""The public steps of one training iteration, TorchRL-style: each takes plain objects and returns
plain results, and writes what it makes to the iteration's log if one is given.

=====================  =====================================================================
:func:`collect`        decentralised rollouts: episodes of the batch -> trajectories
:func:`gather_evidence` counterfactual re-runs of one episode -> typed :class:`Evidence`
:func:`assess`         the critic over the batch -> one :class:`CriticReport` per episode
:func:`propose`        per agent: a gradient per episode, their aggregate with momentum, a
                       candidate text (the optimiser's three stages)
:func:`validate`       the objective on held-out seeds (the trust region of an update)
=====================  =====================================================================

The accept step (validation-gated acceptance, the evidence gate, momentum) is in
:mod:`lang_pz.training.accept`; :func:`lang_pz.training.train` composes all of them, and a
custom loop can compose them differently (``examples/custom_loop.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lang_pz.backends.base import LLMBackend
from lang_pz.critics.base import Critic, CriticReport
from lang_pz.critics.counterfactual import Evidence, counterfactuals
from lang_pz.error import LangPZError
from lang_pz.objectives import Objective
from lang_pz.optimisers.gradient import PolicyUpdate
from lang_pz.optimisers.momentum import Momentum
from lang_pz.optimisers.textual import TextualPolicyOptimiser
from lang_pz.policies.base import Policy
from lang_pz.policies.llm import LLMPolicy
from lang_pz.rollout import rollout
from lang_pz.runs import IterationLog
from lang_pz.trajectory import Trajectory, TrajectoryWriter


def make_actors(policies: Mapping[str, str], backend: LLMBackend, partners: Mapping[str, Policy] | None = None
                ) -> dict[str, Policy]:
    """The team that plays: an :class:`~lang_pz.policies.llm.LLMPolicy` per text policy on
    ``backend``, plus the fixed ``partners`` (agent -> policy)."""
    return {**{a: LLMPolicy(p, backend) for a, p in policies.items()}, **(partners or {})}


def _bar(n: int, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=n, desc=desc, leave=False)


def collect(
    env: Any,
    actors: Mapping[str, Policy],
    seeds: Sequence[int],
    episodes: Sequence[int],
    *,
    log: IterationLog | None = None,
    on_episode: Callable[[Trajectory], None] | None = None,
    desc: str = "episodes",
) -> list[Trajectory]:
    """Play one episode per ``(seed, episode number)`` with ``actors`` (decentralised execution:
    each policy sees only its own observation).

    With a ``log``, finished episodes of an interrupted attempt are kept (their records
    verbatim; not replayed) and the others are appended to ``trajectories.jsonl`` as they happen.

    Args:
        env: the language environment (reset per episode).
        actors: agent -> policy for every possible agent.
        seeds / episodes: the episodes' reset seeds and numbers (same length).
        log: the iteration's log, if any.
        on_episode: called with each trajectory as it finishes (not for kept ones).

    Returns:
        The trajectories in episode order.

    Raises:
        ValueError: ``seeds`` and ``episodes`` differ in length.
    """
    if len(seeds) != len(episodes):
        raise ValueError(f"{len(seeds)} seeds for {len(episodes)} episodes: give one seed per episode")
    kept = {t.episode: t for t in (log.kept if log is not None else [])}
    out: list[Trajectory] = []
    writer = log.trajectory_writer() if log is not None else None
    try:
        bar = _bar(len(episodes), desc)
        for seed, ep in zip(seeds, episodes):
            if ep in kept:
                out.append(kept[ep])
            else:
                traj = rollout(env, actors, seed=seed, episode=ep, writer=writer)
                out.append(traj)
                if on_episode is not None:
                    on_episode(traj)
            bar.update()
        bar.close()
    finally:
        if writer is not None:
            writer.close()
    return out


def evaluate(
    env: Any,
    actors: Mapping[str, Policy],
    seeds: Sequence[int],
    *,
    objective: Objective | None = None,
    writer: TrajectoryWriter | None = None,
    episode0: int = 0,
) -> list[float]:
    """The objective (default: team return) of one episode per seed: the held-out measure."""
    values = []
    for i, s in enumerate(seeds):
        traj = rollout(env, actors, seed=s, episode=episode0 + i, writer=writer)
        values.append(objective(traj) if objective is not None else traj.team_return)
    return values


def validate(
    env: Any,
    actors: Mapping[str, Policy],
    seeds: Sequence[int],
    *,
    objective: Objective | None = None,
    log: IterationLog | None = None,
    label: str = "current",
    test: bool = False,
) -> float | None:
    """Mean objective of ``actors`` on the held-out ``seeds`` (``None`` when there are none).

    With a ``log``, each episode's value goes to ``validation.jsonl`` (``episode``, ``policies`` =
    ``label``, ``seed``, ``team_return``, ``objective``; episodes numbered on through the
    iteration) and its trajectory to ``validation_trajectories.jsonl``; with ``test=True`` (the
    held-out test, which decides nothing) to ``test.jsonl`` only.
    """
    if not seeds:
        return None
    values = []
    writer = log.validation_writer() if log is not None and not test else None
    try:
        for i, s in enumerate(seeds):
            ep = log.next_validation_episode() if log is not None and not test else i
            traj = rollout(env, actors, seed=s, episode=ep, writer=writer)
            value = objective(traj) if objective is not None else traj.team_return
            if log is not None:
                log.log("test" if test else "validation", {
                    "episode": ep, "policies": label, "seed": s, "team_return": round(traj.team_return, 3),
                    "objective": round(value, 3)})
            values.append(value)
    finally:
        if writer is not None:
            writer.close()
    return sum(values) / len(values)


def gather_evidence(
    env: Any,
    actors: Mapping[str, Policy],
    trajectory: Trajectory,
    groups: Sequence[Sequence[str]],
    replacements: Sequence[str],
    *,
    objective: Objective | None = None,
    seed: int = 0,
    steps: Sequence[int] | None = None,
    log: IterationLog | None = None,
) -> Evidence:
    """Counterfactual re-runs of ``trajectory``'s seed with each group's decisions replaced
    (:func:`lang_pz.critics.counterfactual.counterfactuals`; COMA's difference reward by
    simulation, Foerster et al. 2018, Sec. 4), logged to ``counterfactuals.jsonl``.

    No ``replacements`` (or no groups) gives empty evidence and runs nothing.
    """
    probes = counterfactuals(env, actors, trajectory, groups, replacements, seed=seed, steps=steps,
                             objective=objective) if replacements and groups else []
    if log is not None:
        for p in probes:
            log.log("counterfactuals", {"episode": trajectory.episode, **p.model_dump(mode="json")})
    return Evidence(episode=trajectory.episode, counterfactuals=probes)


def assess(
    critic: Critic,
    trajectories: Sequence[Trajectory],
    policies: Mapping[str, str],
    evidence: Sequence[Evidence] = (),
    *,
    log: IterationLog | None = None,
) -> tuple[list[CriticReport], int]:
    """The critic's report on every trajectory (centralised credit in language).

    ``evidence`` (from :func:`gather_evidence`) is matched to trajectories by episode number.
    A critic failure (:class:`~lang_pz.error.LangPZError`, e.g. a reply that never validated)
    is logged to ``critic_errors.jsonl`` and counted, never replaced by a default credit.

    Returns:
        ``(reports of the episodes that were assessed, number of failures)``.
    """
    reports: list[CriticReport] = []
    failures = 0
    by_episode = {e.episode: e for e in evidence}
    bar = _bar(len(trajectories), "critic")
    for traj in trajectories:
        probes = by_episode.get(traj.episode)
        try:
            report = critic.assess(traj, policies, probes.counterfactuals if probes else ())
        except LangPZError as exc:
            failures += 1
            if log is not None:
                log.log("critic_errors", {"episode": traj.episode, "error": str(exc)})
            bar.update()
            continue
        reports.append(report)
        if log is not None:
            log.log("credits", {"episode": traj.episode, **report.model_dump(mode="json", exclude={"generations"})})
        bar.update()
    bar.close()
    return reports, failures


def propose(
    optimiser: TextualPolicyOptimiser,
    policies: Mapping[str, str],
    agents: Sequence[str],
    reports: Sequence[CriticReport],
    momentum: Momentum | None = None,
    *,
    log: IterationLog | None = None,
) -> tuple[dict[str, PolicyUpdate], int]:
    """One optimiser step per agent credited in ``reports``: the language gradient per episode,
    their aggregate with the agent's momentum (read, not written: see
    :func:`lang_pz.training.accept.commit_momentum`), the candidate text (LangMARL's language
    policy gradient). Agents no report credits get no step.

    A stage failure is logged to ``optimiser_errors.jsonl`` and counted; that agent keeps its policy.
    The candidates that differ from the current policies are written to ``candidates/``.

    Returns:
        ``(agent -> update for the agents that got one, number of failures)``.
    """
    updates: dict[str, PolicyUpdate] = {}
    failures = 0
    bar = _bar(len(agents), "optimiser")
    for agent in agents:
        if any(agent in r.credits for r in reports):
            try:
                upd = optimiser.update(agent, policies[agent], reports, momentum)
            except LangPZError as exc:
                failures += 1
                if log is not None:
                    log.log("optimiser_errors", {"agent": agent, "error": str(exc)})
            else:
                updates[agent] = upd
                if log is not None:
                    log.log("gradients", upd.model_dump(mode="json", exclude={"generations"}))
        bar.update()
    bar.close()
    changed = {a: u.new for a, u in updates.items() if u.changed}
    if log is not None and changed:
        log.write_candidates(changed)
    return updates, failures
