"""Agreement between a critic's verdicts and human credit labels (:mod:`lang_pz.evaluation.labels`).

A critic's *verdict* on an episode is the set of agents it blames, and the steps each one's
credit cites: its report's ``verdict`` when it gives one (``[]``: no one), else the agents with
the lowest credit when that credit is negative and not shared by every agent (to 2 decimals, as
``lang-pz report`` prints it: :func:`lang_pz.blame.blamed_agents`). A missing report (the critic
failed on the episode, or the run recorded none) is *no verdict*, a disagreement.

Per labelled episode:

- **agent agreement**: the critic blames exactly the label's agents (``[]`` and "no one" agree);
- **step agreement** (labels with a ``step``): the critic blames one of the label's agents whose
  credit cites a step within ``tolerance`` steps of the label's, one of that agent's own steps
  (as in :mod:`lang_pz.evaluation.scoring`).

Over the labels: both rates with 95 % Wilson intervals (:func:`lang_pz.evaluation.summary.proportion_ci`)
and Cohen's kappa of the verdict as a category (the blamed set, "no one" or "no verdict") against
the label's: agreement beyond what the two marginal distributions give by chance (Cohen 1960,
Educ. Psychol. Meas. 20:37), ``None`` when chance agreement is 1 (both use one category only: a
kappa is then undefined).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lang_pz.blame import blamed_agents
from lang_pz.error import LangPZError
from lang_pz.evaluation.labels import LabelledEpisode
from lang_pz.evaluation.scoring import Assessor, own_steps
from lang_pz.evaluation.summary import Rate, ResultsWriter

__all__ = ["Agreement", "agreement_table", "cohen_kappa", "score_labels", "verdict_of"]

NO_ONE, NO_VERDICT = "(no one)", "(no verdict)"


def verdict_of(report: Mapping[str, Any] | None) -> tuple[tuple[str, ...], dict[str, list[int]]] | None:
    """``(blamed agents sorted, agent -> cited steps)`` of a critic report as JSON (a
    ``credits.jsonl`` record or ``CriticReport.model_dump(mode="json")``); ``None`` without a
    report or credits (see the module docstring)."""
    if not report or not isinstance(report.get("credits"), Mapping) or not report["credits"]:
        return None
    credits = report["credits"]
    verdict = report.get("verdict")
    if isinstance(verdict, list):
        blamed = sorted(str(a) for a in verdict)
    else:
        found = blamed_agents([report])
        blamed = found[0] if found else []
    steps = {}
    for a in blamed:
        c = credits.get(a)
        cited = c.get("steps") if isinstance(c, Mapping) else None
        steps[a] = [s for s in cited if isinstance(s, int) and not isinstance(s, bool)] if isinstance(cited, list) else []
    return tuple(blamed), steps


def _category(blamed: Sequence[str] | None) -> str:
    return NO_VERDICT if blamed is None else "+".join(sorted(blamed)) or NO_ONE


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of paired categories ``(rater A, rater B)``: ``(p_o - p_e) / (1 - p_e)``,
    ``p_o`` the observed agreement, ``p_e`` the chance agreement of the two marginals; ``None``
    for no pair or ``p_e == 1``."""
    n = len(pairs)
    if not n:
        return None
    a, b = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    p_o = sum(x == y for x, y in pairs) / n
    p_e = sum(a[c] * b[c] for c in a) / (n * n)
    return None if p_e >= 1.0 else (p_o - p_e) / (1.0 - p_e)


def score_episode(ep: LabelledEpisode, report: Mapping[str, Any] | None, tolerance: int = 0) -> dict[str, Any]:
    """One labelled episode against a critic's report: the record :func:`score_labels` writes."""
    lab, found = ep.label, verdict_of(report)
    blamed, cited = found if found is not None else (None, {})
    step_agrees = None
    if lab.step is not None:
        own = own_steps(ep.trajectory)
        lo, hi = lab.step - tolerance, lab.step + tolerance
        step_agrees = any(
            lo <= s <= hi and s in own.get(a, frozenset())
            for a in ep.blamed
            if a in (blamed or ())
            for s in cited.get(a, [])
        )
    return {
        "line": lab.line,
        "episode": lab.source,
        "annotator": lab.annotator,
        "label_blamed": list(ep.blamed),
        "label_step": lab.step,
        "critic_blamed": None if blamed is None else list(blamed),
        "cited": cited,
        "agent_agrees": blamed is not None and set(blamed) == set(ep.blamed),
        "step_agrees": step_agrees,
        "label_category": _category(ep.blamed),
        "critic_category": _category(blamed),
        "error": None if found is not None else (report or {}).get("error", "no report of this episode"),
    }


@dataclass
class Agreement:
    """A critic's agreement with the labels.

    Attributes:
        critic: ``recorded`` (the verdicts the runs recorded) or a critic mode.
        labels: labelled episodes scored.
        agent: share of agent agreement, with its 95 % Wilson interval.
        step: share of step agreement over the ``step_labels`` labels that give a step.
        kappa: Cohen's kappa of the verdict categories (``None``: undefined).
        no_verdict: episodes without a verdict (scored as disagreements).
        annotators: label lines per annotator (``None``: not given).
    """

    critic: str
    labels: int
    agent: Rate
    step: Rate
    step_labels: int
    kappa: float | None
    no_verdict: int
    annotators: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarise_agreement(critic: str, records: Sequence[Mapping[str, Any]]) -> Agreement:
    """The :class:`Agreement` of one critic's records (from :func:`score_episode`)."""
    steps = [float(r["step_agrees"]) for r in records if r["step_agrees"] is not None]
    return Agreement(
        critic=critic,
        labels=len(records),
        agent=Rate.of([float(r["agent_agrees"]) for r in records]),
        step=Rate.of(steps),
        step_labels=len(steps),
        kappa=cohen_kappa([(r["label_category"], r["critic_category"]) for r in records]),
        no_verdict=sum(r["critic_blamed"] is None for r in records),
        annotators=dict(Counter(str(r["annotator"]) for r in records)),
    )


def score_labels(
    episodes: Sequence[LabelledEpisode],
    critics: Mapping[str, Assessor] | None = None,
    *,
    tolerance: int = 0,
    out: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[Agreement]:
    """Score the runs' recorded verdicts (``recorded``, when some label is of a run episode) and
    each critic of ``critics`` (asked afresh about every labelled episode) against the labels.

    Args:
        episodes: :func:`lang_pz.evaluation.labels.load_labelled`.
        critics: name -> critic to ask (e.g. a :class:`~lang_pz.critics.CentralCritic`; it is
            given the episode's policies, no re-runs); a Who&When case is shown to a
            ``CentralCritic`` in several calls if needed (:class:`~lang_pz.evaluation.chunked.ChunkedCritic`).
        tolerance: steps of slack around the label's step.
        out: a folder for one JSONL file of per-label records per critic (``NAME.jsonl``).
        progress: called with a line per critic.

    Raises:
        LangPZError: a negative ``tolerance``.
    """
    from lang_pz.critics.central import CentralCritic
    from lang_pz.evaluation.chunked import ChunkedCritic

    if tolerance < 0:
        raise LangPZError(f"tolerance must be >= 0 steps, got {tolerance}")
    reports: dict[str, list[Mapping[str, Any] | None]] = {}
    if any(ep.label.run is not None for ep in episodes):
        reports["recorded"] = [ep.recorded if ep.label.run is not None else None for ep in episodes]
    for name, critic in (critics or {}).items():
        mine: list[Mapping[str, Any] | None] = []
        for ep in episodes:
            asked: Assessor = critic
            if ep.label.whowhen is not None and isinstance(critic, CentralCritic):
                asked = ChunkedCritic(critic, ep.task)
            try:
                rep = asked.assess(ep.trajectory, ep.policies or None, ())
                mine.append(rep.model_dump(mode="json", exclude={"generations"}))
            except LangPZError as exc:
                mine.append({"error": f"{type(exc).__name__}: {exc}"})
        reports[name] = mine
    out_dir = Path(out) if out is not None else None
    result = []
    for name, reps in reports.items():
        recs = [score_episode(ep, rep, tolerance) for ep, rep in zip(episodes, reps)]
        if name == "recorded":  # Who&When cases have no recorded verdict: not counted against it
            recs = [r for r, ep in zip(recs, episodes) if ep.label.run is not None]
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            with ResultsWriter(out_dir / f"{name}.jsonl") as w:
                for r in recs:
                    w.write(r)
        result.append(summary := summarise_agreement(name, recs))
        if progress:
            progress(f"labels, {name}: agent agreement {summary.agent} over {summary.labels} label(s)")
    return result


def agreement_table(rows: Sequence[Agreement]) -> str:
    """The agreements as a Markdown table: labels, agent and step agreement [95 % CI], kappa,
    episodes without a verdict."""
    lines = [
        "| critic | labels | agent agreement [95 % CI] | step agreement [95 % CI] (labels with a step) | "
        "Cohen's kappa | no verdict |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        step = f"{r.step} ({r.step_labels})" if r.step_labels else "- (0)"
        kappa = "undefined (one category)" if r.kappa is None else f"{r.kappa:.2f}"
        lines.append(f"| {r.critic} | {r.labels} | {r.agent} | {step} | {kappa} | {r.no_verdict} |")
    return "\n".join(lines) + "\n"
