"""The decisive-error critic: blame the agent whose earliest decision, changed, recovers the loss.

Who&When (Zhang et al. 2025, "Which Agent Causes Task Failures and When?", ICML, Sec. 2) defines
the failure-responsible agent and the *decisive error step* as the earliest step whose
correction turns the failure into a success; AgenTracer (Zhang et al., ICLR 2026, "AgenTracer:
who is inducing failure in LLM agentic systems?") labels trajectories with it by counterfactual
replay. This module computes it without a reference policy: a correction is another choice the
agent had (an action word it was offered, its steps' ``legal_actions``; for free-text roles the
environment's ``"default"`` reply), and the rest of the episode is replayed from the same seed
(:mod:`lang_pz.critics.counterfactual`, :mod:`lang_pz.policies.replay`: the other LLM agents
answer from the factual episode wherever the change has not reached them).

**What "the loss" is without a reference.** No good episode is known, so the loss is measured
against the best objective any re-run of the search reached: ``gap = best - factual``. A re-run
*recovers* when its gain is at least ``share * gap`` and more than ``min_gain``; when no re-run
beat the factual episode nothing recovers and every agent ties (credit 0).

**Search** (:meth:`DecisiveCritic.search`, at most ``max_reruns`` re-runs, in this order):

1. coarse: every agent's windows of ``window`` decisions (stride ``window // 2``), each other
   choice held over the window, earliest windows first;
2. fine, per agent with a recovering window, in the earliest such window: each single decision
   with each choice; if none recovers alone, the latest start ``d`` and then the earliest end
   ``e`` for which replacing decisions ``d..e`` (with the window's recovering word) still
   recovers (two bisections).

**Credit** (:meth:`DecisiveCritic.assess`, recomputed from the re-runs alone): an agent's
decisive probe is its *minimal* recovering probe (no recovering probe of its replaces a strict
subset of its decisions) with the earliest first step; its first decision is the agent's
decisive step. Agents are ordered by decisive step (then larger gain first; the same step and
gain is a tie, e.g. both Overcooked cooks recovering the whole soup by a change at step 0); the
``i``-th of ``m`` distinct places gets credit ``-(m - i) / m`` (the first -1); agents with no
recovering decision get 0 (they rank above). Each credit cites its decisive probe's steps (at most three).

**Verdict** (:mod:`lang_pz.critics.significance`, on by default): the first-placed agent is
blamed only if it is the one agent the significance rule names from every agent's best re-run
gain (its gain is a change and at least twice any teammate's); then it alone keeps its -1 and
the other credits are 0, else every credit is 0.0 ("no one"). The search starts with one
re-run that changes nothing (:func:`~lang_pz.critics.counterfactual.null_probe`), the noise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from lang_pz.critics.base import CriticReport
from lang_pz.critics.counterfactual import Counterfactual, null_probe, plan_probes
from lang_pz.critics.difference import Aggregate, DifferenceCritic, _span
from lang_pz.critics.search import CountedProbe, Runner, Search, local_runner, model_requests
from lang_pz.critics.significance import DEFAULT_SIGNIFICANCE, Significance, gate
from lang_pz.error import InvalidKwargError
from lang_pz.trajectory import Trajectory

__all__ = [
    "CountedProbe",
    "DecisiveCritic",
    "Runner",
    "Search",
    "SearchingCritic",
    "decisive_probes",
    "local_runner",
    "model_requests",
    "own_steps",
    "recovery_target",
]

#: Replacements the search understands: ``"alternatives"``, ``"default"``, ``"random"`` or a word.
SEARCH_REPLACEMENTS = ("alternatives", "default", "random")


def recovery_target(probes: Sequence[Counterfactual], share: float, min_gain: float) -> float | None:
    """The least gain that counts as recovering: ``max(share * gap, min_gain)`` with ``gap`` the best
    single-agent re-run's gain (``None``: no re-run gained more than ``min_gain``)."""
    single = [p.delta for p in probes if len(p.agents) == 1]
    best = max(single, default=0.0)
    return None if best <= min_gain else max(share * best, min_gain)


def _recovers(cf: Counterfactual | None, target: float | None, min_gain: float) -> bool:
    return cf is not None and target is not None and cf.delta >= target and cf.delta > min_gain


def decisive_probes(
    trajectory: Trajectory, probes: Sequence[Counterfactual], share: float, min_gain: float
) -> dict[str, Counterfactual]:
    """Per agent with a recovering decision: its decisive probe (module docstring, "Credit")."""
    target = recovery_target(probes, share, min_gain)
    out: dict[str, Counterfactual] = {}
    for a in trajectory.agents:
        rec = [p for p in probes if p.agents == (a,) and p.at_steps and _recovers(p, target, min_gain)]
        minimal = [p for p in rec if not any(set(q.at_steps or ()) < set(p.at_steps or ()) for q in rec)]
        if minimal:
            out[a] = min(minimal, key=lambda p: (min(p.at_steps or (0,)), len(p.at_steps or ()), -p.delta))
    return out


def own_steps(trajectory: Trajectory, agent: str, decisions: Sequence[int] | None) -> list[int]:
    """``agent``'s decisions (0-based, its own) as trajectory steps."""
    own = sorted(s.step for s in trajectory.agent_steps(agent))
    return [own[k] for k in (decisions or ()) if k < len(own)]


@runtime_checkable
class SearchingCritic(Protocol):
    """A critic that chooses its own re-runs (:class:`DecisiveCritic`,
    :class:`~lang_pz.critics.coalition.CoalitionCritic`): :meth:`search` plays them, :meth:`assess`
    credits from their results alone."""

    mode: str

    def search(self, trajectory: Trajectory, runner: Runner, policies: Mapping[str, str] | None = None) -> Search:
        """Play this critic's re-runs of ``trajectory`` through ``runner`` (``policies``: agent ->
        its policy text, read by a critic that needs it, :class:`~lang_pz.critics.own.OwnPolicyCritic`)."""
        ...

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[Counterfactual] = (),
    ) -> CriticReport:
        """Credit every agent from the re-runs :meth:`search` returned."""
        ...


class DecisiveCritic(DifferenceCritic):
    """The ``"decisive"`` critic mode (module docstring): who made the earliest decision whose
    change recovers the loss, and when.

    Args:
        backend: words each agent's explanation from the computed facts, as
            :class:`~lang_pz.critics.difference.DifferenceCritic` does (``None``: facts alone).
        replacements: the other choices tried (:data:`SEARCH_REPLACEMENTS` or action words);
            ``"alternatives"`` means ``free_text`` for an agent offered no action words.
        free_text: replacements of agents without ``legal_actions`` (e.g. a GSM8K solver).
        window: decisions per coarse window (>= 1).
        share: the share of the gap a re-run must recover, in (0, 1].
        min_gain: a recovering re-run gains more than this (objective units, >= 0).
        max_reruns: the search's re-run budget (>= 1).
        significance: when a verdict names an agent (module docstring; ``None``: no verdict).
        max_attempts, temperature, retry_temperature, seed: the explaining LLM's settings.

    Raises:
        InvalidKwargError: a setting out of range, or no replacement.
    """

    mode = "decisive"
    whole_probes_shown = False

    def __init__(
        self,
        backend: Any = None,
        *,
        replacements: Sequence[str] = ("alternatives",),
        free_text: Sequence[str] = ("default",),
        window: int = 4,
        share: float = 0.5,
        min_gain: float = 0.0,
        max_reruns: int = 200,
        aggregate: Aggregate = "max",
        significance: Significance | None = DEFAULT_SIGNIFICANCE,
        max_attempts: int = 2,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        seed: int = 0,
    ) -> None:
        super().__init__(
            backend,
            aggregate=aggregate,
            significance=significance,
            max_attempts=max_attempts,
            temperature=temperature,
            retry_temperature=retry_temperature,
            seed=seed,
        )
        if isinstance(replacements, str) or not replacements:
            raise InvalidKwargError(f"replacements must be a non-empty list, e.g. ['alternatives'], got {replacements!r}")
        if "previous" in replacements or "reference" in replacements:
            raise InvalidKwargError(
                f"the decisive search replaces decisions by choices the agent had; {list(replacements)} names "
                "'previous'/'reference' (whole policies): use alternatives, default, random or action words"
            )
        if window < 1:
            raise InvalidKwargError(f"window must be >= 1 decision, got {window}")
        if not 0 < share <= 1:
            raise InvalidKwargError(f"share must be in (0, 1] (a share of the gap to the best re-run), got {share}")
        if min_gain < 0:
            raise InvalidKwargError(f"min_gain must be >= 0 (objective units), got {min_gain}")
        if max_reruns < 1:
            raise InvalidKwargError(f"max_reruns must be >= 1, got {max_reruns}")
        self.replacements, self.free_text = tuple(replacements), tuple(free_text)
        self.window, self.share, self.min_gain, self.max_reruns = window, share, min_gain, max_reruns

    # -- the search -------------------------------------------------------------------------

    def words(self, trajectory: Trajectory, agent: str) -> list[str]:
        """The replacements tried for ``agent`` (``free_text`` for ``"alternatives"`` when it was
        offered no action words)."""
        offered = any(s.legal_actions for s in trajectory.agent_steps(agent))
        out: list[str] = []
        for r in self.replacements:
            out += list(self.free_text) if r == "alternatives" and not offered else [r]
        return list(dict.fromkeys(out))

    def _plans(self, trajectory: Trajectory, agent: str, decisions: Sequence[int], words: Sequence[str]) -> list[Any]:
        return [CountedProbe(p) for p in plan_probes(trajectory, [[agent]], list(words), steps=decisions)]

    def windows(self, trajectory: Trajectory, agent: str) -> list[list[int]]:
        """``agent``'s coarse windows (stride ``window // 2``, at least 1), the last one reaching its
        final decision."""
        n = len(trajectory.agent_steps(agent))
        stride = max(1, self.window // 2)
        starts = list(range(0, max(1, n - self.window + 1), stride))
        if starts[-1] + self.window < n:
            starts.append(n - self.window)
        return [list(range(s, min(n, s + self.window))) for s in starts]

    def search_key(self) -> tuple[Any, ...]:
        """The settings that decide this critic's re-runs: critics with equal keys play the same
        search of a case (a benchmark runs it once for both; the verdict is not in it)."""
        return ("decisive", self.replacements, self.free_text, self.window, self.share, self.min_gain, self.max_reruns)

    def search(self, trajectory: Trajectory, runner: Runner, policies: Mapping[str, str] | None = None) -> Search:
        """Play the coarse-to-fine search of ``trajectory`` (module docstring) through ``runner``
        (``policies`` is not read: the search tries the choices the agents were offered).

        Returns:
            The :class:`Search` (its ``probes`` are what :meth:`assess` reads).

        Raises:
            LangPZError: the trajectory has no seed; from the re-runs.
        """
        found = Search(budget=self.max_reruns)
        self.search_into(found, trajectory, runner)
        return found

    def search_into(self, found: Search, trajectory: Trajectory, runner: Runner) -> None:
        """:meth:`search`, adding to ``found`` (a subclass continues with the same budget)."""
        agents = list(trajectory.agents)
        found.run(runner, [CountedProbe(null_probe())])  # the noise: the same episode, no change
        coarse = [(w[0], i, a, w) for i, a in enumerate(agents) for w in self.windows(trajectory, a)]
        plans = [p for _, _, a, w in sorted(coarse) for p in self._plans(trajectory, a, w, self.words(trajectory, a))]
        found.run(runner, plans)
        target = recovery_target(found.probes, self.share, self.min_gain)
        if target is None:
            return
        first: list[tuple[int, str, list[int], str]] = []
        for a in agents:
            for w in self.windows(trajectory, a):
                rec = [c for c in found.probes if c.agents == (a,) and c.at_steps == tuple(w)]
                rec = [c for c in rec if _recovers(c, target, self.min_gain)]
                if rec:
                    first.append((w[0], a, w, max(rec, key=lambda c: c.delta).replacement))
                    break
        for _, a, w, word in sorted(first):
            if not self._refine(found, trajectory, runner, a, w, word, target):
                return

    def _refine(
        self, found: Search, trajectory: Trajectory, runner: Runner, agent: str, w: list[int], word: str, target: float
    ) -> bool:
        """Single decisions of window ``w``, then the two bisections; ``False`` once the budget is spent."""

        def rec(decisions: list[int], words: Sequence[str]) -> bool | None:
            got = found.run(runner, self._plans(trajectory, agent, decisions, words))
            if any(_recovers(c, target, self.min_gain) for c in got):
                return True
            return None if any(c is None for c in got) else False

        for k in w:
            r = rec([k], self.words(trajectory, agent))
            if r is None:
                return False
            if r:
                return True
        lo, hi = w[0], w[-1]
        while lo < hi:  # the latest start d whose suffix d..end still recovers
            mid = (lo + hi + 1) // 2
            r = rec(list(range(mid, w[-1] + 1)), [word])
            if r is None:
                return False
            lo, hi = (mid, hi) if r else (lo, mid - 1)
        d, lo, hi = lo, lo, w[-1]
        while lo < hi:  # the earliest end e for which d..e recovers
            mid = (lo + hi) // 2
            r = rec(list(range(d, mid + 1)), [word])
            if r is None:
                return False
            lo, hi = (lo, mid) if r else (mid + 1, hi)
        return True

    # -- credit ------------------------------------------------------------------------------

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[Counterfactual] = (),
    ) -> CriticReport:
        """Credit every agent of ``trajectory`` from the search's re-runs (:meth:`blame`); each
        credit cites its chosen probe's steps.

        Returns:
            A :class:`~lang_pz.critics.base.CriticReport` of this critic's ``mode``; ``shown_steps``
            are the steps some re-run replaced.

        Raises:
            LangPZError: no agent steps.
            BackendError: the explaining backend failed.
        """
        credit, chosen, tail, verdict = self.blame(trajectory, counterfactuals)
        cited = {a: own_steps(trajectory, a, chosen[a].at_steps) if a in chosen else [] for a in trajectory.agents}
        facts = {
            a: f"{chosen[a].replacement} at {_span(cited[a])}{tail[a]}" if a in chosen else tail[a]
            for a in trajectory.agents
        }
        return self.report(trajectory, policies, counterfactuals, credit, facts, cited, verdict=verdict)

    def blame(
        self, trajectory: Trajectory, counterfactuals: Sequence[Counterfactual]
    ) -> tuple[dict[str, float], dict[str, Counterfactual], dict[str, str], list[str] | None]:
        """``(credit, chosen, tail, verdict)`` per agent of ``trajectory`` (module docstring,
        "Credit" and "Verdict"): its credit in [-1, 0], its decisive probe (agents that have one),
        the end of its fact (after ``"<replacement> at <steps>"`` for an agent with a probe, the
        whole fact otherwise) and the blamed agents (``None`` without the significance rule)."""
        decisive = decisive_probes(trajectory, counterfactuals, self.share, self.min_gain)
        rank = {a: (min(own_steps(trajectory, a, decisive[a].at_steps)), -decisive[a].delta) for a in decisive}
        keys = sorted(set(rank.values()))  # agents with the same step and gain tie (no arbitrary order)
        credit = dict.fromkeys(trajectory.agents, 0.0)
        credit.update({a: -(len(keys) - keys.index(k)) / len(keys) for a, k in rank.items()})
        first = [a for a, k in rank.items() if k == keys[0]] if keys else []
        gains = {a: max((p.delta for p in counterfactuals if p.agents == (a,)), default=0.0) for a in trajectory.agents}
        named = self.verdict(trajectory, counterfactuals, gains)
        verdict = None if named is None else [a for a in named if first == [a]]
        if verdict is not None:
            credit = gate(credit, verdict)
        tail = {
            a: f" recovers: team {decisive[a].delta:+.1f}" + ("" if verdict is None or a in verdict else "; not blamed")
            if a in decisive
            else "no change of its decisions recovered the loss"
            for a in trajectory.agents
        }
        return credit, decisive, tail, verdict
