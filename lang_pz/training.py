"""The language-MARL training loop: rollout -> centralised critic -> per-agent gradient -> update.

Implements the loop of LangMARL (centralised training with decentralised execution): agents
act from their own observations with text policies; a centralised language critic reads
whole trajectories and assigns each agent a credit; the optimiser turns each agent's credits
into an edit direction (a language gradient) and rewrites that agent's policy.

Every artefact is written to the run folder as it is made::

    RUN_DIR/config.json                      the configuration (no secrets)
    RUN_DIR/metrics.jsonl                    one line per iteration
    RUN_DIR/iter_NNN/policies/AGENT.txt      the policies the iteration's episodes used
    RUN_DIR/iter_NNN/trajectories.jsonl      every step of every episode
    RUN_DIR/iter_NNN/credits.jsonl           the critic's report per episode
    RUN_DIR/iter_NNN/critic_errors.jsonl     replies that failed validation after retries
    RUN_DIR/iter_NNN/updates.jsonl           per agent: gradient, old and new policy
    RUN_DIR/iter_NNN/optimiser_errors.jsonl  gradient/rewrite replies that failed validation
    RUN_DIR/final/policies/AGENT.txt         the policies after the last update
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import lang_pz
from lang_pz.backends import LLMBackend, make_backend
from lang_pz.critics import CentralCritic, CriticReport
from lang_pz.error import InvalidKwargError, LangPZError, RunDirError
from lang_pz.optimisers import TextualPolicyOptimiser
from lang_pz.policies.llm import LLMPolicy
from lang_pz.rollout import rollout
from lang_pz.trajectory import Trajectory, TrajectoryWriter


class TrainConfig(BaseModel):
    """Configuration of a training run (also the schema of ``--config`` YAML/JSON files)."""

    model_config = ConfigDict(extra="forbid")

    env_id: str = Field("butterfly/pistonball-v0", description="registered environment id")
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="keyword arguments for lang_pz.make")
    iterations: int = Field(2, ge=1, description="training iterations")
    episodes_per_iteration: int = Field(1, ge=1, description="training episodes per iteration")
    seed: int = Field(0, description="seed of the first episode; episode k uses seed + k")
    initial_policy: str = Field("Choose the action that helps your team most.", min_length=1,
                                description="every agent's starting policy")
    actor_backend: str = Field("embedded", description="backend spec of the agents' LLM")
    critic_backend: str | None = Field(None, description="backend spec of the critic (default: actor's)")
    optimiser_backend: str | None = Field(None, description="backend spec of the optimiser (default: actor's)")
    max_policy_chars: int = Field(300, ge=20, description="longest policy text an update may write")
    run_dir: str | None = Field(None, description="run folder (default: runs/<time>)")


@dataclass
class IterationMetrics:
    """What one iteration measured."""

    iteration: int
    mean_team_return: float
    returns: list[float]
    parse_error_rate: float
    critic_failures: int
    updated_agents: list[str]
    llm_calls: int
    cached_calls: int
    seconds: float


@dataclass
class TrainResult:
    """A finished run: where it is, what it measured, the policies before and after."""

    run_dir: Path
    metrics: list[IterationMetrics] = field(default_factory=list)
    initial_policies: dict[str, str] = field(default_factory=dict)
    final_policies: dict[str, str] = field(default_factory=dict)


def _write_policies(folder: Path, policies: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for agent, text in policies.items():
        (folder / f"{agent}.txt").write_text(text + "\n", encoding="utf-8")


def _append_jsonl(path: Path, record: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")


def _backends(config: TrainConfig) -> tuple[LLMBackend, LLMBackend, LLMBackend]:
    made: dict[str, LLMBackend] = {}

    def get(spec: str | None) -> LLMBackend:
        spec = spec or config.actor_backend
        if spec not in made:  # one model instance per distinct spec
            made[spec] = make_backend(spec)
        return made[spec]

    return get(config.actor_backend), get(config.critic_backend), get(config.optimiser_backend)


def train(config: TrainConfig, *, progress: Callable[[str], None] | None = None) -> TrainResult:
    """Run ``config.iterations`` iterations of rollout -> critic -> gradient -> update.

    Args:
        config: the run configuration.
        progress: called with a short status line at each stage (default: silent); the
            episodes show a tqdm bar on stderr.

    Returns:
        The :class:`TrainResult`; everything is also in ``result.run_dir``.

    Raises:
        lang_pz.error.UnknownEnvironmentError / InvalidKwargError: bad env id or kwargs.
        lang_pz.error.BackendError: a backend cannot be built or reached.
        lang_pz.error.RunDirError: ``run_dir`` already holds a run.
    """
    from tqdm import tqdm

    say = progress or (lambda _msg: None)
    run_dir = Path(config.run_dir or f"runs/{time.strftime('%Y%m%d-%H%M%S')}")
    if run_dir.exists() and any(run_dir.iterdir()):
        raise RunDirError(f"run folder {run_dir} already holds a run; choose another --run-dir or delete it")
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(config.model_dump_json(indent=2), encoding="utf-8")

    env = lang_pz.make(config.env_id, **config.env_kwargs)
    if not hasattr(env, "possible_agents"):
        raise InvalidKwargError(f"{config.env_id} is a single-agent Gymnasium env; training needs a "
                                "PettingZoo env (see `lang-pz envs` for the [parallel/aec] ones)")
    actor, critic_backend, optimiser_backend = _backends(config)
    critic = CentralCritic(critic_backend)
    optimiser = TextualPolicyOptimiser(optimiser_backend, max_policy_chars=config.max_policy_chars)
    policies = {a: config.initial_policy for a in env.possible_agents}
    result = TrainResult(run_dir=run_dir, initial_policies=dict(policies))
    backends = {id(b): b for b in (actor, critic_backend, optimiser_backend)}

    for it in range(config.iterations):
        t0 = time.perf_counter()
        calls0 = sum(b.usage.calls for b in backends.values())
        cached0 = sum(b.usage.cached_calls for b in backends.values())
        it_dir = run_dir / f"iter_{it:03d}"
        _write_policies(it_dir / "policies", policies)
        actors = {a: LLMPolicy(policies[a], actor) for a in env.possible_agents}

        trajectories: list[Trajectory] = []
        say(f"iteration {it}: rollouts")
        with TrajectoryWriter(it_dir / "trajectories.jsonl") as writer:
            for k in tqdm(range(config.episodes_per_iteration), desc=f"iter {it} episodes", leave=False):
                episode = it * config.episodes_per_iteration + k
                trajectories.append(rollout(env, actors, seed=config.seed + episode, episode=episode, writer=writer))

        say(f"iteration {it}: critic")
        reports: list[CriticReport] = []
        failures = 0
        for traj in trajectories:
            try:
                report = critic.assess(traj, policies)
            except LangPZError as exc:  # reported, never replaced by a default credit
                failures += 1
                _append_jsonl(it_dir / "critic_errors.jsonl", {"episode": traj.episode, "error": str(exc)})
                continue
            reports.append(report)
            _append_jsonl(it_dir / "credits.jsonl", {"episode": traj.episode, **report.model_dump(mode="json")})

        say(f"iteration {it}: optimiser")
        updated: list[str] = []
        for agent in env.possible_agents:
            credits = [r.credits[agent] for r in reports if agent in r.credits]
            if not credits:
                continue
            try:
                upd = optimiser.apply(agent, policies[agent], optimiser.gradient(agent, policies[agent], credits))
            except LangPZError as exc:  # reported; the agent keeps its policy
                _append_jsonl(it_dir / "optimiser_errors.jsonl", {"agent": agent, "error": str(exc)})
                continue
            _append_jsonl(it_dir / "updates.jsonl", upd.model_dump(mode="json"))
            if upd.new != policies[agent]:
                updated.append(agent)
            policies[agent] = upd.new

        steps = [s for t in trajectories for s in t.steps]
        m = IterationMetrics(
            iteration=it,
            mean_team_return=sum(t.team_return for t in trajectories) / len(trajectories),
            returns=[round(t.team_return, 2) for t in trajectories],
            parse_error_rate=sum(s.parse_error is not None for s in steps) / max(1, len(steps)),
            critic_failures=failures,
            updated_agents=updated,
            llm_calls=sum(b.usage.calls for b in backends.values()) - calls0,
            cached_calls=sum(b.usage.cached_calls for b in backends.values()) - cached0,
            seconds=round(time.perf_counter() - t0, 2),
        )
        result.metrics.append(m)
        _append_jsonl(run_dir / "metrics.jsonl", m.__dict__)
        say(f"iteration {it}: mean team return {m.mean_team_return:.1f}, updated {len(updated)} agent(s)")

    _write_policies(run_dir / "final" / "policies", policies)
    result.final_policies = dict(policies)
    env.close()
    return result
