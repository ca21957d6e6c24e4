"""The own-policy critic: blame an agent's deviation from its own instruction, not a missed rescue.

Without a reference, "which change would have helped" names whoever *could have helped*: after
a fault, a teammate's other move often saves the ball or the soup as well as undoing the fault
(``benchmarks/results/credit_benchmark.md``). This critic asks a different question, one the
trajectory and the agents' own texts answer without a reference: **did the agent play what its
own policy text says, and would playing it have recovered the loss?**

1. *Deviations*: at each decision, the text's prescription (:func:`lang_pz.critics.intent.intent`,
   a deterministic reader of unconditional texts and of rules on quoted phrases) is compared
   with the word played; a decision where the text is readable and the agent played otherwise
   (or its reply did not parse) is a deviation. An agent whose text is unreadable has no
   decision examined; an agent that played its text everywhere has none.
2. *Re-runs* (:meth:`OwnPolicyCritic.search`): one re-run that changes nothing (the noise,
   :func:`~lang_pz.critics.counterfactual.null_probe`), then, for the ``m`` agents with
   deviations, every non-empty coalition of them playing their texts at their deviations (the
   rest of the team replayed as in :mod:`lang_pz.critics.counterfactual`): ``2^m - 1`` re-runs
   when they fit in ``max_reruns`` (the singles first), else the singles and the coalitions of
   seeded permutations within the budget.
3. *Credit*: each deviating agent's Shapley value ``phi_a`` in the game ``v(S)`` = the re-run's
   gain when the agents of ``S`` follow their texts (exact when every coalition was re-run,
   :func:`~lang_pz.critics.coalition.exact_shapley`; sampled with a standard error beyond), so a
   fault masked by another still gets its share; credit ``-phi_a / max_b |phi_b|``; every other
   agent 0. **Verdict** (:meth:`lang_pz.critics.significance.Significance.each`): every
   deviating agent whose ``phi`` exceeds the noise (the no-change re-run, plus twice a sampled
   value's standard error) and 1 % of the objective's scale; else "no one". The rule's second
   condition (a named agent's gain at least twice any teammate's) is not applied: it tells "erred"
   from "could have helped", and the candidates here are already the agents that deviated (the
   others' gain is 0 by construction); applied, it named only the larger of two significant
   deviations (first benchmark run: 1 of the 6 two-fault misses).

A rule-following agent cannot be blamed for its text being followed, so a good team that simply
loses (no one deviates) gets "no one" whatever a teammate could have done. What it cannot see:
a text that is followed and bad (the fix is the text, which the other modes' "who could have
helped" evidence addresses), an unreadable text (free phrasing, conditions in plain words, a
GSM8K solver's "solve the problem": executing it is solving the problem), and a deviation whose
prescribed word changes nothing. It is a reading of the Who&When question (Zhang et al. 2025,
"Which Agent Causes Task Failures and When?", ICML: the decisive error is an agent's mistake,
not any step whose change helps) with the agent's own instruction as the standard, and of
Shapley counterfactual credits (Li et al. 2021, KDD, Sec. 4) over the deviating agents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from lang_pz.critics.base import CriticReport
from lang_pz.critics.coalition import exact_shapley, sampled_shapley
from lang_pz.critics.counterfactual import OWN_POLICY, Counterfactual, Probe, null_probe, run_probe
from lang_pz.critics.decisive import own_steps
from lang_pz.critics.difference import DifferenceCritic, _span
from lang_pz.critics.intent import intent, played_word
from lang_pz.critics.search import CountedProbe, Runner, Search, model_requests
from lang_pz.critics.significance import DEFAULT_SIGNIFICANCE, Significance, factual_value, gate, noise_of
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.objectives import Objective
from lang_pz.policies.base import Policy
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.policies.replay import replaying
from lang_pz.trajectory import Trajectory

__all__ = ["FollowText", "OwnPolicyCritic", "OwnPolicyProbe", "deviations", "make_own_policy_critic"]


class FollowText(FaultyPolicy):
    """Play ``base``, except at the decisions of ``schedule`` (decision -> word), where the word
    is played: the agent following its text at its deviations. A
    :class:`~lang_pz.policies.faulty.FaultyPolicy`, so ``base`` is asked at every decision (its
    randomness stays in step) and :func:`~lang_pz.critics.search.model_requests` counts it."""

    def __init__(self, base: Policy, schedule: Mapping[int, str]) -> None:
        super().__init__(base, "harmful", schedule, action=OWN_POLICY)
        self.schedule = dict(schedule)

    def faulty_action(self, base_action: str, info: Mapping[str, Any] | None) -> str:
        return self.schedule[len(self.log)]


def deviations(trajectory: Trajectory, texts: Mapping[str, str]) -> dict[str, dict[int, str]]:
    """Per agent with a text: its deviations, decision (0-based, its own) -> the word its text
    prescribes there (module docstring, step 1); an agent without deviations maps to ``{}``."""
    out: dict[str, dict[int, str]] = {}
    for a in trajectory.agents:
        if a not in texts:
            continue
        out[a] = {}
        for k, step in enumerate(trajectory.agent_steps(a)):
            word = intent(texts[a], step)
            if word is not None and played_word(step) != word:
                out[a][k] = word
    return out


def readable(trajectory: Trajectory, texts: Mapping[str, str], agent: str) -> bool:
    """Whether ``agent``'s text prescribes a word at some decision of ``trajectory``."""
    return agent in texts and any(intent(texts[agent], s) is not None for s in trajectory.agent_steps(agent))


@dataclass(frozen=True)
class OwnPolicyProbe:
    """One re-run in which each part's agent plays its text at its deviations.

    Attributes:
        parts: ``(agent, ((decision, word), ...))`` per agent of the coalition.
    """

    parts: tuple[tuple[str, tuple[tuple[int, str], ...]], ...]

    @property
    def probe(self) -> Probe:
        """The record (and cache key): the coalition, :data:`OWN_POLICY`, the union of decisions."""
        agents = tuple(sorted(a for a, _ in self.parts))
        return Probe(agents, OWN_POLICY, tuple(sorted({k for _, ks in self.parts for k, _ in ks})))

    def rerun(
        self,
        env: Any,
        policies: Mapping[str, Policy],
        factual: Trajectory,
        objective: Objective | None = None,
        seed: int = 0,
    ) -> tuple[Counterfactual, int]:
        """``(result, LLM requests)`` of the re-run of ``factual``."""
        team = replaying(policies, factual)
        for a, schedule in self.parts:
            team[a] = FollowText(team[a], dict(schedule))
        return run_probe(env, team, self.probe, factual, objective), model_requests(team)


class OwnPolicyCritic(DifferenceCritic):
    """The ``"own_policy"`` critic mode (module docstring): Shapley credit over the agents'
    deviations from their own texts, with a significance verdict.

    Args:
        backend: words each agent's explanation from the computed facts, as
            :class:`~lang_pz.critics.difference.DifferenceCritic` does (``None``: facts alone).
        texts: agent -> its policy text, when :meth:`search` is not given ``policies``.
        max_reruns: the re-run budget per episode (>= 1; the no-change re-run included).
        permutations: sampled permutations when the coalitions do not fit (>= 1).
        significance: when a verdict names an agent (``None``: no verdict).
        max_attempts: the explaining LLM's attempts per reply.
        temperature: its sampling temperature.
        retry_temperature: its temperature after a rejected reply.
        seed: its seed, and the permutations' (with the episode seed).

    Raises:
        InvalidKwargError: a setting out of range.
    """

    mode = "own_policy"
    whole_probes_shown = False

    def __init__(
        self,
        backend: Any = None,
        *,
        texts: Mapping[str, str] | None = None,
        max_reruns: int = 64,
        permutations: int = 20,
        significance: Significance | None = DEFAULT_SIGNIFICANCE,
        max_attempts: int = 2,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        seed: int = 0,
    ) -> None:
        super().__init__(
            backend,
            significance=significance,
            max_attempts=max_attempts,
            temperature=temperature,
            retry_temperature=retry_temperature,
            seed=seed,
        )
        if max_reruns < 1:
            raise InvalidKwargError(f"max_reruns must be >= 1, got {max_reruns}")
        if permutations < 1:
            raise InvalidKwargError(f"permutations must be >= 1, got {permutations}")
        self.texts = None if texts is None else dict(texts)
        self.max_reruns, self.permutations = max_reruns, permutations

    def _texts(self, policies: Mapping[str, str] | None) -> Mapping[str, str]:
        texts = policies if policies is not None else self.texts
        if texts is None:
            raise LangPZError(
                "the own_policy critic reads each agent's policy text: pass policies= (agent -> text) to "
                "search(), or texts= to the critic"
            )
        return texts

    def orders(self, trajectory: Trajectory, players: Sequence[str]) -> list[list[str]]:
        """Seeded permutations of ``players`` (the critic's ``seed`` and the episode's seed)."""
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, int(trajectory.seed or 0), 11]))
        return [[players[int(i)] for i in rng.permutation(len(players))] for _ in range(self.permutations)]

    def search(self, trajectory: Trajectory, runner: Runner, policies: Mapping[str, str] | None = None) -> Search:
        """The no-change re-run, then the deviating agents' coalitions (module docstring, step 2).

        Args:
            trajectory: the factual episode.
            runner: plays re-run plans of it (:func:`~lang_pz.critics.search.local_runner`).
            policies: agent -> its policy text (default: the critic's ``texts``).

        Raises:
            LangPZError: no texts; the trajectory has no seed; from the re-runs.
        """
        if trajectory.seed is None:
            raise LangPZError(f"episode {trajectory.episode} has no seed; a counterfactual re-run needs the same seed")
        dev = deviations(trajectory, self._texts(policies))
        found = Search(budget=self.max_reruns)
        found.run(runner, [CountedProbe(null_probe())])
        players = [a for a in trajectory.agents if dev.get(a)]
        plan = {a: tuple(sorted(dev[a].items())) for a in players}

        def coalition(members: Sequence[str]) -> OwnPolicyProbe:
            return OwnPolicyProbe(tuple((a, plan[a]) for a in sorted(members)))

        if 2 ** len(players) - 1 <= self.max_reruns - found.reruns:
            found.run(runner, [coalition(c) for k in range(1, len(players) + 1) for c in combinations(players, k)])
            return found
        found.run(runner, [coalition([a]) for a in players])
        for order in self.orders(trajectory, players):
            found.run(runner, [coalition(order[:k]) for k in range(2, len(order) + 1)])
            if found.exhausted:
                break
        return found

    def shapley(
        self, trajectory: Trajectory, counterfactuals: Sequence[Counterfactual]
    ) -> tuple[dict[str, float], dict[str, float], dict[str, Counterfactual], str]:
        """``(phi, standard error, single re-runs, how)`` of the deviating agents (module
        docstring, step 3); ``how`` is ``"exact"``, ``"<k> perms"`` or ``"singles"``."""
        own = [c for c in counterfactuals if c.replacement == OWN_POLICY and c.agents]
        singles = {c.agents[0]: c for c in own if len(c.agents) == 1}
        players = [a for a in trajectory.agents if a in singles]
        values: dict[frozenset[str], float] = {frozenset(): 0.0}
        values.update({frozenset(c.agents): c.delta for c in own if set(c.agents) <= set(players)})
        if all(frozenset(c) in values for k in range(2, len(players) + 1) for c in combinations(players, k)):
            return exact_shapley(players, values), dict.fromkeys(players, 0.0), singles, "exact"
        phi, se, used = sampled_shapley(self.orders(trajectory, players), values)
        if not used:
            return {a: singles[a].delta for a in players}, dict.fromkeys(players, 0.0), singles, "singles"
        return phi, se, singles, f"{used} perms"

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[Counterfactual] = (),
    ) -> CriticReport:
        """Credit every agent of ``trajectory`` from the re-runs :meth:`search` returned (module
        docstring, step 3); each deviating agent cites its deviations (at most three).

        Args:
            trajectory: the factual episode.
            policies: agent -> policy text (the critic's ``texts`` if ``None``); only its facts
                read them (an agent with no deviation: "followed its text" or "text not read").
            counterfactuals: the search's re-runs.

        Raises:
            LangPZError: no agent steps.
            BackendError: the explaining backend failed.
        """
        if not trajectory.agents:
            raise LangPZError(f"trajectory of episode {trajectory.episode} has no agent steps to assess")
        phi, se, singles, how = self.shapley(trajectory, counterfactuals)
        scale = max((abs(v) for v in phi.values()), default=0.0)
        credit = {a: (-phi[a] / scale if a in phi and scale > 0 else 0.0) + 0.0 for a in trajectory.agents}
        verdict = None
        if self.significance is not None:
            noise = noise_of(counterfactuals)
            verdict = self.significance.each(
                phi,
                factual=factual_value(counterfactuals, trajectory.team_return),
                noise={a: noise + 2 * se.get(a, 0.0) for a in phi},
            )
            credit = gate(credit, verdict)
        texts = policies if policies is not None else self.texts
        cited = {a: own_steps(trajectory, a, singles[a].at_steps) if a in singles else [] for a in trajectory.agents}
        facts = {}
        for a in trajectory.agents:
            if a in singles:
                err = f" ± {se[a]:.1f}" if se.get(a) else ""
                named = "" if verdict is None or a in verdict or phi[a] <= 0 else "; not significant"
                facts[a] = (
                    f"own text at {_span(cited[a])}: team {singles[a].delta:+.1f}; Shapley {phi[a]:+.1f}{err} ({how}){named}"
                )
            elif texts is not None and not readable(trajectory, texts, a):
                facts[a] = "its text is not one the reader executes"
            else:
                facts[a] = "played what its text says"
        return self.report(trajectory, texts, counterfactuals, credit, facts, cited, verdict=verdict)


def make_own_policy_critic(backend: Any = None, **settings: Any) -> OwnPolicyCritic:
    """The ``"own_policy"`` critic mode (:class:`OwnPolicyCritic`; ``settings`` are its keyword
    arguments): the factory a critic-mode registry calls. In training, :meth:`OwnPolicyCritic.search`
    needs ``policies=`` (the current texts) for each episode.

    Raises:
        InvalidKwargError: a setting out of range.
    """
    return OwnPolicyCritic(backend, **settings)
