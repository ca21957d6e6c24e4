"""The fault-injection benchmark: does a critic name the agent that was made faulty, and when?

For one environment, each case (:mod:`lang_pz.evaluation.cases`) plays a good base team
(:mod:`lang_pz.evaluation.bases`) with one agent made faulty during a window of decisions,
kept only if the fault lowered the team return by at least ``min_effect`` of the unfaulted
return (2 % by default); the report says how many seeds were drawn and how many dropped. Every
critic under test reads the same faulty trajectories; a counterfactual critic also gets its
re-runs (``CriticSpec.evidence``, built by :func:`lang_pz.critics.windows.window_probes`;
the critics under test and their scoring per case: :mod:`lang_pz.evaluation.specs`).
Scores (:mod:`lang_pz.evaluation.scoring`) are set next to analytic chance, a seeded random
critic, trivial rules (:mod:`lang_pz.evaluation.baselines`), the label distribution and an
action-histogram leakage test, so a reader sees what a score is worth.

Measured facts that shape the defaults:

- Pistonball's heuristic never plays ``stay``, so the old default ``idle`` fault (``stay``) was
  found by the rule "blame whoever played stay" in 20 of 20 cases with no credit assignment;
  the default ``misplay`` fault plays the team's own action words
  (:data:`~lang_pz.evaluation.bases.DEFAULT_FAULTS`), and the histogram rules score at chance
  on it. It is not invisible to every action statistic: its short run of another action adds
  two action changes, and "blame the agent that changes action most" finds it in 67-75 % of
  Pistonball cases (20 cases, hold 1). The ``lag`` fault (a late change of action) has no such
  footprint, but only agents that change action can lag, and the pistons whose lag hurts are
  the busy middle ones: the same rule still scores 51 %, and only 19 of 100 seeds had a lag
  that hurt. The benchmark therefore reports every such rule and an
  :func:`~lang_pz.evaluation.baselines.action_leakage` test next to each critic.
- With ``n_pistons=5, hold=5`` the heuristic wins in 2-4 decisions, so a 2-decision window
  covers most of the episode; ``hold=1`` gives 6-14 decisions (``max_cycles`` bounds the
  faulty episodes, in which the ball may stick, and so the cost of re-runs).
- Overcooked (``cramped_room``, skills) is deterministic: every case replays the same clean
  episode, only the faulty agent and window vary; with ``horizon=40`` the greedy team delivers
  one soup (tick 37) and a fault that delays it costs the whole return.
- Math tasks (one reply per role): agent and step chance are both 1/2.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lang_pz.error import InvalidKwargError
from lang_pz.evaluation.baselines import action_leakage, baselines
from lang_pz.evaluation.bases import (
    BASE_TEXTS,
    BaseFactory,
    base_factory,
    base_texts,
    default_base,
    default_fault,
    default_harmful_action,
)
from lang_pz.evaluation.cases import FaultCase, Keep, draw_case, stratified_order
from lang_pz.evaluation.scoring import (
    Assessor,
    assess_and_score,
    blame_text,
    chance_step_hit,
)
from lang_pz.evaluation.specs import CaseContext, CriticSpec, _specs, score_specs
from lang_pz.evaluation.summary import ResultsWriter, Summary, summarise
from lang_pz.policies.base import Policy, action_range, legal_actions
from lang_pz.policies.faulty import FAULTS

__all__ = ["CaseContext", "CriticSpec", "prepare", "run_fault_benchmark", "score_specs"]


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def _reset_infos(env: Any, seed: int) -> dict[str, Mapping[str, Any]]:
    from pettingzoo import ParallelEnv

    if isinstance(env, ParallelEnv):
        _, infos = env.reset(seed=seed)
    else:  # AEC
        env.reset(seed=seed)
        infos = env.infos
    return {a: dict(infos.get(a, {})) for a in env.possible_agents}


def prepare(
    env_id: str,
    *,
    fault: str | None,
    env_kwargs: Mapping[str, Any] | None,
    base: str | BaseFactory | None,
    fault_action: str | Mapping[str, str] | Sequence[str] | None,
    seed: int = 0,
) -> dict[str, Any]:
    """The environment, its agents, the base team's factory and the fault's action of a fault
    benchmark (shared by the single- and the two-fault benchmark).

    Returns:
        ``{"env", "agents", "make_base", "base_name", "fault", "fault_action", "texts"}`` (``texts``:
        the base team's instruction texts, ``None`` for a custom base team).

    Raises:
        InvalidKwargError: as :func:`run_fault_benchmark`.
    """
    import lang_pz

    fault = fault or default_fault(env_id)
    if fault not in FAULTS:
        raise InvalidKwargError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
    if base is None or isinstance(base, str):
        base_name = base or default_base(env_id)
        make_base = base_factory(base_name, env_id)
    else:
        base_name, make_base = "custom", base
    env = lang_pz.make(env_id, **dict(env_kwargs or {}))
    if not hasattr(env, "possible_agents"):
        raise InvalidKwargError(f"{env_id} is a single-agent Gymnasium env; the fault benchmark needs PettingZoo agents")
    if fault == "harmful" and fault_action is None:
        fault_action = default_harmful_action(env_id, env)
        if fault_action is None:
            raise InvalidKwargError(
                f"no harmful action is known for {env_id}; give fault_action= (CLI: --fault-action WORD)"
            )
    agents = list(env.possible_agents)
    infos = _reset_infos(env, seed)
    free_text = [a for a in agents if legal_actions(infos[a]) is None and action_range(infos[a]) is None]
    if free_text and (fault in ("random", "misplay") or base_name == "random"):
        what = f"the {fault!r} fault" if fault in ("random", "misplay") else "the 'random' base team"
        raise InvalidKwargError(
            f"{what} needs a finite action set (info['legal_actions']), which {env_id} does not give for "
            f"{free_text} (free-text actions); use fault 'harmful' (a fixed wrong text) or 'idle', and base "
            f"{default_base(env_id)!r}"
        )
    return {
        "env": env,
        "agents": agents,
        "make_base": make_base,
        "base_name": base_name,
        "fault": fault,
        "fault_action": fault_action,
        "texts": base_texts(base_name, agents) if base_name in BASE_TEXTS else None,
    }


def run_fault_benchmark(
    env_id: str,
    critics: Assessor | Sequence[CriticSpec],
    *,
    cases: int = 20,
    seed: int = 0,
    fault: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    base: str | BaseFactory | None = None,
    fault_action: str | Mapping[str, str] | Sequence[str] | None = None,
    window: int = 2,
    tolerance: int = 0,
    min_effect: float | None = 0.02,
    max_seeds: int | None = None,
    max_draws: int = 200,
    stratify: bool = True,
    keep: Keep | None = None,
    label: str | None = None,
    out: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Summary]:
    """Run the fault-injection benchmark on one environment (see the module docstring).

    Args:
        env_id: a registered PettingZoo (multi-agent) environment id.
        critics: the critic under test, or several :class:`CriticSpec` (all read the same cases).
        cases: kept cases wanted (>= 1).
        seed: master seed; the ``i``-th seed tried is ``seed + i``; agent order, windows and
            policy seeds come from ``SeedSequence([seed, i, ...])``.
        fault: ``"misplay"``, ``"harmful"``, ``"idle"`` or ``"random"`` (default per family:
            :func:`~lang_pz.evaluation.bases.default_fault`).
        env_kwargs: keyword arguments of :func:`lang_pz.make`.
        base: a name of :data:`~lang_pz.evaluation.bases.BASES` or a factory
            ``(env, agent, seed) -> Policy`` (default per family).
        fault_action: the fault's action (see :class:`~lang_pz.policies.faulty.FaultyPolicy`):
            ``"harmful"`` defaults to :func:`~lang_pz.evaluation.bases.default_harmful_action`,
            ``"misplay"`` to the base team's repertoire in the unfaulted episode.
        window: consecutive decisions replaced per case (>= 1).
        tolerance: steps of slack around the faulty window for a step hit (>= 0).
        min_effect: the least drop of the team return for a case to count, as a fraction of
            the unfaulted return's magnitude (``0``: any drop; ``None``: keep faults that
            changed nothing or helped, which test no credit assignment).
        max_seeds: seeds tried at most (default ``5 * cases``).
        max_draws: (agent, window) draws played at most per seed.
        stratify: draw the faulty agent stratified: the ``k``-th kept case's faulty agent is
            ``order[k % n_agents]`` of a seeded order of the agents
            (:func:`~lang_pz.evaluation.cases.stratified_order`), so each agent is the faulty one
            equally often (a seed where that agent's fault cannot hurt is dropped); ``False``:
            the first agent, in a seeded random order, whose fault hurts (labels follow which
            agents can hurt, and can be degenerate).
        keep: a further condition on a drawn case (e.g.
            :func:`~lang_pz.evaluation.cases.late_effect`); ``None``: none.
        label: the cases' ``source`` in records and summaries (default ``env_id``), e.g. a
            family of cases drawn with ``keep``.
        out: JSONL file the per-case records are appended to, one flushed line per case.
        progress: called with a one-line message per seed.

    Returns:
        One :class:`~lang_pz.evaluation.summary.Summary` per critic, in order.

    Raises:
        InvalidKwargError: a bad argument; a single-agent environment; ``"harmful"`` with no
            action known for the id; ``"random"``/``"misplay"`` or the random base team in a
            free-text environment.
        LangPZError: from the environment, the policies or the re-runs.
    """
    specs = _specs(critics)
    if cases < 1:
        raise InvalidKwargError(f"cases must be >= 1, got {cases}")
    if tolerance < 0:
        raise InvalidKwargError(f"tolerance must be >= 0 steps, got {tolerance}")
    max_seeds = 5 * cases if max_seeds is None else max_seeds
    if max_seeds < cases:
        raise InvalidKwargError(f"max_seeds ({max_seeds}) must be >= cases ({cases})")
    setup = prepare(env_id, fault=fault, env_kwargs=env_kwargs, base=base, fault_action=fault_action, seed=seed)
    env, agents, make_base, base_name = setup["env"], setup["agents"], setup["make_base"], setup["base_name"]
    fault, fault_action = setup["fault"], setup["fault_action"]
    settings = {
        "env_kwargs": dict(env_kwargs or {}),
        "base": base_name,
        "fault": fault,
        "window": window,
        "tolerance": tolerance,
        "seed": seed,
        "fault_action": fault_action,
        "min_effect": min_effect,
        "stratified": stratify,
        "critics": {s.name: {"evidence": list(s.evidence), "evidence_window": s.evidence_window or window} for s in specs},
    }
    rules = baselines(_seed(seed, 3))
    records: list[dict[str, Any]] = []
    kept: list[FaultCase] = []
    tried = draws_played = 0
    order = stratified_order(agents, _seed(seed, 5))
    with ResultsWriter(out) as writer:
        for i in range(max_seeds):
            if len(kept) >= cases:
                break
            tried += 1
            ep_seed = seed + i

            def team(i: int = i) -> dict[str, Policy]:
                return {a: make_base(env, a, _seed(seed, i, 1, j)) for j, a in enumerate(agents)}

            case, draws = draw_case(
                env,
                team,
                seed=ep_seed,
                rng=np.random.default_rng(_seed(seed, i, 0)),
                fault=fault,  # type: ignore[arg-type]
                fault_action=fault_action,
                window=window,
                min_effect=min_effect,
                max_draws=max_draws,
                fault_seed=_seed(seed, i, 2),
                episode=i,
                agents=[order[len(kept) % len(order)]] if stratify else None,
                keep=keep,
            )
            draws_played += draws
            if case is None:
                if progress:
                    progress(
                        f"{env_id} seed {ep_seed}: no {fault} fault of {window} decision(s) lowered the team "
                        f"return enough ({draws} draws), dropped"
                    )
                continue
            kept.append(case)
            record = _score(
                case,
                specs,
                rules,
                env,
                team,
                window=window,
                tolerance=tolerance,
                seed=_seed(seed, i, 4),
                texts=setup["texts"],
            )
            record = {"source": label or env_id, "case": len(kept) - 1, "base": base_name, "fault": fault, **record}
            writer.write(record)
            records.append(record)
            if progress:
                said = "; ".join(f"{n}: {blame_text(c)}" for n, c in record["critics"].items())
                progress(
                    f"{env_id} seed {ep_seed}: faulty {case.agent} at steps {case.faulty_steps} "
                    f"(team return {case.clean.team_return:.1f} -> {case.trajectory.team_return:.1f}); {said}"
                )
    settings["draws_played"] = draws_played
    leak = action_leakage([(c.trajectory, c.agent) for c in kept])
    return [
        summarise(
            label or env_id,
            s.name,
            [{**r, "critic": r["critics"][s.name]} for r in records],
            drawn=tried,
            leakage=leak,
            settings=settings,
        )
        for s in specs
    ]


def _score(
    case: FaultCase,
    specs: Sequence[CriticSpec],
    rules: Mapping[str, Any],
    env: Any,
    team: Callable[[], dict[str, Policy]],
    *,
    window: int,
    tolerance: int,
    seed: int,
    texts: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One case's record: the case's facts, chance, every critic's and baseline's score."""
    traj, truth = case.trajectory, case.faulty_steps
    all_steps = sorted({s.step for s in traj.steps})
    scores = score_specs(
        case.team,
        traj,
        specs,
        env,
        team,
        window=window,
        seed=seed,
        truth=(case.agent, truth),
        tolerance=tolerance,
        texts=texts,
    )
    return {
        **case.record(),
        "chance_agent": 1.0 / len(traj.agents),
        "chance_step": chance_step_hit(all_steps, truth, tolerance),
        "critics": scores,
        "baselines": {
            n: _brief(assess_and_score(r, traj, case.agent, truth, tolerance=tolerance)) for n, r in rules.items()
        },
    }


def _brief(score: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in score.items() if k not in ("explanations", "usage", "credits")}
