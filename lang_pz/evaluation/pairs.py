"""Multi-fault cases: two or three agents faulty in overlapping windows; does a critic put all of
them at the bottom?

A *multi-fault case* is one episode seed of a good base team (:mod:`lang_pz.evaluation.bases`)
in which ``k`` agents (2 or 3) are made faulty (:class:`~lang_pz.policies.faulty.FaultyPolicy`,
the same fault as the single-fault benchmark) during windows of ``window`` decisions that
overlap (every other agent's window starts within ``window - 1`` decisions of the first's),
kept only if every faulty agent has a faulty step and the faults together lowered the team
return by at least ``min_effect`` (:func:`~lang_pz.evaluation.cases.hurts`). The faulty group
is drawn stratified: the ``j``-th kept case targets ``order[j % C(n, k)]`` of a seeded order of
the groups.

Score, *all at the bottom*: the ``k`` faulty agents have the ``k`` lowest credits, strictly
(each below every other agent's credit; a tie across the boundary is a miss). Expected score
with ties broken uniformly at random: :func:`~lang_pz.evaluation.scoring.bottom_expected`. A blind guess scores
``1 / C(n, k)``; trivial rules (:mod:`lang_pz.evaluation.baselines`) are scored the same way,
with ties at random. With ``k`` faulty agents among ``k`` every report puts all at the bottom,
so the score needs at least ``k + 1`` agents (:func:`run_pair_benchmark` refuses fewer).

One fault can mask another (the second faulty agent's play no longer matters once the first
has lost the ball), which is why the score asks for the group, not for an order within it.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.evaluation.baselines import baselines
from lang_pz.evaluation.cases import TeamFactory, fault_truth, hurts, stratified_order
from lang_pz.evaluation.faults import _seed, prepare
from lang_pz.evaluation.scoring import Assessor, bottom_expected, bottom_strict
from lang_pz.evaluation.specs import CriticSpec, _specs, score_specs
from lang_pz.evaluation.summary import Rate, ResultsWriter, every_rule_fails
from lang_pz.policies.base import Policy
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.rollout import rollout
from lang_pz.trajectory import Trajectory, to_jsonable

#: A record's ``kind`` per number of faulty agents.
KINDS = {2: "two-fault", 3: "three-fault"}


@dataclass
class PairCase:
    """One drawn multi-fault case (see the module docstring).

    Attributes:
        seed: the episode seed.
        agents: the faulty agents.
        decisions: per faulty agent, its ``(first, last)`` replaced decisions.
        trajectory / clean: the faulty and the unfaulted episode.
        team: the team that played ``trajectory`` (every faulty policy included).
        faulty_steps: per faulty agent, its trajectory steps replaced and different.
        draws: draws played for this case, this one included.
    """

    seed: int
    agents: tuple[str, ...]
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
    group: Sequence[str],
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
    """Draw one multi-fault case of ``group`` from ``seed``: windows of the first agent in a
    seeded random order, and for each the others' overlapping windows (every combination of
    offsets, in a seeded random order); the first draw in which every agent has a faulty step
    and the team return fell enough is kept.

    Returns:
        ``(case, draws)``; ``case`` is ``None`` when no draw qualified within ``max_draws``.

    Raises:
        InvalidKwargError: ``window < 1``, fewer than two agents or an agent named twice.
    """
    from lang_pz.evaluation.bases import repertoire

    if window < 1:
        raise InvalidKwargError(f"window must be >= 1 decision, got {window}")
    group = tuple(group)
    if len(group) < 2 or len(set(group)) != len(group):
        raise InvalidKwargError(f"a multi-fault case needs two or more different agents, got {group}")
    clean = rollout(env, make_team(), seed=seed, episode=episode)
    action = repertoire(clean) if fault == "misplay" and fault_action is None else fault_action
    last = {x: max(0, len(clean.agent_steps(x)) - window) for x in group}
    first, others = group[0], group[1:]
    draws = 0
    for start in rng.permutation(last[first] + 1):
        shifts = [[d for d in range(-(window - 1), window) if 0 <= start + d <= last[x]] for x in others]
        combos = list(itertools.product(*shifts))
        for j in rng.permutation(len(combos)) if combos else []:
            if draws >= max_draws:
                return None, draws
            draws += 1
            starts = {first: int(start), **{x: int(start + d) for x, d in zip(others, combos[int(j)])}}
            team = make_team()
            faulty = {}
            for k, x in enumerate(group):
                faulty[x] = FaultyPolicy(
                    team[x],
                    fault,  # type: ignore[arg-type]
                    range(starts[x], starts[x] + window),
                    action=action,
                    seed=fault_seed + k,
                )
                team[x] = faulty[x]
            traj = rollout(env, team, seed=seed, episode=episode)
            truth = {x: fault_truth(traj, faulty[x], x)[1] for x in group}
            if all(truth.values()) and (min_effect is None or hurts(clean.team_return, traj.team_return, min_effect)):
                return PairCase(
                    seed=seed,
                    agents=group,
                    decisions={x: (starts[x], starts[x] + window - 1) for x in group},
                    trajectory=traj,
                    clean=clean,
                    team=team,
                    faulty_steps=truth,
                    draws=draws,
                ), draws
    return None, draws


def _bottom(critic: Assessor, traj: Trajectory, truth: Sequence[str], cfs: Sequence[Any] = ()) -> dict[str, Any]:
    try:
        report = critic.assess(traj, None, cfs)
    except LangPZError as exc:
        return {
            "bottom": False,
            "bottom_expected": 0.0,
            "credits": {},
            "tied": False,
            "error": f"{type(exc).__name__}: {exc}",
        }
    credits = {a: c.credit for a, c in report.credits.items()}
    k = len(truth)
    low = sorted(credits.values())[: k + 1]
    return {
        "bottom": bottom_strict(credits, truth),
        "bottom_expected": bottom_expected(credits, truth),
        "credits": credits,
        "tied": len(low) == k + 1 and low[k - 1] == low[k],
        "verdict": report.verdict,
        "error": None,
    }


@dataclass
class PairSummary:
    """A critic's "all at the bottom" on one environment's multi-fault cases.

    Attributes:
        source / critic / cases / drawn / dropped: as :class:`~lang_pz.evaluation.summary.Summary`.
        faults: faulty agents per case.
        bottom: strict "all at the bottom", with its 95 % Wilson interval.
        bottom_expected: ties broken uniformly at random.
        chance: ``1 / C(n_agents, faults)``.
        ties: cases whose ``faults``-th lowest credit was tied with the next agent's.
        failures: cases where the critic raised (misses).
        baselines: name -> :class:`Rate` of each baseline (ties at random).
        hard: the critic's strict score on the cases where no trivial rule does better than a
            blind guess (:func:`~lang_pz.evaluation.summary.every_rule_fails`), with
            ``hard_cases`` such cases.
        labels: faulty group -> cases.
        settings: the run's settings.
        reruns: mean re-runs per case (``None``: the critic made none).
    """

    source: str
    critic: str
    cases: int
    drawn: int
    dropped: int
    bottom: Rate
    bottom_expected: float
    chance: float
    ties: int
    failures: int
    faults: int = 2
    baselines: dict[str, Rate] = field(default_factory=dict)
    hard: Rate = field(default_factory=lambda: Rate.of([]))
    hard_cases: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    reruns: float | None = None


def pair_summary_dict(summary: PairSummary) -> dict[str, Any]:
    """A :class:`PairSummary` as plain JSON-able data."""
    return to_jsonable(asdict(summary))


def run_pair_benchmark(
    env_id: str,
    critics: Sequence[CriticSpec],
    *,
    cases: int = 10,
    faults: int = 2,
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
    """The multi-fault benchmark on one environment (see the module docstring); arguments as
    :func:`~lang_pz.evaluation.faults.run_fault_benchmark` (the default base team and fault of
    the family; ``max_seeds`` defaults to ``10 * cases``), ``faults`` the faulty agents per case.

    Returns:
        One :class:`PairSummary` per critic, in order.

    Raises:
        InvalidKwargError: ``faults`` not 2 or 3, at most ``faults`` agents (all at the bottom is
            then certain), or a bad argument as
            :func:`~lang_pz.evaluation.faults.run_fault_benchmark` raises.
    """
    specs = _specs(critics)
    if cases < 1:
        raise InvalidKwargError(f"cases must be >= 1, got {cases}")
    if faults not in KINDS:
        raise InvalidKwargError(f"faults must be one of {sorted(KINDS)}, got {faults}")
    setup = prepare(env_id, fault=fault, env_kwargs=env_kwargs, base=None, fault_action=None, seed=seed)
    env, agents, make_base = setup["env"], setup["agents"], setup["make_base"]
    if len(agents) <= faults:
        raise InvalidKwargError(
            f"{env_id} has {len(agents)} agents: with {faults} faulty agents among them, every report puts all "
            f"faulty agents at the bottom; {faults} faults need at least {faults + 1} agents"
        )
    max_seeds = 10 * cases if max_seeds is None else max_seeds
    order = stratified_order(list(itertools.combinations(agents, faults)), _seed(seed, 6, faults))
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

            group = order[len(records) % len(order)]
            case, draws = draw_pair_case(
                env,
                team,
                group,
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
                    progress(f"{env_id} seed {seed + i}: no {faults} faults of {group} hurt enough ({draws} draws), dropped")
                continue
            traj, truth = case.trajectory, case.agents

            def score(
                critic: Assessor, cfs: Sequence[Any], traj: Trajectory = traj, truth: Sequence[str] = truth
            ) -> dict[str, Any]:
                return _bottom(critic, traj, truth, cfs)

            scores = score_specs(
                case.team, traj, specs, env, team, window=window, seed=_seed(seed, i, 4), score=score, texts=setup["texts"]
            )
            base = {n: _bottom(r, traj, truth) for n, r in rules.items()}
            record = {
                "source": env_id,
                "kind": KINDS[faults],
                "case": len(records),
                **case.record(),
                "chance": 1.0 / math.comb(len(agents), faults),
                "critics": scores,
                "baselines": {n: {k: v for k, v in b.items() if k != "credits"} for n, b in base.items()},
            }
            writer.write(record)
            records.append(record)
            if progress:
                said = "; ".join(f"{n}: {'all' if c['bottom'] else 'not all'}" for n, c in scores.items())
                progress(f"{env_id} seed {seed + i}: faulty {list(truth)} {case.faulty_steps}; {said}")
    settings = {
        "env_kwargs": dict(env_kwargs or {}),
        "base": setup["base_name"],
        "fault": setup["fault"],
        "window": window,
        "seed": seed,
        "min_effect": min_effect,
        "stratified": "groups",
        "critics": {s.name: {"evidence": list(s.evidence)} for s in specs},
    }
    return [summarise_groups(env_id, s.name, records, tried, settings, faults) for s in specs]


def summarise_groups(
    source: str, critic: str, records: Sequence[Mapping[str, Any]], drawn: int, settings: Any, faults: int = 2
) -> PairSummary:
    """One critic's :class:`PairSummary` of multi-fault ``records`` (one kind)."""
    crit = [r["critics"][critic] for r in records]
    names = list(records[0]["baselines"]) if records else []
    hard = [r["critics"][critic]["bottom"] for r in records if every_rule_fails(r, "bottom_expected", "chance")]
    n = len(records)
    reruns = [c["reruns"] for c in crit if "reruns" in c]
    return PairSummary(
        source=source,
        critic=critic,
        cases=n,
        drawn=drawn,
        dropped=drawn - n,
        bottom=Rate.of([c["bottom"] for c in crit]),
        bottom_expected=float(np.mean([c["bottom_expected"] for c in crit])) if n else 0.0,
        chance=float(np.mean([r["chance"] for r in records])) if n else 0.0,
        ties=sum(bool(c["tied"]) for c in crit),
        failures=sum(c["error"] is not None for c in crit),
        faults=faults,
        baselines={b: Rate.of([r["baselines"][b]["bottom_expected"] for r in records]) for b in names},
        hard=Rate.of(hard),
        hard_cases=len(hard),
        labels=dict(Counter("+".join(r["truth_agents"]) for r in records).most_common()),
        settings=dict(settings),
        reruns=float(np.mean(reruns)) if reruns else None,
    )


def pair_table(summaries: Sequence[PairSummary]) -> str:
    """A Markdown table of "all at the bottom" per critic, with chance, the random critic, the
    best trivial rule, the score where every trivial rule fails and re-runs per case."""
    head = (
        "| source | faults | critic | cases (drawn/dropped) | all at the bottom [95% CI] | ties at random | chance | "
        "random critic | best trivial rule | every trivial rule fails: n, critic | ties | re-runs / case |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in summaries:
        rules = {k: v for k, v in s.baselines.items() if k != "random"}
        best = max(rules.items(), key=lambda kv: kv[1].value) if rules else None
        rnd = s.baselines.get("random")
        lines.append(
            f"| {s.source} | {s.faults} | {s.critic} | {s.cases} ({s.drawn}/{s.dropped}) | {s.bottom} | "
            f"{s.bottom_expected:.2f} | {s.chance:.2f} | {rnd if rnd else '-'} | {f'{best[0]} {best[1]}' if best else '-'} | "
            f"{s.hard_cases}, {s.hard if s.hard_cases else '-'} | {s.ties} | "
            f"{'-' if s.reruns is None else f'{s.reruns:.0f}'} |"
        )
    return "\n".join(lines)
