"""Training: the one loop (:func:`train`) and the method-neutral steps every method composes.

``train(config)`` runs the method ``config.method`` names (:mod:`lang_pz.methods`: LangMARL's
text policies, MASkills' skill library); a method's iteration is the one skeleton of
:meth:`lang_pz.methods.Method.iteration` over its stages, and a variant of a method overrides a
stage (``examples/custom_loop.py``). What a loop of your own needs:

- :func:`build` (the shared :class:`Parts`: env, pool, executor, role meters, objective, agents;
  ``parts.initial_policies()``, ``parts.actors(policies)``) and :class:`Context`
  (``parts.context(log)``: what the steps play with and write to);
- :func:`play_batch` (test, current validation, rollouts), :func:`collect`, :func:`evaluate`,
  :func:`validate`, :func:`validator` (validation answering from the previous one's episodes);
- :func:`rerun`, :func:`gather_evidence` (counterfactual re-runs -> :class:`~lang_pz.critics.Evidence`);
- :func:`assess` (any :class:`~lang_pz.critics.Critic`);
- :func:`acceptance_groups`, :func:`accept` (over :class:`Candidate` objects; :func:`policy_candidates`
  for policy texts);
- :class:`TrainState`, :func:`iteration_metrics`, :class:`Callback`, :class:`Failure`;
  :func:`make_actors` (a team of given texts, e.g. to evaluate a run).

LangMARL's own steps (the evidence gate, the language gradients and updates, momentum) are in
:mod:`lang_pz.methods.langmarl`; helpers below these (teams, players, checks, usage meters) are
in their modules (:mod:`lang_pz.training.team`, ``.players``, ``.checks``, ``.state``).
"""

from lang_pz.training.accept import Acceptance, Candidate, accept, acceptance_groups, policy_candidates
from lang_pz.training.config import TrainConfig
from lang_pz.training.loop import train
from lang_pz.training.parts import Context, Parts, build
from lang_pz.training.state import Callback, Failure, IterationMetrics, TrainResult, TrainState, iteration_metrics
from lang_pz.training.steps import (
    Batch,
    assess,
    collect,
    evaluate,
    gather_evidence,
    play_batch,
    rerun,
    validate,
    validator,
)
from lang_pz.training.team import make_actors

__all__ = [
    "Acceptance",
    "Batch",
    "Callback",
    "Candidate",
    "Context",
    "Failure",
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
    "evaluate",
    "gather_evidence",
    "iteration_metrics",
    "make_actors",
    "play_batch",
    "policy_candidates",
    "rerun",
    "train",
    "validate",
    "validator",
]
