"""Counterfactual re-runs: what the team return would have been had some agents acted otherwise.

Evidence the system computes, not the model's opinion (GUIDE: free-form judgement from a small
model is noise). For a trajectory played from seed ``s``, each *probe* replays the episode from
the same seed with the policies of a group of agents replaced, and reports the team return and
its difference from the factual one. This is the difference-rewards / counterfactual-baseline
idea of COMA (Foerster et al. 2018, "Counterfactual Multi-Agent Policy Gradients", Sec. 4)
realised by simulation instead of a learned critic; the centralised language critic is given
the results (LangMARL: credit assignment grounded in trajectories).

Replacements (``replacements`` entries):

- an action word (e.g. ``"down"``): the group plays that action at every step;
- ``"alternatives"``: one probe per legal action word of the group's first agent (read from
  ``info["legal_actions"]`` after a reset);
- ``"default"``: the environment's documented fallback action (empty text, which no language
  env parses, so each env applies its own default);
- ``"random"``: uniformly random legal actions (seeded);
- ``"previous"``: the group's previous policies (``previous`` argument), e.g. before an update.

With ``steps``, only those decisions are replaced and the agent plays its own policy elsewhere.

A re-run is only meaningful if the environment is deterministic given the seed and the
actions, as PettingZoo's ``seed_test`` checks. The other agents keep their policies, so LLM
agents are asked again: their calls are counted like any rollout's (with a response cache,
decisions before the trajectories diverge are served from it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from lang_pz.error import LangPZError
from lang_pz.policies.base import Policy
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.policies.random import RandomPolicy
from lang_pz.policies.scripted import ConstantPolicy
from lang_pz.rollout import rollout
from lang_pz.trajectory import Trajectory

SPECIAL_REPLACEMENTS = ("alternatives", "default", "random", "previous")


@dataclass(frozen=True)
class Counterfactual:
    """One probe's result.

    Attributes:
        agents: the agents whose policies were replaced.
        replacement: what they played instead (an action word, ``"default"``, ``"random"`` or
            ``"previous"``).
        team_return: the re-run's team return (same units as the env's rewards).
        delta: ``team_return`` minus the factual team return (positive: the replacement
            would have done better).
        steps: environment steps of the re-run.
        at_steps: the replaced decisions (``None``: every decision).
    """

    agents: tuple[str, ...]
    replacement: str
    team_return: float
    delta: float
    steps: int
    at_steps: tuple[int, ...] | None = None

    def describe(self, all_agents: Sequence[str]) -> str:
        """One line for the critic, e.g. ``if piston_0 had played down at every step: ...``."""
        who = "every agent" if set(self.agents) == set(all_agents) and len(all_agents) > 1 else " and ".join(self.agents)
        what = {
            "default": "the default action",
            "random": "random actions",
            "previous": "its previous policy",
        }.get(self.replacement, self.replacement)
        sign = "+" if self.delta >= 0 else ""
        when = "at every step" if self.at_steps is None else f"at steps {list(self.at_steps)}"
        return f"if {who} had played {what} {when}: team return {self.team_return:.1f} ({sign}{self.delta:.1f})"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "agents": list(self.agents),
                "at_steps": None if self.at_steps is None else list(self.at_steps)}


def _legal_words(env: Any, agent: str, seed: int | None) -> list[str]:
    if hasattr(env, "agent_selection"):  # AEC
        env.reset(seed=seed)
        info = env.infos.get(agent, {})
    else:
        _, infos = env.reset(seed=seed)
        info = infos.get(agent, {})
    words = info.get("legal_actions")
    if not words:
        raise LangPZError(
            f"'alternatives' needs a finite action set, but {agent}'s info has no legal_actions; "
            "give explicit action words or 'random'/'default' as replacements"
        )
    return [str(w) for w in words]


def counterfactuals(
    env: Any,
    policies: Mapping[str, Policy],
    trajectory: Trajectory,
    groups: Sequence[Sequence[str]],
    replacements: Sequence[str] = ("alternatives",),
    *,
    previous: Mapping[str, Policy] | None = None,
    seed: int = 0,
    steps: Sequence[int] | None = None,
) -> list[Counterfactual]:
    """Re-run ``trajectory``'s episode once per (group, replacement) and compare team returns.

    Args:
        env: the language environment the trajectory was played in (it is reset).
        policies: the policies that played the trajectory (agent -> policy).
        trajectory: the factual episode; its ``seed`` is replayed.
        groups: agent groups to replace together: ``[[a] for a in agents]`` for per-agent
            credit, ``[agents]`` for a team-level probe.
        replacements: see the module docstring. Under ``"alternatives"``, a word equal to what
            the group played at every step of the factual episode is skipped (nothing changes).
        previous: the policies used by ``"previous"``.
        seed: seed of ``"random"`` replacements.
        steps: replace only these decisions of each replaced agent (0-based, its own
            decisions; in a parallel env decision k is step k), playing its own policy at the
            others (:class:`~lang_pz.policies.faulty.FaultyPolicy`); ``None``: every decision.
            ``"previous"`` always replaces the whole policy.

    Returns:
        One :class:`Counterfactual` per probe, in order.

    Raises:
        LangPZError: the trajectory has no seed, an unknown agent, or ``"previous"`` without
            ``previous`` policies.
    """
    if trajectory.seed is None:
        raise LangPZError(f"episode {trajectory.episode} has no seed; a counterfactual re-run needs the same seed")
    unknown = sorted({a for g in groups for a in g} - set(policies))
    if unknown:
        raise LangPZError(f"counterfactual groups name agents without a policy: {unknown}")
    factual = trajectory.team_return
    out: list[Counterfactual] = []
    for group in groups:
        group = tuple(group)
        played = {str(s.raw_output).strip() for a in group for s in trajectory.agent_steps(a)}
        words: list[str] = []
        for r in replacements:
            if r == "alternatives":
                words += [w for w in _legal_words(env, group[0], trajectory.seed) if {w} != played]
            else:
                words.append(r)
        for word in dict.fromkeys(words):
            swapped = dict(policies)
            for i, a in enumerate(group):
                if word == "previous":
                    if previous is None or a not in previous:
                        raise LangPZError(f"replacement 'previous' needs previous policies, none given for {a}")
                    swapped[a] = previous[a]
                elif steps is not None:
                    fault = "random" if word == "random" else "harmful"
                    action = None if word == "random" else ("" if word == "default" else word)
                    swapped[a] = FaultyPolicy(policies[a], fault, steps, action=action, seed=seed + i)  # type: ignore[arg-type]
                elif word == "random":
                    swapped[a] = RandomPolicy(seed=seed + i)
                else:
                    swapped[a] = ConstantPolicy("" if word == "default" else word)
            rerun = rollout(env, swapped, seed=trajectory.seed, episode=trajectory.episode)
            out.append(
                Counterfactual(
                    agents=group,
                    replacement=word,
                    team_return=round(rerun.team_return, 3),
                    delta=round(rerun.team_return - factual, 3),
                    steps=len(rerun.states) or len({s.step for s in rerun.steps}),
                    at_steps=None if steps is None or word == "previous" else tuple(sorted(set(steps))),
                )
            )
    return out
