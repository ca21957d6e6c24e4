"""A scripted oracle team for the math task environments (GSM8K, MATH-500).

:class:`MathOracle` plays one role of :class:`lang_pz.tasks.MathTaskEnv` perfectly by reading
the gold answer of the environment's *current item* (``env.unwrapped.item``). It is a
*centralised scripted base team*, not a decentralised policy: no policy could see the gold
answer at run time. Its use is labelling: in the fault-injection benchmark
(:mod:`lang_pz.evaluation.faults`) the unfaulted oracle team always scores 1.0, so a fault
injected into one role's reply is the only thing that can go wrong, and who and when it went
wrong is known by construction (Zhang et al. 2025, "Which Agent Causes Task Failures and
When?", ICML, label these by hand).

Replies, in the format the environment extracts (see :mod:`lang_pz.tasks.math_env`):

- ``solver``: GSM8K ``"The answer is <gold>.\\n#### <gold>"`` (Cobbe et al. 2021, section 2:
  the final answer follows ``####``); MATH ``"The answer is \\boxed{<gold>}."`` (Hendrycks et
  al. 2021, section 3: the last ``\\boxed{}``);
- ``verifier``: ``"Correct."`` — it confirms the current answer *unconditionally* (it does not
  repair a wrong one), so that a faulty solver reply decides the team's outcome.

Example::

    env = lang_pz.make("tasks/gsm8k-v0", source="demo")
    team = {role: MathOracle(env, role) for role in env.possible_agents}
    rollout(env, team, seed=0).team_return  # 1.0
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from lang_pz.error import LangPZError
from lang_pz.policies.base import Decision, Policy

__all__ = ["CONFIRMATION", "MathOracle", "oracle_answer"]

#: The oracle verifier's reply (the environment reads it as a confirmation).
CONFIRMATION = "Correct."


def _math_env(env: Any) -> Any:
    from lang_pz.tasks.math_env import MathTaskEnv

    game = getattr(env, "unwrapped", env)
    if not isinstance(game, MathTaskEnv):
        raise LangPZError(
            "MathOracle needs a math task environment made with lang_pz.make('tasks/gsm8k-v0') or "
            f"lang_pz.make('tasks/math500-v0'), got {type(env).__name__}"
        )
    return game


def oracle_answer(env: Any) -> str:
    """The solver's reply carrying the gold answer of ``env``'s current item, in the format the
    environment extracts (GSM8K: after ``####``; MATH: in ``\\boxed{}``).

    Raises:
        LangPZError: ``env`` is not a lang_pz math task environment.
    """
    game = _math_env(env)
    gold = str(game.item.answer).strip()
    if game.gsm8k:
        return f"The answer is {gold}.\n#### {gold}"
    return f"The answer is \\boxed{{{gold}}}."


class MathOracle(Policy):
    """One role of the oracle team of a math task environment (see the module docstring).

    Args:
        env: the environment from :func:`lang_pz.make` (``tasks/gsm8k-v0`` or ``tasks/math500-v0``);
            the gold answer is read from it at every decision.
        role: ``"solver"`` or ``"verifier"`` (one of ``env.possible_agents``).

    Raises:
        LangPZError: ``env`` is not a math task environment, or ``role`` is not one of its agents.
    """

    def __init__(self, env: Any, role: str) -> None:
        self.game = _math_env(env)
        if role not in self.game.possible_agents:
            raise LangPZError(f"role must be one of {self.game.possible_agents}, got {role!r}")
        self.role = role

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """Reply from the environment's current item; ``observation`` and ``info`` are not used."""
        t0 = time.perf_counter()
        text = oracle_answer(self.game) if self.role == "solver" else CONFIRMATION
        return Decision(action=text, raw_output=text, latency_s=time.perf_counter() - t0)
