"""Measured utility of each invoked skill: re-run the same seed with the skill withheld.

Evidence the system computes, not the model's opinion: for every ``(agent, skill)`` invoked in
a trajectory, the episode is replayed from the same seed with that agent's
:class:`~lang_pz.skills.policy.SkillPolicy` no longer offered the skill (it acts without it, or
picks its next choice), every other policy unchanged. The skill's measured utility for that
agent is the objective of the factual episode minus the objective of the re-run (positive: the
skill helped). This is the difference-rewards idea (COMA, Foerster et al. 2018, Sec. 4; as in
:mod:`lang_pz.critics.counterfactual`) applied to one skill instead of one agent's actions;
MASkills feeds it to the critic, the gradient and the acceptance gate.

Replays are exact: :func:`lang_pz.rollout.rollout` resets every policy from the episode seed,
and environments are deterministic given the seed and the actions (PettingZoo's ``seed_test``).
The other agents' LLM calls are made again (a response cache serves those before the episodes
diverge).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from lang_pz.critics.counterfactual import TEAM_RETURN
from lang_pz.error import LangPZError
from lang_pz.objectives import Objective, make_objective
from lang_pz.policies.base import Policy
from lang_pz.rollout import rollout
from lang_pz.skills.library import SkillLibrary
from lang_pz.skills.policy import SkillPolicy, invocations
from lang_pz.trajectory import Trajectory


@dataclass(frozen=True)
class SkillUtility:
    """The measured utility of one skill for one agent in one episode.

    Attributes:
        agent: the agent that invoked the skill.
        skill, scope, version: the skill.
        episode, seed: the factual episode.
        steps: the trajectory steps at which the agent invoked it.
        objective: the objective's spec (e.g. ``team_return``).
        factual: the objective of the factual episode.
        withheld: the objective of the re-run without the skill.
        utility: ``factual - withheld`` (the objective's units; positive: the skill helped).
        reinvoked: skills the agent invoked instead in the re-run (its next choices).
    """

    agent: str
    skill: str
    scope: str
    version: int
    episode: int
    seed: int
    steps: tuple[int, ...]
    objective: str
    factual: float
    withheld: float
    utility: float
    reinvoked: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for the critic, e.g. ``without check-units, solver: team_return 0.0 (skill utility +1.0)``."""
        sign = "+" if self.utility >= 0 else ""
        instead = f"; it used {', '.join(self.reinvoked)} instead" if self.reinvoked else ""
        return (
            f"without {self.skill}, {self.agent}: {self.objective} {self.withheld:.2f} against {self.factual:.2f} "
            f"(measured skill utility {sign}{self.utility:.2f}{instead})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "steps": list(self.steps), "reinvoked": list(self.reinvoked)}


def skill_utilities(
    env: Any,
    policies: Mapping[str, Policy],
    trajectory: Trajectory,
    objective: Objective | str,
    *,
    skills: Sequence[tuple[str, str]] | None = None,
) -> list[SkillUtility]:
    """Measure every invoked skill's utility by re-running ``trajectory``'s seed without it.

    Args:
        env: the language environment the trajectory was played in (it is reset).
        policies: the policies that played it; each invoking agent's is a :class:`SkillPolicy`.
        trajectory: the factual episode (its ``seed`` is replayed).
        objective: an :class:`~lang_pz.objectives.Objective` or its spec (built for
            ``env.possible_agents``).
        skills: only these ``(agent, skill name)`` pairs (default: every pair invoked).

    Returns:
        One :class:`SkillUtility` per ``(agent, skill)``, in order of first invocation.

    Raises:
        LangPZError: the trajectory has no seed, or an invoking agent's policy is not a
            :class:`SkillPolicy` (it could not be re-run without the skill).
    """
    if trajectory.seed is None:
        raise LangPZError(f"episode {trajectory.episode} has no seed; a withheld-skill re-run needs the same seed")
    if isinstance(objective, str):
        objective = make_objective(objective, list(env.possible_agents))
    uses: dict[tuple[str, str], list[Any]] = {}
    for inv in invocations(trajectory):
        uses.setdefault((inv.agent, inv.skill), []).append(inv)
    if skills is not None:
        uses = {k: v for k, v in uses.items() if k in set(map(tuple, skills))}
    return [WithheldSkill(agent, name).rerun(env, policies, trajectory, objective) for agent, name in uses]


@dataclass(frozen=True)
class WithheldSkill:
    """One planned re-run of a factual episode's seed with ``skill`` not offered to ``agent``
    (the re-run :func:`lang_pz.training.steps.rerun` plays, like a counterfactual
    :class:`~lang_pz.critics.counterfactual.Probe`)."""

    agent: str
    skill: str

    def rerun(
        self,
        env: Any,
        policies: Mapping[str, Policy],
        factual: Trajectory,
        objective: Objective | None = None,
        seed: int = 0,
    ) -> SkillUtility:
        """Play the re-run in ``env`` (every other policy unchanged; ``seed`` unused: nothing is
        random) and measure the skill's utility (default objective: the team return).

        Raises:
            LangPZError: ``agent``'s policy is not a :class:`SkillPolicy`, or it never invoked the skill.
        """
        policy = policies.get(self.agent)
        if not isinstance(policy, SkillPolicy):
            raise LangPZError(
                f"{self.agent} invoked skill {self.skill!r} but its policy is {type(policy).__name__}, "
                "not a SkillPolicy; give the policies that played the trajectory"
            )
        rerun = rollout(
            env, {**policies, self.agent: policy.without(self.skill)}, seed=factual.seed, episode=factual.episode
        )
        return utility_of(factual, rerun, self.agent, self.skill, objective or TEAM_RETURN)


def invoked_pairs(trajectory: Trajectory, limit: int | None = None) -> list[tuple[str, str]]:
    """The ``(agent, skill)`` pairs invoked in ``trajectory``, most invocations first (ties: first
    invoked first), at most ``limit`` of them (``None``: all): the re-runs worth making."""
    count: dict[tuple[str, str], int] = {}
    for inv in invocations(trajectory):
        count[(inv.agent, inv.skill)] = count.get((inv.agent, inv.skill), 0) + 1
    pairs = sorted(count, key=lambda k: -count[k])  # stable: ties keep their first-invocation order
    return pairs if limit is None else pairs[:limit]


def utility_of(trajectory: Trajectory, rerun: Trajectory, agent: str, skill: str, objective: Objective) -> SkillUtility:
    """The :class:`SkillUtility` of ``agent``'s ``skill`` from the factual episode and its re-run
    with the skill withheld (same seed).

    Raises:
        LangPZError: ``agent`` never invoked ``skill`` in ``trajectory``, or it has no seed.
    """
    invs = [i for i in invocations(trajectory) if i.agent == agent and i.skill == skill]
    if not invs or trajectory.seed is None:
        raise LangPZError(
            f"episode {trajectory.episode}: {agent} did not invoke {skill!r} (or the episode has "
            "no seed); a withheld-skill utility needs an invocation to withhold"
        )
    factual, value = objective(trajectory), objective(rerun)
    instead = tuple(dict.fromkeys(i.skill for i in invocations(rerun) if i.agent == agent))
    return SkillUtility(
        agent,
        skill,
        invs[0].scope,
        invs[0].version,
        trajectory.episode,
        int(trajectory.seed),
        tuple(i.step for i in invs),
        objective.spec,
        factual,
        value,
        factual - value,
        instead,
    )


def shared_utilities(
    trajectory: Trajectory, library: SkillLibrary, objective: Objective, baseline: float
) -> list[SkillUtility]:
    """The ablation without per-invocation credit: every skill *offered* to an agent in the
    episode gets the episode's outcome against ``baseline`` (``withheld`` holds the baseline; no
    re-run is made), whether the agent invoked it or not: the reference code's credit rule."""
    factual = objective(trajectory)
    steps: dict[tuple[str, str, str], list[int]] = {}
    for s in trajectory.steps:
        for scope, name in ((s.meta or {}).get("skills") or {}).get("offered", []):
            steps.setdefault((s.agent, scope, name), []).append(s.step)
    return [
        SkillUtility(
            agent,
            name,
            scope,
            library.get(scope, name).version,
            trajectory.episode,
            int(trajectory.seed or 0),
            tuple(st),
            objective.spec,
            factual,
            baseline,
            factual - baseline,
        )
        for (agent, scope, name), st in steps.items()
    ]
