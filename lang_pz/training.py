"""The language-MARL training loop (LangMARL; validated updates and momentum from MASkills).

One iteration::

    rollout (decentralised: each agent acts from its own observation and text policy)
      -> counterfactual re-runs (optional: evidence the system computes)
      -> centralised critic (credit per agent, one shared critique, or independent critics)
      -> per agent: a language gradient per episode -> aggregate with momentum -> candidate
      -> validation on held-out seeds: accept a candidate unless the team's validation
         return falls by more than ``tolerance``; otherwise keep the policy (logged with both
         scores). ``per_agent`` acceptance validates each agent's candidate in turn (largest
         counterfactual gain first) on top of those already accepted; ``joint`` validates
         them all at once (the default for ``central_global``: one team update)

Every artefact is written to the run folder as it is made (layout: :mod:`lang_pz.runs`), and a
killed run continues with :func:`train` ``(resume=RUN_DIR)`` / ``lang-pz train --resume``.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

import lang_pz
from lang_pz import runs
from lang_pz.backends import LLMBackend, make_backend
from lang_pz.backends.meter import RoleMeter
from lang_pz.critics import CentralCritic, CriticReport
from lang_pz.critics.counterfactual import counterfactuals
from lang_pz.error import InvalidKwargError, LangPZError, RunDirError
from lang_pz.optimisers import Momentum, TextualPolicyOptimiser
from lang_pz.policies.base import Policy
from lang_pz.policies.llm import LLMPolicy
from lang_pz.rollout import rollout
from lang_pz.trajectory import Trajectory, TrajectoryWriter, read_trajectories

ROLES = ("actor", "critic", "optimiser")


class TrainConfig(BaseModel):
    """Configuration of a training run (also the schema of ``--config`` YAML/JSON files)."""

    model_config = ConfigDict(extra="forbid")

    env_id: str = Field("butterfly/pistonball-v0", description="registered environment id")
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="keyword arguments for lang_pz.make")
    iterations: int = Field(2, ge=1, description="training iterations")
    episodes_per_iteration: int = Field(1, ge=1, description="training episodes per iteration")
    seed: int = Field(0, ge=0, description="seed of the first training episode; episode k uses seed + k")
    validation_seeds: list[int] = Field(
        default_factory=lambda: [1000, 1001],
        description="held-out episode seeds that gate each update ([] accepts every update unchecked)",
    )
    tolerance: float = Field(
        0.0, description="accept a candidate unless validation return falls by more (negative: require a gain)")
    acceptance: Literal["joint", "per_agent"] | None = Field(
        None, description="validate all candidates at once (joint) or each agent's in turn (per_agent); "
        "default: joint for central_global (one team update), per_agent otherwise")
    critic_mode: Literal["central_credit", "central_global", "independent"] = Field(
        "central_credit", description="central_credit, central_global or independent")
    counterfactual: list[str] = Field(
        default_factory=list,
        description="re-run replacements shown to the critic, e.g. [alternatives] or [random, default]")
    counterfactual_steps: list[int] | None = Field(
        None, description="replace only these decisions in counterfactual re-runs (default: every decision)")
    evidence_gate: bool = Field(
        True, description="with counterfactual: update only agents for which some re-run beat what they played")
    initial_policy: str = Field("Choose the action that helps your team most.", min_length=1,
                                description="every agent's starting policy")
    initial_policies: dict[str, str] = Field(default_factory=dict, description="per-agent starting policies")
    trainable_agents: list[str] | None = Field(None, description="agents the optimiser updates (default: all LLM agents)")
    partners: dict[str, Literal["random", "heuristic", "greedy"]] = Field(
        default_factory=dict,
        description="agent -> fixed classical policy (random; heuristic: Pistonball; greedy: Overcooked)")
    actor_backend: str = Field("embedded", description="backend spec of the agents' LLM")
    critic_backend: str | None = Field(None, description="backend spec of the critic (default: actor's)")
    optimiser_backend: str | None = Field(None, description="backend spec of the optimiser (default: actor's)")
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="backend spec -> [input, output] USD per million tokens")
    max_policy_chars: int = Field(300, ge=20, description="longest policy text an update may write")
    max_rewrite: float = Field(0.75, gt=0, le=1, description="largest share of a policy one update may rewrite")
    momentum: float = Field(0.5, ge=0, lt=1, description="decay of earlier iterations' directions (0: none)")
    max_llm_calls: int | None = Field(None, ge=1, description="budget: no new iteration once this many calls were made")
    run_dir: str | None = Field(None, description="run folder (default: runs/<time>)")

    @model_validator(mode="after")
    def _disjoint_seeds(self) -> TrainConfig:
        train = set(range(self.seed, self.seed + self.iterations * self.episodes_per_iteration))
        clash = sorted(train & set(self.validation_seeds))
        if clash:
            raise ValueError(
                f"validation_seeds {clash} are also training seeds (seed {self.seed} + 0..."
                f"{self.iterations * self.episodes_per_iteration - 1}); validation must be held out: "
                "choose other validation_seeds"
            )
        return self


@dataclass
class IterationMetrics:
    """What one iteration measured (one line of ``metrics.jsonl``)."""

    iteration: int
    train_return: float
    train_returns: list[float]
    val_return: float | None
    candidate_val_return: float | None
    accepted: bool | None
    changed_agents: list[str]
    accepted_agents: list[str]
    parse_error_rate: float
    critic_failures: int
    optimiser_failures: int
    llm_calls: int
    cached_calls: int
    usage: dict[str, dict[str, float]]
    seconds: float


@dataclass
class TrainResult:
    """A finished run: where it is, what it measured, the policies before and after."""

    run_dir: Path
    metrics: list[IterationMetrics] = field(default_factory=list)
    initial_policies: dict[str, str] = field(default_factory=dict)
    final_policies: dict[str, str] = field(default_factory=dict)
    stopped: str = ""


def evaluate(env: Any, policies: Mapping[str, Policy], seeds: Sequence[int], writer: TrajectoryWriter | None = None,
             episode0: int = 0) -> list[float]:
    """Team return of one episode per seed (the validation and held-out test measure)."""
    return [rollout(env, policies, seed=s, episode=episode0 + i, writer=writer).team_return for i, s in enumerate(seeds)]


class _Trainer:
    """The state of one run between iterations (what ``done.json`` stores)."""

    def __init__(self, config: TrainConfig, run_dir: Path, say: Callable[[str], None]) -> None:
        self.config, self.run_dir, self.say = config, run_dir, say
        self.env = lang_pz.make(config.env_id, **config.env_kwargs)
        if not hasattr(self.env, "possible_agents"):
            raise InvalidKwargError(f"{config.env_id} is a single-agent Gymnasium env; training needs a "
                                    "PettingZoo env (see `lang-pz envs` for the [parallel/aec] ones)")
        agents = list(self.env.possible_agents)
        named = set(config.initial_policies) | set(config.trainable_agents or []) | set(config.partners)
        unknown = sorted(named - set(agents))
        if unknown:
            raise InvalidKwargError(f"initial_policies/trainable_agents/partners name {unknown}, which are not "
                                    f"agents of {config.env_id}; its agents are {agents}")
        both = sorted(set(config.trainable_agents or []) & set(config.partners))
        if both:
            raise InvalidKwargError(f"{both} are both trainable and fixed partners; a partner's policy is not text")
        self.partners = {a: _partner(kind, self.env, a, config.seed + i)
                         for i, (a, kind) in enumerate(sorted(config.partners.items()))}
        llm_agents = [a for a in agents if a not in self.partners]
        if not llm_agents:
            raise InvalidKwargError("every agent is a fixed partner: there is no text policy to train")
        self.trainable = list(config.trainable_agents or llm_agents)
        made: dict[str, LLMBackend] = {}
        self.meters: dict[str, RoleMeter] = {}
        for role, spec in zip(ROLES, (config.actor_backend, config.critic_backend, config.optimiser_backend)):
            spec = spec or config.actor_backend
            if spec not in made:  # one model instance per distinct spec
                made[spec] = make_backend(spec)
            self.meters[role] = RoleMeter(made[spec], role, tuple(config.prices.get(spec, (0.0, 0.0))))
        self.critic = CentralCritic(self.meters["critic"], mode=config.critic_mode)
        self.optimiser = TextualPolicyOptimiser(self.meters["optimiser"], max_policy_chars=config.max_policy_chars,
                                                max_rewrite=config.max_rewrite)
        self.policies = {a: config.initial_policies.get(a, config.initial_policy) for a in llm_agents}
        self.momentum = Momentum(beta=config.momentum, min_weight=0.2) if config.momentum > 0 else None
        self.acceptance = config.acceptance or ("joint" if config.critic_mode == "central_global" else "per_agent")
        self.val_return: float | None = None
        self.val_episodes = 0  # validation episodes of the current iteration
        self.calls_before = 0  # LLM calls of completed iterations (resumed runs count earlier ones)

    def actors(self, policies: Mapping[str, str]) -> dict[str, Policy]:
        return {**{a: LLMPolicy(p, self.meters["actor"]) for a, p in policies.items()}, **self.partners}

    def restore(self, done: dict[str, Any]) -> None:
        self.policies = dict(done["policies"])
        self.val_return = done["val_return_next"]
        self.calls_before = done["calls_total"]
        if self.momentum is not None and done.get("momentum"):
            self.momentum = Momentum.from_json(done["momentum"])

    def validate(self, policies: Mapping[str, str], path: Path, label: str) -> float | None:
        seeds = self.config.validation_seeds
        if not seeds:
            return None
        from tqdm import tqdm

        rets = []
        with TrajectoryWriter(path.parent / "validation_trajectories.jsonl") as w:
            for s in tqdm(seeds, desc=f"validation ({label})", leave=False):
                episode = self.val_episodes  # numbered on through the iteration's validation file
                self.val_episodes += 1
                r = rollout(self.env, self.actors(policies), seed=s, episode=episode, writer=w).team_return
                runs.append_jsonl(path, {"episode": episode, "policies": label, "seed": s, "team_return": round(r, 3)})
                rets.append(r)
        return sum(rets) / len(rets)

    def iteration(self, it: int) -> IterationMetrics:
        from tqdm import tqdm

        cfg, t0 = self.config, time.perf_counter()
        snaps = {r: m.snapshot() for r, m in self.meters.items()}
        d = runs.iter_dir(self.run_dir, it)
        for name in ("acceptance.jsonl", "gated.jsonl", "counterfactuals.jsonl", "credits.jsonl", "critic_errors.jsonl", "gradients.jsonl",
                     "optimiser_errors.jsonl", "validation.jsonl", "validation_trajectories.jsonl"):
            (d / name).unlink(missing_ok=True)  # a resumed iteration redoes these stages
        shutil.rmtree(d / "candidates", ignore_errors=True)
        self.val_episodes = 0
        runs.write_policies(d / "policies", self.policies)
        if self.val_return is None:
            self.val_return = self.validate(self.policies, d / "validation.jsonl", "current")

        # 1. training episodes (finished ones of an interrupted attempt are kept)
        path = d / "trajectories.jsonl"
        kept = read_trajectories(path, finished_only=True) if path.exists() else []
        if kept:  # their records verbatim and in their order; the unfinished episode's are dropped
            runs.atomic_write(path, _records_of(path, {t.episode for t in kept}))
            self.say(f"iteration {it}: kept {len(kept)} finished episode(s) of the interrupted attempt")
        else:
            path.unlink(missing_ok=True)
        trajectories: list[Trajectory] = list(kept)
        actors = self.actors(self.policies)
        with TrajectoryWriter(path) as writer:
            for k in tqdm(range(len(kept), cfg.episodes_per_iteration), desc=f"iter {it} episodes", leave=False):
                ep = it * cfg.episodes_per_iteration + k
                trajectories.append(rollout(self.env, actors, seed=cfg.seed + ep, episode=ep, writer=writer))

        # 2. counterfactual re-runs and the critic
        reports: list[CriticReport] = []
        critic_failures = 0
        groups = [self.trainable] if cfg.critic_mode == "central_global" else [[a] for a in self.trainable]
        for traj in tqdm(trajectories, desc=f"iter {it} critic", leave=False):
            probes = []
            if cfg.counterfactual:
                probes = counterfactuals(self.env, actors, traj, groups, cfg.counterfactual, seed=cfg.seed + it,
                                         steps=cfg.counterfactual_steps)
                for p in probes:
                    runs.append_jsonl(d / "counterfactuals.jsonl", {"episode": traj.episode, **p.as_dict()})
            try:
                report = self.critic.assess(traj, self.policies, probes)
            except LangPZError as exc:  # reported, never replaced by a default credit
                critic_failures += 1
                runs.append_jsonl(d / "critic_errors.jsonl", {"episode": traj.episode, "error": str(exc)})
                continue
            reports.append(report)
            runs.append_jsonl(d / "credits.jsonl", {"episode": traj.episode, **report.model_dump(mode="json")})

        # 3. per-agent candidates
        candidates = dict(self.policies)
        optimiser_failures = 0
        gains: dict[str, float | None] = {}
        for agent in tqdm(self.trainable, desc=f"iter {it} optimiser", leave=False):
            if not any(agent in r.credits for r in reports):
                continue
            gain = gains[agent] = best_gain(agent, reports)
            if cfg.counterfactual and cfg.evidence_gate and (gain is None or gain <= 0):
                runs.append_jsonl(d / "gated.jsonl", {"agent": agent, "best_gain": gain, "reason":
                                  "no counterfactual re-run beat what the agent played: no edit proposed"})
                continue
            try:
                upd = self.optimiser.update(agent, self.policies[agent], reports, self.momentum)
            except LangPZError as exc:  # reported; the agent keeps its policy
                optimiser_failures += 1
                runs.append_jsonl(d / "optimiser_errors.jsonl", {"agent": agent, "error": str(exc)})
                continue
            runs.append_jsonl(d / "gradients.jsonl", upd.model_dump(mode="json", exclude={"generations"}))
            candidates[agent] = upd.new
        changed = [a for a in self.policies if candidates[a] != self.policies[a]]

        # 4. validated update (trust region on the team's validation return)
        cand_val: float | None = None
        accepted: bool | None = None
        val_before = self.val_return
        accepted_agents: list[str] = []
        if changed:
            runs.write_policies(d / "candidates", {a: candidates[a] for a in changed})
            if self.acceptance == "joint":  # one team update, accepted or rejected as one
                groups = [changed]
            else:  # each agent's own update, largest evidence first, kept if the team does not lose
                groups = [[a] for a in sorted(changed, key=lambda a: -(gains.get(a) or 0.0))]
            for group in groups:
                trial = {**self.policies, **{a: candidates[a] for a in group}}
                cand_val = self.validate(trial, d / "validation.jsonl", "candidate " + "+".join(group))
                ok = cand_val is None or self.val_return is None or cand_val >= self.val_return - cfg.tolerance
                runs.append_jsonl(d / "acceptance.jsonl", {"agents": group, "val_return": self.val_return,
                                                           "candidate_val_return": cand_val, "accepted": ok})
                if ok:
                    self.policies, self.val_return = trial, cand_val
                    accepted_agents += group
            accepted = bool(accepted_agents)
            if accepted:
                cand_val = self.val_return

        usage = {r: m.since(snaps[r]) for r, m in self.meters.items()}
        calls = sum(int(u["calls"]) for u in usage.values())
        steps = [s for t in trajectories for s in t.steps]
        m = IterationMetrics(
            iteration=it,
            train_return=round(sum(t.team_return for t in trajectories) / len(trajectories), 3),
            train_returns=[round(t.team_return, 3) for t in trajectories],
            val_return=None if val_before is None else round(val_before, 3),
            candidate_val_return=None if cand_val is None else round(cand_val, 3),
            accepted=accepted,
            changed_agents=changed,
            accepted_agents=accepted_agents,
            parse_error_rate=round(sum(s.parse_error is not None for s in steps) / max(1, len(steps)), 4),
            critic_failures=critic_failures,
            optimiser_failures=optimiser_failures,
            llm_calls=calls,
            cached_calls=sum(int(u["cached_calls"]) for u in usage.values()),
            usage=usage,
            seconds=round(time.perf_counter() - t0, 2),
        )
        self.calls_before += calls
        runs.atomic_write(d / "done.json", json.dumps({
            "metrics": asdict(m), "policies": self.policies, "val_return_next": self.val_return,
            "calls_total": self.calls_before, "momentum": self.momentum.to_json() if self.momentum else None,
        }, indent=1))
        runs.append_jsonl(self.run_dir / "metrics.jsonl", asdict(m))
        verdict = {None: "no candidate", True: "accepted", False: "rejected"}[accepted]
        self.say(f"iteration {it}: train return {m.train_return:.1f}, validation {_num(val_before)} -> "
                 f"{_num(cand_val)} ({verdict}: {len(accepted_agents)} of {len(changed)} changed agent(s))")
        return m


def _partner(kind: str, env: Any, agent: str, seed: int) -> Policy:
    """A fixed classical policy for ``agent`` (the ``partners`` setting)."""
    if kind == "random":
        from lang_pz.policies.random import RandomPolicy

        return RandomPolicy(seed=seed)
    if kind == "heuristic":
        from lang_pz.policies.scripted import PistonballHeuristic

        return PistonballHeuristic()
    from lang_pz.policies.overcooked import overcooked_partner

    return overcooked_partner(kind, env, agent, seed=seed)


def _records_of(path: Path, episodes: set[int]) -> str:
    """The lines of ``episodes`` in a JSONL trajectory file, unchanged and in order (a line cut
    by a kill, which is not valid JSON, is dropped)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("episode") in episodes:
            out.append(line + "\n")
    return "".join(out)


def best_gain(agent: str, reports: Sequence[CriticReport]) -> float | None:
    """The largest mean team-return gain of one replacement among the re-runs that replaced
    ``agent`` (mean over the batch's episodes; ``None`` if no re-run replaced it).

    The evidence gate: an agent for which no alternative would have done better gets no
    edit, whatever the critic's words say.
    """
    gains: dict[str, list[float]] = {}
    for r in reports:
        for c in r.counterfactuals:
            if agent in c["agents"]:
                gains.setdefault(c["replacement"], []).append(float(c["delta"]))
    return max((sum(v) / len(v) for v in gains.values()), default=None)


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}"


def train(
    config: TrainConfig | None = None,
    *,
    resume: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> TrainResult:
    """Run (or continue) a training run; see the module docstring for one iteration.

    Args:
        config: the run configuration (not with ``resume``).
        resume: a run folder to continue: its ``config.json`` is used, completed iterations are
            kept, the interrupted one is redone (keeping its finished training episodes).
        progress: called with a short status line per stage (default: silent); rollouts,
            critic and optimiser calls also show tqdm bars on stderr.

    Returns:
        The :class:`TrainResult` (also on disk in ``result.run_dir``).

    Raises:
        lang_pz.error.UnknownEnvironmentError / InvalidKwargError: bad env id, kwargs or agents.
        lang_pz.error.BackendError: a backend cannot be built or reached.
        lang_pz.error.RunDirError: a new run's folder is not empty, or ``resume`` is not a run.
        ValueError: both or neither of ``config`` and ``resume``.
    """
    say = progress or (lambda _msg: None)
    if (config is None) == (resume is None):
        raise ValueError("give exactly one of config= (a new run) or resume= (a run folder to continue)")
    if resume is not None:
        run_dir = Path(resume)
        try:
            config = TrainConfig(**runs.load_config_json(run_dir))
        except ValidationError as exc:
            raise RunDirError(f"{run_dir / 'config.json'} is not a valid TrainConfig: {exc}") from exc
        done = runs.completed_iterations(run_dir)
        trainer = _Trainer(config, run_dir, say)
    else:
        assert config is not None
        run_dir = Path(config.run_dir or f"runs/{time.strftime('%Y%m%d-%H%M%S')}")
        runs.check_new_run_dir(run_dir)
        config = config.model_copy(update={"run_dir": str(run_dir)})
        trainer = _Trainer(config, run_dir, say)  # env, agents and backends checked before anything is written
        run_dir.mkdir(parents=True, exist_ok=True)
        runs.atomic_write(run_dir / "config.json", config.model_dump_json(indent=2))
        done = []

    result = TrainResult(run_dir=run_dir, initial_policies=dict(trainer.policies))
    if done:
        trainer.restore(done[-1])
        result.metrics = [IterationMetrics(**d["metrics"]) for d in done]
        say(f"resuming {run_dir} after {len(done)} completed iteration(s)")
    runs.atomic_write(run_dir / "metrics.jsonl", "".join(json.dumps(d["metrics"]) + "\n" for d in done))

    for it in range(len(done), config.iterations):
        if config.max_llm_calls is not None and trainer.calls_before >= config.max_llm_calls:
            result.stopped = f"LLM-call budget reached ({trainer.calls_before} >= {config.max_llm_calls})"
            say(f"stopping before iteration {it}: {result.stopped}")
            break
        result.metrics.append(trainer.iteration(it))

    runs.write_policies(run_dir / "final" / "policies", trainer.policies)
    result.final_policies = dict(trainer.policies)
    trainer.env.close()
    return result
