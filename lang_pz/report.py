"""Reports on a training run folder: a learning-curve PNG and a text summary.

The run folder is read by :func:`lang_pz.run_summary.load_run` (re-exported here with the
records it returns); see :mod:`lang_pz.run_summary` for the layout it reads. Accept/reject is
the training loop's validation-gated update (see :mod:`lang_pz.training`).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from lang_pz.blame import blame_text
from lang_pz.differentiation import differentiation_lines, role_differentiation
from lang_pz.drops import unplayed_drops
from lang_pz.run_summary import ROLES, IterationRecord, RoleUsage, RunSummary, _critic_mode, load_run
from lang_pz.runs import RunFolder, read_jsonl

__all__ = [
    "ROLES",
    "IterationRecord",
    "RoleUsage",
    "RunSummary",
    "candidate_counts",
    "decision_totals",
    "decisions",
    "load_run",
    "plot_learning_curve",
    "skill_lines",
    "summary_text",
    "word_diff",
]


def plot_learning_curve(run: RunSummary, path: str | Path) -> Path:
    """Write a PNG learning curve: the run's objective (y) per iteration (x).

    With held-out ``test_seeds`` (the same seeds every iteration, never used for a decision) the
    test value of each iteration's starting policies, and of the final policies, is the curve.
    Training returns come from new seeds every iteration, so they are drawn faintly and not
    joined (a line through them would show learning where the policies did not change). Also:
    the validation value, and each proposed update at its candidate's validation value: green
    ▲ accepted, red ✕ rejected. Below it, when the run has two agents or more, their role
    differentiation per iteration (:mod:`lang_pz.differentiation`: policy-text and action
    divergence, 0..1). Uses the Agg canvas (no display needed). Returns ``path``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    roles = [r for r in role_differentiation(run.run_dir) if r.iteration is not None and r.agents > 1]
    fig = Figure(figsize=(7, 6.0 if roles else 4.2), dpi=110)
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2, 1, height_ratios=[3, 1.3]) if roles else None
    ax, ms = (fig.add_subplot(grid[0]) if grid is not None else fig.add_subplot()), run.metrics
    xs = [m.iteration for m in ms]
    tested = [(m.iteration, m.test_return) for m in ms if m.test_return is not None]
    pts = [(m.iteration, r) for m in ms for r in m.train_returns]
    if tested:
        if run.final_test_return is not None:
            tested.append((len(ms), run.final_test_return))
        ax.plot(*zip(*tested), "D-", color="tab:purple", lw=2, label="held-out test (same seeds every iteration)")
        if pts:
            px, py = zip(*pts)
            ax.scatter(px, py, s=12, color="tab:blue", alpha=0.25, label="training episodes (new seeds each iteration)")
    else:
        if pts:
            px, py = zip(*pts)
            ax.scatter(px, py, s=12, color="tab:blue", alpha=0.25, label="training episode")
        ax.plot(xs, [m.train_return for m in ms], "o-", color="tab:blue", label="training return (mean; new seeds)")
    val = [(m.iteration, m.val_return) for m in ms if m.val_return is not None]
    if val:
        ax.plot(*zip(*val), "s--", color="tab:orange", label="validation")
    for ok, marker, color, label in (
        (True, "^", "tab:green", "update accepted"),
        (False, "x", "tab:red", "update rejected"),
    ):
        sel = [
            (m.iteration, m.train_return if m.candidate_val_return is None else m.candidate_val_return)
            for m in ms
            if m.accepted is ok
        ]
        if sel:
            sx, sy = zip(*sel)
            ax.scatter(sx, sy, marker=marker, s=70, color=color, zorder=3, label=f"{label} (candidate val.)")
    if not ms:
        ax.text(0.5, 0.5, "no completed iteration yet", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("iteration")
    ax.set_ylabel(str(run.config.get("objective") or "team return (sum of agents' rewards)"))
    method = (
        "MASkills: skill library" if run.config.get("method") == "maskills" else f"critic mode: {_critic_mode(run.config)}"
    )
    ax.set_title(f"{run.config.get('env_id', '?')} - {method}" + ("" if run.finished else " (unfinished)"))
    if xs:
        final = tested and run.final_test_return is not None
        ax.set_xticks(xs + ([len(ms)] if final else []), [str(x) for x in xs] + (["final"] if final else []))
        ax.legend(fontsize="small", loc="best")
    ax.grid(alpha=0.3)
    if grid is not None:
        low = fig.add_subplot(grid[1], sharex=ax)
        for attr, style, label in (
            ("policy_divergence", "o-", "policy text (Jaccard distance of word sets)"),
            ("action_divergence", "s--", "played actions (Jensen-Shannon divergence)"),
        ):
            marks = [(r.iteration, getattr(r, attr)) for r in roles if getattr(r, attr) is not None]
            if marks:
                low.plot(*zip(*marks), style, ms=4, label=label)
        low.set_ylim(-0.03, 1.03)
        low.set_ylabel("role divergence", fontsize="small")
        low.set_xlabel("iteration (mean over pairs of agents; 0 = alike)", fontsize="small")
        low.legend(fontsize="x-small", loc="upper left")
        low.grid(alpha=0.3)
    fig.tight_layout()
    (out := Path(path)).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png")
    return out


def word_diff(old: str, new: str) -> str:
    """Word-level diff in ``git diff --word-diff`` style: ``[-removed-]{+added+}``."""
    a, b = old.split(), new.split()
    parts: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(" ".join(a[i1:i2]))
        if op in ("delete", "replace"):
            parts.append("[-" + " ".join(a[i1:i2]) + "-]")
        if op in ("insert", "replace"):
            parts.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(parts)


def _num(x: float | None, fmt: str = "9.1f") -> str:
    return format(x, fmt) if x is not None else format("-", ">" + fmt.split(".")[0])


def _role_cell(u: RoleUsage | None) -> str:
    cost = "" if u is None or u.cost_usd is None else f" ${u.cost_usd:.4f}"
    return f"{'-':>17}" if u is None else f"{u.prompt_tokens + u.completion_tokens:>7d}t{cost:>9}"


def decisions(run: RunSummary) -> list[tuple[int, str]]:
    """Per completed iteration, one line: the agent(s) with the lowest mean credit ("blamed") and
    the steps their credits cite (:func:`lang_pz.blame.blame_text`), a flag per gradient whose
    drop names an action its agent never played (:func:`lang_pz.drops.unplayed_drops`), the
    agents gated for lack of evidence, and each validated candidate's verdict with both values."""
    folder, out = RunFolder(run.run_dir), []
    for m in run.metrics:
        files = folder.iteration(m.iteration)
        parts = []
        credits = read_jsonl(files.log("credits"))
        blame = blame_text(credits)
        if blame is not None:
            parts.append(blame)
        parts += [f"flag: {n}" for n in unplayed_drops(read_jsonl(files.log("gradients")), credits)]
        if m.gated_agents:
            parts.append(f"no evidence for {', '.join(m.gated_agents)}")
        for d in read_jsonl(files.log("acceptance")):
            if not isinstance(d.get("agents"), list) or not {"accepted", "val_return", "candidate_val_return"} <= d.keys():
                continue  # damaged: not a decision the loop wrote
            verdict = "accepted" if d["accepted"] else "rejected"
            parts.append(
                f"{'+'.join(d['agents'])} changed, validation {_num(d['val_return'], '.1f').strip()} -> "
                f"{_num(d['candidate_val_return'], '.1f').strip()}: {verdict}"
            )
        if not m.changed_agents:
            parts.append("no policy changed")
        out.append((m.iteration, "; ".join(parts)))
    return out


def skill_lines(run: RunSummary) -> list[str]:
    """A skills run (``method: maskills``): per completed iteration, its library's version and
    size, each edit kept or rolled back (with the validation values), and the library diff to the
    next iteration's (``lang_pz.skills.diff``)."""
    from lang_pz.error import LangPZError
    from lang_pz.skills.diff import diff_libraries
    from lang_pz.skills.files import read_library

    folder = RunFolder(run.run_dir)
    out = ["skill library per iteration (edits kept or rolled back; diff to the next library):"]
    for m in run.metrics:
        files = folder.iteration(m.iteration)
        nxt = folder.iteration(m.iteration + 1).skills
        nxt = nxt if nxt.is_dir() else folder.final_skills
        try:
            lib = read_library(files.skills)
            after = read_library(nxt) if nxt.is_dir() else None
        except (LangPZError, OSError) as exc:
            out.append(f"  {m.iteration}: library unreadable ({exc})")
            continue
        out.append(f"  {m.iteration}: library version {lib.version}, {len(lib)} skill(s)")
        for e in read_jsonl(files.skill_edits):
            if e.get("event") in ("kept", "rolled_back"):
                out.append(f"     {e['label']}: {e['note']}")
        if after is not None:
            diff = diff_libraries(lib, after)
            if diff.empty:
                out.append("     library unchanged")
            else:
                out += [f"     {line}" for line in diff.render(f"iter {m.iteration}", "next").splitlines()]
    return out


def candidate_counts(run: RunSummary, m: IterationRecord) -> tuple[int, int] | None:
    """``(accepted, rejected)`` candidates of iteration ``m``: one per agent (or skill edit) whose
    candidate was validated, from its ``acceptance.jsonl`` (a joint decision counts each of its
    agents), else from the metrics' ``changed_agents`` / ``accepted_agents``; ``None`` for records
    of older versions that list neither."""
    decisions = read_jsonl(RunFolder(run.run_dir).iteration(m.iteration).log("acceptance"))
    if decisions:
        acc = sum(len(d.get("agents") or [None]) for d in decisions if d.get("accepted"))
        rej = sum(len(d.get("agents") or [None]) for d in decisions if not d.get("accepted"))
        return acc, rej
    if m.accepted is None:
        return 0, 0
    if m.accepted_agents is None:
        return None
    return len(m.accepted_agents), len(set(m.changed_agents) - set(m.accepted_agents))


def decision_totals(run: RunSummary) -> list[str]:
    """The totals of the validated update, saying what each number counts: candidates (one per
    agent policy or skill edit validated) accepted and rejected, and iterations by outcome."""
    ms = run.metrics
    counts = [candidate_counts(run, m) for m in ms]
    out = []
    if all(c is not None for c in counts):
        acc = sum(c[0] for c in counts if c is not None)
        rej = sum(c[1] for c in counts if c is not None)
        out.append(f"  candidates: {acc} accepted, {rej} rejected (of {acc + rej} validated)")
    out.append(
        f"  iterations: {len(ms)} done: {sum(m.accepted is True for m in ms)} with a candidate accepted, "
        f"{sum(m.accepted is False for m in ms)} with every candidate rejected, "
        f"{sum(m.accepted is None for m in ms)} with no candidate"
    )
    return out


def summary_text(run: RunSummary) -> str:
    """A terminal-readable summary: run, per-iteration table, totals, policy diffs."""
    c, ms = run.config, run.metrics
    lines = [
        f"run: {run.run_dir}",
        f"env: {c.get('env_id', '?')} {json.dumps(c.get('env_kwargs', {}))}",
        (
            "method: maskills (a skill library is trained)"
            if c.get("method") == "maskills"
            else f"critic mode: {_critic_mode(c)}"
        ),
        f"iterations done: {len(ms)} of {c.get('iterations', '?')}"
        + ("" if run.finished else " (unfinished: no final/policies)"),
        "",
    ]
    head = (
        f"{'iter':>4} {'test':>9} {'train':>9} {'val':>9} {'cand val':>9} {'update':>8} {'changed':>7} "
        f"{'calls':>6} " + " ".join(f"{r + ' tok/$':>17}" for r in ROLES)
    )
    lines += [head, "-" * len(head)]
    for m in ms:
        update = {True: "accepted", False: "rejected", None: "none"}[m.accepted]
        lines.append(
            f"{m.iteration:>4} {_num(m.test_return)} {_num(m.train_return)} {_num(m.val_return)} "
            f"{_num(m.candidate_val_return)} {update:>8} {len(m.changed_agents):>7} {m.llm_calls:>6} "
            + " ".join(_role_cell(m.usage.get(r)) for r in ROLES)
        )
    if run.final_test_return is not None:
        lines.append(f"{'end':>4} {_num(run.final_test_return)}   (held-out test of the final policies)")
    lines += ["", "per iteration: who the critic blamed, what changed, what validation decided:"]
    lines += [f"  {it}: {text}" for it, text in decisions(run)]
    roles = differentiation_lines(role_differentiation(run.run_dir))
    lines += ["", *roles] if roles else []
    lost = sum(u.calls for m in ms for u in m.interrupted_usage.values())
    running = sum(u.calls for u in run.running_usage.values())
    extra = [f"+{lost} in interrupted attempts"] if lost else []
    if running:  # the iteration after the last completed one: its usage.json, no done.json yet
        extra.append(f"+{running} in iteration {ms[-1].iteration + 1 if ms else 0}, not finished (running or interrupted)")
    more = " (" + "; ".join(extra) + ")" if extra else ""
    totals = (
        f"totals: {sum(m.llm_calls for m in ms)} LLM calls{more}, {sum(m.seconds for m in ms):.1f} s, "
        f"{sum(m.critic_failures for m in ms)} critic and {sum(m.optimiser_failures for m in ms)} optimiser failure(s)"
    )
    lines += ["", totals]
    for r in ROLES:  # what was spent: completed and interrupted attempts, and the unfinished iteration
        us = [u[r] for m in ms for u in (m.usage, m.interrupted_usage) if r in u]
        us += [run.running_usage[r]] if r in run.running_usage else []
        if us:
            costs = [u.cost_usd for u in us if u.cost_usd is not None]
            cost = f"${sum(costs):.4f}" if costs else "cost unknown"
            lines.append(
                f"  {r:<9} {sum(u.calls for u in us)} calls ({sum(u.cached_calls for u in us)} cached), "
                f"{sum(u.prompt_tokens for u in us)} prompt + {sum(u.completion_tokens for u in us)} "
                f"completion tokens, {cost}"
            )
    lines += decision_totals(run)
    if c.get("method") == "maskills":
        lines += ["", *skill_lines(run)]
    lines += ["", "policies, initial -> final ([-removed-] {+added+}):"]
    for agent in sorted(run.initial_policies.keys() | run.final_policies.keys()):
        old, new = run.initial_policies.get(agent, ""), run.final_policies.get(agent, "")
        lines.append(f"  {agent}: " + (f"unchanged: {old}" if old == new else word_diff(old, new)))
    return "\n".join(lines)
