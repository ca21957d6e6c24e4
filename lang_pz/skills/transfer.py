"""Transfer: a skill library, unchanged, evaluated on another environment or dataset.

:func:`evaluate_library` plays the same seeds twice with the same team: every LLM agent a
:class:`~lang_pz.skills.policy.SkillPolicy` on the library, then on an empty library (the same
agent with no skills, which acts from its base instruction alone); fixed partners are the same
in both. It reports both means with 95 % bootstrap intervals and the paired difference (the
seeds are the same, so the difference per seed is the measure), how often skills were invoked,
and the library's scopes that name no agent of the new env (their skills are never offered):
e.g. a GSM8K library's ``solver`` / ``verifier`` scopes fit MATH-500's roles, a
cramped_room library's team skills fit asymmetric_advantages. ``lang-pz skills eval`` prints it.

The interval is :func:`lang_pz.bench.stats.bootstrap_interval` (scipy's BCa bootstrap).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lang_pz.backends.base import LLMBackend
from lang_pz.error import InvalidKwargError
from lang_pz.objectives import default_objective, make_objective
from lang_pz.policies.base import Policy
from lang_pz.skills.library import Scoping, SkillLibrary
from lang_pz.skills.policy import SkillPolicy, usage_counts
from lang_pz.trajectory import Trajectory


@dataclass(frozen=True)
class TransferResult:
    """Both teams on the same seeds.

    Attributes:
        env_id, env_kwargs, seeds, objective: what was played and measured.
        with_skills / without_skills: the objective per seed.
        invoked: ``scope/name`` -> decisions that invoked it.
        decisions: decisions of skilled agents that were offered at least one skill.
        unmatched_scopes: library scopes no agent of the env sees.
    """

    env_id: str
    env_kwargs: dict[str, Any]
    seeds: list[int]
    objective: str
    with_skills: list[float]
    without_skills: list[float]
    invoked: dict[str, int] = field(default_factory=dict)
    decisions: int = 0
    unmatched_scopes: list[str] = field(default_factory=list)

    @property
    def differences(self) -> list[float]:
        """Per seed: with skills minus without."""
        return [a - b for a, b in zip(self.with_skills, self.without_skills)]

    def rows(self) -> list[tuple[str, float, float, float]]:
        """``(label, mean, ci_low, ci_high)`` for with skills, without, and the paired difference."""
        from lang_pz.bench.stats import bootstrap_interval

        out = []
        for label, xs in (
            ("with the library", self.with_skills),
            ("no skills", self.without_skills),
            ("difference (paired)", self.differences),
        ):
            lo, hi = bootstrap_interval(xs)
            out.append((label, sum(xs) / len(xs), lo, hi))
        return out

    def render(self) -> str:
        """A short text table (means with 95 % bootstrap intervals) and the invocation counts."""
        lines = [
            f"{self.env_id} {self.env_kwargs or ''}".rstrip() + f", {len(self.seeds)} seed(s), objective {self.objective}",
            f"{'team':<22} {'mean':>9}  95 % interval",
        ]
        for label, mean, lo, hi in self.rows():
            ci = "-" if lo != lo else f"[{lo:.3g}, {hi:.3g}]"  # NaN: one seed
            lines.append(f"{label:<22} {mean:>9.3g}  {ci}")
        used = sum(self.invoked.values())
        lines.append(
            f"skills invoked in {used} of {self.decisions} decision(s) that offered one"
            + (": " + ", ".join(f"{k} x{n}" for k, n in sorted(self.invoked.items())) if used else "")
        )
        if self.unmatched_scopes:
            lines.append(f"scopes no agent of this env sees (never offered): {', '.join(self.unmatched_scopes)}")
        return "\n".join(lines)


def _play(env: Any, teams: Any, seeds: Sequence[int]) -> list[Trajectory]:
    from lang_pz.training.steps import collect

    return collect(env, teams, list(seeds), list(range(len(seeds))), desc="episodes")


def evaluate_library(
    library: SkillLibrary,
    env_id: str,
    seeds: Sequence[int],
    backend: LLMBackend,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    policy: str | Mapping[str, str] = "Choose the action that helps your team most.",
    objective: str | None = None,
    scoping: Scoping | None = None,
    partners: Mapping[str, str] | None = None,
) -> TransferResult:
    """Play ``seeds`` with the library and with no skills (module docstring).

    Args:
        library: the library, unchanged.
        env_id / env_kwargs: the environment to evaluate on.
        seeds: episode seeds (the same for both teams).
        backend: the agents' LLM backend.
        policy: every LLM agent's base instruction, or agent -> instruction.
        objective: what is compared (default: the env's, :func:`lang_pz.objectives.default_objective`).
        scoping: which scopes each agent sees (default: its own, itself as role, the team).
        partners: agent -> fixed classical policy (``random``, ``heuristic``, ``greedy``).

    Raises:
        InvalidKwargError: no seeds, or ``partners`` / ``policy`` name agents the env lacks;
            and what :func:`lang_pz.make` and :func:`~lang_pz.objectives.make_objective` raise.
    """
    import lang_pz
    from lang_pz.training.team import make_partner

    if not seeds:
        raise InvalidKwargError("evaluate_library needs at least one seed")
    kwargs = dict(env_kwargs or {})
    env = lang_pz.make(env_id, **kwargs)
    agents = list(env.possible_agents)
    partners = dict(partners or {})
    named = set(partners) | (set(policy) if isinstance(policy, Mapping) else set())
    if named - set(agents):
        raise InvalidKwargError(f"{sorted(named - set(agents))} are not agents of {env_id}; its agents are {agents}")
    spec = objective or default_objective(env_id)
    obj = make_objective(spec, agents, env_id)
    scoping = scoping or Scoping()
    llm_agents = [a for a in agents if a not in partners]
    texts = dict.fromkeys(llm_agents, policy) if isinstance(policy, str) else {a: policy[a] for a in llm_agents}

    def team(lib: SkillLibrary):  # env -> a fresh team for that environment instance
        def build(e: Any) -> dict[str, Policy]:
            fixed = {a: make_partner(k, e, a, i) for i, (a, k) in enumerate(sorted(partners.items()))}
            return {**{a: SkillPolicy(texts[a], backend, lib, agent=a, scoping=scoping) for a in llm_agents}, **fixed}

        return build

    try:
        skilled = _play(env, team(library), seeds)
        plain = _play(env, team(SkillLibrary()), seeds)
    finally:
        env.close()
    invoked, _ = usage_counts(skilled)
    decisions = sum(1 for t in skilled for s in t.steps if ((s.meta or {}).get("skills") or {}).get("offered"))
    return TransferResult(
        env_id,
        kwargs,
        list(seeds),
        spec,
        [obj(t) for t in skilled],
        [obj(t) for t in plain],
        {f"{sc}/{n}": c for (sc, n), c in invoked.items()},
        decisions,
        scoping.unseen(library, agents),
    )
