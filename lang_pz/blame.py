"""Who an iteration's critic blamed, and at which steps, read from its credit records.

Both the training progress line (:func:`lang_pz.training.train`) and the report's per-iteration
line (:func:`lang_pz.report.decisions`) say it, from the same records (``credits.jsonl``: one
:class:`~lang_pz.critics.base.CriticReport` per training episode, as JSON), so what is printed
while a run trains is what its report says afterwards.

The blamed agents are those with the lowest mean credit over the iteration's episodes, as
printed to 2 decimals (a credit of -0.001 blames no one); when every agent shares it no one is
singled out. Their steps are the steps each credit cites, per episode in which that agent's
credit was negative; a credit citing none whose agent was only probed by whole-episode re-runs
(``at_steps`` null, as in ``make demo``) is "every step" (what those re-runs replaced).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["blame_text", "blamed_agents", "span"]


def span(steps: Sequence[int]) -> str:
    """``step 3``, ``steps 3-5`` (consecutive) or ``steps 3,5,8``; sorted, duplicates dropped."""
    s = sorted(set(steps))
    if len(s) == 1:
        return f"step {s[0]}"
    if s == list(range(s[0], s[-1] + 1)):
        return f"steps {s[0]}-{s[-1]}"
    return "steps " + ",".join(map(str, s))


def _credit(rep: Mapping[str, Any], agent: str) -> float | None:
    """``agent``'s credit in one record (``None``: none, or not a finite number)."""
    credits = rep.get("credits")
    c = credits.get(agent) if isinstance(credits, Mapping) else None
    v = c.get("credit") if isinstance(c, Mapping) else None
    if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
        return None
    return float(v)


def _credits_of(rep: Mapping[str, Any]) -> list[str]:
    """The agents of one record's ``credits`` (``[]`` if it is not an object)."""
    credits = rep.get("credits")
    return list(credits) if isinstance(credits, Mapping) else []


def _mean_credits(records: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    credits: dict[str, list[float]] = {}
    for rep in records:
        for a in _credits_of(rep):
            if (v := _credit(rep, a)) is not None:
                credits.setdefault(a, []).append(v)
    return {a: sum(v) / len(v) for a, v in credits.items()}


def blamed_agents(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], float] | None:
    """``(agents, lowest)``: the agents with the lowest mean credit (2 decimals, as printed) and
    that credit; ``None`` without credits. ``agents`` is empty when the lowest is not negative or
    when every agent (of several) shares it: no one is singled out."""
    mean = _mean_credits(records)
    if not mean:
        return None
    low = round(min(mean.values()), 2) + 0.0  # + 0.0: no -0.00
    agents = sorted(a for a, v in mean.items() if round(v, 2) == low)
    if low >= 0 or len(agents) == len(mean) > 1:
        return [], low
    return agents, low


def _where(rep: Mapping[str, Any], agent: str) -> str:
    """Where one episode's credit of ``agent`` points: ``at <its cited steps>``, ``at every step``
    (it has only whole-episode re-runs), or ``citing no step``."""
    steps = rep["credits"][agent].get("steps")
    cited = [s for s in steps if isinstance(s, int) and not isinstance(s, bool)] if isinstance(steps, list) else []
    if cited:
        return "at " + span(cited)
    probes = rep.get("counterfactuals")
    own = [c for c in probes if isinstance(c, Mapping) and c.get("agents") == [agent]] if isinstance(probes, list) else []
    if own and all(c.get("at_steps") is None for c in own):
        return "at every step"
    return "citing no step"


def blame_text(records: Sequence[Mapping[str, Any]]) -> str | None:
    """One phrase for an iteration's credit ``records``: ``blamed piston_4 (credit -1.00) at every
    step``, ``blamed a (credit -0.50) at steps 3-5 in episode 0, at step 9 in episode 1``,
    ``blamed a at step 2 and b citing no step (credit -1.00)`` (several share the lowest), ``no one
    blamed (lowest credit +0.00)``, ``every agent blamed alike (credit -1.00): no one singled
    out``; ``None`` without credits (e.g. a method without a credit critic)."""
    got = blamed_agents(records)
    if got is None:
        return None
    agents, low = got
    if not agents:
        if low >= 0:
            return f"no one blamed (lowest credit {low:+.2f})"
        return f"every agent blamed alike (credit {low:+.2f}): no one singled out"
    several = len(records) > 1
    where = {}
    for a in agents:
        eps = [r for r in records if (_credit(r, a) or 0.0) < 0]
        ws = [_where(r, a) + (f" in episode {r.get('episode', '?')}" if several else "") for r in eps]
        where[a] = ", ".join(ws) or "citing no step"
    if len(agents) == 1:
        return f"blamed {agents[0]} (credit {low:+.2f}) {where[agents[0]]}"
    return f"blamed {' and '.join(f'{a} {where[a]}' for a in agents)} (credit {low:+.2f})"
