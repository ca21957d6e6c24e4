"""LangMARL with the optimiser's actor check and joint pair candidates wired in (for the benchmarks).

The textual optimiser checks a candidate on the recorded decisions its direction cites
(:mod:`lang_pz.optimisers.adherence`) when it has the run's actor and the batch's trajectories,
and proposes two agents' texts together when only their joint re-run helps
(:mod:`lang_pz.optimisers.joint`). Until the training loop passes them itself, this subclass of
:class:`~lang_pz.methods.LangMARL` does, overriding three stages and nothing else:

- ``build``: the optimiser gets ``actor=ActorCheck(parts.meters["actor"])`` (the actor's own
  backend, metered as the actor role);
- ``evidence``: the batch's trajectories are handed to the optimiser (``optimiser.record``) before
  the stages that follow;
- ``accept``: the coalition evidence's pairs (:func:`~lang_pz.optimisers.joint.joint_updates`) of
  agents with no changed candidate of their own become one candidate group each, validated
  together after the single-agent groups; their texts are written to ``candidates/`` and each
  member's update to ``gradients.jsonl`` with ``"joint"`` naming the pair.

Usage: ``train(config, method=CheckedLangMARL)`` (and ``train(resume=run, method=CheckedLangMARL)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.critics.counterfactual import Evidence, best_gain
from lang_pz.methods import LangMARL
from lang_pz.optimisers.adherence import ActorCheck
from lang_pz.optimisers.gradient import PolicyUpdate
from lang_pz.optimisers.joint import joint_updates
from lang_pz.runs import IterationLog
from lang_pz.training.accept import Acceptance, accept, acceptance_groups, policy_candidates


class CheckedLangMARL(LangMARL):
    """LangMARL whose optimiser checks candidates with the actor and proposes joint pairs."""

    @classmethod
    def build(cls, config: Any, **kwargs: Any) -> LangMARL:
        method = super().build(config, **kwargs)
        if method.optimiser.actor is None:
            method.optimiser.actor = ActorCheck(method.parts.meters["actor"])
        return method

    def evidence(self, actors: Any, batch: Any, log: IterationLog) -> list[Evidence]:
        self.optimiser.record(batch.trajectories)
        return super().evidence(actors, batch, log)

    def accept(
        self,
        state: Any,
        batch: Any,
        updates: Mapping[str, PolicyUpdate],
        evidence: Sequence[Evidence],
        validate: Any,
        log: IterationLog,
    ) -> Acceptance[dict[str, str]]:
        changed = [a for a, u in updates.items() if u.changed]
        trainable = [a for a in self.parts.trainable if a in state.policies]
        joints = [
            j
            for j in joint_updates(self.optimiser, {a: state.policies[a] for a in trainable}, evidence, skip=changed)
            if j.changed
        ]
        texts = {a: updates[a].new for a in changed}
        for j in joints:
            texts.update(j.texts)
            for u in j.updates.values():
                log.log(
                    "gradients",
                    {**u.model_dump(mode="json", exclude={"generations"}), "joint": j.agents, "joint_gain": j.pair.gain},
                )
        if joints:
            log.write_candidates({a: t for j in joints for a, t in j.texts.items()})
        groups = acceptance_groups(changed, self.config.acceptance_rule, {a: best_gain(a, evidence) for a in changed})
        return accept(
            state.policies,
            policy_candidates(texts),
            batch.value,
            validate,
            groups=groups + [j.agents for j in joints],
            tolerance=self.config.tolerance,
            log=log,
        )
