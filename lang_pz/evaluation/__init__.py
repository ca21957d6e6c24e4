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

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.evaluation.faults import CriticSpec, run_fault_benchmark
from lang_pz.evaluation.pairs import run_pair_benchmark
from lang_pz.evaluation.whowhen import read_whowhen, run_whowhen_benchmark

__all__ = ["CriticSpec", "read_whowhen", "run_fault_benchmark", "run_pair_benchmark", "run_whowhen_benchmark"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "CaseContext": "lang_pz.evaluation.specs.CaseContext",
    "PairSummary": "lang_pz.evaluation.pairs.PairSummary",
    "RandomCritic": "lang_pz.evaluation.baselines.RandomCritic",
    "Summary": "lang_pz.evaluation.summary.Summary",
    "TRIVIAL_RULES": "lang_pz.evaluation.baselines.TRIVIAL_RULES",
    "TrivialRule": "lang_pz.evaluation.baselines.TrivialRule",
    "action_leakage": "lang_pz.evaluation.baselines.action_leakage",
    "blame": "lang_pz.evaluation.scoring.blame",
    "score_report": "lang_pz.evaluation.scoring.score_report",
    "summarise": "lang_pz.evaluation.summary.summarise",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
