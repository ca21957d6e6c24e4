"""Training: the one loop (:func:`train`) and the shared steps every method composes.

``train(config)`` runs the method ``config.method`` names (:mod:`lang_pz.methods`: LangMARL's
text policies, MASkills' skill library); a method's iteration is a composition of these steps,
and a variant of a method changes one of them (``examples/custom_loop.py``):

- :func:`play_batch` (test, current validation, rollouts), :func:`collect`, :func:`evaluate`,
  :func:`validate`;
- :func:`gather_evidence` (counterfactual re-runs -> :class:`~lang_pz.critics.Evidence`);
- :func:`assess` (any :class:`~lang_pz.critics.Critic`);
- :func:`propose` (gradient per episode, aggregate with momentum, candidate text);
- :func:`evidence_gate`, :func:`acceptance_groups`, :func:`accept` (over :class:`Candidate`
  objects), :func:`commit_momentum`;
- :func:`build` (the shared :class:`Parts`), :class:`TrainState`, :func:`iteration_metrics`,
  :class:`Callback`; :func:`make_actors` (a team of given texts, e.g. to evaluate a run).

Helpers below these (teams, players, checks, usage meters) are in their modules
(:mod:`lang_pz.training.team`, ``.players``, ``.checks``, ``.state``).
"""

from lang_pz.training.accept import Acceptance, Candidate, accept, acceptance_groups, commit_momentum, evidence_gate
from lang_pz.training.config import TrainConfig
from lang_pz.training.loop import train
from lang_pz.training.parts import Parts, build
from lang_pz.training.state import Callback, IterationMetrics, TrainResult, TrainState, iteration_metrics
from lang_pz.training.steps import assess, collect, evaluate, gather_evidence, play_batch, propose, validate
from lang_pz.training.team import make_actors

__all__ = [
    "Acceptance",
    "Callback",
    "Candidate",
    "IterationMetrics",
    "Parts",
    "TrainConfig",
    "TrainResult",
    "TrainState",
    "accept",
    "acceptance_groups",
    "assess",
    "build",
    "collect",
    "commit_momentum",
    "evaluate",
    "evidence_gate",
    "gather_evidence",
    "iteration_metrics",
    "make_actors",
    "play_batch",
    "propose",
    "train",
    "validate",
]
