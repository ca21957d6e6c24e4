"""Aggregating a benchmark's scored cases: accuracies with 95 % intervals, next to the baselines.

A *record* is one case as the benchmarks write it (one JSONL line): the critic's score
(:func:`lang_pz.evaluation.scoring.score_report`) under ``"critic"``, each baseline's under
``"baselines"``, the analytic ``chance_agent`` / ``chance_step`` and the label ``truth_agent``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from lang_pz.trajectory import to_jsonable


def proportion_ci(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion (Wilson 1927, JASA 22:209), ``(0, 1)`` for ``n = 0``.

    For whole ``successes`` it equals ``scipy.stats.binomtest(k, n).proportion_ci(confidence,
    method="wilson")``. Fractional ``successes`` (summed expected scores of random tie breaking)
    use the same formula at ``p = successes / n``: the number of hits of independent cases
    with those hit probabilities has at most the binomial variance, so the interval is not too
    narrow.
    """
    from scipy.stats import norm

    if n == 0:
        return 0.0, 1.0
    z = float(norm.ppf(0.5 + confidence / 2))
    p = successes / n
    d = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / d
    return max(0.0, mid - half), min(1.0, mid + half)


@dataclass
class Rate:
    """One accuracy over ``n`` cases: ``value`` and its 95 % Wilson interval ``ci95``."""

    value: float
    ci95: tuple[float, float]

    @classmethod
    def of(cls, values: Sequence[float]) -> Rate:
        n = len(values)
        total = float(sum(values))
        return cls(total / n if n else 0.0, proportion_ci(total, n))

    def __str__(self) -> str:
        return f"{self.value:.2f} [{self.ci95[0]:.2f}, {self.ci95[1]:.2f}]"


@dataclass
class Summary:
    """A critic's accuracies on one source (an environment id or a Who&When folder).

    Attributes:
        source: the environment id or data folder.
        critic: the critic's name (e.g. ``central_credit``, ``counterfactual``).
        cases: scored cases.
        agent / step / joint: strict accuracies (a tie is a miss), with 95 % intervals.
        agent_expected / step_expected: ties broken uniformly at random (expected scores).
        ties: cases where several agents shared the lowest credit.
        critic_failures: cases where the critic raised (scored as misses).
        visible: share of cases whose labelled step was among the steps shown to the critic
            (``None`` when the critic does not report what it showed).
        chance_agent / chance_step: analytic chance, averaged over cases.
        baselines: name -> ``{"agent": Rate, "step": Rate}`` of each baseline, ties broken
            uniformly at random (expected scores: a rule with ties is not flattered by an
            arbitrary tie order).
        labels: labelled agent -> cases (the label distribution); ``majority_label``: the share
            of the most frequent one (what always blaming that agent would score).
        drawn / dropped: cases drawn, and dropped before scoring (fault draws that did not hurt
            the team; malformed Who&When files); ``cases = drawn - dropped``.
        leakage: :func:`lang_pz.evaluation.baselines.action_leakage` of the cases (fault
            benchmark).
        settings: the run's settings.
        hard_cases / agent_hard: the cases where every trivial rule fails
            (:func:`every_rule_fails`), and the critic's strict agent accuracy on them: what is
            left when a per-agent statistic, a speaker position or a return gives the label
            away elsewhere.
        reruns: mean re-runs per case the critic was given or made (``None``: none).
        calls: mean LLM calls per case: the critic's own and those its re-runs sent.
        blames: the share of cases whose report blamed someone (a verdict naming an agent, or
            without a verdict a negative credit): 1 - the cases it answered "no one".
    """

    source: str
    critic: str
    cases: int
    agent: Rate
    step: Rate
    joint: Rate
    agent_expected: float
    step_expected: float
    ties: int
    critic_failures: int
    visible: float | None
    chance_agent: float
    chance_step: float
    baselines: dict[str, dict[str, Rate]] = field(default_factory=dict)
    labels: dict[str, int] = field(default_factory=dict)
    majority_label: float = 0.0
    drawn: int = 0
    dropped: int = 0
    leakage: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    hard_cases: int = 0
    agent_hard: Rate = field(default_factory=lambda: Rate.of([]))
    reruns: float | None = None
    calls: float = 0.0
    blames: float | None = None


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else 0.0


def every_rule_fails(record: Mapping[str, Any], key: str = "agent_expected", chance: str = "chance_agent") -> bool:
    """Whether no trivial rule (every baseline of ``record`` but the random critic) does better
    than a blind guess on this case: each rule's expected hit (ties at random, ``key``) is at
    most the case's chance (``chance``). A rule that ties every agent (``lowest_return`` with a
    shared reward) scores exactly chance, and so fails; one that ties the faulty agent with
    fewer than all does not."""
    rules = [b for b in record.get("baselines", {}) if b != "random"]
    return bool(rules) and all(record["baselines"][b][key] <= record[chance] + 1e-9 for b in rules)


def summarise(
    source: str,
    critic: str,
    records: Sequence[Mapping[str, Any]],
    *,
    drawn: int | None = None,
    leakage: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Summary:
    """Aggregate per-case ``records`` (see the module docstring) into a :class:`Summary`.

    Args:
        drawn: cases drawn (default: the records; ``dropped = drawn - len(records)``).
    """
    n = len(records)
    crit = [r["critic"] for r in records]
    names = list(records[0]["baselines"]) if records else []
    labels = Counter(r["truth_agent"] for r in records)
    vis = [c["visible"] for c in crit if c["visible"] is not None]
    drawn = n if drawn is None else drawn
    hard = [r["critic"]["agent_hit"] for r in records if every_rule_fails(r)]
    return Summary(
        source=source,
        critic=critic,
        cases=n,
        agent=Rate.of([c["agent_hit"] for c in crit]),
        step=Rate.of([c["step_hit"] for c in crit]),
        joint=Rate.of([c["joint_hit"] for c in crit]),
        agent_expected=_mean([c["agent_expected"] for c in crit]),
        step_expected=_mean([c["step_expected"] for c in crit]),
        ties=sum(len(c["tied"]) > 1 for c in crit),
        critic_failures=sum(c["error"] is not None for c in crit),
        visible=_mean(vis) if vis else None,
        chance_agent=_mean([r["chance_agent"] for r in records]),
        chance_step=_mean([r["chance_step"] for r in records]),
        baselines={
            b: {
                "agent": Rate.of([r["baselines"][b]["agent_expected"] for r in records]),
                "step": Rate.of([r["baselines"][b]["step_expected"] for r in records]),
            }
            for b in names
        },
        labels=dict(labels.most_common()),
        majority_label=max(labels.values()) / n if n else 0.0,
        drawn=drawn,
        dropped=drawn - n,
        leakage=dict(leakage or {}),
        settings=dict(settings or {}),
        hard_cases=len(hard),
        agent_hard=Rate.of(hard),
        reruns=_mean([c["reruns"] for c in crit if "reruns" in c]) if any("reruns" in c for c in crit) else None,
        calls=_mean([c.get("calls", 0) + (c.get("usage") or {}).get("calls", 0) for c in crit]),
        blames=_mean([c["blames"] for c in crit if "blames" in c]) if any("blames" in c for c in crit) else None,
    )


def summary_dict(summary: Summary) -> dict[str, Any]:
    """A :class:`Summary` as plain JSON-able data."""
    return to_jsonable(asdict(summary))


def table(summaries: Sequence[Summary]) -> str:
    """A Markdown table: per summary the critic's strict accuracies with intervals, the expected
    (ties at random) agent accuracy, chance, the best trivial rule, the random critic, the
    accuracy on the cases every trivial rule misses, and the case counts."""
    head = (
        "| source | critic | cases (drawn/dropped) | agent acc [95% CI] | step acc [95% CI] | "
        "agent, ties at random | chance agent/step | random critic agent | best trivial rule (agent) | "
        "majority label | every trivial rule fails: n, agent acc | ties | failed | blames someone | "
        "re-runs / case | LLM calls / case |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in summaries:
        rules = {k: v for k, v in s.baselines.items() if k != "random"}
        best = max(rules.items(), key=lambda kv: kv[1]["agent"].value) if rules else None
        rnd = s.baselines.get("random")
        best_text = f"{best[0]} {best[1]['agent']}" if best else "-"
        reruns = "-" if s.reruns is None else f"{s.reruns:.0f}"
        blames = "-" if s.blames is None else f"{s.blames:.2f}"
        lines.append(
            f"| {s.source} | {s.critic} | {s.cases} ({s.drawn}/{s.dropped}) | {s.agent} | {s.step} | "
            f"{s.agent_expected:.2f} | {s.chance_agent:.2f} / {s.chance_step:.2f} | "
            f"{rnd['agent'] if rnd else '-'} | {best_text} | "
            f"{s.majority_label:.2f} | {s.hard_cases}, {s.agent_hard if s.hard_cases else '-'} | "
            f"{s.ties} | {s.critic_failures} | {blames} | {reruns} | {s.calls:.1f} |"
        )
    return "\n".join(lines)


def rules_table(summaries: Sequence[Summary]) -> str:
    """A Markdown table of every baseline's agent / step accuracy (ties at random) per source."""
    names = list(dict.fromkeys(b for s in summaries for b in s.baselines))
    head = "| source | " + " | ".join(names) + " |"
    lines = [head, "|" + "---|" * (len(names) + 1)]
    seen = set()
    for s in summaries:
        if s.source in seen:
            continue
        seen.add(s.source)
        cells = [
            f"{s.baselines[b]['agent'].value:.2f} / {s.baselines[b]['step'].value:.2f}" if b in s.baselines else "-"
            for b in names
        ]
        lines.append(f"| {s.source} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


class ResultsWriter:
    """Append per-case records to a JSONL file, one flushed line each (``None``: no file)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._f: IO[str] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._f = self.path.open("a", encoding="utf-8")

    def write(self, record: Mapping[str, Any]) -> None:
        if self._f is not None:
            self._f.write(json.dumps(to_jsonable(dict(record))) + "\n")
            self._f.flush()

    def close(self) -> None:
        if self._f is not None:
            self._f.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
