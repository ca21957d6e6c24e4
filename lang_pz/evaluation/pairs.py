"""Two-fault cases: two agents faulty in overlapping windows; does a critic put both at the bottom?

A *pair case* is one episode seed of a good base team (:mod:`lang_pz.evaluation.bases`) in
which two agents are made faulty (:class:`~lang_pz.policies.faulty.FaultyPolicy`, the same
fault as the single-fault benchmark) during windows of ``window`` decisions that overlap (the
second agent's window starts within ``window - 1`` decisions of the first's), kept only if
both agents have a faulty step and the two faults together lowered the team return by at least
``min_effect`` (:func:`~lang_pz.evaluation.cases.hurts`). The faulty pair is drawn stratified:
the ``k``-th kept case targets ``order[k % C(n, 2)]`` of a seeded order of the pairs.

Score, *both at the bottom*: the two faulty agents have the two lowest credits, strictly (each
below every other agent's credit; a tie across the boundary is a miss). Expected score with
ties broken uniformly at random: :func:`bottom_two_expected`. A blind guess of two agents
scores ``1 / C(n, 2)``; trivial rules (:mod:`lang_pz.evaluation.baselines`) are scored the same
way, with ties at random. With two agents every report puts "both" at the bottom, so the score
needs at least three agents (:func:`run_pair_benchmark` refuses fewer).

One fault can mask the other (the second faulty agent's play no longer matters once the first
has lost the ball), which is why the score asks for the pair, not for an order within it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.evaluation.baselines import baselines
from lang_pz.evaluation.cases import TeamFactory, fault_truth, hurts, stratified_order
from lang_pz.evaluation.faults import _seed, prepare
from lang_pz.evaluation.scoring import Assessor
from lang_pz.evaluation.specs import CriticSpec, _specs, score_specs
from lang_pz.evaluation.summary import Rate, ResultsWriter, every_rule_fails
from lang_pz.policies.base import Policy
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.rollout import rollout
from lang_pz.trajectory import Trajectory, to_jsonable


@dataclass
class PairCase:
    """One drawn two-fault case (see the module docstring).

    Attributes:
        seed: the episode seed.
        agents: the two faulty agents.
        decisions: per faulty agent, its ``(first, last)`` replaced decisions.
        trajectory / clean: the faulty and the unfaulted episode.
        team: the team that played ``trajectory`` (both faulty policies included).
        faulty_steps: per faulty agent, its trajectory steps replaced and different.
        draws: draws played for this case, this one included.
    """

    seed: int
    agents: tuple[str, str]
    decisions: dict[str, tuple[int, int]]
    trajectory: Trajectory
    clean: Trajectory
    team: dict[str, Policy]
    faulty_steps: dict[str, list[int]]
    draws: int

    def record(self) -> dict[str, Any]:
        """The case's facts for a benchmark record."""
        return {
            "seed": self.seed,
            "truth_agents": list(self.agents),
            "decisions": {a: list(d) for a, d in self.decisions.items()},
            "faulty_steps": self.faulty_steps,
            "team_return": self.trajectory.team_return,
            "clean_team_return": self.clean.team_return,
            "effect": round(self.clean.team_return - self.trajectory.team_return, 4),
            "draws": self.draws,
            "n_agents": len(self.trajectory.agents),
        }


def draw_pair_case(
    env: Any,
    make_team: TeamFactory,
    pair: tuple[str, str],
    *,
    seed: int,
    rng: np.random.Generator,
    fault: str,
    fault_action: Any = None,
    window: int = 2,
    min_effect: float | None = 0.02,
    max_draws: int = 200,
    fault_seed: int = 0,
    episode: int = 0,
) -> tuple[PairCase | None, int]:
    """Draw one two-fault case of ``pair`` from ``seed``: windows of the first agent in a
    seeded random order, and for each an overlapping window of the second; the first draw in
    which both agents have a faulty step and the team return fell enough is kept.

    Returns:
        ``(case, draws)``; ``case`` is ``None`` when no draw qualified within ``max_draws``.

    Raises:
        InvalidKwargError: ``window < 1`` or the two agents are the same.
    """
    from lang_pz.evaluation.bases import repertoire

    if window < 1:
        raise InvalidKwargError(f"window must be >= 1 decision, got {window}")
    a, b = pair
    if a == b:
        raise InvalidKwargError(f"a pair case needs two different agents, got {pair}")
    clean = rollout(env, make_team(), seed=seed, episode=episode)
    action = repertoire(clean) if fault == "misplay" and fault_action is None else fault_action
    n_a, n_b = (len(clean.agent_steps(x)) for x in pair)
    draws = 0
    for start_a in rng.permutation(max(1, n_a - window + 1)):
        offsets = [d for d in range(-(window - 1), window) if 0 <= start_a + d <= max(0, n_b - window)]
        for d in rng.permutation(offsets) if offsets else []:
            if draws >= max_draws:
                return None, draws
            draws += 1
            starts = {a: int(start_a), b: int(start_a + d)}
            team = make_team()
            faulty = {}
            for k, x in enumerate(pair):
                faulty[x] = FaultyPolicy(
                    team[x],
                    fault,  # type: ignore[arg-type]
                    range(starts[x], starts[x] + window),
                    action=action,
                    seed=fault_seed + k,
                )
                team[x] = faulty[x]
            traj = rollout(env, team, seed=seed, episode=episode)
            truth = {x: fault_truth(traj, faulty[x], x)[1] for x in pair}
            if all(truth.values()) and (min_effect is None or hurts(clean.team_return, traj.team_return, min_effect)):
                return PairCase(
                    seed=seed,
                    agents=(a, b),
                    decisions={x: (starts[x], starts[x] + window - 1) for x in pair},
                    trajectory=traj,
                    clean=clean,
                    team=team,
                    faulty_steps=truth,
                    draws=draws,
                ), draws
    return None, draws


def bottom_two_strict(credits: Mapping[str, float], truth: Sequence[str]) -> bool:
    """Whether the two ``truth`` agents hold the two lowest credits, each strictly below every
    other agent's credit."""
    others = [c for a, c in credits.items() if a not in truth]
    return all(a in credits for a in truth) and (not others or max(credits[a] for a in truth) < min(others))


def bottom_two_expected(credits: Mapping[str, float], truth: Sequence[str]) -> float:
    """The chance that the two lowest credits, ties broken uniformly at random, are ``truth``.

    With ``v`` the second-lowest credit, ``S`` the agents below ``v`` and ``E`` those at ``v``,
    the bottom two are ``S`` and ``2 - |S|`` agents of ``E`` drawn uniformly: the chance is
    ``1 / C(|E|, 2 - |S|)`` when ``S`` is in ``truth`` and the rest of ``truth`` is in ``E``,
    else 0.
    """
    if len(credits) < 2 or not all(a in credits for a in truth):
        return 0.0
    v = sorted(credits.values())[1]
    below = {a for a, c in credits.items() if c < v}
    at = {a for a, c in credits.items() if c == v}
    t = set(truth)
    if not below <= t or not (t - below) <= at:
        return 0.0
    return 1.0 / math.comb(len(at), 2 - len(below))


def _bottom_two(critic: Assessor, traj: Trajectory, truth: Sequence[str], cfs: Sequence[Any] = ()) -> dict[str, Any]:
    try:
        report = critic.assess(traj, None, cfs)
    except LangPZError as exc:
        return {"both": False, "both_expected": 0.0, "credits": {}, "tied": False, "error": f"{type(exc).__name__}: {exc}"}
    credits = {a: c.credit for a, c in report.credits.items()}
    low = sorted(credits.values())[:3]
    return {
        "both": bottom_two_strict(credits, truth),
        "both_expected": bottom_two_expected(credits, truth),
        "credits": credits,
        "tied": len(low) == 3 and low[1] == low[2],
        "error": None,
    }


@dataclass
class PairSummary:
    """A critic's "both at the bottom" on one environment's two-fault cases.

    Attributes:
        source / critic / cases / drawn / dropped: as :class:`~lang_pz.evaluation.summary.Summary`.
        both: strict "both at the bottom", with its 95 % Wilson interval.
        both_expected: ties broken uniformly at random.
        chance: ``1 / C(n_agents, 2)``.
        ties: cases whose second-lowest credit was tied with a third agent's.
        failures: cases where the critic raised (misses).
        baselines: name -> :class:`Rate` of each baseline (ties at random).
        hard: the critic's strict score on the cases where no trivial rule does better than a
            blind guess (:func:`~lang_pz.evaluation.summary.every_rule_fails`), with
            ``hard_cases`` such cases.
        labels: faulty pair -> cases.
        settings: the run's settings.
    """

    source: str
    critic: str
    cases: int
    drawn: int
    dropped: int
    both: Rate
    both_expected: float
    chance: float
    ties: int
    failures: int
    baselines: dict[str, Rate] = field(default_factory=dict)
    hard: Rate = field(default_factory=lambda: Rate.of([]))
    hard_cases: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)


def pair_summary_dict(summary: PairSummary) -> dict[str, Any]:
    """A :class:`PairSummary` as plain JSON-able data."""
    return to_jsonable(asdict(summary))


def run_pair_benchmark(
    env_id: str,
    critics: Sequence[CriticSpec],
    *,
    cases: int = 10,
    seed: int = 0,
    fault: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    window: int = 2,
    min_effect: float | None = 0.02,
    max_seeds: int | None = None,
    max_draws: int = 200,
    out: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[PairSummary]:
    """The two-fault benchmark on one environment (see the module docstring); arguments as
    :func:`~lang_pz.evaluation.faults.run_fault_benchmark` (the default base team and fault of
    the family; ``max_seeds`` defaults to ``10 * cases``).

    Returns:
        One :class:`PairSummary` per critic, in order.

    Raises:
        InvalidKwargError: fewer than three agents (both at the bottom is then certain), or a
            bad argument as :func:`~lang_pz.evaluation.faults.run_fault_benchmark` raises.
    """
    specs = _specs(critics)
    if cases < 1:
        raise InvalidKwargError(f"cases must be >= 1, got {cases}")
    setup = prepare(env_id, fault=fault, env_kwargs=env_kwargs, base=None, fault_action=None, seed=seed)
    env, agents, make_base = setup["env"], setup["agents"], setup["make_base"]
    if len(agents) < 3:
        raise InvalidKwargError(
            f"{env_id} has {len(agents)} agents: with two faulty agents among two, every report puts both at "
            "the bottom; the two-fault benchmark needs at least 3 agents"
        )
    max_seeds = 10 * cases if max_seeds is None else max_seeds
    order = stratified_order(list(combinations(agents, 2)), _seed(seed, 6))
    rules = baselines(_seed(seed, 3))
    records: list[dict[str, Any]] = []
    tried = 0
    with ResultsWriter(out) as writer:
        for i in range(max_seeds):
            if len(records) >= cases:
                break
            tried += 1

            def team(i: int = i) -> dict[str, Policy]:
                return {a: make_base(env, a, _seed(seed, i, 1, j)) for j, a in enumerate(agents)}

            pair = order[len(records) % len(order)]
            case, draws = draw_pair_case(
                env,
                team,
                pair,
                seed=seed + i,
                rng=np.random.default_rng(_seed(seed, i, 0)),
                fault=setup["fault"],
                fault_action=setup["fault_action"],
                window=window,
                min_effect=min_effect,
                max_draws=max_draws,
                fault_seed=_seed(seed, i, 2),
                episode=i,
            )
            if case is None:
                if progress:
                    progress(f"{env_id} seed {seed + i}: no two faults of {pair} hurt enough ({draws} draws), dropped")
                continue
            traj, truth = case.trajectory, case.agents

            def both(
                critic: Assessor, cfs: Sequence[Any], traj: Trajectory = traj, truth: Sequence[str] = truth
            ) -> dict[str, Any]:
                return _bottom_two(critic, traj, truth, cfs)

            scores = score_specs(
                case.team,
                traj,
                specs,
                env,
                team,
                window=window,
                seed=_seed(seed, i, 4),
                score=both,
            )
            base = {n: _bottom_two(r, traj, truth) for n, r in rules.items()}
            record = {
                "source": env_id,
                "kind": "two-fault",
                "case": len(records),
                **case.record(),
                "chance": 1.0 / math.comb(len(agents), 2),
                "critics": scores,
                "baselines": {n: {k: v for k, v in b.items() if k != "credits"} for n, b in base.items()},
            }
            writer.write(record)
            records.append(record)
            if progress:
                said = "; ".join(f"{n}: {'both' if c['both'] else 'not both'}" for n, c in scores.items())
                progress(f"{env_id} seed {seed + i}: faulty {list(truth)} {case.faulty_steps}; {said}")
    settings = {
        "env_kwargs": dict(env_kwargs or {}),
        "base": setup["base_name"],
        "fault": setup["fault"],
        "window": window,
        "seed": seed,
        "min_effect": min_effect,
        "stratified": "pairs",
        "critics": {s.name: {"evidence": list(s.evidence)} for s in specs},
    }
    return [_summarise(env_id, s.name, records, tried, settings) for s in specs]


def _summarise(source: str, critic: str, records: Sequence[Mapping[str, Any]], drawn: int, settings: Any) -> PairSummary:
    crit = [r["critics"][critic] for r in records]
    names = list(records[0]["baselines"]) if records else []
    hard = [r["critics"][critic]["both"] for r in records if every_rule_fails(r, "both_expected", "chance")]
    n = len(records)
    return PairSummary(
        source=source,
        critic=critic,
        cases=n,
        drawn=drawn,
        dropped=drawn - n,
        both=Rate.of([c["both"] for c in crit]),
        both_expected=float(np.mean([c["both_expected"] for c in crit])) if n else 0.0,
        chance=float(np.mean([r["chance"] for r in records])) if n else 0.0,
        ties=sum(bool(c["tied"]) for c in crit),
        failures=sum(c["error"] is not None for c in crit),
        baselines={b: Rate.of([r["baselines"][b]["both_expected"] for r in records]) for b in names},
        hard=Rate.of(hard),
        hard_cases=len(hard),
        labels=dict(Counter("+".join(r["truth_agents"]) for r in records).most_common()),
        settings=dict(settings),
    )


def pair_table(summaries: Sequence[PairSummary]) -> str:
    """A Markdown table of "both at the bottom" per critic, with chance, the random critic,
    the best trivial rule and the score where every trivial rule fails."""
    head = (
        "| source | critic | cases (drawn/dropped) | both at the bottom [95% CI] | ties at random | chance | "
        "random critic | best trivial rule | every trivial rule fails: n, critic | ties | failed |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in summaries:
        rules = {k: v for k, v in s.baselines.items() if k != "random"}
        best = max(rules.items(), key=lambda kv: kv[1].value) if rules else None
        rnd = s.baselines.get("random")
        lines.append(
            f"| {s.source} | {s.critic} | {s.cases} ({s.drawn}/{s.dropped}) | {s.both} | {s.both_expected:.2f} | "
            f"{s.chance:.2f} | {rnd if rnd else '-'} | {f'{best[0]} {best[1]}' if best else '-'} | "
            f"{s.hard_cases}, {s.hard if s.hard_cases else '-'} | {s.ties} | {s.failures} |"
        )
    return "\n".join(lines)
