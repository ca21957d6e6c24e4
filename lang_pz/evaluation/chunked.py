"""Assess a long trajectory in several critic calls, so that every step is shown.

:class:`~lang_pz.critics.CentralCritic` renders at most ``max_prompt_steps`` steps within
``max_prompt_chars``, evenly subsampling longer trajectories: on Who&When's hand-crafted logs
(cut to 40 steps) the labelled mistake step was absent from the prompt in 13 of 58. A
:class:`ChunkedCritic` instead splits the trajectory into the fewest consecutive chunks that
the critic renders in full (every step shown, each state cut to the critic's minimum if
need be), asks once per chunk, and combines:

- an agent's credit is the mean of its credits over the chunks it acts in (the minimum would
  favour blaming agents that act in many chunks);
- it cites the steps of its lowest-credit chunk;
- ``shown_steps`` is the union of the chunks' shown steps, and the report's generations and
  errors are every chunk's.

Each chunk's first state is prefixed with ``task`` (e.g. the question the team failed), so a
later chunk is not read without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from lang_pz.critics.base import Credit, CriticReport, compute_evidence
from lang_pz.critics.central import CentralCritic
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.error import LangPZError
from lang_pz.trajectory import Trajectory


def sub_trajectory(trajectory: Trajectory, steps: Sequence[int], task: str | None = None) -> Trajectory:
    """The part of ``trajectory`` at ``steps``: its agent steps and states, each agent's return
    spread evenly over the agents acting there (the whole team return is kept), and ``task``
    prefixed to the first state."""
    keep = set(steps)
    part = Trajectory(
        episode=trajectory.episode,
        seed=trajectory.seed,
        steps=[s for s in trajectory.steps if s.step in keep],
        states={t: x for t, x in trajectory.states.items() if t in keep},
        finished=trajectory.finished,
    )
    agents = part.agents
    part.returns = {a: trajectory.team_return / len(agents) for a in agents}
    first = min(keep)
    if task and not part.states.get(first, "").startswith(task):
        part.states[first] = f"{task}\n{part.states.get(first, '')}".strip()
    return part


def chunks_for(
    critic: CentralCritic, trajectory: Trajectory, task: str | None = None, policies: Mapping[str, str] | None = None
) -> list[list[int]]:
    """The fewest consecutive, near-equal chunks of ``trajectory``'s steps that ``critic``
    renders in full (:meth:`~lang_pz.critics.CentralCritic.layout` shows every step)."""
    steps = sorted({s.step for s in trajectory.steps})
    for k in range(1, len(steps) + 1):
        parts = [list(p) for p in np.array_split(np.array(steps), k) if len(p)]
        if all(len(critic.layout(sub_trajectory(trajectory, p, task), policies)[1]) == len(p) for p in parts):
            return [[int(t) for t in p] for p in parts]
    return [[t] for t in steps]  # pragma: no cover - one step always fits


class ChunkedCritic:
    """Wrap a :class:`~lang_pz.critics.CentralCritic` so that every step is shown (module docstring).

    Args:
        critic: the critic asked once per chunk.
        task: text prefixed to each chunk's first state (e.g. ``"Task (the team failed it): ..."``).
    """

    def __init__(self, critic: CentralCritic, task: str | None = None) -> None:
        self.critic, self.task = critic, task
        self.mode = critic.mode

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[Counterfactual] = (),
    ) -> CriticReport:
        """Assess chunk by chunk and combine (see the module docstring).

        Raises:
            LangPZError: the trajectory has no agent steps; from the critic.
        """
        if not trajectory.agents:
            raise LangPZError(f"trajectory of episode {trajectory.episode} has no agent steps to assess")
        parts = chunks_for(self.critic, trajectory, self.task, policies)
        reports = [self.critic.assess(sub_trajectory(trajectory, p, self.task), policies, counterfactuals) for p in parts]
        if len(reports) == 1:
            return reports[0].model_copy(update={"shown_steps": sorted(reports[0].shown_steps)})
        credits: dict[str, Credit] = {}
        for a in trajectory.agents:
            mine = [r.credits[a] for r in reports if a in r.credits]
            low = min(mine, key=lambda c: c.credit)
            credits[a] = low.model_copy(update={"credit": float(np.mean([c.credit for c in mine]))})
        return CriticReport(
            episode=trajectory.episode,
            credits=credits,
            team_return=trajectory.team_return,
            mode=self.critic.mode,
            counterfactuals=reports[0].counterfactuals,
            evidence=compute_evidence(trajectory),
            shown_steps=sorted({t for r in reports for t in r.shown_steps}),
            total_steps=len({s.step for s in trajectory.steps}),
            errors=[e for r in reports for e in r.errors],
            generations=[g for r in reports for g in r.generations],
        )

    def calls_needed(self, trajectory: Trajectory, policies: Mapping[str, str] | None = None) -> int:
        """How many chunks (calls before retries) ``trajectory`` needs."""
        return len(chunks_for(self.critic, trajectory, self.task, policies))
