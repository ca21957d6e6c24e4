"""Windowed re-runs: the evidence :class:`~lang_pz.critics.difference.DifferenceCritic` reads.

:func:`window_probes` re-runs a factual episode from its seed once per agent, window of its
decisions and replacement (:func:`lang_pz.critics.counterfactual.plan_probes` plans each
re-run, :mod:`lang_pz.policies.faulty` splices a reference policy into a window).

**Which evidence identifies what:**

- ``"reference"`` over a window (the window's decisions as a reference policy would have made
  them): with a known good policy per agent (the base team of a fault benchmark, or the
  policies before an update) only an agent that departed from its reference can change the
  return, so the agent whose reference play restores the most is the one at fault, and its
  window says when. Fault benchmarks can do this; training has no reference but the previous
  policies.
- ``"alternatives"`` over a window (each other action word, held over the window): what
  training can do with no reference. It finds an agent whose other choice *somewhere* would
  have helped most. That is the faulty agent when its mistake costs more than any teammate's
  best local improvement; it is not when a teammate could have compensated by more (the
  heuristic teammates are not optimal) or the right move is not one constant word.
- ``"default"`` (the environment's fallback action): it identifies a fault only where
  doing nothing beats what was done (e.g. a verifier that "corrected" a right answer); a
  solver's wrong answer and a silent solver both score 0, so the solver is never found.
- ``"random"``: noisy single draws; averaging needs many re-runs.
- whole-episode probes (``steps=None``) identify the agent but not the step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.critics.counterfactual import Counterfactual, counterfactuals, plan_probes
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.policies.base import Policy
from lang_pz.policies.faulty import SplicedPolicy
from lang_pz.trajectory import Trajectory

__all__ = ["WINDOW_REPLACEMENTS", "window_probes"]

#: Replacements :func:`window_probes` understands besides plain action words.
WINDOW_REPLACEMENTS: tuple[str, ...] = ("alternatives", "reference", "default", "random")


def window_probes(
    env: Any,
    policies: Mapping[str, Policy],
    trajectory: Trajectory,
    *,
    replacements: Sequence[str] = ("alternatives",),
    window: int | None = 1,
    agents: Sequence[str] | None = None,
    reference: Mapping[str, Policy] | None = None,
    refine: int | None = None,
    seed: int = 0,
) -> list[Counterfactual]:
    """Re-run ``trajectory`` once per agent, window of its decisions, and replacement.

    Windows of ``window`` consecutive decisions slide over each agent's decisions one decision
    at a time (an agent with ``n`` decisions has ``max(1, n - window + 1)`` windows);
    ``window=None`` replaces every decision (one whole-episode probe per agent and replacement).

    Coarse to fine (``refine=k``): first one whole-episode probe per agent and replacement,
    then windows only for the ``k`` agents whose whole-episode probes gained the most. Re-runs
    drop from ``agents x windows x words`` to ``agents x words + k x windows x words``; an agent
    not refined keeps only its whole-episode probes (which say who, not when).

    Args:
        env: the environment the trajectory was played in (it is reset).
        policies: the policies that played it.
        trajectory: the factual episode (it must have a seed).
        replacements: per window, each of: an action word the agent was offered;
            ``"alternatives"`` (every word the agent was offered in ``trajectory``, its steps'
            ``legal_actions``, except a word it played throughout the window);
            ``"reference"`` (the window as ``reference[agent]`` would have played it, see
            :class:`~lang_pz.policies.faulty.SplicedPolicy`; recorded as replacement
            ``"reference policy"``); ``"default"``; ``"random"``.
        window: decisions per window (>= 1), ``None`` for whole-episode probes.
        agents: whose decisions to replace (default: every agent of the trajectory).
        reference: the reference policies (needed by ``"reference"``); they are reset and
            asked at every decision of each re-run, so fresh instances are best.
        refine: coarse to fine over this many agents (see above); ``None``: windows for all.
        seed: seed of ``"random"`` replacements.

    Returns:
        The :class:`~lang_pz.critics.counterfactual.Counterfactual` probes; ``at_steps`` are
        the replaced decisions (the agent's own 0-based decision indices).

    Raises:
        InvalidKwargError: ``window < 1``, ``refine < 1`` or no replacement.
        LangPZError: ``"reference"`` without a reference for an agent; ``"alternatives"`` for
            an agent offered no ``legal_actions``, or a word the agent was not offered
            (:func:`~lang_pz.critics.counterfactual.plan_probes`, which plans every re-run but
            the reference ones); from the re-runs.
    """
    if window is not None and window < 1:
        raise InvalidKwargError(f"window must be >= 1 decision (or None: every decision), got {window}")
    if refine is not None and refine < 1:
        raise InvalidKwargError(f"refine must be >= 1 agent, got {refine}")
    if not replacements:
        raise InvalidKwargError(f"replacements must name at least one of {', '.join(WINDOW_REPLACEMENTS)} or a word")
    agents = list(agents or trajectory.agents)
    if "reference" in replacements:
        missing = [a for a in agents if reference is None or a not in reference]
        if missing:
            raise LangPZError(f"replacement 'reference' needs reference= policies; none given for {missing}")
    words = [r for r in replacements if r != "reference"]

    def probe(a: str, decisions: list[int] | None) -> list[Counterfactual]:
        planned = plan_probes(trajectory, [[a]], words, steps=decisions) if words else []
        found = [p.rerun(env, policies, trajectory, seed=seed) for p in planned]
        if "reference" in replacements:
            swap = reference[a] if decisions is None else SplicedPolicy(policies[a], reference[a], decisions)  # type: ignore[index]
            cf = counterfactuals(env, policies, trajectory, [[a]], ["previous"], previous={a: swap})[0]
            found.append(
                cf.model_copy(
                    update={"replacement": "reference policy", "at_steps": None if decisions is None else tuple(decisions)}
                )
            )
        return found

    def windows(a: str) -> list[Counterfactual]:
        n = len(trajectory.agent_steps(a))
        assert window is not None
        return [p for start in range(max(1, n - window + 1)) for p in probe(a, list(range(start, min(n, start + window))))]

    if window is None:
        return [p for a in agents for p in probe(a, None)]
    if refine is None:
        return [p for a in agents for p in windows(a)]
    whole = {a: probe(a, None) for a in agents}
    ranked = sorted(agents, key=lambda a: -max((p.delta for p in whole[a]), default=float("-inf")))
    return [p for a in agents for p in whole[a]] + [p for a in ranked[:refine] for p in windows(a)]
