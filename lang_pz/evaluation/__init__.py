"""Evaluation: measuring critics and policies against known ground truth.

- :mod:`lang_pz.evaluation.faults`: the fault-injection benchmark (runner), built from
  :mod:`~lang_pz.evaluation.bases` (base teams, default faults), :mod:`~lang_pz.evaluation.cases`
  (drawing cases whose fault hurt the team), :mod:`~lang_pz.evaluation.scoring` (who and when),
  :mod:`~lang_pz.evaluation.specs` (the critics under test, scored per case),
  :mod:`~lang_pz.evaluation.baselines` (random critic, trivial rules, leakage) and
  :mod:`~lang_pz.evaluation.summary` (accuracies with intervals, tables);
- :mod:`lang_pz.evaluation.pairs`: two-fault cases, scored "both at the bottom";
- :mod:`lang_pz.evaluation.whowhen`: the Who&When failure-attribution logs;
- :mod:`lang_pz.evaluation.adherence`: does a backend's model act as its text policy says?
- :mod:`lang_pz.evaluation.labels`: human credit labels of run episodes and Who&When-style cases,
  and :mod:`lang_pz.evaluation.agreement`: a critic's agreement with them (Wilson intervals,
  Cohen's kappa).
"""

from lang_pz.evaluation.baselines import (
    TRIVIAL_RULES,
    RandomCritic,
    TrivialRule,
    action_leakage,
)
from lang_pz.evaluation.faults import CaseContext, CriticSpec, run_fault_benchmark
from lang_pz.evaluation.pairs import PairSummary, run_pair_benchmark
from lang_pz.evaluation.scoring import blame, score_report
from lang_pz.evaluation.summary import Summary, summarise
from lang_pz.evaluation.whowhen import read_whowhen, run_whowhen_benchmark

__all__ = [
    "TRIVIAL_RULES",
    "CaseContext",
    "CriticSpec",
    "PairSummary",
    "RandomCritic",
    "Summary",
    "TrivialRule",
    "action_leakage",
    "blame",
    "read_whowhen",
    "run_fault_benchmark",
    "run_pair_benchmark",
    "run_whowhen_benchmark",
    "score_report",
    "summarise",
]
