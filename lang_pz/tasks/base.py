"""The turn-based team environment shared by the QA, math and code tasks.

One episode is one benchmark task. Agents are *roles* (e.g. ``solver`` and ``verifier``); the
constructor's ``turns`` (the topology) says who speaks when, e.g. ``("coder", "tester",
"coder")``; a role may speak several times. Every message is posted to a shared transcript,
together with what the environment itself reports (``env`` messages: the evidence sentences a
finder named, a test run's results ...). An agent's observation is the task as its role sees
it, the transcript so far and its reply format (see each task module for the table).

Actions are free text (``Text`` space of at most :attr:`TaskEnv.ACTION_MAX_LENGTH` characters,
the bound of each task's action space, enforced by :func:`lang_pz.spaces.check_action_text`).
The environment extracts what each role must deliver (an answer, sentence references, code,
tests); text without it is a *parse error*, and so is an action that is not a ``str`` or is
longer than the bound (its text is then not read at all): the role's documented fallback is
applied and ``infos[agent]`` records ``action_text`` (``repr`` of a non-``str``; cut to the
bound, with ``action_text_chars`` and ``action_text_truncated``, when longer:
:func:`lang_pz.spaces.stored_text`), ``action``
(what was extracted or the fallback), ``parse_error`` and ``fallback``, as lang_pz's language
wrappers do; with ``strict=True`` an :class:`~lang_pz.error.ActionParseError` carrying the raw
action is raised instead and the turn is not taken. Any input gives one of the two. The team's reward (shared, e.g. answer F1 or hidden tests passed) is given
once, after the last turn; per-role details are in every agent's final ``info["score"]``.

The task is chosen at ``reset``: ``options={"index": i}`` or the constructor's ``index`` fix it;
otherwise ``reset(seed=s)`` plays ``items[order[s % n]]``, where ``order`` is the fixed,
seeded permutation of :func:`lang_pz.tasks.datasets.partition.seed_order` (the items sorted by a hash of
their ids). So the same seed always gives the same task, and ``n`` consecutive seeds give ``n``
distinct tasks: the items are drawn without replacement until all have been played. ``reset()``
without a seed plays the next position (the first unseeded reset starts at a random one). Which
items there are is the ``split`` of the make function: ``train``, ``validation`` and ``test``
are disjoint (see :func:`lang_pz.tasks.datasets.load_items`). :attr:`TaskEnv.item_id` (also
``info["task_id"]``) names the item an episode plays.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from lang_pz.envs.checks import check_bool, check_int
from lang_pz.error import ActionParseError, InvalidKwargError, LangPZError
from lang_pz.spaces import (
    check_action_text,
    stored_text,
    to_unicode_charset,
    unicode_observation_space,
    unicode_text_space,
)
from lang_pz.tasks.datasets.partition import item_key, seed_order

__all__ = ["TIMING_KEY", "Message", "TaskEnv", "cut", "visible_text"]

#: The one ``info`` key whose content is not the same in two runs of the same seed: wall-clock
#: and CPU seconds of what the step ran (the code tasks' sandbox). Leave it out when comparing.
TIMING_KEY = "timing"

ItemT = TypeVar("ItemT")


def visible_text(text: str) -> str:
    """``text`` as the task spaces show it (:class:`lang_pz.spaces.UnicodeText`): unchanged,
    except control characters other than white space, lone surrogates and characters beyond the
    Basic Multilingual Plane, which become ``?``. ``"Niño – 5²"`` stays ``"Niño – 5²"``."""
    return to_unicode_charset(text)


def cut(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its head and a note of the cut."""
    if len(text) <= limit:
        return text
    note = f" ...[{len(text) - limit} more chars cut]"
    return text[: max(0, limit - len(note))] + note


@dataclass(frozen=True)
class Message:
    """One transcript entry: ``speaker`` (an agent id or ``"env"``), its ``text`` (already
    in the observation charset, see :func:`visible_text`, and bounded) and the 1-based ``turn`` it belongs to."""

    turn: int
    speaker: str
    text: str


class TaskEnv(AECEnv, Generic[ItemT]):
    """Base class of the task environments (a PettingZoo ``AECEnv`` with text spaces).

    Subclasses define :attr:`ROLES` (role -> reply-format line), :attr:`DEFAULT_TURNS` and the
    hooks ``_task_text``, ``_parse``, ``_fallback``, ``_apply``, ``_score`` and ``_describe``.

    Args:
        items: the tasks (benchmark items) episodes are drawn from; at least one.
        turns: who speaks when (role names, at least one turn); default :attr:`DEFAULT_TURNS`.
        index: always play ``items[index]`` (``None``: drawn at each reset).
        strict: raise :class:`ActionParseError` on text without the role's deliverable.
        max_message_chars: bound on each transcript message shown to agents (>= 200).
        render_mode: ``None``, ``"ansi"`` (``render()`` returns :meth:`state_text`) or
            ``"human"`` (prints it).
    """

    metadata: dict[str, Any] = {"name": "task_v0", "render_modes": ["human", "ansi"], "is_parallelizable": False}
    #: role -> the reply-format line shown at the end of that role's observation.
    ROLES: Mapping[str, str] = {}
    DEFAULT_TURNS: tuple[str, ...] = ()
    #: roles that must appear in ``turns``.
    REQUIRED_ROLES: tuple[str, ...] = ()
    #: Longest action accepted, in characters: the ``max_length`` of the ``Text`` action space.
    ACTION_MAX_LENGTH: int = 4096

    def __init__(
        self,
        items: Sequence[ItemT],
        *,
        turns: Sequence[str] | None = None,
        index: int | None = None,
        strict: bool = False,
        max_message_chars: int = 1500,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if not items:
            raise LangPZError(f"{type(self).__name__}: no items to play (an empty split or data file?)")
        self.items: tuple[ItemT, ...] = tuple(items)
        roles, example = list(self.ROLES), ", ".join(self.DEFAULT_TURNS)
        if isinstance(turns, str) or not isinstance(turns, (Sequence, type(None))):
            raise InvalidKwargError(
                f"turns must be a list of the roles {roles}, got {turns!r}; "
                f"e.g. turns={list(self.DEFAULT_TURNS)} (on the command line: --kw 'turns=[{example}]')"
            )
        turns = tuple(self.DEFAULT_TURNS if turns is None else turns)
        unknown = [t for t in turns if t not in self.ROLES]
        if not turns or unknown:
            got = f"unknown roles {unknown} in {list(turns)}" if unknown else "an empty list"
            raise InvalidKwargError(f"turns must be a non-empty list of the roles {roles}, got {got}")
        missing = [r for r in self.REQUIRED_ROLES if r not in turns]
        if missing:
            raise InvalidKwargError(f"turns must include {missing} (the team needs them), got {turns!r}")
        check_int("index", index, 0, len(self.items) - 1, optional=True)
        check_bool("strict", strict)
        check_int("max_message_chars", max_message_chars, 200)
        if render_mode not in (None, "human", "ansi"):
            raise InvalidKwargError(f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}")
        self.turns = turns
        self.index = index
        self.strict = strict
        self.max_message_chars = max_message_chars
        self.render_mode = render_mode
        self.possible_agents = list(dict.fromkeys(turns))
        # Bound of every observation: the longest task text, the transcript (each message
        # bounded, at most one agent message and two env messages per turn) and the footer.
        bound = max(len(self._task_text(item, role)) for item in self.items for role in self.possible_agents)
        self._obs_max = bound + len(turns) * 3 * (max_message_chars + 40) + 1000
        obs_space = unicode_observation_space(self._obs_max)
        act_space = unicode_text_space(self.ACTION_MAX_LENGTH)
        self.observation_spaces = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, act_space)
        self._order = seed_order([self._key(i, it) for i, it in enumerate(self.items)])
        self._position: int | None = None
        self.item: ItemT = self.items[0]
        self.item_index = 0
        self.turn = 0
        self.transcript: list[Message] = []
        self.score: dict[str, Any] | None = None
        self.team_reward = 0.0
        self._timing: dict[str, float] = {}
        self.agents: list[str] = []

    # -- hooks --------------------------------------------------------------------------------

    def _task_text(self, item: ItemT, role: str) -> str:
        """The task as ``role`` sees it (in the observation charset, see :func:`visible_text`)."""
        raise NotImplementedError

    def _parse(self, role: str, text: str) -> Any:
        """What ``role`` delivers in ``text``; raises :class:`ActionParseError` if nothing."""
        raise NotImplementedError

    def _fallback(self, role: str, text: str) -> Any:
        """What is used when ``role``'s ``text`` has no deliverable."""
        raise NotImplementedError

    def _apply(self, role: str, value: Any) -> list[str]:
        """Take ``role``'s delivered ``value`` into the state; return env messages to post."""
        return []

    def _score(self) -> tuple[float, dict[str, Any]]:
        """The team reward and the per-role details, after the last turn."""
        raise NotImplementedError

    def _describe(self) -> list[str]:
        """Lines of the global state for :meth:`state_text` (task, extracted values ...)."""
        return []

    def _add_timing(self, **seconds: float) -> None:
        """Add ``seconds`` (e.g. ``sandbox_wall_s=0.2``) to the current step's ``info["timing"]``."""
        for key, value in seconds.items():
            self._timing[key] = round(self._timing.get(key, 0.0) + value, 4)

    def _jsonable(self, role: str, value: Any) -> Any:
        """``value`` as put in ``info["action"]`` (JSON-friendly)."""
        return value

    # -- PettingZoo API ---------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0):
            # -1 played the item of seed n - 1, 1.5 that of seed 1: a typo would run another experiment
            raise InvalidKwargError(f"seed must be None or an integer >= 0, got {seed!r}")
        if options and "index" in options:
            idx = options["index"]
            check_int("options['index']", idx, 0, len(self.items) - 1)
        elif self.index is not None:
            idx = self.index
        else:
            if seed is not None:
                self._position = int(seed)
            elif self._position is None:
                self._position = int(np.random.default_rng().integers(len(self.items)))
            else:
                self._position += 1
            idx = self._order[self._position % len(self.items)]
        self.item_index = idx
        self.item = self.items[idx]
        self.turn = 0
        self.transcript = []
        self.score = None
        self.team_reward = 0.0
        self._start()
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {"role": a, "task_id": self._task_id()} for a in self.agents}
        self.agent_selection = self.turns[0]
        self._skip_agent_selection = None

    def _start(self) -> None:
        """Reset per-episode state of the subclass (called by :meth:`reset`)."""

    def _task_id(self) -> str:
        return str(self.item_index)

    @property
    def item_id(self) -> str:
        """The id of the item this episode plays (``info["task_id"]``): the benchmark's own id
        (HotpotQA ``_id``, MATH ``unique_id``, ``HumanEval/12``, ``MBPP/601``, GSM8K
        ``gsm8k/<row of the test file>``). :func:`lang_pz.training.phases.items_played` reads it."""
        return self._task_id()

    @staticmethod
    def _key(position: int, item: Any) -> str:
        """The key :func:`~lang_pz.tasks.datasets.partition.seed_order` sorts ``item`` by (its
        :func:`~lang_pz.tasks.datasets.partition.item_key`; an item of another type: its position)."""
        try:
            return item_key(item)
        except LangPZError:
            return f"#{position}"

    def observe(self, agent: str) -> dict[str, str]:
        text = visible_text(self._observation_text(agent))
        if len(text) > self._obs_max:  # a bug of the bound above: never cut silently
            raise LangPZError(f"observation of {agent} has {len(text)} characters, more than its space's {self._obs_max}")
        return {"text": text}

    def _observation_text(self, agent: str) -> str:
        lines = [f"You are the {agent} in a team. {self._task_text(self.item, agent)}"]
        if self.transcript:
            lines.append("Messages so far:")
            lines.extend(f"[{m.speaker}] {m.text}" for m in self.transcript)
        if self.terminations.get(agent, False) or self.turn >= len(self.turns):
            lines.append("The episode is over.")
        elif self.turns[self.turn] == agent:
            lines.append(f"Your turn ({self.turn + 1} of {len(self.turns)}). {self.ROLES[agent]}")
        else:
            lines.append(f"Waiting for the {self.turns[self.turn]} (turn {self.turn + 1} of {len(self.turns)}).")
        return "\n".join(lines)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        readable = isinstance(action, str) and len(action) <= self.ACTION_MAX_LENGTH
        try:
            value, error = self._parse(agent, check_action_text(action, self.ACTION_MAX_LENGTH)), None
        except ActionParseError as exc:
            if self.strict:
                raise ActionParseError(action, exc.reason) from None  # the raw action, whole
            value, error = self._fallback(agent, action if readable else ""), exc.reason
        shown = action if readable else f"(an unreadable action: {cut(repr(action), 120)})"
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self.transcript.append(Message(self.turn + 1, agent, cut(visible_text(shown.strip()), self.max_message_chars)))
        for note in self._apply(agent, value):
            self.transcript.append(Message(self.turn + 1, "env", cut(visible_text(note), self.max_message_chars)))
        self.infos[agent] = {
            **self.infos[agent],
            **stored_text("action_text", action, self.ACTION_MAX_LENGTH),
            "action": self._jsonable(agent, value),
            "parse_error": error,
            "fallback": error is not None,
        }
        self.turn += 1
        if self.turn < len(self.turns):
            self.agent_selection = self.turns[self.turn]
        else:
            self.team_reward, self.score = self._score()
            for a in self.agents:
                self.rewards[a] = float(self.team_reward)
                self.terminations[a] = True
                self.infos[a] = {**self.infos[a], "score": self.score}
        if self._timing:
            self.infos[agent][TIMING_KEY], self._timing = self._timing, {}
        else:
            self.infos[agent].pop(TIMING_KEY, None)
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # -- snapshots (lang_pz.snapshots) ------------------------------------------------------
    #: :meth:`snapshot` copies the whole episode state: a re-run continues from it exactly.
    snapshots_exact = True
    #: Attributes fixed at construction, shared by a snapshot instead of copied (the items are
    #: read, never changed).
    _CONFIG = frozenset({"items", "observation_spaces", "action_spaces", "_order", "turns", "possible_agents"})

    @property
    def snapshot_key(self) -> int:
        """Envs with equal keys restore each other's snapshots: this env only (a task's options
        are its subclass's, so two instances are not known to be alike)."""
        return id(self)

    def snapshot(self) -> dict[str, Any]:
        """A copy of the episode's state now: the item, the turn, the transcript, the rewards and
        infos, and whatever the task keeps (answers, code ...): every attribute but the
        construction's items and spaces. Small: the transcript is a few kB; the item is shared."""
        return self._copy({k: v for k, v in self.__dict__.items() if k not in self._CONFIG})

    def restore(self, snap: dict[str, Any]) -> None:
        """Continue from ``snap`` (:meth:`snapshot` of an env of the same id and kwargs; it is
        copied, so it can be restored again)."""
        self.__dict__.update(self._copy(snap))

    def _copy(self, state: dict[str, Any]) -> dict[str, Any]:
        shared = {id(self.items): self.items, **{id(x): x for x in self.items}}
        if "item" in state:
            shared[id(state["item"])] = state["item"]
        return copy.deepcopy(state, shared)

    def state_text(self) -> str:
        """The global view for a centralised critic: the task, every message, extracted
        values and, after the last turn, the score and the gold answer."""
        lines = [
            f"Task {self._task_id()}, turn {min(self.turn + 1, len(self.turns))} of {len(self.turns)} "
            f"(order: {', '.join(self.turns)})."
        ]
        lines.extend(self._describe())
        lines.extend(f"[turn {m.turn}, {m.speaker}] {m.text}" for m in self.transcript)
        if self.score is not None:
            lines.append(f"Team reward: {self.team_reward:g}. Score: {self.score}")
        return "\n".join(lines)

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = self.state_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
