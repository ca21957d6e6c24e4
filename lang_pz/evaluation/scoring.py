"""Scoring a credit report against known ground truth: who was at fault, and when.

Shared by every critic benchmark (:mod:`lang_pz.evaluation.faults`,
:mod:`lang_pz.evaluation.whowhen`), after Who&When's "which agent, which step" task (Zhang et al.
2025, "Which Agent Causes Task Failures and When?", ICML).

- The *blamed agent* is the agent with the lowest credit. When several agents share the lowest
  credit the report did not single anyone out, and the tie is scored two ways, never broken
  toward a label prior (e.g. "the first speaker", who is the mistake agent in about half of
  Who&When's algorithm-generated logs): *strict*, a tie is a miss (``agent_hit``); *expected*,
  the expected score of breaking the tie uniformly at random (``agent_expected`` = 1/k when the
  truth is among the k tied agents). A report that gives every agent the same credit therefore
  scores 0 strict and exactly 1 / n_agents expected, whatever the label distribution.
- The *blamed steps* are the steps the blamed agent's credit cites; a *step hit* is a cited step
  inside ``[first faulty step - tolerance, last faulty step + tolerance]`` that is one of the
  blamed agent's *own* steps (a credit citing a teammate's step, e.g. a WebSurfer credit citing
  the Orchestrator's message, is a miss). Expected step score: the mean step hit of the tied
  agents.
- *Visible*: whether some labelled step was among the steps the critic was shown
  (``CriticReport.shown_steps``; ``None`` when the report does not say).
- A critic that fails (a :class:`~lang_pz.error.LangPZError`: no valid reply, backend error)
  scores a miss on the case, and the failure is recorded.

Analytic chance: agent 1 / n_agents; step: the share of the trajectory's steps inside the
faulty window (one uniformly random step hitting it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from lang_pz.critics.base import CriticReport
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.error import LangPZError
from lang_pz.trajectory import Trajectory


class Assessor(Protocol):
    """Anything that credits the agents of a trajectory, like
    :class:`~lang_pz.critics.CentralCritic` or :class:`~lang_pz.critics.difference.DifferenceCritic`."""

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[Counterfactual] = (),
    ) -> CriticReport: ...


@dataclass(frozen=True)
class Blame:
    """Whom and when a report blames.

    Attributes:
        agent: the blamed agent, ``None`` when several agents share the lowest credit.
        steps: the steps its credit cites (empty without a blamed agent).
        tied: every agent sharing the lowest credit (one agent: no tie).
    """

    agent: str | None
    steps: tuple[int, ...]
    tied: tuple[str, ...]


def blame(report: CriticReport) -> Blame:
    """The agent with the lowest credit and the steps it cites; a tie blames no one.

    Raises:
        LangPZError: the report credits no agent.
    """
    if not report.credits:
        raise LangPZError(f"the report of episode {report.episode} credits no agent; nothing to blame")
    low = min(c.credit for c in report.credits.values())
    tied = tuple(a for a, c in report.credits.items() if c.credit == low)
    agent = tied[0] if len(tied) == 1 else None
    steps = tuple(report.credits[agent].steps) if agent is not None else ()
    return Blame(agent=agent, steps=steps, tied=tied)


def fault_window(truth_steps: Sequence[int], tolerance: int = 0) -> tuple[int, int]:
    """``(first - tolerance, last + tolerance)`` of the faulty steps, inclusive.

    Raises:
        LangPZError: no faulty step, or a negative tolerance.
    """
    if not truth_steps:
        raise LangPZError("no faulty step: a case needs at least one step whose action was made faulty")
    if tolerance < 0:
        raise LangPZError(f"tolerance must be >= 0 steps, got {tolerance}")
    return min(truth_steps) - tolerance, max(truth_steps) + tolerance


def chance_step_hit(all_steps: Sequence[int], truth_steps: Sequence[int], tolerance: int = 0) -> float:
    """The chance that one uniformly random step of ``all_steps`` lies in the faulty window."""
    lo, hi = fault_window(truth_steps, tolerance)
    steps = sorted(set(all_steps))
    if not steps:
        raise LangPZError("the trajectory has no steps")
    return sum(lo <= s <= hi for s in steps) / len(steps)


def own_steps(trajectory: Trajectory) -> dict[str, frozenset[int]]:
    """Per agent, the steps at which it acted in ``trajectory`` (what its credit may cite as a hit)."""
    out: dict[str, set[int]] = {}
    for s in trajectory.steps:
        out.setdefault(s.agent, set()).add(s.step)
    return {a: frozenset(v) for a, v in out.items()}


def score_report(
    report: CriticReport,
    truth_agent: str,
    truth_steps: Sequence[int],
    *,
    tolerance: int = 0,
    steps_of: Mapping[str, frozenset[int]] | None = None,
) -> dict[str, Any]:
    """Score one report (see the module docstring).

    Args:
        steps_of: per agent, its own steps (:func:`own_steps`); a cited step counts as a step
            hit only if it is one of the citing agent's own steps. ``None``: every cited step
            counts (a caller without the trajectory).

    Returns:
        ``blamed``, ``tied``, ``cited`` (steps), ``credits``, strict ``agent_hit`` /
        ``step_hit`` / ``joint_hit`` (bool), ``agent_expected`` / ``step_expected`` /
        ``joint_expected`` (float, ties broken uniformly at random), ``visible`` (bool or
        ``None``) and ``error`` (``None``).
    """
    b = blame(report)
    lo, hi = fault_window(truth_steps, tolerance)

    def hits(agent: str) -> bool:
        own = None if steps_of is None else steps_of.get(agent, frozenset())
        return any(lo <= s <= hi and (own is None or s in own) for s in report.credits[agent].steps)

    k = len(b.tied)
    agent_hit = b.agent == truth_agent
    step_hit = b.agent is not None and hits(b.agent)
    shown = set(report.shown_steps)
    return {
        "blamed": b.agent,
        "tied": list(b.tied),
        "cited": list(b.steps),
        "credits": {a: c.credit for a, c in report.credits.items()},
        "agent_hit": agent_hit,
        "step_hit": step_hit,
        "joint_hit": agent_hit and step_hit,
        "agent_expected": (truth_agent in b.tied) / k,
        "step_expected": sum(hits(a) for a in b.tied) / k,
        "joint_expected": (truth_agent in b.tied and hits(truth_agent)) / k,
        "visible": any(lo <= s <= hi for s in shown) if shown else None,
        "error": None,
    }


def failed_score(error: Exception) -> dict[str, Any]:
    """The score of a case whose critic failed: a miss, with the error."""
    return {
        "blamed": None,
        "tied": [],
        "cited": [],
        "credits": {},
        "agent_hit": False,
        "step_hit": False,
        "joint_hit": False,
        "agent_expected": 0.0,
        "step_expected": 0.0,
        "joint_expected": 0.0,
        "visible": None,
        "error": f"{type(error).__name__}: {error}",
    }


def assess_and_score(
    critic: Assessor,
    trajectory: Trajectory,
    truth_agent: str,
    truth_steps: Sequence[int],
    *,
    counterfactuals: Sequence[Counterfactual] = (),
    tolerance: int = 0,
) -> dict[str, Any]:
    """Ask ``critic`` about ``trajectory`` (with ``counterfactuals`` as evidence) and score its
    report; a :class:`LangPZError` from the critic is a recorded miss."""
    try:
        report = critic.assess(trajectory, None, counterfactuals)
    except LangPZError as exc:
        return failed_score(exc)
    out = score_report(report, truth_agent, truth_steps, tolerance=tolerance, steps_of=own_steps(trajectory))
    out["verdict"] = report.verdict
    out["blames"] = bool(report.verdict) if report.verdict is not None else any(c < 0 for c in out["credits"].values())
    out["usage"] = report.usage
    out["explanations"] = {a: c.explanation for a, c in report.credits.items()}
    return out


def blame_text(score: Mapping[str, Any]) -> str:
    """``blamed <agent> citing <steps>`` (or ``tie of <agents>``) of a score, for progress lines."""
    who = f"blamed {score['blamed']} citing {score['cited']}" if score["blamed"] else f"tie of {score['tied']}"
    return who + (" (critic failed)" if score["error"] else "")


def bottom_strict(credits: Mapping[str, float], truth: Sequence[str]) -> bool:
    """Whether the ``truth`` agents hold the ``len(truth)`` lowest credits, each strictly below
    every other agent's credit."""
    others = [c for a, c in credits.items() if a not in truth]
    return all(a in credits for a in truth) and (not others or max(credits[a] for a in truth) < min(others))


def bottom_expected(credits: Mapping[str, float], truth: Sequence[str]) -> float:
    """The chance that the ``k = len(truth)`` lowest credits, ties broken uniformly at random,
    are ``truth``.

    With ``v`` the ``k``-th lowest credit, ``S`` the agents below ``v`` and ``E`` those at ``v``,
    the bottom ``k`` are ``S`` and ``k - |S|`` agents of ``E`` drawn uniformly: the chance is
    ``1 / C(|E|, k - |S|)`` when ``S`` is in ``truth`` and the rest of ``truth`` is in ``E``,
    else 0.
    """
    k = len(truth)
    if len(credits) < k or not all(a in credits for a in truth):
        return 0.0
    v = sorted(credits.values())[k - 1]
    below = {a for a, c in credits.items() if c < v}
    at = {a for a, c in credits.items() if c == v}
    t = set(truth)
    if not below <= t or not (t - below) <= at:
        return 0.0
    return 1.0 / math.comb(len(at), k - len(below))
