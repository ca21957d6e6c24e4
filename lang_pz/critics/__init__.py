"""Critics: the centralised language critic of LangMARL (credit assignment in words).

Benchmarks that score critics (fault injection, Who&When) live in :mod:`lang_pz.evaluation`.
"""

from lang_pz.critics.central import (
    AgentEvidence,
    CentralCritic,
    Credit,
    CriticReport,
    compute_evidence,
    reply_model,
    subsample_steps,
)

__all__ = [
    "AgentEvidence",
    "CentralCritic",
    "Credit",
    "CriticReport",
    "compute_evidence",
    "reply_model",
    "subsample_steps",
]
