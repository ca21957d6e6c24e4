"""Critics: the centralised language critic of LangMARL (credit assignment in words)."""

from lang_pz.critics.central import (
    AgentEvidence,
    CentralCritic,
    Credit,
    CriticReport,
    compute_evidence,
    reply_model,
    subsample_steps,
)
from lang_pz.critics.benchmark import RandomCritic, Summary, blame, run_fault_benchmark, score_report
from lang_pz.critics.whowhen import read_whowhen, run_whowhen_benchmark

__all__ = [
    "AgentEvidence",
    "CentralCritic",
    "Credit",
    "CriticReport",
    "compute_evidence",
    "reply_model",
    "subsample_steps",
    "RandomCritic",
    "Summary",
    "blame",
    "read_whowhen",
    "run_fault_benchmark",
    "run_whowhen_benchmark",
    "score_report",
]
