"""The tracker interface: a training :class:`~lang_pz.training.Callback` that sends what a run
measures to an experiment tracker, and the same for a bench.

A tracker implements three primitives (:meth:`Tracker.scalars`, :meth:`Tracker.text`,
:meth:`Tracker.close`); what is logged is decided once, here:

Tags are made of the characters TensorBoard keeps (:func:`tag`; others become ``_``).

- per training episode (x axis ``episode``, counted from 1 in the order episodes finish):
  ``episode/team_return`` and ``episode/return/AGENT``;
- per iteration (x axis ``iteration``): every number of
  :class:`~lang_pz.training.IterationMetrics` (``iteration/train_return``, ``iteration/val_return``,
  ``iteration/candidate_val_return``, ``iteration/test_return`` (the learning curve),
  ``iteration/accepted`` as 1/0, ``iteration/parse_error_rate``, ``iteration/llm_calls``, ...),
  ``usage/ROLE/FIELD`` (calls, cached calls, tokens, cost in US dollars), and as text
  ``policy/AGENT``: each agent's policy after the iteration's update;
- at the end (:meth:`Tracker.finish`): ``final/test_return`` and the final policies as text;
- a bench (x axis ``seed``): ``bench/ENV/TEAM/value`` per episode, and per (env, team) row
  ``bench/ENV/TEAM/mean``, ``ci_low``, ``ci_high`` with the results table as text.

Values that are ``None`` (e.g. no validation this iteration) are not logged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.training import Callback, IterationMetrics, TrainResult, TrainState
from lang_pz.trajectory import Trajectory

#: The numeric fields of :class:`IterationMetrics` logged per iteration (``accepted`` as 1/0).
ITERATION_FIELDS = (
    "train_return",
    "val_return",
    "candidate_val_return",
    "test_return",
    "accepted",
    "parse_error_rate",
    "critic_failures",
    "optimiser_failures",
    "llm_calls",
    "cached_calls",
    "seconds",
)


def tag(*parts: Any) -> str:
    """A tag from its parts joined by ``/``, each character outside ``[A-Za-z0-9_.-]`` as ``_`` (the
    characters TensorBoard keeps, so every tracker shows one name: ``bench/pistonball-v0_n_pistons_5_/random``)."""
    return "/".join(re.sub(r"[^A-Za-z0-9_.\-]", "_", str(p)) for p in parts)


def _numbers(values: Mapping[str, Any]) -> dict[str, float]:
    """The entries of ``values`` that are numbers (booleans as 1/0; ``None`` dropped)."""
    return {k: float(v) for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, str)}


class Tracker(Callback):
    """Interface of an experiment tracker (see the module docstring for what is logged).

    Args:
        config: the run's configuration (``TrainConfig`` fields, or a bench's cases), recorded once.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.config = dict(config or {})
        self.episodes = 0

    # -- what an implementation provides ---------------------------------------------------------

    def scalars(self, axis: str, step: int, values: Mapping[str, float]) -> None:
        """Log numbers at ``step`` of the x axis ``axis`` (``episode``, ``iteration`` or ``seed``)."""
        raise NotImplementedError

    def text(self, axis: str, step: int, tag: str, text: str) -> None:
        """Log a text (a policy, a table) under ``tag`` at ``step`` of ``axis``."""
        raise NotImplementedError

    def close(self) -> None:
        """Flush and release the tracker's files (called once, last)."""
        raise NotImplementedError

    # -- the callbacks a training run calls --------------------------------------------------------

    def on_episode(self, iteration: int, trajectory: Trajectory) -> None:
        """Log a finished training episode's returns."""
        self.episodes += 1
        self.scalars(
            "episode",
            self.episodes,
            {
                "episode/team_return": trajectory.team_return,
                **{tag("episode/return", a): r for a, r in trajectory.returns.items()},
            },
        )

    def on_iteration(self, metrics: IterationMetrics, state: TrainState) -> None:
        """Log an iteration's metrics, usage per role and the policies after its update."""
        fields = {f"iteration/{k}": getattr(metrics, k) for k in ITERATION_FIELDS}
        usage = {tag("usage", role, k): v for role, u in metrics.usage.items() for k, v in u.items()}
        self.scalars("iteration", metrics.iteration, _numbers({**fields, **usage}))
        for agent, policy in state.policies.items():
            self.text("iteration", metrics.iteration, tag("policy", agent), policy)

    def finish(self, result: TrainResult) -> None:
        """Log what only the end of a run knows: the final policies' held-out test value and texts."""
        step = len(result.metrics)
        if result.final_test_return is not None:
            self.scalars("iteration", step, {"final/test_return": result.final_test_return})
        for agent, policy in result.final_policies.items():
            self.text("iteration", step, tag("final/policy", agent), policy)

    # -- a bench -----------------------------------------------------------------------------------

    def bench_episode(self, record: Mapping[str, Any]) -> None:
        """Log one bench episode record (:func:`lang_pz.bench.run_bench`'s ``on_episode``)."""
        key = tag("bench", record["env"], record["team"], "value")
        self.scalars("seed", int(record["seed"]), {key: record["value"]})

    def bench_rows(self, rows: Sequence[Any], table: str) -> None:
        """Log each results row's mean and interval, and the results table as text."""
        for r in rows:
            row = r.as_dict()
            self.scalars(
                "seed",
                0,
                _numbers(
                    {
                        tag("bench", row["env"], row["team"], k): row[k]
                        for k in ("mean", "ci_low", "ci_high", "episodes", "llm_calls")
                    }
                ),
            )
        self.text("seed", 0, "bench/results", table)


class Trackers:
    """Several trackers used together, closed on exit (``with open_trackers(...) as t:``).

    Attributes:
        trackers: the trackers (also the training callbacks: pass ``callbacks=t.trackers``).
    """

    def __init__(self, trackers: Sequence[Tracker]) -> None:
        self.trackers = list(trackers)

    def finish(self, result: TrainResult) -> None:
        for t in self.trackers:
            t.finish(result)

    def bench_episode(self, record: Mapping[str, Any]) -> None:
        for t in self.trackers:
            t.bench_episode(record)

    def bench_rows(self, rows: Sequence[Any], table: str) -> None:
        for t in self.trackers:
            t.bench_rows(rows, table)

    def __enter__(self) -> Trackers:
        return self

    def __exit__(self, *exc: object) -> None:
        for t in self.trackers:
            t.close()


def config_text(config: Mapping[str, Any]) -> str:
    """The configuration as indented JSON (how trackers without a config store record it)."""
    return json.dumps(config, indent=1, default=str)
