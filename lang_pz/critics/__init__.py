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

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.critics.base import Credit, Critic, CriticReport
from lang_pz.critics.central import CentralCritic
from lang_pz.critics.counterfactual import Counterfactual, Evidence
from lang_pz.critics.modes import CriticMode, critic_modes, make_critic, register_critic_mode

__all__ = [
    "CentralCritic",
    "Counterfactual",
    "Credit",
    "Critic",
    "CriticMode",
    "CriticReport",
    "Evidence",
    "critic_modes",
    "make_critic",
    "register_critic_mode",
]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "AgentEvidence": "lang_pz.critics.base.AgentEvidence",
    "CRITIC_MODES": "lang_pz.critics.central.CRITIC_MODES",
    "OwnPolicyCritic": "lang_pz.critics.own.OwnPolicyCritic",
    "Significance": "lang_pz.critics.significance.Significance",
    "best_gain": "lang_pz.critics.counterfactual.best_gain",
    "compute_evidence": "lang_pz.critics.base.compute_evidence",
    "counterfactuals": "lang_pz.critics.counterfactual.counterfactuals",
    "critic_mode": "lang_pz.critics.modes.critic_mode",
    "make_own_policy_critic": "lang_pz.critics.own.make_own_policy_critic",
    "render_trajectory": "lang_pz.critics.render.render_trajectory",
    "reply_model": "lang_pz.critics.central.reply_model",
    "subsample_steps": "lang_pz.critics.render.subsample_steps",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
