"""Role differentiation: how far a run's agents have come apart, per iteration.

LangMARL-style training often starts every agent from the same text policy; the claim to check
is that the agents then specialise. Two measures per iteration of a run folder
(:mod:`lang_pz.runs`), each in [0, 1], 0 meaning the agents are alike:

- **policy divergence**: the mean, over pairs of agents, of the Jaccard distance between the
  sets of words of their policy texts (``iter_NNN/policies/AGENT.txt``, the policies the
  iteration's episodes used; ``final/policies`` for the run's end):
  ``1 - |A ∩ B| / |A ∪ B|``, where a text's words are its lower-cased runs of letters, digits and
  ``_`` (regex ``\\w+``). Word order and repetition do not count, so "push up, then down" and
  "push down, then up" are at distance 0: it measures what the policies talk about, not how.
  Two texts without words are at distance 0.
- **action divergence**: the mean, over pairs of agents, of the Jensen-Shannon divergence (base
  2: 0 for the same distribution, 1 for disjoint ones; Lin 1991, IEEE Trans. Inf. Theory 37:145;
  computed with :func:`scipy.spatial.distance.jensenshannon`, squared) between the agents'
  empirical distributions of the actions they played in the iteration's training episodes
  (``iter_NNN/trajectories.jsonl``; the action the env applied, so a reply that did not parse
  counts as the env's fallback). Only agents whose every decision was offered a finite set of
  action words (``legal_actions``) count, and only pairs offered at least one common word:
  agents with different action sets (a solver and a verifier) differ by construction, not by
  training. ``None`` when no pair qualifies (free-text or continuous actions, one agent).

Both are descriptive: a divergence of 0.3 at iteration 3 after 0 at iteration 0 says the
agents' texts (or play) came apart, not that the difference helps; read them beside the
learning curve. With few decisions the action divergence of identical policies is above 0
(sampling noise: two agents drawing 50 times each from the same uniform three-action
distribution are 0.015 apart on average, 0.004 at 200 draws each), and in a spatial env (Pistonball) identical policies still act
differently at different positions, so compare iterations with each other rather than with 0.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from lang_pz.error import LangPZError
from lang_pz.runs import RunFolder, read_jsonl, read_policies

__all__ = [
    "Differentiation",
    "action_divergence",
    "jaccard_distance",
    "policy_divergence",
    "role_differentiation",
    "words",
]

_WORD = re.compile(r"\w+")


def words(text: str) -> frozenset[str]:
    """The set of lower-cased words (``\\w+`` runs) of ``text``."""
    return frozenset(_WORD.findall(text.lower()))


def jaccard_distance(a: str, b: str) -> float:
    """``1 - |A ∩ B| / |A ∪ B|`` of the word sets of ``a`` and ``b`` (0.0 when both have none)."""
    wa, wb = words(a), words(b)
    union = wa | wb
    return 1.0 - len(wa & wb) / len(union) if union else 0.0


def policy_divergence(policies: Mapping[str, str]) -> float | None:
    """The mean pairwise :func:`jaccard_distance` of the agents' policy texts (``None`` for fewer
    than two agents)."""
    pairs = list(combinations(sorted(policies), 2))
    if not pairs:
        return None
    return sum(jaccard_distance(policies[a], policies[b]) for a, b in pairs) / len(pairs)


def action_divergence(steps: Iterable[Mapping[str, Any]]) -> tuple[float | None, int]:
    """The mean pairwise Jensen-Shannon divergence (base 2) of the agents' played actions.

    Args:
        steps: ``agent_step`` records of a trajectories file (``agent``, ``action``,
            ``legal_actions``); other records are ignored.

    Returns:
        ``(divergence, pairs)``: the mean over the pairs of agents measured (see the module
        docstring for which count) and how many pairs that is; ``(None, 0)`` when none.
    """
    from scipy.spatial.distance import jensenshannon

    counts: dict[str, Counter[str]] = {}
    offered: dict[str, set[str]] = {}
    free: set[str] = set()
    for s in steps:
        if s.get("type", "agent_step") != "agent_step" or not isinstance(s.get("agent"), str):
            continue
        agent, legal = s["agent"], s.get("legal_actions")
        if not isinstance(legal, list) or not legal:
            free.add(agent)
            continue
        offered.setdefault(agent, set()).update(map(str, legal))
        counts.setdefault(agent, Counter())[json.dumps(s.get("action"), sort_keys=True)] += 1
    agents = sorted(set(counts) - free)
    pairs = [(a, b) for a, b in combinations(agents, 2) if offered[a] & offered[b]]
    if not pairs:
        return None, 0
    total = 0.0
    for a, b in pairs:
        keys = sorted(counts[a].keys() | counts[b].keys())
        p = [counts[a][k] for k in keys]
        q = [counts[b][k] for k in keys]
        total += float(jensenshannon(p, q, base=2)) ** 2  # it normalises the counts
    return total / len(pairs), len(pairs)


@dataclass(frozen=True)
class Differentiation:
    """The role differentiation of one iteration (or of the final policies).

    Attributes:
        iteration: the iteration; ``None`` for the final policies (``final/policies``).
        agents: agents with a policy text.
        policy_divergence: mean pairwise Jaccard distance of the policies' word sets (0..1;
            ``None`` for fewer than two agents).
        action_divergence: mean pairwise Jensen-Shannon divergence of the played actions in the
            iteration's training episodes (0..1 bits; ``None``: no pair measured).
        action_pairs: pairs of agents measured for ``action_divergence``.
        decisions: agent steps in the iteration's training episodes.
    """

    iteration: int | None
    agents: int
    policy_divergence: float | None
    action_divergence: float | None
    action_pairs: int
    decisions: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _policies(folder: Path) -> dict[str, str]:
    try:
        return read_policies(folder)
    except (LangPZError, OSError):  # a damaged policy file: the rest still says something
        return {}


def role_differentiation(run_dir: str | Path) -> list[Differentiation]:
    """Per iteration folder of ``run_dir`` (0, 1, ... up to the first gap; one still being
    written counts as far as it goes), then for ``final/policies`` if present, its
    :class:`Differentiation` (measures: see the module docstring). Damaged lines and unreadable
    policy files are skipped; a folder that is not a run gives ``[]``."""
    run = RunFolder(run_dir)
    out = []
    it = 0
    while (files := run.iteration(it)).root.is_dir():
        policies = _policies(files.policies)
        steps = [r for r in read_jsonl(files.trajectories) if r.get("type") == "agent_step"]
        div, pairs = action_divergence(steps)
        out.append(Differentiation(it, len(policies), policy_divergence(policies), div, pairs, len(steps)))
        it += 1
    if run.final_policies.is_dir():
        final = _policies(run.final_policies)
        out.append(Differentiation(None, len(final), policy_divergence(final), None, 0, 0))
    return out


def differentiation_lines(rows: list[Differentiation]) -> list[str]:
    """The report's lines for ``rows`` (``[]`` when no iteration has two agents): a header, then
    per iteration ``iter N: policy text D, actions D (P pairs, N decisions)``, then a note
    whether the agents started from identical policies."""
    if not any(r.agents > 1 for r in rows):
        return []

    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    out = [
        "role differentiation (0 = agents alike, 1 = nothing shared; policy text: mean pairwise Jaccard distance "
        "of word sets; actions: mean pairwise Jensen-Shannon divergence of played actions, bits):"
    ]
    for r in rows:
        where = "final" if r.iteration is None else f"iter {r.iteration}"
        acts = "" if r.iteration is None else f", actions {num(r.action_divergence)}"
        if r.action_divergence is not None:
            acts += f" ({r.action_pairs} pairs, {r.decisions} decisions)"
        out.append(f"  {where}: policy text {num(r.policy_divergence)}{acts}")
    first = rows[0]
    if first.iteration == 0 and first.policy_divergence is not None:
        same = first.policy_divergence == 0.0
        out.append(f"  the agents started from policies with {'the same' if same else 'different'} words")
    return out
