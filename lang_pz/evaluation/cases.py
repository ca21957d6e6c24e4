"""Drawing fault-injection cases whose labels mean something: faults that hurt the team.

A *case* is one episode seed, a good base team, and one agent made faulty (a
:class:`~lang_pz.policies.faulty.FaultyPolicy`) during a window of ``window`` consecutive
decisions. Ground truth: the faulty agent and its *faulty steps*, the trajectory steps where
its action was replaced **and** differs from what the base policy chose.

Drawing (:func:`draw_case`): play the unfaulted episode of the seed; visit the agents in a
seeded random order and, per agent, its possible windows in a seeded random order; keep the
first draw with a faulty step whose team return is lower than the unfaulted one by at least
``min_effect`` (a fraction of the unfaulted return's magnitude, e.g. 0.02 = 2 %, and never
less than a strictly positive drop). ``agents=`` restricts the draw to the named agents (the
benchmark's stratified draw names one per case, so each agent is the faulty one equally often:
:func:`stratified_order`). A fault that changed nothing, or helped, tests no credit
assignment: in Pistonball with the heuristic team a single-decision misplay (the opposite move)
lowers the return by more than 5 points (1 %) in 4 % of the windows and changes nothing in most
(measured, seeds 0-19, 5 pistons, hold 1, every agent and decision). A seed
with no such draw is dropped, and counted. Because agents are visited in random order, the
faulty agent is uniform over the agents that *can* hurt the team in that seed; which agents
those are depends on the environment, so reports show the label distribution.

This is fault injection used as labelling, after Who&When (Zhang et al. 2025, "Which Agent
Causes Task Failures and When?", ICML), with labels known by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lang_pz.error import InvalidKwargError
from lang_pz.evaluation.bases import repertoire
from lang_pz.policies.base import Policy
from lang_pz.policies.faulty import Fault, FaultRecord, FaultyPolicy
from lang_pz.rollout import rollout
from lang_pz.trajectory import Trajectory

#: ``() -> {agent: Policy}``: a fresh base team (the same seeds at every call for one case).
TeamFactory = Callable[[], dict[str, Policy]]


@dataclass
class FaultCase:
    """One drawn case.

    Attributes:
        seed: the episode seed.
        agent: the faulty agent.
        decisions: ``(first, last)`` replaced decisions of the agent (0-based, inclusive).
        trajectory: the faulty episode.
        clean: the unfaulted episode of the same seed.
        team: the team that played ``trajectory`` (the faulty agent's policy included), for
            counterfactual re-runs.
        log: the faulty policy's decisions in ``trajectory`` (copied: a re-run resets the policy).
        replaced_steps / faulty_steps: trajectory steps replaced / replaced and different.
        draws: (agent, window) draws played for this case, this one included.
    """

    seed: int
    agent: str
    decisions: tuple[int, int]
    trajectory: Trajectory
    clean: Trajectory
    team: dict[str, Policy]
    log: list[FaultRecord]
    replaced_steps: list[int]
    faulty_steps: list[int]
    draws: int

    @property
    def effect(self) -> float:
        """How much the fault lowered the team return (positive: it hurt)."""
        return self.clean.team_return - self.trajectory.team_return

    def record(self) -> dict[str, Any]:
        """The case's facts for a benchmark record."""
        replaced = [r for r in self.log if r.replaced]
        return {
            "seed": self.seed,
            "truth_agent": self.agent,
            "decisions": list(self.decisions),
            "replaced_steps": self.replaced_steps,
            "faulty_steps": self.faulty_steps,
            "base_actions": [r.base_action for r in replaced],
            "faulty_actions": [r.action for r in replaced],
            "team_return": self.trajectory.team_return,
            "clean_team_return": self.clean.team_return,
            "effect": round(self.effect, 4),
            "draws": self.draws,
            "n_agents": len(self.trajectory.agents),
            "n_steps": len({s.step for s in self.trajectory.steps}),
        }


#: ``(clean, faulty trajectory, faulty steps) -> bool``: whether a draw makes a case (:func:`draw_case`).
Keep = Callable[[Trajectory, Trajectory, Sequence[int]], bool]


def step_rewards(trajectory: Trajectory) -> dict[int, float]:
    """Step -> the team's reward at that step (summed over the agents that acted)."""
    out: dict[int, float] = {}
    for s in trajectory.steps:
        out[s.step] = out.get(s.step, 0.0) + float(s.reward)
    return out


def late_effect(delay: int) -> Keep:
    """A *late-effect* case: the team's reward first differs from the unfaulted episode's at least
    ``delay`` steps after the last faulty step (the fault's cost shows up later, e.g. a piston
    away from the ball at the wrong height when the ball arrives). Measured on Pistonball (5
    pistons, ``hold=1``, 20 cycles, seeds 0-29, every 2-decision misplay that cost >= 2 %): the
    reward differed already within the window in 72 of 115, 3 or more steps later in 14.

    Raises:
        InvalidKwargError: ``delay < 1``.
    """
    if delay < 1:
        raise InvalidKwargError(f"delay must be >= 1 step, got {delay}")

    def keep(clean: Trajectory, faulty: Trajectory, truth: Sequence[int]) -> bool:
        a, b = step_rewards(clean), step_rewards(faulty)
        differ = [k for k in sorted(set(a) | set(b)) if abs(a.get(k, 0.0) - b.get(k, 0.0)) > 1e-9]
        return bool(differ) and differ[0] >= max(truth) + delay

    return keep


def stratified_order(items: Sequence[Any], seed: int) -> list[Any]:
    """``items`` in a seeded random order: the benchmark's ``k``-th kept case targets
    ``order[k % len(order)]``, so over ``m * len(items)`` cases each item is the target exactly
    ``m`` times (a stratified draw of the faulty agent, or of the faulty pair).

    Raises:
        InvalidKwargError: ``items`` is empty.
    """
    if not items:
        raise InvalidKwargError("nothing to stratify over: no agents")
    rng = np.random.default_rng(seed)
    return [items[int(j)] for j in rng.permutation(len(items))]


def fault_truth(trajectory: Trajectory, policy: FaultyPolicy, agent: str) -> tuple[list[int], list[int]]:
    """``(replaced_steps, faulty_steps)``: the faulty policy's replaced / faulty decisions as
    trajectory steps (decision ``k`` is the agent's ``k``-th step in ``trajectory``)."""
    own = sorted(s.step for s in trajectory.agent_steps(agent))
    replaced = [own[k] for k in policy.replaced_decisions if k < len(own)]
    faulty = [own[k] for k in policy.faulty_decisions if k < len(own)]
    return replaced, faulty


def hurts(clean_return: float, faulty_return: float, min_effect: float) -> bool:
    """Whether a fault lowered the team return by more than 0 and by at least ``min_effect``
    times the unfaulted return's magnitude."""
    drop = clean_return - faulty_return
    return drop > 0 and drop >= min_effect * abs(clean_return)


def draw_case(
    env: Any,
    make_team: TeamFactory,
    *,
    seed: int,
    rng: np.random.Generator,
    fault: Fault,
    fault_action: str | Mapping[str, str] | Sequence[str] | None = None,
    window: int = 2,
    min_effect: float | None = 0.02,
    max_draws: int = 200,
    fault_seed: int = 0,
    episode: int = 0,
    agents: Sequence[str] | None = None,
    keep: Keep | None = None,
) -> tuple[FaultCase | None, int]:
    """Draw one case from ``seed`` (see the module docstring).

    Args:
        env: the language environment.
        make_team: builds a fresh base team (called once per episode played).
        seed: the episode seed.
        rng: draws the agent order and the windows.
        fault: the fault; ``"misplay"`` without ``fault_action`` plays the team's
            :func:`~lang_pz.evaluation.bases.repertoire` in the unfaulted episode.
        window: consecutive decisions replaced (>= 1).
        min_effect: the least drop of the team return, as a fraction of the unfaulted
            return's magnitude (see :func:`hurts`); ``None`` keeps any draw with a faulty step.
        max_draws: most (agent, window) draws played for this seed.
        fault_seed: seed of the fault's own generator.
        episode: the episode index of the rollouts.
        agents: the agents that may be made faulty (default: all, in a seeded random order);
            given, they are tried in the order given.
        keep: ``(clean, faulty trajectory, faulty steps) -> bool``, a further condition on a
            draw (e.g. :func:`late_effect`); ``None``: none.

    Returns:
        ``(case, draws)``: the case (``None`` when no draw qualified) and the draws played.

    Raises:
        InvalidKwargError: ``window < 1``, ``max_draws < 1``, a negative ``min_effect`` or an
            agent of ``agents`` that is not one of ``env.possible_agents``.
    """
    if window < 1:
        raise InvalidKwargError(f"window must be >= 1 decision, got {window}")
    if max_draws < 1:
        raise InvalidKwargError(f"max_draws must be >= 1, got {max_draws}")
    if min_effect is not None and min_effect < 0:
        raise InvalidKwargError(f"min_effect must be >= 0 (a fraction of the unfaulted return), got {min_effect}")
    clean = rollout(env, make_team(), seed=seed, episode=episode)
    action = fault_action
    if fault == "misplay" and action is None:
        action = repertoire(clean)
    draws = 0
    every = list(env.possible_agents)
    if agents is None:
        order = [every[int(j)] for j in rng.permutation(len(every))]
    else:
        order = list(agents)
        unknown = [a for a in order if a not in every]
        if unknown:
            raise InvalidKwargError(f"agents {unknown} are not agents of the environment ({every})")
    for agent in order:
        n_dec = len(clean.agent_steps(agent))
        for start in rng.permutation(max(1, n_dec - window + 1)):
            if draws >= max_draws:
                return None, draws
            draws += 1
            team = make_team()
            faulty = FaultyPolicy(team[agent], fault, range(int(start), int(start) + window), action=action, seed=fault_seed)
            team[agent] = faulty
            traj = rollout(env, team, seed=seed, episode=episode)
            replaced, truth = fault_truth(traj, faulty, agent)
            if (
                truth
                and (min_effect is None or hurts(clean.team_return, traj.team_return, min_effect))
                and (keep is None or keep(clean, traj, truth))
            ):
                return FaultCase(
                    seed=seed,
                    agent=agent,
                    decisions=(int(start), int(start) + window - 1),
                    trajectory=traj,
                    clean=clean,
                    team=team,
                    log=list(faulty.log),
                    replaced_steps=replaced,
                    faulty_steps=truth,
                    draws=draws,
                ), draws
    return None, draws
