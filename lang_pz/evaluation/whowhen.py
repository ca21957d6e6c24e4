"""Who&When cases as trajectories: score a critic's "which agent, which step" on failed runs.

Who&When (Zhang et al. 2025, "Which Agent Causes Task Failures and When? On Automated
Failure Attribution of LLM Multi-Agent Systems", ICML) labels failed multi-agent runs with
the agent and the step of the decisive mistake. Its public layout, which this module reads:
a folder (searched recursively, e.g. ``Algorithm-Generated/`` and ``Hand-Crafted/``) of JSON
files, one case each::

    {
      "history": [                                   # the run, one message per step
        {"role": "assistant", "name": "Excel_Expert", "content": "..."},
        {"role": "Orchestrator (thought)", "content": "..."},   # no "name": role is the agent
        ...
      ],
      "mistake_agent": "Excel_Expert",               # who made the decisive mistake
      "mistake_step": "0",                           # 0-based index into history (str or int)
      "question": "...", "ground_truth": "...", "is_correct": false, ...   # other keys kept
    }

The agent of an entry is its ``name`` when that is a non-empty string, else its ``role``,
with a trailing parenthesised note dropped (``"Orchestrator (thought)"`` and
``"Orchestrator (-> WebSurfer)"`` are both ``Orchestrator``, the spelling ``mistake_agent``
uses); ``mistake_agent`` is matched to those names ignoring case. An entry whose agent is a
*task poser* (:data:`TASK_POSERS`: the hand-crafted logs' ``human``, who asks the question) is
not an agent: its message is kept as the task, but it is never credited or blamed, and does
not count in the chance of a blind guess.

Reading is robust and never silent: a file that is not JSON, lacks a key, has an empty or
badly typed history, a ``mistake_step`` that is not an index into it, or a ``mistake_agent``
that never speaks (or is the task poser) is listed in :attr:`WhoWhenData.malformed` with the
reason, and skipped.

Each case becomes a :class:`~lang_pz.trajectory.Trajectory`: history entry ``t`` of an agent
is step ``t`` (the labelled index); the message (whitespace collapsed, cut to ``max_chars``
keeping its head and tail) is the step's ``observation`` and, prefixed by the agent, the state
text of step ``t`` that the critic reads; a poser's message is prefixed to the next agent
step's state. The step's ``raw_output`` is left empty and its ``action`` is ``"message"``:
:class:`~lang_pz.critics.CentralCritic` lists each distinct raw output as an action in its
computed evidence, which for long messages would swamp a small model's context. The case
failed, so the team return is -1, split evenly over the agents (no agent singled out by the
evidence).

Every step is shown: a :class:`~lang_pz.critics.CentralCritic` is wrapped in
:class:`~lang_pz.evaluation.chunked.ChunkedCritic` (several calls when one prompt cannot show
every step), and each record says whether the labelled step was shown (``visible``); the
summary reports the share. Ties are never broken toward a label prior (the first speaker is
the mistake agent in about half of the algorithm-generated logs): see
:mod:`lang_pz.evaluation.scoring`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lang_pz.critics.central import CentralCritic
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.evaluation.baselines import baselines
from lang_pz.evaluation.chunked import ChunkedCritic
from lang_pz.evaluation.scoring import (
    Assessor,
    assess_and_score,
    blame_text,
    chance_step_hit,
)
from lang_pz.evaluation.summary import ResultsWriter, Summary, summarise
from lang_pz.trajectory import AgentStep, Trajectory

#: Default bound on each message shown to the critic (characters).
MAX_MESSAGE_CHARS = 200
#: Agents (casefolded) that pose the task and are not agents of the team.
TASK_POSERS: tuple[str, ...] = ("human",)
_NOTE = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass(frozen=True)
class WhoWhenCase:
    """One failed run.

    Attributes:
        name: the file's path relative to the data folder.
        messages: ``(agent, content)`` per history entry, in order.
        mistake_agent: the labelled agent, spelt as in ``messages``.
        mistake_step: the labelled step (index into ``messages``).
        question: the task, if the file has one.
        extra: the file's other keys (``ground_truth``, ``is_correct`` ...).
    """

    name: str
    messages: tuple[tuple[str, str], ...]
    mistake_agent: str
    mistake_step: int
    question: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def agents(self) -> list[str]:
        """The team's agents in order of first message (task posers excluded)."""
        return list(dict.fromkeys(a for a, _ in self.messages if not is_poser(a)))

    @property
    def first_speaker(self) -> str:
        """The first agent of the team to speak."""
        return self.agents[0]


def is_poser(agent: str) -> bool:
    """Whether ``agent`` is a task poser (:data:`TASK_POSERS`), not a member of the team."""
    return agent.casefold() in TASK_POSERS


@dataclass(frozen=True)
class Malformed:
    """A file that could not be used: its path (relative to the folder) and why."""

    name: str
    reason: str


@dataclass
class WhoWhenData:
    """What :func:`read_whowhen` found: usable ``cases`` and ``malformed`` files."""

    folder: str
    cases: list[WhoWhenCase]
    malformed: list[Malformed]


def agent_of(entry: Mapping[str, Any]) -> str:
    """The agent of a history entry: ``name`` if a non-empty str, else ``role``, note dropped.

    Raises:
        ValueError: neither is a non-empty string.
    """
    for key in ("name", "role"):
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            return _NOTE.sub("", value.strip()) or value.strip()
    raise ValueError("has neither a 'name' nor a 'role' string")


def parse_case(data: Any, name: str) -> WhoWhenCase:
    """Validate one decoded file into a :class:`WhoWhenCase`.

    Raises:
        ValueError: the reason the file is malformed.
    """
    if not isinstance(data, dict):
        raise ValueError(f"top level is a {type(data).__name__}, not an object")
    missing = [k for k in ("history", "mistake_agent", "mistake_step") if k not in data]
    if missing:
        raise ValueError(f"missing key(s) {', '.join(missing)}")
    history = data["history"]
    if not isinstance(history, list) or not history:
        raise ValueError("'history' must be a non-empty list of messages")
    messages = []
    for i, entry in enumerate(history):
        if not isinstance(entry, dict):
            raise ValueError(f"history[{i}] is a {type(entry).__name__}, not an object")
        try:
            agent = agent_of(entry)
        except ValueError as exc:
            raise ValueError(f"history[{i}] {exc}") from None
        content = entry.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            content = json.dumps(content)
        messages.append((agent, content))
    raw_step = data["mistake_step"]
    try:
        if isinstance(raw_step, bool):
            raise ValueError
        step = int(str(raw_step).strip())
    except ValueError:
        raise ValueError(f"mistake_step {raw_step!r} is not an integer index into history") from None
    if not 0 <= step < len(messages):
        raise ValueError(f"mistake_step {step} is outside history (0 to {len(messages) - 1})")
    raw_agent = data["mistake_agent"]
    if not isinstance(raw_agent, str) or not raw_agent.strip():
        raise ValueError(f"mistake_agent {raw_agent!r} is not a non-empty string")
    by_key = {a.casefold(): a for a, _ in messages}
    key = _NOTE.sub("", raw_agent.strip()).casefold()
    if key in TASK_POSERS:
        raise ValueError(f"mistake_agent {raw_agent!r} is the task poser, not an agent of the team")
    if not any(not is_poser(a) for a, _ in messages):
        raise ValueError("no agent of the team speaks in history (only the task poser)")
    if key not in by_key:
        raise ValueError(
            f"mistake_agent {raw_agent!r} never speaks in history (agents: {', '.join(sorted(set(by_key.values())))})"
        )
    question = data.get("question")
    extra = {k: v for k, v in data.items() if k not in ("history", "mistake_agent", "mistake_step", "question")}
    return WhoWhenCase(
        name=name,
        messages=tuple(messages),
        mistake_agent=by_key[key],
        mistake_step=step,
        question=question if isinstance(question, str) else None,
        extra=extra,
    )


def read_whowhen(folder: str | Path) -> WhoWhenData:
    """Read every ``*.json`` file under ``folder`` (recursively, sorted by path).

    Returns:
        :class:`WhoWhenData`; malformed files are listed with their reason, not raised.

    Raises:
        LangPZError: ``folder`` is not a directory or holds no ``.json`` file.
    """
    root = Path(folder)
    if not root.is_dir():
        raise LangPZError(f"Who&When folder {str(root)!r} does not exist or is not a directory")
    files = sorted(root.rglob("*.json"))
    if not files:
        raise LangPZError(f"Who&When folder {str(root)!r} holds no .json case files")
    cases, malformed = [], []
    for path in files:
        name = str(path.relative_to(root))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            cases.append(parse_case(data, name))
        except (OSError, UnicodeDecodeError) as exc:
            malformed.append(Malformed(name, f"unreadable: {exc}"))
        except json.JSONDecodeError as exc:
            malformed.append(Malformed(name, f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"))
        except ValueError as exc:
            malformed.append(Malformed(name, str(exc)))
    return WhoWhenData(folder=str(root), cases=cases, malformed=malformed)


def clip_message(text: str, max_chars: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` with whitespace collapsed; if longer than ``max_chars``, its head and tail
    around ``" ... "`` (the end of a message often holds its conclusion)."""
    flat = " ".join(text.split())
    if len(flat) <= max_chars:
        return flat
    keep = max_chars - 5
    head = (keep * 2) // 3
    return flat[:head] + " ... " + flat[len(flat) - (keep - head) :]


def task_text(case: WhoWhenCase, max_chars: int = MAX_MESSAGE_CHARS) -> str | None:
    """``"Task (the team failed it): <question>"`` (clipped), ``None`` without a question."""
    return f"Task (the team failed it): {clip_message(case.question, max_chars)}" if case.question else None


def to_trajectory(case: WhoWhenCase, episode: int = 0, *, max_chars: int = MAX_MESSAGE_CHARS) -> Trajectory:
    """The case as a trajectory (see the module docstring for the mapping)."""
    if max_chars < 40:
        raise InvalidKwargError(f"max_chars must be >= 40 characters, got {max_chars}")
    traj = Trajectory(episode=episode, seed=None)
    task = task_text(case, max_chars)
    pending: list[str] = [task] if task else []
    for t, (agent, content) in enumerate(case.messages):
        text = clip_message(content, max_chars)
        if is_poser(agent):
            if not (case.question and clip_message(case.question, max_chars) in text and task):
                pending.append(f"({agent}: {text})")
            continue
        state = f"{agent}: {text}" if text else f"{agent}: (empty message)"
        traj.states[t] = "\n".join([*pending, state])
        pending = []
        traj.steps.append(
            AgentStep(
                episode=episode,
                step=t,
                agent=agent,
                observation=text,
                raw_output="",
                action="message",
                parse_error=None,
                reward=0.0,
            )
        )
    agents = traj.agents
    traj.returns = {a: -1.0 / len(agents) for a in agents}
    return traj


def run_whowhen_benchmark(
    data: WhoWhenData | str | Path,
    critic: Assessor,
    *,
    name: str | None = None,
    seed: int = 0,
    tolerance: int = 0,
    max_chars: int = MAX_MESSAGE_CHARS,
    limit: int | None = None,
    chunked: bool = True,
    out: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Summary, list[Malformed]]:
    """Score ``critic`` on Who&When cases (scoring: :mod:`lang_pz.evaluation.scoring`).

    Args:
        data: a folder or what :func:`read_whowhen` returned.
        critic: the critic under test; a :class:`~lang_pz.critics.CentralCritic` is wrapped in
            a :class:`~lang_pz.evaluation.chunked.ChunkedCritic` unless ``chunked=False``.
        name: the critic's name in the summary (default: its ``mode``).
        seed: seed of the random critic.
        tolerance: steps of slack around ``mistake_step`` for a step hit.
        max_chars: bound on each message shown.
        limit: score at most this many cases (the first in file order).
        chunked: show every step, in several calls if needed (``False``: one call per case,
            the critic's own subsampling; the records say which labelled steps were shown).
        out: JSONL file of per-case records (one flushed line per case).
        progress: called with a one-line message per case.

    Returns:
        ``(summary, malformed)``; ``summary.dropped`` counts the malformed files,
        ``summary.visible`` the share of cases whose labelled step was shown.

    Raises:
        InvalidKwargError: a negative ``tolerance`` or ``limit < 1``.
        LangPZError: ``data`` is not a folder of case files.
    """
    if tolerance < 0:
        raise InvalidKwargError(f"tolerance must be >= 0 steps, got {tolerance}")
    if limit is not None and limit < 1:
        raise InvalidKwargError(f"limit must be >= 1 case, got {limit}")
    if not isinstance(data, WhoWhenData):
        data = read_whowhen(data)
    for m in data.malformed:
        if progress:
            progress(f"who&when: skipped malformed {m.name}: {m.reason}")
    rules = baselines(int(np.random.SeedSequence([seed, 3]).generate_state(1)[0]))
    records = []
    chosen = data.cases if limit is None else data.cases[:limit]
    with ResultsWriter(out) as writer:
        for i, case in enumerate(chosen):
            traj = to_trajectory(case, i, max_chars=max_chars)
            asked: Assessor = critic
            if chunked and isinstance(critic, CentralCritic):
                asked = ChunkedCritic(critic, task_text(case, max_chars))
            truth = [case.mistake_step]
            all_steps = sorted({s.step for s in traj.steps})
            score = assess_and_score(asked, traj, case.mistake_agent, truth, tolerance=tolerance)
            record = {
                "source": data.folder,
                "case": i,
                "file": case.name,
                "truth_agent": case.mistake_agent,
                "mistake_step": case.mistake_step,
                "first_speaker": case.first_speaker,
                "step_agent_matches": case.messages[case.mistake_step][0] == case.mistake_agent,
                "n_agents": len(traj.agents),
                "n_steps": len(all_steps),
                "chance_agent": 1.0 / len(traj.agents),
                "chance_step": chance_step_hit(all_steps, truth, tolerance),
                "critic": score,
                "baselines": {
                    n: assess_and_score(r, traj, case.mistake_agent, truth, tolerance=tolerance) for n, r in rules.items()
                },
            }
            writer.write(record)
            records.append(record)
            if progress:
                shown = {True: "shown", False: "NOT shown", None: "?"}[score["visible"]]
                progress(
                    f"who&when {case.name}: mistake {case.mistake_agent} at step {case.mistake_step} "
                    f"({shown}); {blame_text(score)}"
                )
    settings = {
        "tolerance": tolerance,
        "seed": seed,
        "max_chars": max_chars,
        "limit": limit,
        "chunked": chunked,
        "malformed": [m.name for m in data.malformed],
    }
    label = name or str(getattr(critic, "mode", type(critic).__name__))
    return (
        summarise(data.folder, label, records, drawn=len(records) + len(data.malformed), settings=settings),
        data.malformed,
    )
