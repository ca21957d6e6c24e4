"""The tables and the plot of ``credit_learning.py`` (read from its rows and run folders).

Split from the script so each stays short; ``credit_learning.py`` re-exports :func:`word_of`.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import stats

from lang_pz.optimisers.gradient import Gradient, direction_word
from lang_pz.runs import RunFolder


def word_of(policy: str) -> str:
    """The action word a policy text names (the three starting texts, or an optimised one)."""
    low = policy.lower()
    return "down" if "down" in low else "up" if "up" in low else "stay"


def interval(values: list[float]) -> tuple[float, float]:
    """95 % t interval of the mean (the value itself for one run)."""
    if len(values) < 2 or np.std(values) == 0:
        return float(np.mean(values)), float(np.mean(values))
    lo, hi = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    return float(lo), float(hi)


def accepted_texts(run: Path) -> list[dict]:
    """Every accepted candidate text of a run: its iteration, agent, text, the direction's word, the
    optimiser's check (``check``: the share of the checked recorded decisions that played the word,
    ``checked``: how many; ``None`` when not checked) and what the actor played with the text at
    that agent's decisions in the candidate's validation episodes (``played``)."""
    out, folder = [], RunFolder(run)
    for done in folder.completed_iterations():
        files = folder.iteration(done["metrics"]["iteration"])
        grads = {}
        path = files.log("gradients")
        for line in path.read_text().splitlines() if path.exists() else []:
            g = json.loads(line)
            grads[g["agent"]] = g
        labels = {}
        if files.log("validation").exists():
            labels = {r["episode"]: r["policies"] for r in map(json.loads, files.log("validation").read_text().splitlines())}
        path = files.log("acceptance")
        for line in path.read_text().splitlines() if path.exists() else []:
            d = json.loads(line)
            if not d["accepted"]:
                continue
            mine = {e for e, label in labels.items() if label == "candidate " + "+".join(d["agents"])}
            for agent in d["agents"]:
                g = grads.get(agent, {})
                word = direction_word(Gradient.model_validate(g["gradient"])) if g else None
                played: Counter[str] = Counter()
                if files.validation_trajectories.exists():
                    for x in files.validation_trajectories.read_text().splitlines():
                        r = json.loads(x)
                        if r.get("type") == "agent_step" and r["agent"] == agent and r["episode"] in mine:
                            played[r["raw_output"]] += 1
                check = g.get("adherence")
                out.append(
                    {
                        "iteration": done["metrics"]["iteration"],
                        "agent": agent,
                        "text": g.get("new"),
                        "word": word or word_of(g.get("new") or ""),
                        "check": None if check is None else check["rate"],
                        "checked": None if check is None else check["decisions"],
                        "rejected": [a["text"] for a in g.get("rejected", [])],
                        "joint": g.get("joint"),
                        "played": dict(played),
                    }
                )
    return out


def followed(a: dict) -> bool | None:
    """Whether the actor played an accepted text's word at >= 90 % of its validation decisions."""
    n = sum(a["played"].values())
    return None if not n else a["played"].get(a["word"], 0) >= 0.9 * n


def table(rows: list[dict], args: argparse.Namespace) -> str:
    lines = [
        "| critic mode | held-out test return: start -> end (95 % CI) | share of the best constant team "
        "(95 % CI) | wrong agents fixed | right agents changed | LLM calls made (uncached) | validation agrees with test "
        "| accepted texts: checked >= 90 % / played >= 90 % in validation |"
        + (" runs above the best one-word team |" if args.best else ""),
        "|---|---|---|---|---|---|---|---|" + ("---|" if args.best else ""),
    ]
    for mode in args.modes:
        rs = [r for r in rows if r["mode"] == mode]
        if not rs:
            continue
        start, end = [r["curve"][0] for r in rs], [r["curve"][-1] for r in rs]
        lo, hi = interval(end)
        fixed = sum(len(r["fixed"]) for r in rs)
        wrong = sum(len(r["wrong"]) for r in rs)
        right = sum(len(r["changed_right"]) for r in rs)
        agree = [a for r in rs for a in r["agreement"]]
        lines.append(
            f"| {mode} | {np.mean(start):.1f} -> {np.mean(end):.1f} [{lo:.1f}, {hi:.1f}] | "
            + (f"{np.mean(end) / args.best:.2f} [{lo / args.best:.2f}, {hi / args.best:.2f}] | " if args.best else "- | ")
            + f"{fixed} of {wrong} | "
            f"{right} of {5 * len(rs) - wrong} | {np.mean([r.get('calls', 0) for r in rs]):.0f} "
            f"({np.mean([r['uncached_calls'] for r in rs]):.0f}) | "
            + (f"{sum(agree)} of {len(agree)}" if agree else "no decision")
            + f" | {adherence_cell([a for r in rs for a in r.get('accepted_texts', [])])} |"
            + (f" {sum(v > args.best_uniform for v in end)} of {len(rs)} |" if args.best else "")
        )
    return "\n".join(lines)


def adherence_cell(accepted: list[dict]) -> str:
    """``k of n / m of n``: accepted texts whose check passed, and that the actor played as their
    word at >= 90 % of the candidate's validation decisions (``-`` without an accepted text)."""
    if not accepted:
        return "-"
    checked = sum(a["check"] is not None and a["check"] >= 0.9 for a in accepted)
    return f"{checked} of {len(accepted)} / {sum(bool(followed(a)) for a in accepted)} of {len(accepted)}"


def accepted_lines(rows: list[dict]) -> str:
    """One line per accepted text: the run, iteration, agent, text, word, the optimiser's check and
    what the actor played in validation."""
    lines = [
        "| run | iteration | agent | accepted text | word | check (decisions) | played in validation | texts refused before it |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for a in r.get("accepted_texts", []):
            check = "not checked" if a["check"] is None else f"{a['check']:.0%} ({a['checked']})"
            played = ", ".join(f"{w} {n}" for w, n in sorted(a["played"].items(), key=lambda wn: -wn[1])) or "-"
            joint = f" (joint: {' + '.join(a['joint'])})" if a.get("joint") else ""
            lines.append(
                f"| {r['mode']}_seed{r['seed']} | {a['iteration']} | {a['agent']}{joint} | {a['text']} | {a['word']} "
                f"| {check} | {played} | {'; '.join(a['rejected']) or '-'} |"
            )
    return "\n".join(lines)


def per_seed(rows: list[dict]) -> str:
    """One line per run: the wrong agents, the team's words (start -> end, pistons 0-4, when
    recorded), the held-out test curve, what changed, calls and time."""
    lines = [
        "| seed | wrong agents | critic mode | team: start -> end | held-out test per iteration (last: final) "
        "| changed | LLM calls made (uncached) | training s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        curve = " -> ".join("n/a" if v is None else f"{v:.1f}" for v in r["curve"])
        words = (
            " -> ".join(" ".join(r[k][a] for a in sorted(r[k])) for k in ("start", "final"))
            if "start" in r and "final" in r
            else "-"
        )
        lines.append(
            f"| {r['seed']} | {', '.join(r['wrong'])} | {r['mode']} | {words} | {curve} | {', '.join(r['changed']) or '-'} "
            f"| {r.get('calls', 0)} ({r['uncached_calls']}) | {r['seconds']:.0f} |"
        )
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for mode in dict.fromkeys(r["mode"] for r in rows):
        rs = [r for r in rows if r["mode"] == mode]
        n = min((len(r["curve"]) for r in rs), default=0)
        if not n:
            continue
        curves = np.array([[np.nan if v is None else v for v in r["curve"][:n]] for r in rs], dtype=float)
        mean = np.nanmean(curves, axis=0)
        ci = [interval(list(curves[:, i])) for i in range(n)]
        xs = np.arange(n)
        ax.plot(xs, mean, "o-", label=mode)
        ax.fill_between(xs, [c[0] for c in ci], [c[1] for c in ci], alpha=0.15)
    ax.set_xlabel("iteration (last point: the final policies)")
    ax.set_ylabel("held-out test return (mean over seeds)")
    ax.set_title("A good team with one or two wrong pistons: which critic finds and fixes them?")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")
