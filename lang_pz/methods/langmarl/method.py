"""LangMARL: text policies trained by a language critic and a textual optimiser.

LangMARL (language multi-agent RL: centralised credit in language, per-agent language policy
gradients; validated updates and momentum as in MASkills). The parameter is every trainable
agent's policy text. One iteration (:meth:`LangMARL.iteration`), each stage a method a subclass
may override::

    play_batch       held-out test, current validation, decentralised rollouts
    evidence         counterfactual re-runs of the same seeds (optional; computed evidence)
    assess           the critic: credit per agent, one shared critique, or independent critics
    gate             agents no re-run improved get no edit (the evidence gate)
    propose          per agent: a gradient per episode -> aggregate with momentum -> candidate
    accept           validation on held-out seeds; momentum committed for accepted agents only
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.backends import LLMBackend
from lang_pz.critics.base import Critic, CriticReport
from lang_pz.critics.central import CentralCritic
from lang_pz.critics.coalition import CoalitionCritic
from lang_pz.critics.counterfactual import Counterfactual, Evidence, best_gain
from lang_pz.critics.decisive import DecisiveCritic, SearchingCritic
from lang_pz.critics.difference import DifferenceCritic
from lang_pz.methods.base import Method
from lang_pz.optimisers import Momentum, TextualPolicyOptimiser
from lang_pz.optimisers.gradient import PolicyUpdate
from lang_pz.runs import IterationLog, RunFolder
from lang_pz.training.accept import (
    Acceptance,
    accept,
    acceptance_groups,
    commit_momentum,
    evidence_gate,
    policy_candidates,
)
from lang_pz.training.config import LangMARLConfig, TrainConfig
from lang_pz.training.parts import Parts, Validator, build, initial_policies, validator
from lang_pz.training.players import Team
from lang_pz.training.state import Callback, IterationMetrics, TrainState, UsageMeter, iteration_metrics
from lang_pz.training.steps import Batch, assess, gather_evidence, play_batch, propose, rerun
from lang_pz.trajectory import Trajectory


def settings(config: TrainConfig) -> LangMARLConfig:
    """``config``'s ``langmarl`` section (:meth:`~lang_pz.training.config.TrainConfig.settings_of`)."""
    return config.settings_of("langmarl")


def make_critic(config: TrainConfig, backend: LLMBackend) -> Critic[Counterfactual, CriticReport]:
    """The critic of ``config.langmarl.critic_mode`` on ``backend``: the
    :class:`~lang_pz.critics.difference.DifferenceCritic` for ``counterfactual``, the
    :class:`~lang_pz.critics.decisive.DecisiveCritic` for ``decisive``, the
    :class:`~lang_pz.critics.coalition.CoalitionCritic` for ``coalition``, else a
    :class:`~lang_pz.critics.central.CentralCritic`."""
    s = settings(config)
    mode = s.critic_mode
    if mode in ("decisive", "coalition"):
        common: dict[str, Any] = {
            "replacements": s.counterfactual,
            "window": s.decisive_window,
            "share": s.decisive_share,
            "max_reruns": s.decisive_max_reruns,
            "max_attempts": config.critic_max_attempts,
            "temperature": config.critic_temperature,
            "retry_temperature": config.retry_temperature,
            "seed": config.seed,
        }
        if mode == "coalition":
            return CoalitionCritic(
                backend, permutations=s.coalition_permutations, coalition_reruns=s.coalition_max_reruns, **common
            )
        return DecisiveCritic(backend, **common)
    if mode == "counterfactual":
        return DifferenceCritic(
            backend,
            max_attempts=config.critic_max_attempts,
            temperature=config.critic_temperature,
            retry_temperature=config.retry_temperature,
        )
    return CentralCritic(
        backend,
        mode=mode,  # type: ignore[arg-type]  # the re-run modes returned above
        max_attempts=config.critic_max_attempts,
        max_prompt_steps=config.critic_max_prompt_steps,
        max_prompt_chars=config.critic_max_prompt_chars,
        credit_levels=settings(config).critic_credit_levels,
        temperature=config.critic_temperature,
        retry_temperature=config.retry_temperature,
    )


class LangMARL(Method[TrainState]):
    """Text policies as the parameter (module docstring).

    Attributes:
        critic: credits the agents of each episode (critic role).
        optimiser: turns credits into candidate texts (optimiser role).
        settings: the config's ``langmarl`` section.
    """

    name = "langmarl"
    objects = ("critic", "optimiser")

    def __init__(
        self, parts: Parts, critic: Critic[Counterfactual, CriticReport], optimiser: TextualPolicyOptimiser
    ) -> None:
        super().__init__(parts)
        self.critic, self.optimiser = critic, optimiser
        self.settings = settings(parts.config)

    @classmethod
    def build(  # type: ignore[override]  # base's **objects: the names in objects
        cls,
        config: TrainConfig,
        *,
        backends: LLMBackend | Mapping[str, LLMBackend] | None = None,
        run: RunFolder | None = None,
        critic: Critic[Counterfactual, CriticReport] | None = None,
        optimiser: TextualPolicyOptimiser | None = None,
    ) -> LangMARL:
        """The shared parts (:func:`lang_pz.training.build`), the critic of ``critic_mode`` and the
        textual optimiser (``critic`` / ``optimiser`` objects replace them)."""
        parts = build(config, backends=backends)
        optimiser = optimiser or TextualPolicyOptimiser(
            parts.meters["optimiser"],
            max_policy_chars=config.max_policy_chars,
            max_rewrite=settings(config).max_rewrite,
            max_attempts=config.optimiser_max_attempts,
            temperature=config.optimiser_temperature,
            retry_temperature=config.retry_temperature,
            directions=settings(config).directions,
        )
        return cls(parts, critic or make_critic(config, parts.meters["critic"]), optimiser)

    def _momentum(self) -> Momentum | None:
        return Momentum(beta=self.config.momentum, min_weight=0.2) if self.config.momentum > 0 else None

    def start(self) -> TrainState:
        return TrainState(initial_policies(self.config, self.parts), momentum=self._momentum())

    def restore(self, run: RunFolder, done: Sequence[dict[str, Any]]) -> TrainState:
        return TrainState.from_json(done[-1], self._momentum())

    def team(self, state: TrainState) -> Team:
        return self.parts.actors(state.policies)

    # -- the stages of one iteration -------------------------------------------------------

    def probe_groups(self) -> list[list[str]]:
        """Whose decisions the counterfactual re-runs replace: the trainable agents one by one (the
        whole team at once for ``central_global``; every agent, partners too, for the
        ``counterfactual`` critic, which credits every agent from its own re-runs)."""
        mode, p = self.settings.critic_mode, self.parts
        if mode == "central_global":
            return [list(p.trainable)]
        every = mode in ("counterfactual", "decisive", "coalition")
        return [[a] for a in (list(p.env.possible_agents) if every else p.trainable)]

    def evidence(self, actors: Team, batch: Batch, log: IterationLog) -> list[Evidence]:
        """Counterfactual re-runs of the batch's seeds (:func:`~lang_pz.training.gather_evidence`);
        a critic that chooses its own re-runs (``decisive``, ``coalition``) searches each episode,
        its re-runs played by :func:`~lang_pz.training.steps.rerun` (logged to
        ``counterfactuals.jsonl``, their count and LLM requests to ``credit_search.jsonl``)."""
        cfg, p = self.settings, self.parts
        if isinstance(self.critic, SearchingCritic):
            return [self._search(self.critic, actors, t, log) for t in batch.trajectories]
        return gather_evidence(
            p.envs,
            actors,
            batch.trajectories,
            self.probe_groups(),
            cfg.counterfactual,
            objective=p.objective,
            seed=self.config.seed + log.iteration,
            steps=cfg.counterfactual_steps,
            log=log,
            executor=p.executor,
        )

    def _search(self, critic: SearchingCritic, actors: Team, traj: Trajectory, log: IterationLog) -> Evidence:
        p, seed = self.parts, self.config.seed + log.iteration

        def runner(plans: Sequence[Any]) -> list[Any]:
            return rerun(
                p.envs, actors, [(traj, plan) for plan in plans], objective=p.objective, seed=seed, executor=p.executor
            )

        found = critic.search(traj, runner)
        for c in found.probes:
            log.log("counterfactuals", {"episode": traj.episode, **c.model_dump(mode="json")})
        log.log(
            "credit_search",
            {
                "episode": traj.episode,
                "mode": critic.mode,
                "reruns": found.reruns,
                "calls": found.calls,
                "budget": found.budget,
                "exhausted": found.exhausted,
            },
        )
        return Evidence(episode=traj.episode, counterfactuals=found.probes)

    def gate(self, evidence: Sequence[Evidence], log: IterationLog) -> dict[str, float | None]:
        """The agents to give no edit (:func:`~lang_pz.training.evidence_gate`), with their best gain."""
        if not (self.settings.counterfactual and self.settings.evidence_gate):
            return {}
        return evidence_gate(self.parts.trainable, evidence, log=log)

    def accept(
        self,
        state: TrainState,
        batch: Batch,
        updates: Mapping[str, PolicyUpdate],
        evidence: Sequence[Evidence],
        validate: Validator,
        log: IterationLog,
    ) -> Acceptance[dict[str, str]]:
        """The changed agents' candidates validated by ``validate`` in the configured order
        (:func:`~lang_pz.training.acceptance_groups`, :func:`~lang_pz.training.accept`)."""
        changed = [a for a, u in updates.items() if u.changed]
        groups = acceptance_groups(changed, self.config.acceptance_rule, {a: best_gain(a, evidence) for a in changed})
        return accept(
            state.policies,
            policy_candidates({a: updates[a].new for a in changed}),
            batch.value,
            validate,
            groups=groups,
            tolerance=self.config.tolerance,
            log=log,
        )

    def iteration(
        self, state: TrainState, log: IterationLog, callbacks: Sequence[Callback] = ()
    ) -> tuple[IterationMetrics, TrainState]:
        cfg, p, it = self.config, self.parts, log.iteration
        meter = UsageMeter(p.meters, log)
        log.write_policies(state.policies)
        actors = p.actors(state.policies)
        val = validator(p, log)
        batch = play_batch(
            p.envs,
            actors,
            cfg.training_seeds(it),
            cfg.episode_numbers(it),
            value=state.value if state.value is not None else lambda: val(state.policies, "current"),
            test_seeds=cfg.test_seeds,
            objective=p.objective,
            log=log,
            executor=p.executor,
            on_episode=self.on_episode(it, callbacks),
            desc=f"iter {it} episodes",
        )
        evidence = self.evidence(actors, batch, log)
        reports, critic_failures = assess(
            self.critic, batch.trajectories, state.policies, evidence, log=log, executor=p.executor
        )
        gated = self.gate(evidence, log)
        updates, optimiser_failures = propose(
            self.optimiser,
            state.policies,
            [a for a in p.trainable if a not in gated],
            reports,
            state.momentum,
            log=log,
            executor=p.executor,
        )
        decision = self.accept(state, batch, updates, evidence, val, log)
        commit_momentum(state.momentum, updates, decision.accepted_labels)
        metrics = iteration_metrics(
            iteration=it,
            trajectories=batch.trajectories,
            value=batch.value,
            decision=decision,
            changed=[a for a, u in updates.items() if u.changed],
            gated=gated,
            critic_failures=critic_failures,
            optimiser_failures=optimiser_failures,
            meter=meter,
            test_value=batch.tested,
        )
        new = TrainState(decision.parameter, decision.value, state.momentum, **state.spent(metrics))
        self.conclude(log, metrics, new, callbacks)
        return metrics, new
