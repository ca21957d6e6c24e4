"""LangMARL with joint pair candidates (for the benchmarks); the actor check is the library's.

The textual optimiser's actor check (:mod:`lang_pz.optimisers.adherence`) is LangMARL's own:
``langmarl.actor_check: true`` gives the optimiser ``ActorCheck(parts.meters["actor"])``, the
gradients stage finds the batch's decisions each direction cites and the propose stage plays every
candidate on them (:mod:`lang_pz.methods.langmarl.steps`). What this subclass of
:class:`~lang_pz.methods.LangMARL` adds is :mod:`lang_pz.optimisers.joint`: two agents' texts
proposed together when only their joint re-run helped (the coalition mode's pair re-runs). It
overrides three stages and nothing else:

- ``evidence``: the iteration's evidence and training episodes are kept for ``propose``;
- ``propose``: the pairs (:func:`~lang_pz.optimisers.joint.joint_updates`) of agents with no changed
  candidate of their own become candidates too (checked on the pair's recorded decisions when the
  optimiser has an actor); their texts go to ``candidates/`` and each member's update to
  ``gradients.jsonl`` with ``"joint"`` naming the pair;
- ``order``: each pair is one acceptance group, validated after the single-agent groups.

Usage: ``train(config, method=CheckedLangMARL)`` (and ``train(resume=run, method=CheckedLangMARL)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lang_pz.critics.counterfactual import Evidence
from lang_pz.methods import LangMARL
from lang_pz.methods.data import Proposal
from lang_pz.methods.langmarl.steps import Directions, LangMARLState
from lang_pz.optimisers.joint import JointUpdate, joint_updates
from lang_pz.training.accept import policy_candidates
from lang_pz.training.parts import Context
from lang_pz.trajectory import Trajectory


class CheckedLangMARL(LangMARL):
    """LangMARL that also proposes joint pair candidates (module docstring)."""

    _evidence: Sequence[Evidence] = ()
    _trajectories: Sequence[Trajectory] = ()
    _joints: Sequence[JointUpdate] = ()

    def evidence(self, state: LangMARLState, team: Any, batch: Any, ctx: Context) -> list[Evidence]:
        found = super().evidence(state, team, batch, ctx)
        self._evidence, self._trajectories, self._joints = found, list(batch.trajectories), []
        return found

    def propose(self, state: LangMARLState, gradients: Directions, ctx: Context) -> Proposal[dict[str, str]]:
        proposal = super().propose(state, gradients, ctx)
        changed = proposal.labels
        trainable = {a: state.policies[a] for a in self.parts.trainable if a in state.policies}
        joints = [
            j
            for j in joint_updates(self.optimiser, trainable, self._evidence, self._trajectories, skip=changed)
            if j.changed
        ]
        for j in joints:
            for u in j.updates.values():
                ctx.record(
                    "gradients",
                    {**u.model_dump(mode="json", exclude={"generations"}), "joint": j.agents, "joint_gain": j.pair.gain},
                )
        if joints and ctx.log is not None:
            ctx.log.write_candidates({a: t for j in joints for a, t in j.texts.items()})
        self._joints = joints
        texts = {a: t for j in joints for a, t in j.texts.items()}
        return Proposal(proposal.candidates + policy_candidates(texts), gated=proposal.gated)

    def order(self, labels: Sequence[str], evidence: Sequence[Evidence]) -> list[list[str]]:
        paired = {a for j in self._joints for a in j.agents}
        single = super().order([a for a in labels if a not in paired], evidence)
        return single + [list(j.agents) for j in self._joints]
