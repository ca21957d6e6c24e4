"""Counterfactual re-runs: what the objective would have been had some agents acted otherwise.

Evidence the system computes, not the model's opinion (free-form judgement from a small model
is noise: see :mod:`lang_pz.evaluation.faults`). For a trajectory played from seed ``s``, each *probe* replays the episode from
the same seed with the policies of a group of agents replaced, and reports the team return and
its difference from the factual one. This is the difference-rewards / counterfactual-baseline
idea of COMA (Foerster et al. 2018, "Counterfactual Multi-Agent Policy Gradients", Sec. 4)
realised by simulation instead of a learned critic; the centralised language critic is given
the results (LangMARL: credit assignment grounded in trajectories).

Replacements (``replacements`` entries):

- an action word (e.g. ``"down"``): the group plays that action at every step;
- ``"alternatives"``: one probe per action word the group's first agent was offered in the
  factual episode (its steps' ``legal_actions``);
- ``"default"``: the environment's documented fallback action (empty text, which no language
  env parses, so each env applies its own default);
- ``"random"``: uniformly random legal actions (seeded);
- ``"previous"``: the group's previous policies (``previous`` argument), e.g. before an update.

With ``steps``, only those decisions are replaced and the agent plays its own policy elsewhere.

A re-run is only meaningful if the environment is deterministic given the seed and the
actions, as PettingZoo's ``seed_test`` checks. The other agents keep their policies; an LLM agent
is asked again only where it sees something it did not see in the factual episode, and answers
from the factual trajectory elsewhere (:mod:`lang_pz.policies.replay`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lang_pz import snapshots
from lang_pz.error import LangPZError
from lang_pz.objectives import Objective, make_objective
from lang_pz.policies.base import Policy
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.policies.random import RandomPolicy
from lang_pz.policies.replay import replaying
from lang_pz.policies.scripted import ConstantPolicy
from lang_pz.trajectory import Trajectory

#: The default objective of re-runs: the team return.
TEAM_RETURN: Objective = make_objective("team_return", [])

SPECIAL_REPLACEMENTS = ("alternatives", "default", "random", "previous")
#: The ``replacement`` of a re-run that replaces no one (:func:`null_probe`): the same episode
#: played again, whose ``|delta|`` is the variation of a re-run without a change.
NO_CHANGE = "no change"
#: The ``replacement`` of a re-run in which agents play what their own policy texts say at the
#: decisions where they played otherwise (:mod:`lang_pz.critics.own`).
OWN_POLICY = "own policy"
#: A probe's ``replacement`` values that name no action word: the special replacements, the
#: reference re-runs' ``"reference policy"`` (:mod:`lang_pz.critics.windows`), :data:`NO_CHANGE`
#: and :data:`OWN_POLICY`.
NOT_ACTIONS = frozenset({*SPECIAL_REPLACEMENTS, "reference policy", NO_CHANGE, OWN_POLICY})


class Counterfactual(BaseModel):
    """One probe's result (typed evidence: what the system computed, not the model's opinion).

    Attributes:
        agents: the agents whose policies were replaced.
        replacement: what they played instead (an action word, ``"default"``, ``"random"`` or
            ``"previous"``).
        value: the re-run's objective (the team return unless ``objective`` says otherwise; the
            env's reward units).
        delta: ``value`` minus the factual episode's objective (positive: the replacement
            would have done better).
        steps: environment steps of the re-run.
        at_steps: the replaced decisions (``None``: every decision).
        objective: the objective spec (:mod:`lang_pz.objectives`).
    """

    model_config = ConfigDict(frozen=True)

    agents: tuple[str, ...]
    replacement: str
    value: float
    delta: float
    steps: int
    at_steps: tuple[int, ...] | None = None
    objective: str = "team_return"

    def describe(self, all_agents: Sequence[str]) -> str:
        """One line for the critic, e.g. ``if piston_0 had played down at every step: ...``."""
        name = "team return" if self.objective == "team_return" else self.objective
        sign = "+" if self.delta >= 0 else ""
        if not self.agents:
            return f"the same episode played again, no one changed: {name} {self.value:.1f} ({sign}{self.delta:.1f})"
        who = "every agent" if set(self.agents) == set(all_agents) and len(all_agents) > 1 else " and ".join(self.agents)
        what = {
            "default": "the default action",
            "random": "random actions",
            "previous": "its previous policy",
        }.get(self.replacement, self.replacement)
        when = "at every step" if self.at_steps is None else f"at steps {list(self.at_steps)}"
        return f"if {who} had played {what} {when}: {name} {self.value:.1f} ({sign}{self.delta:.1f})"


class Evidence(BaseModel):
    """The computed evidence about one episode: its counterfactual re-runs.

    Attributes:
        episode: the factual episode's index.
        counterfactuals: the probes, in the order they ran.
    """

    episode: int
    counterfactuals: list[Counterfactual] = Field(default_factory=list)

    def shown(self) -> list[Counterfactual]:
        """What a critic is shown: every re-run (:class:`~lang_pz.critics.base.EpisodeEvidence`)."""
        return list(self.counterfactuals)

    def concerning(self, agent: str) -> list[Counterfactual]:
        """The probes that replaced ``agent`` (alone or in a group)."""
        return [c for c in self.counterfactuals if agent in c.agents]


def best_gain(agent: str, evidence: Sequence[Evidence]) -> float | None:
    """The largest mean gain of one replacement among the re-runs that replaced ``agent`` (mean
    over the batch's episodes, in the objective's units; ``None`` if no re-run replaced it).

    One replacement is a word *at the same decisions* (``at_steps``): the decisive search
    (:mod:`lang_pz.critics.decisive`) re-runs a word over many windows, and a gain in one window
    is not averaged away by the windows where the word changed nothing.

    The evidence gate (:func:`lang_pz.training.accept.evidence_gate`) reads it: an agent for
    which no alternative would have done better gets no edit, whatever the critic's words say.
    """
    gains: dict[tuple[str, tuple[int, ...] | None], list[float]] = {}
    for e in evidence:
        for c in e.concerning(agent):
            key = (c.replacement, None if c.at_steps is None else tuple(c.at_steps))
            gains.setdefault(key, []).append(c.delta)
    return max((sum(v) / len(v) for v in gains.values()), default=None)


def _legal_words(trajectory: Trajectory, agent: str) -> list[str]:
    """Every action word ``agent`` was offered in the factual episode, in order of first offer
    (read from the trajectory, so no reset is needed and the second mover of a turn-based game
    is handled like the first)."""
    words = [w for s in trajectory.agent_steps(agent) for w in (s.legal_actions or ())]
    if not words:
        raise LangPZError(
            f"'alternatives' needs a finite action set, but {agent} was offered no legal_actions in "
            f"episode {trajectory.episode}; give explicit action words or 'random'/'default' as replacements"
        )
    return list(dict.fromkeys(words))


@dataclass(frozen=True)
class Probe:
    """One planned re-run of the factual episode's seed: which group plays what instead.

    Attributes:
        agents: the replaced group.
        replacement: what it plays instead (see the module docstring).
        at_steps: the replaced decisions (``None``: every decision).
    """

    agents: tuple[str, ...]
    replacement: str
    at_steps: tuple[int, ...] | None

    def divergence(self, factual: Trajectory) -> int:
        """The first step (AEC: turn) at which this re-run may act otherwise than ``factual``: the
        group's first replaced decision where it did not play the replacement word (if one).
        The re-run starts there (:func:`lang_pz.snapshots.rerun`). 0 (played whole) for
        :data:`NO_CHANGE` (it checks that an episode replays), ``"previous"``, or no change."""
        if not self.agents or self.replacement in (NO_CHANGE, "previous"):
            return 0
        word = "" if self.replacement == "default" else self.replacement
        compare = self.replacement == "default" or self.replacement not in NOT_ACTIONS
        first = []
        for a in self.agents:
            for k, s in enumerate(factual.agent_steps(a)):
                if self.at_steps is not None and k not in self.at_steps:
                    continue
                if not (compare and s.raw_output_chars is None and s.raw_output.strip() == word):
                    first.append(s.step)
                    break
        return min(first, default=0)

    def rerun(
        self,
        env: Any,
        policies: Mapping[str, Policy],
        factual: Trajectory,
        objective: Objective | None = None,
        seed: int = 0,
    ) -> Counterfactual:
        """Play this re-run of ``factual`` in ``env`` with ``policies`` (the team that played it),
        the kept agents answering from ``factual`` (:func:`probe_team`, :func:`run_probe`)."""
        return run_probe(env, probe_team(policies, self, seed=seed, factual=factual), self, factual, objective)


def null_probe() -> Probe:
    """The re-run that replaces no one (:data:`NO_CHANGE`): the factual team plays the seed again.

    Its ``|delta|`` is what a re-run varies without any change (0 when the environment and the
    policies are deterministic given the seed, as lang_pz's re-runs assume; anything else shows
    that assumption broken), the noise floor of :mod:`lang_pz.critics.significance`.
    """
    return Probe((), NO_CHANGE, None)


def plan_probes(
    trajectory: Trajectory,
    groups: Sequence[Sequence[str]],
    replacements: Sequence[str] = ("alternatives",),
    *,
    steps: Sequence[int] | None = None,
) -> list[Probe]:
    """The re-runs :func:`counterfactuals` makes, without running them (each is independent, so
    an executor may run them concurrently, each in its own environment). Arguments as there.

    The one planner of action-replacement re-runs: training's evidence
    (:func:`lang_pz.training.gather_evidence`) and the fault benchmark's windows
    (:func:`lang_pz.critics.windows.window_probes`) both plan with it, so each agent is
    offered only words it was offered in the episode. Under ``"alternatives"``, a word the group
    played at every replaced decision is skipped (the re-run would change nothing).

    Raises:
        LangPZError: the trajectory has no seed, or ``"alternatives"`` for an agent that was
            offered no action words.
    """
    if trajectory.seed is None:
        raise LangPZError(f"episode {trajectory.episode} has no seed; a counterfactual re-run needs the same seed")
    for name, value in (("groups", groups), ("replacements", replacements)):
        if isinstance(value, str):
            raise TypeError(f"{name} must be a list, got the str {value!r}; e.g. {name}=[{value!r}]")
    if any(isinstance(g, str) or not g for g in groups):
        raise LangPZError(f"each group is a non-empty list of agents, e.g. [['piston_0']], got {list(groups)!r}")
    absent = sorted({a for g in groups for a in g} - set(trajectory.agents))
    if absent:
        raise LangPZError(
            f"counterfactual groups name {absent}, who did not act in episode {trajectory.episode} "
            f"(agents: {', '.join(trajectory.agents)})"
        )
    for group in groups:
        offered = {w for a in group for s in trajectory.agent_steps(a) for w in (s.legal_actions or ())}
        unknown = [r for r in replacements if r not in SPECIAL_REPLACEMENTS and offered and r not in offered]
        if unknown:
            raise LangPZError(
                f"replacement(s) {unknown} for {list(group)} are neither {', '.join(SPECIAL_REPLACEMENTS)} "
                f"nor an action word the agent was offered ({', '.join(sorted(offered))}): the re-run "
                "would play the env's fallback under that name"
            )
    at = None if steps is None else tuple(sorted({int(s) for s in steps}))
    out: list[Probe] = []
    for group in groups:
        group = tuple(group)
        made = len(trajectory.agent_steps(group[0]))
        if at is not None and all(k >= made for k in at):
            warnings.warn(
                f"counterfactual steps {list(at)}: {group[0]} made {made} decisions in episode "
                f"{trajectory.episode} (0-based: 0 to {made - 1}), so its re-runs replace nothing and "
                "show no difference; choose decisions it makes",
                UserWarning,
                stacklevel=2,
            )
        played = {
            str(s.raw_output).strip()
            for a in group
            for k, s in enumerate(trajectory.agent_steps(a))
            if at is None or k in at
        }
        words: list[str] = []
        for r in replacements:
            if r == "alternatives":
                words += [w for w in _legal_words(trajectory, group[0]) if {w} != played]
            else:
                words.append(r)
        out += [Probe(group, word, None if word == "previous" else at) for word in dict.fromkeys(words)]
    return out


def probe_team(
    policies: Mapping[str, Policy],
    probe: Probe,
    *,
    previous: Mapping[str, Policy] | None = None,
    seed: int = 0,
    factual: Trajectory | None = None,
) -> dict[str, Policy]:
    """The team of one re-run: ``policies`` with the probe's group replaced.

    With the ``factual`` trajectory (played by ``policies``), every LLM policy that keeps playing
    answers from it where it would send the request it sent there
    (:func:`lang_pz.policies.replay.replaying`: the same replies with a deterministic backend, and
    common random numbers with a sampling one), so a re-run asks the model only where the
    replacement changed what an agent sees.

    Raises:
        LangPZError: the group names an agent without a policy, or ``"previous"`` without
            ``previous`` policies for it.
    """
    unknown = sorted(set(probe.agents) - set(policies))
    if unknown:
        raise LangPZError(f"counterfactual groups name agents without a policy: {unknown}")
    kept = replaying(policies, factual)
    swapped = dict(kept)
    word = probe.replacement
    for i, a in enumerate(probe.agents):
        if word == "previous":
            if previous is None or a not in previous:
                raise LangPZError(f"replacement 'previous' needs previous policies, none given for {a}")
            swapped[a] = previous[a]
        elif probe.at_steps is not None:
            fault = "random" if word == "random" else "harmful"
            action = None if word == "random" else ("" if word == "default" else word)
            swapped[a] = FaultyPolicy(kept[a], fault, probe.at_steps, action=action, seed=seed + i)  # type: ignore[arg-type]
        elif word == "random":
            swapped[a] = RandomPolicy(seed=seed + i)
        else:
            swapped[a] = ConstantPolicy("" if word == "default" else word)
    return swapped


def run_probe(
    env: Any, team: Mapping[str, Policy], probe: Probe, trajectory: Trajectory, objective: Objective | None = None
) -> Counterfactual:
    """Play one re-run (``team`` from :func:`probe_team`) from the factual episode's seed and
    compare objectives.

    It starts at the probe's :meth:`~Probe.divergence` (:func:`lang_pz.snapshots.rerun`: the
    factual state there restored or replayed from the record; the same result as a whole re-run).

    Args:
        env: a language environment of the same id and kwargs as the factual episode's (it is reset).
        team: the re-run's policies.
        probe: what was replaced.
        trajectory: the factual episode.
        objective: what is compared (default: the team return).
    """
    objective = objective or TEAM_RETURN
    rerun = snapshots.rerun(env, team, trajectory, probe.divergence(trajectory))
    value = objective(rerun)
    return Counterfactual(
        agents=probe.agents,
        replacement=probe.replacement,
        value=round(value, 3),
        delta=round(value - objective(trajectory), 3),
        steps=len(rerun.states) or len({s.step for s in rerun.steps}),
        at_steps=probe.at_steps,
        objective=objective.spec,
    )


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
    objective: Objective | None = None,
) -> list[Counterfactual]:
    """Re-run ``trajectory``'s episode once per (group, replacement) and compare the objective.

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
        objective: what the re-runs compare (:mod:`lang_pz.objectives`; default team return).

    Returns:
        One :class:`Counterfactual` per probe, in order.

    Raises:
        LangPZError: the trajectory has no seed, an unknown agent, ``"alternatives"`` for an
            agent offered no action words, or ``"previous"`` without ``previous`` policies.
    """
    unknown = sorted({a for g in groups for a in g} - set(policies))
    if unknown:
        raise LangPZError(f"counterfactual groups name agents without a policy: {unknown}")
    return [
        run_probe(env, probe_team(policies, p, previous=previous, seed=seed, factual=trajectory), p, trajectory, objective)
        for p in plan_probes(trajectory, groups, replacements, steps=steps)
    ]
