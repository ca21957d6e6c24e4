"""The coalition critic: Shapley values of "replace these agents' decisive windows".

When two agents are faulty at once, neither one's correction may recover the loss (one fault
masks the other), so single-agent re-runs cannot credit them. Shapley counterfactual credits
(Li et al. 2021, "Shapley Counterfactual Credits for Multi-Agent Reinforcement Learning", KDD,
Sec. 4) and SQDDPG (Wang et al. 2020, "Shapley Q-value: A Local Reward Approach to Solve Global
Reward Games", AAAI, Sec. 3) credit agents by their Shapley value in a coalition game, estimated
from sampled permutations. Here the game is computed by re-runs of the same seed, with no
reference policy:

- each agent's *window* is its decisive probe of :mod:`lang_pz.critics.decisive` (the
  earliest minimal recovering change), else its best single-agent re-run (largest gain);
- ``v(S)`` is the objective of the re-run in which every agent of ``S`` plays its window's
  replacement at its window's decisions (``v({}) `` is the factual episode, ``v({a})`` its single
  re-run); each coalition is re-run once (cached), at most ``coalition_reruns`` of them;
- ``phi_a`` is the mean marginal gain ``v(P ∪ {a}) - v(P)`` over ``permutations`` seeded
  permutations (seed: the critic's ``seed`` and the episode seed), using only permutations whose
  coalitions all fit in the budget (none: ``phi_a = v({a}) - v({})``).

**Credit** ``-phi_a / max_b |phi_b|``: the agent whose replacement helps most gets the lowest
credit (the blame), as in :class:`~lang_pz.critics.difference.DifferenceCritic`; each cites its
window's steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lang_pz.critics.counterfactual import Counterfactual, Probe, probe_team, run_probe
from lang_pz.critics.decisive import DecisiveCritic, decisive_probes
from lang_pz.critics.difference import _span
from lang_pz.critics.search import Runner, Search, model_requests
from lang_pz.error import InvalidKwargError
from lang_pz.objectives import Objective
from lang_pz.policies.base import Policy
from lang_pz.trajectory import Trajectory


@dataclass(frozen=True)
class CoalitionProbe:
    """One re-run with several agents' windows replaced at once (each part one agent's probe).

    Recorded as a :class:`~lang_pz.critics.counterfactual.Counterfactual` whose ``agents`` are the
    coalition (sorted), ``replacement`` names each part (``"piston_0: up@3-4; piston_2: down@0"``)
    and ``at_steps`` is the union of the replaced decisions.
    """

    parts: tuple[Probe, ...]

    @property
    def probe(self) -> Probe:
        """The coalition as one :class:`Probe` record (its cache key)."""
        parts = sorted(self.parts, key=lambda p: p.agents)
        desc = "; ".join(f"{p.agents[0]}: {p.replacement}@{_span(list(p.at_steps or ()))}" for p in parts)
        at = tuple(sorted({k for p in parts for k in p.at_steps or ()}))
        return Probe(tuple(a for p in parts for a in p.agents), desc, at or None)

    def rerun(
        self,
        env: Any,
        policies: Mapping[str, Policy],
        factual: Trajectory,
        objective: Objective | None = None,
        seed: int = 0,
    ) -> tuple[Counterfactual, int]:
        """``(result, LLM requests)``: every part's agent plays its part's replacement."""
        team: dict[str, Policy] = {}
        for i, part in enumerate(self.parts):
            swapped = probe_team(policies, part, seed=seed + i, factual=factual)
            team = team or swapped
            team[part.agents[0]] = swapped[part.agents[0]]
        return run_probe(env, team, self.probe, factual, objective), model_requests(team)


def windows_of(
    trajectory: Trajectory, probes: Sequence[Counterfactual], share: float, min_gain: float
) -> dict[str, Counterfactual]:
    """Each agent's window (module docstring): its decisive probe, else its best windowed re-run."""
    decisive = decisive_probes(trajectory, probes, share, min_gain)
    out = {}
    for a in trajectory.agents:
        mine = [p for p in probes if p.agents == (a,) and p.at_steps]
        if a in decisive:
            out[a] = decisive[a]
        elif mine:
            out[a] = max(mine, key=lambda p: (p.delta, -min(p.at_steps or (0,))))
    return out


class CoalitionCritic(DecisiveCritic):
    """The ``"coalition"`` critic mode (module docstring): Shapley credit over agents' windows.

    Args:
        permutations: sampled permutations (>= 1).
        coalition_reruns: most coalition re-runs (>= 0; on top of the decisive search's
            ``max_reruns``).
        **kwargs: :class:`~lang_pz.critics.decisive.DecisiveCritic`'s settings (the window search).

    Raises:
        InvalidKwargError: a setting out of range.
    """

    mode = "coalition"

    def __init__(self, backend: Any = None, *, permutations: int = 20, coalition_reruns: int = 32, **kwargs: Any) -> None:
        super().__init__(backend, **kwargs)
        if permutations < 1:
            raise InvalidKwargError(f"permutations must be >= 1, got {permutations}")
        if coalition_reruns < 0:
            raise InvalidKwargError(f"coalition_reruns must be >= 0, got {coalition_reruns}")
        self.permutations, self.coalition_reruns = permutations, coalition_reruns

    def orders(self, trajectory: Trajectory, players: Sequence[str]) -> list[list[str]]:
        """The sampled permutations of ``players`` (seeded by ``seed`` and the episode's seed)."""
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, int(trajectory.seed or 0), 7]))
        return [[players[int(i)] for i in rng.permutation(len(players))] for _ in range(self.permutations)]

    def search(self, trajectory: Trajectory, runner: Runner) -> Search:
        """The decisive search, then the coalitions of the sampled permutations, first permutation
        first, each coalition once, within ``coalition_reruns`` (:class:`Search` counts both)."""
        found = Search(budget=self.max_reruns)
        self.search_into(found, trajectory, runner)
        wins = windows_of(trajectory, found.probes, self.share, self.min_gain)
        found.budget = found.reruns + self.coalition_reruns
        for order in self.orders(trajectory, list(wins)):
            plans = [self._coalition(wins, order[:k]) for k in range(2, len(order) + 1)]
            found.run(runner, plans)
            if found.exhausted:
                break
        return found

    @staticmethod
    def _coalition(wins: Mapping[str, Counterfactual], members: Sequence[str]) -> CoalitionProbe:
        parts = [Probe((a,), wins[a].replacement, wins[a].at_steps) for a in sorted(members)]
        return CoalitionProbe(tuple(parts))

    def shapley(
        self, trajectory: Trajectory, probes: Sequence[Counterfactual]
    ) -> tuple[dict[str, float], dict[str, Counterfactual], int]:
        """``(phi, windows, permutations used)`` from the re-runs (module docstring); ``phi`` in
        objective units, 0 for an agent without a window."""
        wins = windows_of(trajectory, probes, self.share, self.min_gain)
        players = list(wins)
        values: dict[frozenset[str], float] = {frozenset(): 0.0}
        values.update({frozenset([a]): w.delta for a, w in wins.items()})
        for p in probes:
            if len(p.agents) > 1 and p.replacement == self._coalition(wins, p.agents).probe.replacement:
                values[frozenset(p.agents)] = p.delta
        total = dict.fromkeys(players, 0.0)
        used = 0
        for order in self.orders(trajectory, players):
            prefixes = [frozenset(order[:k]) for k in range(len(order) + 1)]
            if any(s not in values for s in prefixes):
                continue
            used += 1
            for k, a in enumerate(order):
                total[a] += values[prefixes[k + 1]] - values[prefixes[k]]
        phi = {a: total[a] / used if used else values[frozenset([a])] for a in players}
        return {a: phi.get(a, 0.0) for a in trajectory.agents}, wins, used

    def blame(
        self, trajectory: Trajectory, counterfactuals: Sequence[Counterfactual]
    ) -> tuple[dict[str, float], dict[str, Counterfactual], dict[str, str]]:
        """``(credit, windows, tail)`` as :meth:`DecisiveCritic.blame`, the credit
        ``-phi_a / max_b |phi_b|`` (module docstring) and each agent's window."""
        phi, wins, used = self.shapley(trajectory, counterfactuals)
        scale = max((abs(v) for v in phi.values()), default=0.0)
        credit = {a: (-v / scale if scale > 0 else 0.0) for a, v in phi.items()}
        how = f"{used} perms" if used else "singles"
        tail = {a: f": Shapley {phi[a]:+.1f} ({how})" if a in wins else "no re-run replaced it" for a in trajectory.agents}
        return credit, wins, tail
