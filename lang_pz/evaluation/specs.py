"""The critics under test of a fault benchmark and their scores on one case.

A :class:`CriticSpec` names a critic and the evidence it is given; a per-case critic is built
from a :class:`CaseContext`. :func:`score_specs` scores every spec on one case, computing each
evidence set's re-runs once; the single-fault (:mod:`lang_pz.evaluation.faults`) and two-fault
(:mod:`lang_pz.evaluation.pairs`) benchmarks share it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lang_pz.critics.counterfactual import Counterfactual, null_probe
from lang_pz.critics.decisive import SearchingCritic
from lang_pz.critics.search import Search, local_runner, memo_runner
from lang_pz.critics.windows import window_probes
from lang_pz.error import InvalidKwargError
from lang_pz.evaluation.scoring import Assessor, assess_and_score
from lang_pz.policies.base import Policy

__all__ = ["CaseContext", "CriticSpec", "score_specs"]


@dataclass(frozen=True)
class CaseContext:
    """What a per-case critic (``CriticSpec.build``) may use to re-run the case itself.

    Attributes:
        env: the language environment (reset by each re-run).
        team: the team that played ``trajectory`` (faulty agent(s) included); a re-run resets
            its policies.
        trajectory: the faulty episode.
        seed: a seed for the critic's own draws (the episode seed is ``trajectory.seed``).
        window: the fault window (decisions).
        reference: ``() -> {agent: Policy}``, a fresh base team (a fault benchmark knows it;
            training does not: a critic that claims to need no reference must not call it).
        texts: agent -> its policy text, what it was told to play (the base team's
            :data:`~lang_pz.evaluation.bases.BASE_TEXTS`; training has the current texts), or
            ``None`` (a custom base team).
    """

    env: Any
    team: dict[str, Policy]
    trajectory: Any
    seed: int
    window: int
    reference: Callable[[], dict[str, Policy]]
    texts: dict[str, str] | None = None


@dataclass(frozen=True)
class CriticSpec:
    """A critic under test and the evidence it is given.

    Attributes:
        name: its name in reports (e.g. ``"central_credit"``, ``"counterfactual"``).
        critic: the assessor (``None`` when ``build`` gives one per case).
        evidence: replacements of :func:`~lang_pz.critics.windows.window_probes` computed
            per case and passed as ``counterfactuals`` (empty: none). ``"reference"`` uses the
            base team as the reference policies.
        evidence_window: decisions per probe window (default: the fault ``window``).
        build: ``CaseContext -> Assessor``, a critic built per case (one that runs its own
            re-runs, e.g. a search by replay); used instead of ``critic``.
    """

    name: str
    critic: Assessor | None = None
    evidence: tuple[str, ...] = ()
    evidence_window: int | None = None
    build: Callable[[CaseContext], Assessor] | None = None

    def __post_init__(self) -> None:
        if (self.critic is None) == (self.build is None):
            raise InvalidKwargError(f"critic {self.name!r}: give exactly one of critic= and build=")

    def assessor(self, context: CaseContext) -> Assessor:
        """The critic for one case: ``build(context)`` or the shared ``critic``."""
        if self.build is not None:
            return self.build(context)
        assert self.critic is not None
        return self.critic


def _specs(critics: Assessor | Sequence[CriticSpec]) -> list[CriticSpec]:
    if isinstance(critics, Sequence):
        specs = list(critics)
    else:
        specs = [CriticSpec(str(getattr(critics, "mode", type(critics).__name__)), critics)]
    if not specs:
        raise InvalidKwargError("no critic to evaluate")
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise InvalidKwargError(f"critic names must differ, got {names}")
    return specs


def score_specs(
    faulty_team: dict[str, Policy],
    traj: Any,
    specs: Sequence[CriticSpec],
    env: Any,
    team: Callable[[], dict[str, Policy]],
    *,
    window: int,
    seed: int,
    truth: tuple[str, Sequence[int]] | None = None,
    tolerance: int = 0,
    score: Callable[[Assessor, Sequence[Counterfactual]], dict[str, Any]] | None = None,
    texts: dict[str, str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Every critic's score on one case: each evidence set's re-runs are computed once
    (:func:`~lang_pz.critics.windows.window_probes`, plus one re-run that changes nothing, the
    noise of :mod:`lang_pz.critics.significance`) and shared, and so is each search of critics
    with the same ``search_key()`` (e.g. one critic with and one without the significance
    verdict); a per-case critic is built from a :class:`CaseContext` (``texts``: the agents'
    policy texts, given to searches as ``policies``). ``score(critic, counterfactuals)`` scores
    one critic (default: :func:`~lang_pz.evaluation.scoring.assess_and_score` against ``truth``)."""
    probes: dict[tuple[tuple[str, ...], int], tuple[list[Counterfactual], float]] = {}
    searches: dict[Any, tuple[Search, float]] = {}
    memo: dict[Any, Any] = {}
    context = CaseContext(env=env, team=faulty_team, trajectory=traj, seed=seed, window=window, reference=team, texts=texts)
    scores: dict[str, dict[str, Any]] = {}
    for spec in specs:
        cfs: list[Counterfactual] = []
        extra: dict[str, Any] = {}
        critic = spec.assessor(context)
        if isinstance(critic, SearchingCritic):  # the critic picks its own re-runs
            key = critic.search_key() if hasattr(critic, "search_key") else id(critic)
            if key not in searches:
                t0 = time.perf_counter()
                runner = memo_runner(local_runner(env, faulty_team, traj, seed=seed), memo)
                played = critic.search(traj, runner, policies=texts)
                searches[key] = (played, time.perf_counter() - t0)
            search, secs = searches[key]
            cfs = search.probes
            extra = {"reruns": search.reruns, "calls": search.calls, "rerun_s": round(secs, 2)}
        elif spec.evidence:
            ev = (tuple(spec.evidence), spec.evidence_window or window)
            if ev not in probes:
                t0 = time.perf_counter()
                found = window_probes(
                    env,
                    faulty_team,
                    traj,
                    replacements=ev[0],
                    window=ev[1],
                    reference=team() if "reference" in ev[0] else None,
                    seed=seed,
                )
                found.append(null_probe().rerun(env, faulty_team, traj, seed=seed))
                probes[ev] = (found, time.perf_counter() - t0)
            cfs, secs = probes[ev]
            extra = {"reruns": len(cfs), "rerun_s": round(secs, 2)}
        t0 = time.perf_counter()
        if score is not None:
            result = score(critic, cfs)
        else:
            assert truth is not None
            result = assess_and_score(critic, traj, truth[0], truth[1], counterfactuals=cfs, tolerance=tolerance)
        scores[spec.name] = {**result, **extra, "critic_s": round(time.perf_counter() - t0, 2)}
    return scores
