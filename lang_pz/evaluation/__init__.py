"""Evaluation: measuring critics and policies against known ground truth.

- :mod:`lang_pz.evaluation.faults`: fault injection (one agent made faulty on purpose) and the
  scoring shared by every critic benchmark;
- :mod:`lang_pz.evaluation.whowhen`: the Who&When failure-attribution logs;
- :mod:`lang_pz.evaluation.adherence`: does a backend's model act as its text policy says?
"""

from lang_pz.evaluation.faults import (
    RandomCritic,
    Summary,
    blame,
    run_fault_benchmark,
    score_report,
)
from lang_pz.evaluation.whowhen import read_whowhen, run_whowhen_benchmark

__all__ = [
    "RandomCritic",
    "Summary",
    "blame",
    "read_whowhen",
    "run_fault_benchmark",
    "run_whowhen_benchmark",
    "score_report",
]
