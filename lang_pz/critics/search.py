"""Re-runs a critic plans itself, one batch at a time, within a budget (the decisive and
coalition critics' search, :mod:`lang_pz.critics.decisive`, :mod:`lang_pz.critics.coalition`).

A :data:`Runner` plays a batch of plans of one factual episode: :func:`local_runner` in one
environment, or :func:`lang_pz.training.steps.rerun` through an executor in training. Each plan
reports its result and the LLM requests it sent (the other LLM agents answer from the factual
episode where nothing changed for them, :mod:`lang_pz.policies.replay`); :class:`Search` caches
results by (agents, replacement, decisions) so each re-run is played once, and counts both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lang_pz.critics.counterfactual import Counterfactual, Probe, probe_team, run_probe
from lang_pz.objectives import Objective
from lang_pz.policies.base import Policy
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.policies.replay import ReplayPolicy
from lang_pz.trajectory import Trajectory


def model_requests(policies: Mapping[str, Policy]) -> int:
    """LLM requests the replayed policies of one re-run sent (:attr:`ReplayPolicy.asked`, looked up
    through :class:`~lang_pz.policies.faulty.FaultyPolicy` wrappers); scripted policies send none."""
    n = 0
    for p in policies.values():
        while isinstance(p, FaultyPolicy):
            p = p.base
        n += p.asked if isinstance(p, ReplayPolicy) else 0
    return n


@dataclass(frozen=True)
class CountedProbe:
    """A :class:`~lang_pz.critics.counterfactual.Probe` whose re-run also reports the LLM requests
    it sent (a :class:`~lang_pz.training.players.Rerun` plan for :func:`lang_pz.training.steps.rerun`)."""

    probe: Probe

    def rerun(
        self,
        env: Any,
        policies: Mapping[str, Policy],
        factual: Trajectory,
        objective: Objective | None = None,
        seed: int = 0,
    ) -> tuple[Counterfactual, int]:
        """``(result, LLM requests)`` of the probe's re-run of ``factual``."""
        team = probe_team(policies, self.probe, seed=seed, factual=factual)
        return run_probe(env, team, self.probe, factual, objective), model_requests(team)


#: Plays a batch of re-run plans of one factual episode: ``plans -> [(result, LLM requests)]``.
Runner = Callable[[Sequence[Any]], list[tuple[Counterfactual, int]]]


def local_runner(
    env: Any, policies: Mapping[str, Policy], factual: Trajectory, objective: Objective | None = None, seed: int = 0
) -> Runner:
    """A :data:`Runner` playing each plan in turn in ``env`` with ``policies`` (the team that played
    ``factual``); training uses :func:`lang_pz.training.steps.rerun` instead (an executor)."""
    return lambda plans: [p.rerun(env, policies, factual, objective, seed) for p in plans]


@dataclass
class Search:
    """The re-runs of one search and what they cost.

    Attributes:
        probes: every re-run's result, in the order run.
        reruns: re-runs played (``len(probes)``, never above the budget).
        calls: LLM requests those re-runs sent (0 for scripted teams).
        budget: the most re-runs allowed.
        exhausted: the budget stopped the search before it finished.
    """

    probes: list[Counterfactual] = field(default_factory=list)
    reruns: int = 0
    calls: int = 0
    budget: int = 0
    exhausted: bool = False
    cache: dict[tuple[tuple[str, ...], str, tuple[int, ...] | None], Counterfactual] = field(default_factory=dict)

    def run(self, runner: Runner, plans: Sequence[Any]) -> list[Counterfactual | None]:
        """Play the plans not yet run (cached by agents, replacement and decisions) within the
        budget; ``None`` for a plan the budget refused."""
        todo = list({plan_key(p): p for p in plans if plan_key(p) not in self.cache}.values())
        room = max(0, self.budget - self.reruns)
        if len(todo) > room:
            self.exhausted, todo = True, todo[:room]
        for plan, (cf, calls) in zip(todo, runner(todo) if todo else []):
            self.cache[plan_key(plan)] = cf
            self.probes.append(cf)
            self.reruns += 1
            self.calls += calls
        return [self.cache.get(plan_key(p)) for p in plans]


def plan_key(plan: Any) -> tuple[tuple[str, ...], str, tuple[int, ...] | None]:
    """A plan's identity: its probe's agents, replacement and decisions (two plans with equal keys
    play the same re-run)."""
    p = getattr(plan, "probe", plan)  # a CountedProbe, a CoalitionProbe or a Probe
    return (tuple(p.agents), str(p.replacement), p.at_steps)


def memo_runner(runner: Runner, memo: dict[Any, tuple[Counterfactual, int]]) -> Runner:
    """``runner`` playing each plan at most once across the searches that share ``memo`` (e.g.
    several critics' searches of one case: the decisive search inside the coalition search is
    the decisive critic's). Each :class:`Search` still counts every re-run it asked for: the
    cost a critic has alone."""

    def run(plans: Sequence[Any]) -> list[tuple[Counterfactual, int]]:
        todo = list({plan_key(p): p for p in plans if plan_key(p) not in memo}.values())
        for plan, result in zip(todo, runner(todo) if todo else []):
            memo[plan_key(plan)] = result
        return [memo[plan_key(p)] for p in plans]

    return run
