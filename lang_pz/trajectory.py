"""Trajectories: what happened in an episode, recorded as JSONL as it happens.

One JSON object per line, each with a ``"type"``:

- ``"agent_step"`` (one per agent decision): ``episode``, ``step``, ``agent``,
  ``observation`` (the text the agent saw), ``raw_output`` (the policy's text),
  ``action`` (the parsed environment action, JSON-able), ``parse_error`` (``null`` or the
  reason), ``reward`` (reward the agent received for this step), ``prompt_tokens``,
  ``completion_tokens``, ``latency_s``, ``meta`` (what the policy reported about the
  decision, e.g. an invoked skill; ``raw_observation: true`` when the policy read the
  environment's raw observation instead of only its text), ``legal_actions`` (the action
  words the agent was offered, or ``null`` for free text / continuous actions). A
  ``raw_output`` longer than the writer's ``max_raw_output_chars`` (default
  :data:`MAX_RAW_OUTPUT_CHARS`) is stored cut, with ``raw_output_chars`` (its full length) and
  ``raw_output_truncated: true`` (:func:`lang_pz.spaces.stored_text`); only the file is cut,
  the :class:`Trajectory` in memory keeps it whole.
- ``"state"`` (one per environment step, before the agents act): ``episode``, ``step``,
  ``text`` — a rendering of the global state. Only the centralised critic reads it
  (centralised training, decentralised execution); policies never see it.
- ``"episode_end"``: ``episode``, ``seed``, ``returns`` (agent -> return), ``steps``.

Records are written in time order: an AEC agent's step is written once its reward is known
(by its next turn), but never before an earlier step of another agent.

Every line is flushed when written, so a crash or kill loses at most the step in flight.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from lang_pz.spaces import stored_text

#: Longest ``raw_output`` a :class:`TrajectoryWriter` stores, in characters (a reply of 4,096
#: tokens is about 16,000); see the module docstring. Keep it above the env's action bound
#: (``action_space(agent).max_length``; 1,024 by default, 8,192 for the task envs): a replay
#: from the file (:mod:`lang_pz.policies.replay`) then sends an action that is refused or read
#: exactly as the original was (any reply longer than the bound is refused, whatever its length).
MAX_RAW_OUTPUT_CHARS: int = 32_768


@dataclass
class AgentStep:
    """One agent decision. See the module docstring for the fields."""

    episode: int
    step: int
    agent: str
    observation: str
    raw_output: str
    action: Any
    parse_error: str | None
    reward: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    legal_actions: list[str] | None = None
    raw_output_chars: int | None = None  # read back from a file that stored raw_output cut: its full length


@dataclass
class Trajectory:
    """One episode in memory: the agents' steps, the global state per step and the returns.

    Attributes:
        episode: episode index within its run.
        seed: the ``reset`` seed.
        steps: agent steps in the order they happened.
        states: step index -> global state text (critic only).
        returns: agent -> undiscounted episode return.
        finished: whether the episode ended (set by :func:`rollout` and by
            :func:`read_trajectories` on an ``episode_end`` record).
    """

    episode: int
    seed: int | None
    steps: list[AgentStep] = field(default_factory=list)
    states: dict[int, str] = field(default_factory=dict)
    returns: dict[str, float] = field(default_factory=dict)
    finished: bool = False

    @property
    def agents(self) -> list[str]:
        """Agents that acted, in order of first appearance."""
        return list(dict.fromkeys(s.agent for s in self.steps))

    @property
    def team_return(self) -> float:
        """Sum of the agents' returns."""
        return float(sum(self.returns.values()))

    def agent_steps(self, agent: str) -> list[AgentStep]:
        return [s for s in self.steps if s.agent == agent]


def to_jsonable(x: Any) -> Any:
    """NumPy arrays and scalars (also inside dicts and lists) as plain Python values."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    return x


class TrajectoryWriter:
    """Append trajectory records to a JSONL file, flushing every line (thread-safe).

    Args:
        path: file to append to (parent folders are created).
        max_raw_output_chars: longest ``raw_output`` stored whole (>= 0 characters; see the
            module docstring).
    """

    #: See ``max_raw_output_chars`` (a class default, so :class:`TrajectoryBuffer` has it too).
    max_raw_output_chars: int = MAX_RAW_OUTPUT_CHARS

    def __init__(self, path: str | Path, *, max_raw_output_chars: int = MAX_RAW_OUTPUT_CHARS) -> None:
        if isinstance(max_raw_output_chars, bool) or not isinstance(max_raw_output_chars, int) or max_raw_output_chars < 0:
            raise ValueError(f"max_raw_output_chars must be an int >= 0, got {max_raw_output_chars!r}")
        self.max_raw_output_chars = max_raw_output_chars
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f: IO[str] = self.path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def _write(self, record: dict[str, Any]) -> None:
        self.write_lines([json.dumps(to_jsonable(record)) + "\n"])

    def write_lines(self, lines: Sequence[str]) -> None:
        """Append whole lines at once (e.g. a finished episode's, from a :class:`TrajectoryBuffer`)."""
        with self._lock:
            self._f.write("".join(lines))
            self._f.flush()

    def state(self, episode: int, step: int, text: str) -> None:
        self._write({"type": "state", "episode": episode, "step": step, "text": text})

    def agent_step(self, s: AgentStep) -> None:
        """Write one agent step; its ``raw_output`` is cut to :attr:`max_raw_output_chars`."""
        record = {"type": "agent_step", **asdict(s)}
        full = record.pop("raw_output_chars")
        record.update(stored_text("raw_output", s.raw_output, self.max_raw_output_chars))
        if full is not None and "raw_output_chars" not in record:  # a step read back cut, written again
            record.update(raw_output_chars=full, raw_output_truncated=True)
        self._write(record)

    def episode_end(self, episode: int, seed: int | None, returns: dict[str, float], steps: int) -> None:
        self._write({"type": "episode_end", "episode": episode, "seed": seed, "returns": returns, "steps": steps})

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TrajectoryBuffer(TrajectoryWriter):
    """The records of one episode in memory, in the order a :class:`TrajectoryWriter` would write
    them; :meth:`flush_to` appends them to a file at once (concurrent episodes each keep their
    lines together, and an unfinished episode never reaches the file)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def write_lines(self, lines: Sequence[str]) -> None:
        with self._lock:
            self.lines += lines

    def __getstate__(self) -> dict[str, Any]:
        return {"lines": self.lines}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.lines = state["lines"]
        self._lock = threading.Lock()

    def flush_to(self, writer: TrajectoryWriter) -> None:
        """Append the buffered lines to ``writer``'s file."""
        writer.write_lines(self.lines)

    def close(self) -> None:
        """Nothing to close."""


def read_trajectories(path: str | Path, *, finished_only: bool = False) -> list[Trajectory]:
    """Read every episode of a JSONL trajectory file, including an unfinished last one.

    A truncated last line (a write cut by a kill) is skipped. With ``finished_only``, only
    episodes whose ``episode_end`` record was written are returned (what a resumed run keeps).
    """
    trajs = list(_iter_trajectories(Path(path).read_text(encoding="utf-8").splitlines()))
    return [t for t in trajs if t.finished] if finished_only else trajs


def _iter_trajectories(lines: Iterable[str]) -> Iterator[Trajectory]:
    by_ep: dict[int, Trajectory] = {}
    for line in lines:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        ep = int(rec["episode"])
        traj = by_ep.setdefault(ep, Trajectory(episode=ep, seed=None))
        kind = rec.pop("type")
        if kind == "agent_step":
            rec.pop("raw_output_truncated", None)  # raw_output_chars says it
            traj.steps.append(AgentStep(**rec))
        elif kind == "state":
            traj.states[int(rec["step"])] = rec["text"]
        elif kind == "episode_end":
            traj.seed = rec["seed"]
            traj.returns = {k: float(v) for k, v in rec["returns"].items()}
            traj.finished = True
    yield from by_ep.values()
