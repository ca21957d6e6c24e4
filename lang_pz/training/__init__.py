"""Training: the one loop (:func:`train`) and the method-neutral steps every method composes.

``train(config)`` runs the method ``config.method`` names (:mod:`lang_pz.methods`: LangMARL's
text policies, MASkills' skill library); a method's iteration is the one skeleton of
:meth:`lang_pz.methods.Method.iteration` over its stages, and a variant of a method overrides a
stage (``examples/custom_loop.py``). What a loop of your own needs:

- :func:`build` (the shared :class:`Parts`: env, pool, executor, role meters, objective, agents;
  ``parts.initial_policies()``, ``parts.actors(policies)``) and :class:`Context`
  (``parts.context(log)``: what the steps play with and write to);
- :func:`play_batch` (test, current validation, rollouts), :func:`collect`, :func:`evaluate` (the
  held-out measure: one value per seed; the loop's logged validation is
  :mod:`lang_pz.training.validation`);
- :func:`rerun`, :func:`gather_evidence` (counterfactual re-runs -> :class:`~lang_pz.critics.Evidence`);
- :func:`assess` (any :class:`~lang_pz.critics.Critic`);
- :func:`acceptance_groups`, :func:`accept` (over :class:`Candidate` objects; :func:`policy_candidates`
  for policy texts);
- :class:`TrainState`, :class:`Callback` (its ``on_iteration`` gets :class:`IterationMetrics`);
  :func:`make_actors` (a team of given texts, e.g. to evaluate a run).

LangMARL's own steps (the evidence gate, the language gradients and updates, momentum) are in
:mod:`lang_pz.methods.langmarl.steps`; helpers below these (teams, players, checks, usage meters,
validation) are in their modules (:mod:`lang_pz.training.team`, ``.players``, ``.checks``,
``.state``, ``.validation``).
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.training.accept import Candidate, accept, acceptance_groups, policy_candidates
from lang_pz.training.config import TrainConfig
from lang_pz.training.loop import train
from lang_pz.training.parts import Context, Parts, build
from lang_pz.training.state import Callback, IterationMetrics, TrainResult, TrainState
from lang_pz.training.steps import assess, collect, evaluate, gather_evidence, play_batch, rerun
from lang_pz.training.team import make_actors

__all__ = [
    "Callback",
    "Candidate",
    "Context",
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
    "make_actors",
    "play_batch",
    "policy_candidates",
    "rerun",
    "train",
]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "Acceptance": "lang_pz.training.accept.Acceptance",
    "Batch": "lang_pz.training.steps.Batch",
    "Failure": "lang_pz.training.state.Failure",
    "iteration_metrics": "lang_pz.training.state.iteration_metrics",
    "validate": "lang_pz.training.validation.validate",
    "validator": "lang_pz.training.validation.validator",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
