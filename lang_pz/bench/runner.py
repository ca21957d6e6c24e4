"""Run teams x envs x seeds, one JSON line per finished episode, resumable.

``OUT/episodes.jsonl`` gets one record per episode as soon as it ends (flushed): env label, team
name and spec, seed, objective value, team return, per-agent returns, steps, the share of the
team's decisions whose reply did not parse (``parse_failures``: the env played its fallback
action there; :func:`parse_failures`), LLM usage and seconds. Running the same bench again skips every (env, team, seed) already there, so a killed
bench resumes where it stopped; a team name found there with another spec (or an env label with
another objective) is refused, since the old episodes would be mixed with new ones.

An episode that fails (the LLM fails it for good: one of :data:`lang_pz.error.EPISODE_ERRORS`
before its end, e.g. an endpoint that went down) is not scored: it gets a line in ``OUT/failures.jsonl`` instead (env,
team, spec, objective, seed, ``error``, seconds and the LLM usage it spent) and the bench goes on.
It is not in ``episodes.jsonl``, so running the bench again plays it again; the summary counts,
per team, the seeds that failed and never succeeded (:func:`read_failures`).
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lang_pz.bench.teams import BenchTeam, build_team
from lang_pz.error import EPISODE_ERRORS, InvalidKwargError, LangPZError, error_text

EPISODES_FILE = "episodes.jsonl"
FAILURES_FILE = "failures.jsonl"


@dataclass(frozen=True)
class EnvCase:
    """One env of a bench and the teams that play it.

    Attributes:
        env_id: a registered id.
        teams: the teams (:func:`lang_pz.bench.parse_team`).
        seeds: episode seeds, the same for every team (paired comparisons).
        kwargs: ``lang_pz.make`` keyword arguments.
        objective: an objective spec (:mod:`lang_pz.objectives`); ``None``: the env's default.
        label: the env's name in tables; default ``env_id`` plus its kwargs.
        api: ``"parallel"`` / ``"aec"``; ``None``: the env's default.
    """

    env_id: str
    teams: Sequence[BenchTeam]
    seeds: Sequence[int]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    objective: str | None = None
    label: str | None = None
    api: str | None = None

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        kw = ",".join(f"{k}={v}" for k, v in sorted(self.kwargs.items()) if k != "data_dir")
        return f"{self.env_id}({kw})" if kw else self.env_id

    def __post_init__(self) -> None:
        bad = [t for t in self.teams if not isinstance(t, BenchTeam)]
        if bad:
            raise InvalidKwargError(
                f"EnvCase teams must be BenchTeam objects (lang_pz.bench.parse_team('random')), got {bad[0]!r}"
            )
        names = [t.name for t in self.teams]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InvalidKwargError(
                f"{self.env_id}: team name(s) {twice} used twice; their episodes would be pooled "
                "into one row: give each team its own name"
            )
        seeds = list(self.seeds)
        if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
            raise InvalidKwargError(f"{self.env_id}: seeds must be a non-empty list of ints, got {self.seeds!r}")
        negative = [s for s in seeds if s < 0]
        repeated = sorted({s for s in seeds if seeds.count(s) > 1})
        if negative or repeated:
            problem = (
                f"{negative} are negative" if negative else f"repeat {repeated} (a repeat only counts an episode twice)"
            )
            raise InvalidKwargError(f"{self.env_id}: seeds {problem}; give distinct seeds >= 0")

    def objective_spec(self) -> str:
        from lang_pz.objectives import default_objective

        return self.objective or default_objective(self.env_id)


def read_episodes(out_dir: Path) -> list[dict[str, Any]]:
    """Every record of ``OUT/episodes.jsonl`` (none if absent); a torn last line is ignored."""
    path = Path(out_dir) / EPISODES_FILE
    if not path.exists():
        return []
    records = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if i == len(lines) - 1:  # killed mid-write: that episode is redone
                break
            raise LangPZError(f"{path} line {i + 1} is not JSON ({exc}); fix or delete that line") from exc
    return records


def read_failures(out_dir: Path) -> list[dict[str, Any]]:
    """Every record of ``OUT/failures.jsonl``: the episodes that failed, one line per attempt
    (none if absent; a damaged line is skipped)."""
    from lang_pz.runs import read_jsonl

    return read_jsonl(Path(out_dir) / FAILURES_FILE)


def _check_consistent(records: Sequence[dict[str, Any]], case: EnvCase) -> None:
    for r in records:
        if r["env"] != case.name:
            continue
        if r["objective"] != case.objective_spec():
            raise InvalidKwargError(
                f"{case.name} has episodes with objective {r['objective']!r} in this folder, "
                f"not {case.objective_spec()!r}; use another --out folder"
            )
        for t in case.teams:
            if r["team"] == t.name and r["spec"] != t.spec:
                raise InvalidKwargError(
                    f"team {t.name!r} on {case.name} was run as {r['spec']!r} in this folder, "
                    f"not {t.spec!r}; rename the team or use another --out folder"
                )


def run_bench(
    cases: Sequence[EnvCase],
    out_dir: str | Path,
    *,
    backend: str | Any = "embedded",
    price_per_mtok: tuple[float, float] = (0.0, 0.0),
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    on_failure: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Play every (case, team, seed) not yet in ``out_dir`` and return all records of these cases.

    Args:
        cases: the envs, with their teams and seeds.
        out_dir: the results folder (created; ``episodes.jsonl`` is appended to).
        backend: a :func:`lang_pz.backends.make_backend` spec or a backend, built on first use
            (only teams with LLM seats need it).
        price_per_mtok: US dollars per million prompt / completion tokens (uncached calls).
        on_episode: called with each new record (e.g. to print progress).
        on_failure: called with the record of each episode that failed (see the module
            docstring), after it is appended to ``failures.jsonl``.

    Returns:
        The records of the episodes of ``cases`` in ``episodes.jsonl`` (failed ones are not).

    Raises:
        InvalidKwargError: a team or objective that disagrees with earlier episodes in ``out_dir``,
            a team naming an agent its env does not have (:func:`check_team_agents`, before
            anything is played), or a seat that does not fit its env (a ``constant:WORD`` the env does not read:
            :func:`check_constant_seats`, before anything is played).
    """
    import lang_pz
    from lang_pz.backends import make_backend
    from lang_pz.backends.meter import RoleMeter
    from lang_pz.objectives import make_objective
    from lang_pz.rollout import rollout
    from lang_pz.runs import append_jsonl

    check_team_agents(cases)
    check_constant_seats(cases)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records = read_episodes(out)
    done = {(r["env"], r["team"], int(r["seed"])) for r in records}
    others = sorted({r["env"] for r in records} - {c.name for c in cases})
    if others:  # a folder reused for another bench: its summary would hide them, the viewer not
        warnings.warn(
            f"{out} also holds episodes of {others}, which this bench does not run: summary.md covers "
            "this bench's cases only, episodes.jsonl and the viewer show them all; use another --out "
            "folder to keep benches apart",
            stacklevel=2,
        )
    shared: dict[str, Any] = {}

    def inner_backend() -> Any:
        if "llm" not in shared:
            shared["llm"] = make_backend(backend) if isinstance(backend, str) else backend
        return shared["llm"]

    for case in cases:
        _check_consistent(records, case)
        todo = [(t, s) for t in case.teams for s in case.seeds if (case.name, t.name, int(s)) not in done]
        if not todo:
            continue
        env = lang_pz.make(case.env_id, api=case.api, **dict(case.kwargs))  # type: ignore[arg-type]
        objective = make_objective(case.objective_spec(), env.possible_agents, case.env_id)
        try:
            for team in case.teams:
                seeds = [s for t, s in todo if t is team]
                if not seeds:
                    continue
                meter: dict[str, RoleMeter] = {}

                def llm(team: BenchTeam = team, meter: dict[str, RoleMeter] = meter) -> RoleMeter:
                    if "m" not in meter:
                        meter["m"] = RoleMeter(inner_backend(), f"bench:{team.name}", price_per_mtok)
                    return meter["m"]

                policies = build_team(team, env, case.env_id, llm)
                for seed in seeds:
                    before = meter["m"].report() if "m" in meter else None
                    t0 = time.perf_counter()
                    ident = {
                        "env": case.name,
                        "env_id": case.env_id,
                        "team": team.name,
                        "spec": team.spec,
                        "objective": objective.spec,
                        "seed": int(seed),
                    }
                    try:
                        traj = rollout(env, policies, seed=int(seed))
                    except EPISODE_ERRORS as exc:  # not scored; a re-run of the bench plays it again
                        failure = {
                            **ident,
                            "error": error_text(exc),
                            "seconds": round(time.perf_counter() - t0, 3),
                            **_usage(meter.get("m"), before),
                        }
                        append_jsonl(out / FAILURES_FILE, failure)
                        if on_failure is not None:
                            on_failure(failure)
                        continue
                    seconds = time.perf_counter() - t0
                    usage = _usage(meter.get("m"), before)
                    record = {
                        **ident,
                        "value": objective(traj),
                        "team_return": traj.team_return,
                        "returns": dict(traj.returns),
                        "steps": len(traj.states) or len(traj.steps),
                        **parse_failures(traj),
                        "seconds": round(seconds, 3),
                        **usage,
                    }
                    append_jsonl(out / EPISODES_FILE, record)
                    records.append(record)
                    if on_episode is not None:
                        on_episode(record)
        finally:
            close = getattr(env, "close", None)
            if callable(close):
                close()
    names = {c.name for c in cases}
    return [r for r in records if r["env"] in names]


def parse_failures(traj: Any) -> dict[str, Any]:
    """How many of an episode's decisions did not parse, i.e. where the env played its fallback
    action (:attr:`~lang_pz.trajectory.AgentStep.parse_error` set): a team that never parses can
    still score, e.g. on Connect Four the fallback (the first free column) beats a random opponent.

    Args:
        traj: a :class:`lang_pz.trajectory.Trajectory`.

    Returns:
        ``decisions`` (agent steps), ``parse_failed`` (those with a parse error),
        ``parse_failures`` (their share, 0..1; 0.0 for an episode without decisions) and
        ``parse_failures_by_agent`` (agent -> share, for the agents that decided).
    """
    steps = list(traj.steps)
    failed = [s for s in steps if s.parse_error is not None]
    by_agent: dict[str, list[bool]] = {}
    for s in steps:
        by_agent.setdefault(s.agent, []).append(s.parse_error is not None)
    return {
        "decisions": len(steps),
        "parse_failed": len(failed),
        "parse_failures": round(len(failed) / len(steps), 4) if steps else 0.0,
        "parse_failures_by_agent": {a: round(sum(f) / len(f), 4) for a, f in by_agent.items()},
    }


def _usage(meter: Any, before: Mapping[str, float] | None) -> dict[str, Any]:
    if meter is None:
        return {"llm_calls": 0, "cached_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    now = meter.report()
    b = before or {}
    return {
        "llm_calls": int(now["calls"] - b.get("calls", 0)),
        "cached_calls": int(now["cached_calls"] - b.get("cached_calls", 0)),
        "prompt_tokens": int(now["prompt_tokens"] - b.get("prompt_tokens", 0)),
        "completion_tokens": int(now["completion_tokens"] - b.get("completion_tokens", 0)),
        "cost_usd": round(float(now["cost_usd"] - b.get("cost_usd", 0.0)), 6),
    }


def check_team_agents(cases: Sequence[EnvCase]) -> None:
    """Refuse, before any episode is played, a team that names an agent its env does not have
    (``pistn_0=llm;*=heuristic``: the misspelt seat would be left to ``*``). Only envs whose
    teams name agents are made (once each).

    Raises:
        InvalidKwargError: names the team, the unknown agent(s), the env and the env's agents.
    """
    import lang_pz

    for case in cases:
        named = [t for t in case.teams if set(t.seats) - {"*"}]
        if not named:
            continue
        env = lang_pz.make(case.env_id, api=case.api, **dict(case.kwargs))  # type: ignore[arg-type]
        try:
            agents = list(env.possible_agents)
        finally:
            close = getattr(env, "close", None)
            if callable(close):
                close()
        for team in named:
            unknown = sorted(set(team.seats) - {"*", *agents})
            if unknown:
                raise InvalidKwargError(
                    f"team {team.name!r} names {unknown}, not agents of {case.name} (agents: {', '.join(agents)}); "
                    "nothing was played"
                )


def check_constant_seats(cases: Sequence[EnvCase]) -> None:
    """Refuse a ``constant:WORD`` seat whose WORD the env does not read as an action (it would play
    its fallback at every step): WORD must be one of the agent's legal action words at the first
    seed's first observation, or parse when the env is stepped with it there. (An AEC agent that
    does not act first is checked against its legal words only if it has some: a word that
    names a legal action in another form, e.g. Tic-tac-toe's 'top-left', is then let through.)

    Raises:
        InvalidKwargError: names the team, the seat, the agent and the env's legal action words.
    """
    import lang_pz

    for case in cases:
        if not any(seat.startswith("constant:") for t in case.teams for seat in t.seats.values()):
            continue
        env = lang_pz.make(case.env_id, api=case.api, **dict(case.kwargs))  # type: ignore[arg-type]
        try:
            for team in case.teams:
                reset = env.reset(seed=int(case.seeds[0]))
                aec = reset is None  # AEC's reset returns nothing; its infos are an attribute
                infos = dict(env.infos) if aec else reset[1]
                words = {a: team.seats.get(a, team.seats.get("*", "")) for a in env.possible_agents}
                words = {a: w[len("constant:") :] for a, w in words.items() if w.startswith("constant:")}
                legal = {a: [str(x) for x in infos.get(a, {}).get("legal_actions") or []] for a in words}
                unknown = {
                    a: w for a, w in words.items() if legal[a] and w.strip().lower() not in {x.lower() for x in legal[a]}
                }
                if not unknown:
                    continue
                if aec:
                    first = env.agent_selection
                    tried = {first: unknown[first]} if first in unknown else {}
                    if tried:
                        env.step(tried[first])
                    after = {first: env.infos.get(first, {})}
                else:
                    tried = unknown
                    after = env.step(
                        {a: unknown.get(a) or (infos.get(a, {}).get("legal_actions") or [""])[0] for a in env.agents}
                    )[4]
                for agent, word in tried.items():
                    if after.get(agent, {}).get("parse_error"):
                        raise InvalidKwargError(
                            f"team {team.name!r}: seat 'constant:{word}' of {agent}: {word!r} is not an action "
                            f"word of {case.env_id} (legal: {', '.join(legal[agent])}); e.g. "
                            f"constant:{legal[agent][0]}"
                        )
        finally:
            close = getattr(env, "close", None)
            if callable(close):
                close()
