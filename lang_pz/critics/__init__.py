"""Critics: credit assignment in language (LangMARL's centralised critic) and its evidence.

- :mod:`lang_pz.critics.base`: :class:`Critic` (the protocol), :class:`CriticReport`, :class:`Credit`;
- :mod:`lang_pz.critics.central`: :class:`CentralCritic`, the LLM critic (three modes);
- :mod:`lang_pz.critics.counterfactual`: re-runs of the same seed (:class:`Counterfactual`,
  :class:`Evidence`), evidence the system computes;
- :mod:`lang_pz.critics.difference`: :class:`~lang_pz.critics.difference.DifferenceCritic`, COMA's
  difference reward computed by re-runs (the windowed re-runs: :mod:`lang_pz.critics.windows`);
- :mod:`lang_pz.critics.decisive`: :class:`~lang_pz.critics.decisive.DecisiveCritic`, the earliest
  decision whose change recovers the loss (Who&When's decisive step, searched by re-runs);
- :mod:`lang_pz.critics.coalition`: :class:`~lang_pz.critics.coalition.CoalitionCritic`, Shapley
  values of replacing agents' decisive windows together (joint faults);
- :mod:`lang_pz.critics.search`: the budgeted, cached re-runs those two critics plan;
- :mod:`lang_pz.critics.modes`: the critic modes by name (:func:`register_critic_mode`,
  :func:`make_critic`: the one factory of a config's critic);
- :mod:`lang_pz.critics.render`: how a trajectory is shown to an LLM critic.

Benchmarks that score critics (fault injection, Who&When) live in :mod:`lang_pz.evaluation`.
"""

from lang_pz.critics.base import (
    AgentEvidence,
    Credit,
    Critic,
    CriticReport,
    compute_evidence,
)
from lang_pz.critics.central import CRITIC_MODES, CentralCritic, reply_model
from lang_pz.critics.counterfactual import (
    Counterfactual,
    Evidence,
    best_gain,
    counterfactuals,
)
from lang_pz.critics.modes import CriticMode, critic_mode, critic_modes, make_critic, register_critic_mode
from lang_pz.critics.render import render_trajectory, subsample_steps

__all__ = [
    "CRITIC_MODES",
    "AgentEvidence",
    "CentralCritic",
    "Counterfactual",
    "Credit",
    "Critic",
    "CriticMode",
    "CriticReport",
    "Evidence",
    "best_gain",
    "compute_evidence",
    "counterfactuals",
    "critic_mode",
    "critic_modes",
    "make_critic",
    "register_critic_mode",
    "render_trajectory",
    "reply_model",
    "subsample_steps",
]

# Exported since the significance rule and the own-policy mode (kept apart from the lists above).
from lang_pz.critics.own import OwnPolicyCritic, make_own_policy_critic
from lang_pz.critics.significance import Significance

__all__ += ["OwnPolicyCritic", "Significance", "make_own_policy_critic"]
