"""How a trajectory is shown to an LLM critic: a compact text within a character budget.

The rendering puts *evidence the system computes* first (returns, team return, action counts,
parse errors, counterfactual re-runs), since free-form judgement from a small model is noise,
then per step the global state text and each agent's action, evenly subsampled and shortened
to fit (saying so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from lang_pz.critics.base import _clip, _fmt, compute_evidence, shown_action
from lang_pz.trajectory import Trajectory

#: A worked example shown before the real episode (toy agents and task, unrelated to any
#: environment; differentiated credits that follow the computed evidence).
CRITIC_EXAMPLE = """Agents: robot_a, robot_b.
Evidence (computed from all 3 steps):
Team return: 2.0
- robot_a: return 4.0; actions push x3; parse errors 0
- robot_b: return -2.0; actions wait x3; parse errors 0
Steps (all 3):
Step 0: The box is 3 m from the goal.
  actions: robot_a push; robot_b wait
Step 1: The box is 2 m from the goal.
  actions: robot_a push; robot_b wait
Step 2: The box is 1 m from the goal.
  actions: robot_a push; robot_b wait
Credits as JSON:
{"robot_a": {"credit": 1.0, "steps": [0, 1], "explanation": "highest return; pushed at every step"}, \
"robot_b": {"credit": -0.5, "steps": [1], "explanation": "negative return; only waited"}}"""


#: The worked example in ``"central_global"`` mode: the same toy episode, one shared critique.
GLOBAL_EXAMPLE = (
    CRITIC_EXAMPLE.rsplit("Credits as JSON:", 1)[0]
    + """Credits as JSON:
{"team": {"credit": 0.5, "steps": [0, 1], "explanation": "the box moved, but only one robot pushed"}}"""
)


#: Longest / shortest global-state text shown per step in the critic prompt (characters).
MAX_STATE_CHARS = 240
MIN_STATE_CHARS = 60


def subsample_steps(steps: Sequence[int], k: int) -> list[int]:
    """At most ``k`` of ``steps`` (sorted, distinct), evenly spaced, first and last included."""
    uniq = sorted(set(steps))
    if k <= 0:
        raise ValueError(f"k must be > 0, got {k}")
    if len(uniq) <= k:
        return uniq
    idx = np.unique(np.linspace(0, len(uniq) - 1, k).round().astype(int))
    return [uniq[i] for i in idx]


def render_trajectory(
    trajectory: Trajectory,
    policies: Mapping[str, str] | None = None,
    extra_evidence: Sequence[str] = (),
    *,
    max_prompt_steps: int = 40,
    max_prompt_chars: int = 5000,
) -> tuple[str, list[int]]:
    """The trajectory as the critic sees it, and the steps shown.

    Policies, the computed evidence (with ``extra_evidence`` lines, e.g. counterfactual
    re-runs, after the per-agent facts), then per shown step the global state text and each
    agent's action. Steps are evenly subsampled to ``max_prompt_steps``; if the rendering
    would exceed ``max_prompt_chars``, state texts are shortened (down to
    :data:`MIN_STATE_CHARS`) and then fewer steps are shown — the text says which.
    """

    agents = trajectory.agents
    all_steps = sorted({s.step for s in trajectory.steps})
    ev = compute_evidence(trajectory)
    head = [f"Agents: {', '.join(agents)}."]
    if policies:
        head.append("Policies:")
        head += [f"- {a}: {_clip(policies[a], 200)}" for a in agents if a in policies]
    head.append(f"Evidence (computed from all {len(all_steps)} steps):")
    head.append(f"Team return: {_fmt(trajectory.team_return)}")
    for a in agents:
        e = ev[a]
        acts = ", ".join(f"{k} x{v}" for k, v in e.action_counts.items())
        head.append(f"- {a}: return {_fmt(e.agent_return)}; actions {acts}; parse errors {e.parse_errors}")
    if extra_evidence:
        head.append("Counterfactual re-runs (same seed, computed):")
        head += [f"- {line}" for line in extra_evidence]
    acted: dict[int, list[str]] = {}
    for s in trajectory.steps:
        err = f" (unparsable output {_clip(s.raw_output, 30)!r})" if s.parse_error is not None else ""
        acted.setdefault(s.step, []).append(f"{s.agent} {shown_action(s)}{err}")
    action_lines = {t: "  actions: " + "; ".join(v) for t, v in acted.items()}

    shown = subsample_steps(all_steps, max_prompt_steps)
    budget = max_prompt_chars - sum(len(x) + 1 for x in head) - 80
    while True:
        fixed = sum(len(action_lines[t]) + len(f"Step {t}: ") + 2 for t in shown)
        state_chars = min(MAX_STATE_CHARS, (budget - fixed) // max(1, len(shown)))
        if state_chars >= MIN_STATE_CHARS or len(shown) <= 2:
            state_chars = max(state_chars, MIN_STATE_CHARS)
            break
        shown = subsample_steps(all_steps, max(2, len(shown) * 2 // 3))
    note = []
    if len(shown) < len(all_steps):
        note.append(f"{len(shown)} of {len(all_steps)}, evenly spaced; others omitted")
    else:
        note.append(f"all {len(all_steps)}")
    longest = max((len(" ".join(trajectory.states.get(t, "").split())) for t in shown), default=0)
    if longest > state_chars:
        note.append(f"states cut to {state_chars} characters")
    lines = head + [f"Steps ({'; '.join(note)}):"]
    for t in shown:
        state = trajectory.states.get(t)
        lines.append(f"Step {t}: {_clip(state, state_chars)}" if state else f"Step {t}:")
        lines.append(action_lines[t])
    return "\n".join(lines), shown


def own_view(trajectory: Trajectory, agent: str) -> Trajectory:
    """The part of ``trajectory`` one agent took part in: its own steps, its own observations
    in place of the global state, its own return (the ``"independent"`` critic's view)."""
    steps = trajectory.agent_steps(agent)
    return Trajectory(
        episode=trajectory.episode,
        seed=trajectory.seed,
        steps=steps,
        states={s.step: s.observation for s in steps},
        returns={agent: trajectory.returns.get(agent, float(sum(s.reward for s in steps)))},
        finished=trajectory.finished,
    )
