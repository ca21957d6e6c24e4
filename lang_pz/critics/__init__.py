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

__all__ = [
    "AgentEvidence",
    "CentralCritic",
    "Credit",
    "CriticReport",
    "compute_evidence",
    "reply_model",
    "subsample_steps",
]
