"""Training: the language-MARL loop (LangMARL) as public, composable steps.

``train(config)`` is one composition of the steps (:func:`run_iteration`); a custom loop is
another (``examples/custom_loop.py``). The steps:

- :func:`collect` (rollouts), :func:`evaluate` / :func:`validate` (held-out seeds);
- :func:`gather_evidence` (counterfactual re-runs -> :class:`~lang_pz.critics.Evidence`);
- :func:`assess` (any :class:`~lang_pz.critics.Critic`);
- :func:`propose` (gradient per episode, aggregate with momentum, candidate text);
- :func:`evidence_gate`, :func:`acceptance_groups`, :func:`accept`, :func:`accepts`,
  :func:`commit_momentum` (the accept step);
- :class:`~lang_pz.runs.RunFolder` / :class:`~lang_pz.runs.IterationLog` (the run folder).
"""

from lang_pz.training.accept import (
    Acceptance,
    accept,
    acceptance_groups,
    accepts,
    commit_momentum,
    evidence_gate,
)
from lang_pz.training.config import TrainConfig
from lang_pz.training.loop import Parts, build, initial_policies, run_iteration, train, validator
from lang_pz.training.players import Reference
from lang_pz.training.state import (
    Callback,
    IterationMetrics,
    TrainResult,
    TrainState,
    UsageMeter,
    iteration_metrics,
)
from lang_pz.training.steps import (
    assess,
    collect,
    evaluate,
    gather_evidence,
    propose,
    validate,
)
from lang_pz.training.team import TeamSpec, make_actors, make_partner

__all__ = [
    "Acceptance",
    "Callback",
    "IterationMetrics",
    "Parts",
    "Reference",
    "TrainConfig",
    "TrainResult",
    "TeamSpec",
    "TrainState",
    "UsageMeter",
    "accept",
    "acceptance_groups",
    "accepts",
    "assess",
    "build",
    "collect",
    "commit_momentum",
    "evaluate",
    "evidence_gate",
    "gather_evidence",
    "initial_policies",
    "iteration_metrics",
    "make_actors",
    "make_partner",
    "propose",
    "run_iteration",
    "train",
    "validate",
    "validator",
]
