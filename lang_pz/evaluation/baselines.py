"""What a score is worth: a seeded random critic and trivial rules that assign no credit at all.

Each baseline is an assessor (``assess(trajectory, policies, counterfactuals) -> CriticReport``)
scored by the same code as a real critic (:mod:`lang_pz.evaluation.scoring`), so a benchmark
reports them side by side. A rule blames the agent with the highest *score* (its credit is the
negated score, scaled to [-1, 0]); agents with equal scores tie.

=====================  ===========================================================================
``random``             :class:`RandomCritic`: distinct uniform credits, one random own step cited
``unusual_actions``    the agent that played the action least likely under the other agents'
                       pooled action frequencies (its largest surprisal, add-one smoothing);
                       cites that step. "Blame whoever played stay" is this rule's special case.
``histogram_outlier``  the agent whose action histogram is farthest (total variation) from the
                       other agents' pooled histogram; cites its first step playing the action
                       it over-uses most
``action_switches``    the agent that changes its action most often; cites its first change
``first_speaker``      the agent of the first step (in parallel envs: the first agent listed)
``last_speaker``       the agent of the last step
``lowest_return``      the agent with the lowest own return (a tie in shared-reward envs)
=====================  ===========================================================================

:func:`action_leakage` tests whether the faulty agent's action histogram stands out among its
teammates' more often than chance over a benchmark's cases. (Pooling all faulty agents'
histograms against all others' would mislead: which agents a fault can hurt depends on their
position, e.g. Pistonball's middle pistons, and position shapes a histogram.)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from lang_pz.critics.base import Credit, CriticReport, compute_evidence, shown_action
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.error import LangPZError
from lang_pz.trajectory import Trajectory

#: ``trajectory -> {agent: (score, cited steps)}``; the highest score is blamed.
RuleFn = Callable[[Trajectory], dict[str, tuple[float, list[int]]]]


def _report(trajectory: Trajectory, credits: Mapping[str, tuple[float, list[int]]], why: str) -> CriticReport:
    return CriticReport(
        episode=trajectory.episode,
        credits={a: Credit(agent=a, credit=c, explanation=why, steps=steps) for a, (c, steps) in credits.items()},
        team_return=trajectory.team_return,
        mode=why,
        evidence=compute_evidence(trajectory),
        shown_steps=sorted({s.step for s in trajectory.steps}),
        total_steps=len({s.step for s in trajectory.steps}),
    )


def _agents(trajectory: Trajectory) -> list[str]:
    agents = trajectory.agents
    if not agents:
        raise LangPZError(f"trajectory of episode {trajectory.episode} has no agent steps to assess")
    return agents


class RandomCritic:
    """The empirical chance baseline: distinct uniform random credits in [-1, 1] and one
    uniformly random cited step (among the agent's own steps) per agent.

    Args:
        seed: seed of its :class:`numpy.random.Generator`.
    """

    name = "random"

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[Counterfactual] = (),
    ) -> CriticReport:
        agents = _agents(trajectory)
        values = self.rng.uniform(-1.0, 1.0, size=len(agents))
        credits = {}
        for a, v in zip(agents, values):
            own = sorted({s.step for s in trajectory.agent_steps(a)})
            credits[a] = (float(v), [own[int(self.rng.integers(len(own)))]])
        return _report(trajectory, credits, "random baseline")


class TrivialRule:
    """A rule that blames the agent with the highest score of ``fn`` (see the module table).

    Args:
        name: the rule's name in reports.
        fn: ``trajectory -> {agent: (score, cited steps)}``.
    """

    def __init__(self, name: str, fn: RuleFn) -> None:
        self.name, self.fn = name, fn

    def __repr__(self) -> str:
        return f"TrivialRule({self.name!r})"

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[Counterfactual] = (),
    ) -> CriticReport:
        _agents(trajectory)
        scores = self.fn(trajectory)
        top = max(abs(s) for s, _ in scores.values()) or 1.0
        return _report(trajectory, {a: (-s / top if s else 0.0, st[:3]) for a, (s, st) in scores.items()}, self.name)


def _unusual_actions(trajectory: Trajectory) -> dict[str, tuple[float, list[int]]]:
    acts = {a: [(s.step, shown_action(s)) for s in trajectory.agent_steps(a)] for a in trajectory.agents}
    vocab = {x for v in acts.values() for _, x in v}
    out = {}
    for a, own in acts.items():
        others = Counter(x for b, v in acts.items() if b != a for _, x in v)
        total = sum(others.values()) + len(vocab)
        surprise = [(-math.log((others[x] + 1) / total), t) for t, x in own]
        worst = max(surprise, key=lambda p: p[0])  # the first of the most surprising steps
        out[a] = (worst[0], [worst[1]])
    return out


def _histogram_outlier(trajectory: Trajectory) -> dict[str, tuple[float, list[int]]]:
    acts = {a: [(s.step, shown_action(s)) for s in trajectory.agent_steps(a)] for a in trajectory.agents}
    vocab = sorted({x for v in acts.values() for _, x in v})
    out = {}
    for a, own in acts.items():
        mine = Counter(x for _, x in own)
        others = Counter(x for b, v in acts.items() if b != a for _, x in v)
        f = np.array([mine[w] for w in vocab], float) / max(1, len(own))
        o = np.array([others[w] for w in vocab], float) / max(1, sum(others.values()))
        over = vocab[int(np.argmax(f - o))]
        out[a] = (round(float(0.5 * np.abs(f - o).sum()), 9), [next(t for t, x in own if x == over)])
    return out


def _action_switches(trajectory: Trajectory) -> dict[str, tuple[float, list[int]]]:
    out = {}
    for a in trajectory.agents:
        own = [(s.step, shown_action(s)) for s in trajectory.agent_steps(a)]
        changes = [t for (_, x0), (t, x1) in pairwise(own) if x1 != x0]
        out[a] = (float(len(changes)), changes[:1] or [own[0][0]])
    return out


def _speaker(last: bool) -> RuleFn:
    def fn(trajectory: Trajectory) -> dict[str, tuple[float, list[int]]]:
        step = trajectory.steps[-1] if last else trajectory.steps[0]
        return {a: (1.0 if a == step.agent else 0.0, [step.step] if a == step.agent else []) for a in trajectory.agents}

    return fn


def _lowest_return(trajectory: Trajectory) -> dict[str, tuple[float, list[int]]]:
    ev = compute_evidence(trajectory)
    out = {}
    for a in trajectory.agents:
        worst = min(trajectory.agent_steps(a), key=lambda s: s.reward)
        out[a] = (-ev[a].agent_return, [worst.step])
    # scores must be >= 0 for the scaling; shift so the highest (lowest return) is largest
    low = min(s for s, _ in out.values())
    return {a: (s - low, st) for a, (s, st) in out.items()}


#: Every trivial rule, by name.
TRIVIAL_RULES: dict[str, TrivialRule] = {
    "unusual_actions": TrivialRule("unusual_actions", _unusual_actions),
    "histogram_outlier": TrivialRule("histogram_outlier", _histogram_outlier),
    "action_switches": TrivialRule("action_switches", _action_switches),
    "first_speaker": TrivialRule("first_speaker", _speaker(last=False)),
    "last_speaker": TrivialRule("last_speaker", _speaker(last=True)),
    "lowest_return": TrivialRule("lowest_return", _lowest_return),
}


def baselines(seed: int) -> dict[str, Any]:
    """The seeded random critic and every trivial rule, by name (a fresh set per benchmark run)."""
    return {"random": RandomCritic(seed=seed), **TRIVIAL_RULES}


#: The trivial rules that read only per-agent action statistics (what :func:`action_leakage` tests).
ACTION_STATISTIC_RULES: tuple[str, ...] = ("unusual_actions", "histogram_outlier", "action_switches")


def action_leakage(cases: Sequence[tuple[Trajectory, str]]) -> dict[str, Any]:
    """Does a per-agent action statistic give the faulty agent away, more often than chance?

    For each rule of :data:`ACTION_STATISTIC_RULES` and each case (``(trajectory, faulty
    agent)``): the expected hit of the rule (ties broken at random). Per rule: ``share`` (mean
    hit) and a one-sided binomial test of the rounded hits against chance (mean 1 / n_agents;
    :func:`scipy.stats.binomtest`). ``p_value`` is the smallest rule p-value times the number
    of rules (Bonferroni, capped at 1): small means some action statistic singles out the
    faulty agent, i.e. the label leaks.

    Returns:
        ``{"cases", "chance", "rules": {rule: {"share", "p_value"}}, "worst_rule", "p_value"}``.
    """
    from scipy.stats import binomtest

    from lang_pz.evaluation.scoring import blame

    out: dict[str, Any] = {"cases": len(cases), "chance": None, "rules": {}, "worst_rule": None, "p_value": None}
    if not cases:
        return out
    p0 = float(np.mean([1.0 / len(t.agents) for t, _ in cases]))
    out["chance"] = round(p0, 4)
    for name in ACTION_STATISTIC_RULES:
        hits = []
        for traj, agent in cases:
            tied = blame(TRIVIAL_RULES[name].assess(traj)).tied
            hits.append((agent in tied) / len(tied))
        k = int(round(sum(hits)))
        pv = float(binomtest(k, len(hits), p0, alternative="greater").pvalue) if 0 < p0 < 1 else 1.0
        out["rules"][name] = {"share": round(float(np.mean(hits)), 4), "p_value": pv}
    worst = min(out["rules"], key=lambda r: out["rules"][r]["p_value"])
    out["worst_rule"] = worst
    out["p_value"] = min(1.0, out["rules"][worst]["p_value"] * len(ACTION_STATISTIC_RULES))
    return out
