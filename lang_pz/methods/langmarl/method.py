"""LangMARL: text policies trained by a language critic and a textual optimiser.

LangMARL (language multi-agent RL: centralised credit in language, per-agent language policy
gradients; validated updates and momentum as in MASkills). The parameter is every trainable
agent's policy text (agent -> text). Its stages of :meth:`lang_pz.methods.Method.iteration`::

    evidence         counterfactual re-runs of the same seeds (optional; computed evidence), or a
                     searching critic's own re-runs (decisive, coalition)
    assess           the critic: credit per agent, one shared critique, or independent critics
    gradients        the evidence gate (:meth:`LangMARL.gate`: agents no re-run improved get no
                     edit), then per agent a gradient per episode aggregated with its momentum
    propose          per agent: the candidate text along its gradient
    accept           validation on held-out seeds, largest counterfactual gain first (:meth:`order`)
    commit           momentum remembers the accepted agents' directions only

Each is a method a subclass may override (``examples/custom_loop.py`` changes :meth:`gate`),
as is :meth:`probe_groups`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from lang_pz.critics.base import Critic, CriticReport
from lang_pz.critics.counterfactual import Counterfactual, Evidence, best_gain
from lang_pz.critics.decisive import SearchingCritic
from lang_pz.critics.modes import critic_mode, make_critic
from lang_pz.methods.base import Method, Proposal
from lang_pz.methods.langmarl.steps import (
    Directions,
    LangMARLState,
    commit_momentum,
    evidence_gate,
    gradients,
    propose,
    verdict_gate,
)
from lang_pz.optimisers import Momentum, TextualPolicyOptimiser
from lang_pz.runs import RunFolder
from lang_pz.training.accept import Acceptance, acceptance_groups, policy_candidates
from lang_pz.training.config import LangMARLConfig, TrainConfig
from lang_pz.training.parts import Context, Parts
from lang_pz.training.players import Team
from lang_pz.training.state import IterationMetrics
from lang_pz.training.steps import Batch, assess, gather_evidence, rerun
from lang_pz.trajectory import Trajectory

Policies = dict[str, str]


def settings(config: TrainConfig) -> LangMARLConfig:
    """The run's method's section: ``langmarl``, or that of a LangMARL variant registered under its
    own name whose settings model extends :class:`~lang_pz.training.sections.LangMARLConfig`."""
    return config.settings_of(config.method)


class LangMARL(Method[LangMARLState, Policies]):
    """Text policies as the parameter (module docstring).

    Attributes:
        critic: credits the agents of each episode (critic role).
        optimiser: turns credits into candidate texts (optimiser role).
        settings: the config's ``langmarl`` section.
    """

    name = "langmarl"
    settings_model = LangMARLConfig
    objects = ("critic", "optimiser")

    def __init__(
        self, parts: Parts, critic: Critic[Counterfactual, CriticReport], optimiser: TextualPolicyOptimiser
    ) -> None:
        super().__init__(parts)
        self.critic, self.optimiser = critic, optimiser
        self.settings = settings(parts.config)

    @classmethod
    def assemble(  # type: ignore[override]  # base's **objects: the names in objects
        cls,
        parts: Parts,
        *,
        run: RunFolder | None = None,
        critic: Critic[Counterfactual, CriticReport] | None = None,
        optimiser: TextualPolicyOptimiser | None = None,
    ) -> LangMARL:
        """The critic of ``critic_mode`` and the textual optimiser on ``parts`` (``critic`` /
        ``optimiser`` objects replace them)."""
        config, s = parts.config, settings(parts.config)
        optimiser = optimiser or TextualPolicyOptimiser(
            parts.meters["optimiser"],
            max_policy_chars=config.max_policy_chars,
            max_rewrite=s.max_rewrite,
            max_attempts=config.optimiser_max_attempts,
            temperature=config.optimiser_temperature,
            retry_temperature=config.retry_temperature,
            directions=s.directions,
        )
        return cls(parts, critic or make_critic(config, parts.meters["critic"]), optimiser)

    def _momentum(self) -> Momentum | None:
        return Momentum(beta=self.config.momentum, min_weight=0.2) if self.config.momentum > 0 else None

    def start(self) -> LangMARLState:
        return LangMARLState(self.parts.initial_policies(), momentum=self._momentum())

    def restore(self, run: RunFolder, done: Sequence[dict[str, Any]]) -> LangMARLState:
        return LangMARLState.from_json(done[-1], self._momentum())

    def parameter(self, state: LangMARLState) -> Policies:
        return state.policies

    def with_parameter(self, state: LangMARLState, parameter: Policies) -> LangMARLState:
        return replace(state, policies=parameter)

    def team_for(self, state: LangMARLState, parameter: Policies) -> Team:
        return self.parts.actors(parameter)

    # -- the stages of one iteration -------------------------------------------------------

    def probe_groups(self) -> list[list[str]]:
        """Whose decisions the counterfactual re-runs replace, as the critic mode says
        (:class:`~lang_pz.critics.modes.CriticMode` ``probes``): the trainable agents one by one,
        every agent (partners too: the ``counterfactual`` critic credits every agent from its own
        re-runs), or the whole team at once (``central_global``)."""
        probes, p = critic_mode(self.settings.critic_mode).probes, self.parts
        if probes == "team":
            return [list(p.trainable)]
        return [[a] for a in (list(p.env.possible_agents) if probes == "every" else p.trainable)]

    def evidence(self, state: LangMARLState, team: Team, batch: Batch, ctx: Context) -> list[Evidence]:
        """Counterfactual re-runs of the batch's seeds (:func:`~lang_pz.training.gather_evidence`);
        a critic that chooses its own re-runs (``decisive``, ``coalition``, ``own_policy``) searches each
        episode (shown the current policy texts),
        its re-runs played by :func:`~lang_pz.training.steps.rerun` (logged to
        ``counterfactuals.jsonl``, their count and LLM requests to ``credit_search.jsonl``)."""
        cfg, seed = self.settings, self.config.seed + ctx.iteration
        if isinstance(self.critic, SearchingCritic):
            return [self._search(self.critic, team, t, ctx, state.policies) for t in batch.trajectories]
        return gather_evidence(
            ctx, team, batch.trajectories, self.probe_groups(), cfg.counterfactual, seed=seed, steps=cfg.counterfactual_steps
        )

    def _search(
        self, critic: SearchingCritic, team: Team, traj: Trajectory, ctx: Context, policies: Mapping[str, str]
    ) -> Evidence:
        seed = self.config.seed + ctx.iteration
        found = critic.search(
            traj, lambda plans: rerun(ctx, team, [(traj, plan) for plan in plans], seed=seed), policies=policies
        )
        for c in found.probes:
            ctx.record("counterfactuals", {"episode": traj.episode, **c.model_dump(mode="json")})
        ctx.record(
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

    def assess(self, state: LangMARLState, batch: Batch, evidence: Sequence[Evidence], ctx: Context) -> list[CriticReport]:
        """The critic's report per episode, shown its evidence (:func:`~lang_pz.training.assess`)."""
        return assess(ctx, self.critic, batch.trajectories, state.policies, evidence)

    def gate(self, evidence: Sequence[Evidence], reports: Sequence[CriticReport], ctx: Context) -> dict[str, float | None]:
        """The agents to give no edit, with their best gain: no re-run beat what they played
        (:func:`~lang_pz.methods.langmarl.steps.evidence_gate`, with counterfactual evidence), or
        no report's verdict blamed them (:func:`~lang_pz.methods.langmarl.steps.verdict_gate`);
        none with ``evidence_gate: false``."""
        if not self.settings.evidence_gate:
            return {}
        gated = evidence_gate(ctx, self.parts.trainable, evidence) if self.settings.counterfactual else {}
        rest = [a for a in self.parts.trainable if a not in gated]
        return {**gated, **verdict_gate(ctx, rest, reports)}

    def gradients(
        self,
        state: LangMARLState,
        batch: Batch,
        evidence: Sequence[Evidence],
        reports: Sequence[CriticReport],
        ctx: Context,
    ) -> Directions:
        """The gate, then the language gradient of every agent it let through."""
        gated = self.gate(evidence, reports, ctx)
        agents = [a for a in self.parts.trainable if a not in gated]
        return Directions(gradients(ctx, self.optimiser, state.policies, agents, reports, state.momentum), gated)

    def propose(self, state: LangMARLState, gradients: Directions, ctx: Context) -> Proposal[Policies]:
        """Each agent's candidate text; those that differ are the candidates."""
        updates = propose(ctx, self.optimiser, state.policies, gradients.by_agent)
        changed = {a: u.new for a, u in updates.items() if u.changed}
        return Proposal(policy_candidates(changed), gated=dict(gradients.gated))

    def order(self, labels: Sequence[str], evidence: Sequence[Evidence]) -> list[list[str]]:
        """``config.acceptance`` (:func:`~lang_pz.training.acceptance_groups`), per agent largest
        counterfactual gain first."""
        return acceptance_groups(labels, self.config.acceptance_rule, {a: best_gain(a, evidence) for a in labels})

    def commit(
        self,
        state: LangMARLState,
        gradients: Directions,
        proposal: Proposal[Policies],
        decision: Acceptance[Policies],
        metrics: IterationMetrics,
        ctx: Context,
    ) -> tuple[LangMARLState, dict[str, Any]]:
        """The momentum remembers the accepted agents' aggregated gradients; then the next state."""
        aggregates = {a: g.gradient for a, g in gradients.by_agent.items()}
        commit_momentum(state.momentum, aggregates, decision.accepted_labels)
        return super().commit(state, gradients, proposal, decision, metrics, ctx)
