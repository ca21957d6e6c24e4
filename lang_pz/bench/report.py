"""Results of a bench as a Markdown table, CSV, JSON and a plot (matplotlib)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lang_pz.bench.runner import EnvCase
from lang_pz.bench.stats import Summary, summarise

COLUMNS = (
    "env",
    "team",
    "spec",
    "objective",
    "episodes",
    "failed",
    "mean",
    "ci_low",
    "ci_high",
    "parse_failures",
    "llm_calls",
    "cached_calls",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "seconds",
)


def summaries(
    cases: Sequence[EnvCase], records: Sequence[dict[str, Any]], failures: Sequence[dict[str, Any]] = ()
) -> list[Summary]:
    """One :class:`Summary` per (case, team) with episodes, in the order of ``cases`` and teams;
    only the case's own seeds count (records of other seeds in the folder are left out).

    Args:
        failures: records of failed episodes (:func:`lang_pz.bench.runner.read_failures`); a seed that
            failed and has no episode record counts in the team's ``failed`` (a team whose every
            episode failed gets a row with no mean).
    """
    rows = []
    for case in cases:
        seeds = {int(s) for s in case.seeds}
        for team in case.teams:
            mine = [r for r in records if r["env"] == case.name and r["team"] == team.name and int(r["seed"]) in seeds]
            played = {int(r["seed"]) for r in mine}
            failed = {
                int(f["seed"])
                for f in failures
                if f.get("env") == case.name and f.get("team") == team.name and f.get("seed") in seeds - played
            }
            if mine or failed:
                rows.append(summarise(case.name, team.name, team.spec, case.objective_spec(), mine, len(failed)))
    return rows


def _num(x: float, digits: int = 3) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.{digits}g}" if abs(x) < 1 else f"{x:.1f}"


def _share(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.3g} %"


def _failed(r: Summary) -> str:
    n = r.episodes + r.failed
    return f"{r.failed} of {n} ({100 * r.failed / n:.3g} %)" if r.failed else "0"


def markdown_table(rows: Sequence[Summary]) -> str:
    """The results table: env, team, objective, mean [95 % interval], the share of decisions whose
    reply did not parse (the env played its fallback), episodes, failed episodes (of the team's
    seeds, with their share: not in the mean), LLM usage, seconds."""
    lines = [
        "| env | team | objective | mean | 95 % CI | parse failures | episodes | failed | LLM calls (cached) | "
        "tokens (prompt / completion) | cost $ | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ci = "-" if math.isnan(r.ci_low) else f"[{_num(r.ci_low)}, {_num(r.ci_high)}]"
        lines.append(
            f"| {r.env} | {r.team} | {r.objective} | {_num(r.mean)} | {ci} | {_share(r.parse_failures)} | {r.episodes} | {_failed(r)} | {r.llm_calls} ({r.cached_calls}) | "
            f"{r.prompt_tokens} / {r.completion_tokens} | {r.cost_usd:.4f} | {r.seconds:.1f} |"
        )
    return "\n".join(lines) + "\n"


def write_results(rows: Sequence[Summary], out_dir: str | Path, *, plot: bool = True) -> dict[str, Path]:
    """Write ``summary.md``, ``summary.csv``, ``summary.json`` and (``plot``) ``summary.png`` to
    ``out_dir``; returns their paths by kind."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "summary.md", "csv": out / "summary.csv", "json": out / "summary.json"}
    paths["md"].write_text(markdown_table(rows), encoding="utf-8")
    with paths["csv"].open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(r.as_dict())
    paths["json"].write_text(json.dumps([r.as_dict() for r in rows], indent=1) + "\n", encoding="utf-8")
    if plot and rows:
        paths["png"] = out / "summary.png"
        plot_results(rows, paths["png"])
    return paths


def plot_results(rows: Sequence[Summary], path: str | Path) -> None:
    """One panel per env: each team's mean with its 95 % interval as an error bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    envs = list(dict.fromkeys(r.env for r in rows))
    fig, axes = plt.subplots(1, len(envs), figsize=(4.5 * len(envs), 3.6), squeeze=False)
    for ax, env in zip(axes[0], envs):
        mine = [r for r in rows if r.env == env]
        ys = list(range(len(mine)))
        means = [r.mean for r in mine]
        err = [
            [0.0 if math.isnan(r.ci_low) else r.mean - r.ci_low for r in mine],
            [0.0 if math.isnan(r.ci_high) else r.ci_high - r.mean for r in mine],
        ]
        ax.barh(ys, means, xerr=err, color="#4c72b0", ecolor="black", capsize=3)
        ax.set_yticks(ys, [r.team for r in mine], fontsize=8)
        ax.invert_yaxis()
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_title(env if len(env) <= 48 else env[:45] + "...", fontsize=9)
        ax.set_xlabel(f"{mine[0].objective} (mean, 95 % CI)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
