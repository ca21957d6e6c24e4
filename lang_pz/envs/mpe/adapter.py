"""The text of MPE2's particle worlds, decoded from each agent's own observation vector.

Every number an agent reads is in its observation (decentralised: nothing of the world state it
does not observe); the adapter only names the parts (MPE2's documented layouts) and adds words:
directions (``0.42 right, 0.13 down``), distances, colours (each landmark's colour, fixed by the
scenario), and the other agents' messages as words.

Moves (discrete): ``stay``, ``left``, ``right``, ``down``, ``up`` (MPE's no_action, move_left ...).
Moves (continuous): named components ``none``, ``left``, ``right``, ``down``, ``up`` from 0 to 1
(:mod:`lang_pz.text.components`; the push is right - left and up - down; ``none`` does nothing).
Messages: the communication symbols are words; symbol ``i`` < 3 is the colour of landmark ``i``
(``red``, ``green``, ``blue``), further symbols are ``word3`` ... (simple_reference has 10).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lang_pz.text import codec
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.text.components import Components

MOVES: tuple[str, ...] = ("stay", "left", "right", "down", "up")
MOVE_COMPONENTS: tuple[str, ...] = ("none", "left", "right", "down", "up")
_COLOURS = ("red", "green", "blue")


def words(n: int) -> list[str]:
    """The ``n`` message words (module docstring)."""
    return [_COLOURS[i] if i < 3 else f"word{i}" for i in range(n)]


def colour(rgb: Any) -> str:
    """``red``, ``green`` or ``blue`` for an MPE colour (its strongest channel); ``unknown`` for 0."""
    rgb = np.asarray(rgb, dtype=float)
    return "unknown" if not np.any(rgb) else _COLOURS[int(np.argmax(rgb))]


def where(rel: Sequence[float] | np.ndarray) -> str:
    """A relative position ``(dx, dy)`` in words: ``0.42 right, 0.13 down (distance 0.44)``."""
    dx, dy = float(rel[0]), float(rel[1])
    return (
        f"{abs(dx):.2f} {'right' if dx >= 0 else 'left'}, {abs(dy):.2f} {'up' if dy >= 0 else 'down'} "
        f"(distance {np.hypot(dx, dy):.2f})"
    )


def heard(comm: Sequence[float] | np.ndarray, speaker: str) -> str:
    """What ``speaker``'s communication vector says, as a word."""
    vec = np.asarray(comm, dtype=float)
    if not np.any(vec):
        return f"{speaker} has said nothing yet."
    i = int(np.argmax(vec))
    strength = "" if np.count_nonzero(vec) == 1 and vec[i] == 1 else f" (strength {vec[i]:.2f})"
    return f"{speaker} says: {words(vec.size)[i]}{strength}."


class MPEAdapter(LanguageAdapter):
    """What every MPE scenario's text shares: the move words or components and the message words.

    Args:
        continuous: the environment's ``continuous_actions``.
    """

    def __init__(self, continuous: bool) -> None:
        super().__init__()
        self.continuous = continuous

    def _agent(self, env: Any, agent: str | None) -> Any:
        return next(a for a in env.unwrapped.world.agents if a.name == agent)

    def _landmark_colours(self, env: Any) -> list[str]:
        return [colour(lm.color) for lm in env.unwrapped.world.landmarks]

    def discrete_words(self, env: Any, agent: str | None) -> list[str]:
        """The words of a Discrete action: moves, messages, or ``MOVE and say WORD``."""
        body = self._agent(env, agent)
        said = words(env.unwrapped.world.dim_c)
        if not body.movable:
            return said
        if body.silent:
            return list(MOVES)
        return [f"{m} and say {w}" for w in said for m in MOVES]  # MPE: action = move + 5 * word

    def action_components(self, env: Any, agent: str | None) -> Components | None:
        """The named components (module docstring); left-out ones are 0 (no push, no word)."""
        memo = self.__dict__.setdefault("_mpe_components", {})
        if agent not in memo:
            base = super().action_components(env, agent)
            movable = self._agent(env, agent).movable
            memo[agent] = base and dataclasses.replace(
                base,
                default=0.0,
                meaning=(
                    "Push yourself (the push is right - left, up - down)."
                    if movable
                    else "Send a message: the strongest word is the one heard."
                ),
                example="right=0.8 up=0.3" if movable else f"{base.names[0]}=1",
            )
        return memo[agent]

    def component_names(self, env: Any, agent: str | None) -> list[str]:
        body = self._agent(env, agent)
        said = words(env.unwrapped.world.dim_c)
        if not body.movable:
            return said
        return list(MOVE_COMPONENTS) + ([] if body.silent else [f"say_{w}" for w in said])

    def legal_actions(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> list[str] | None:
        return None if self.continuous else self.discrete_words(env, agent)

    def parse(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> Any:
        """A move / message word (discrete) or named components (continuous).

        Raises:
            ActionParseError: the text names no action (the reason lists the words or what was wrong).
        """
        if self.continuous:
            return super().parse(env, agent, text, observation, info)
        return codec.parse_action(self.action_space(env, agent), text, names=self.discrete_words(env, agent))

    def action_text(self, env: Any, agent: str | None, action: Any) -> str:
        if self.continuous:
            return super().action_text(env, agent, action)
        return self.discrete_words(env, agent)[int(action)]

    def legal_actions_fixed(self, env: Any, agent: str | None) -> bool:
        return True  # no masks: the words depend on the agent only

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        """Every agent's text, and each agent's goal where the scenario has one (critic only)."""
        goals = [
            f"{a.goal_a.name} must reach the {colour(a.goal_b.color)} landmark"
            for a in env.unwrapped.world.agents
            if getattr(a, "_goal_b", None) is not None
        ]
        text = super().state_text(env, observations)
        return f"{text}\nGoals: {'; '.join(goals)}" if goals else text


class SpreadAdapter(MPEAdapter):
    """simple_spread: ``[vel, pos, landmarks rel, other agents rel, comm]``."""

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        obs = np.asarray(observation, dtype=float)
        names = [a for a in env.possible_agents if a != agent]
        n_lm = len(env.unwrapped.world.landmarks)
        lms = obs[4 : 4 + 2 * n_lm].reshape(-1, 2)
        others = obs[4 + 2 * n_lm : 4 + 2 * n_lm + 2 * len(names)].reshape(-1, 2)
        lines = [
            f"You are {agent}, one of {len(names) + 1} agents that must cover {n_lm} landmarks together "
            "(simple_spread): each landmark should have an agent on it; bumping into a teammate costs reward.",
            f"You are at ({obs[2]:+.2f}, {obs[3]:+.2f}), moving ({obs[0]:+.2f}, {obs[1]:+.2f}).",
            "Landmarks, from you:",
        ]
        for i, rel in enumerate(lms):
            mine = np.hypot(*rel)
            closer = [(np.hypot(*(rel - o)), n) for o, n in zip(others, names) if np.hypot(*(rel - o)) < mine]
            state = f"closer to {min(closer)[1]} ({min(closer)[0]:.2f} away)" if closer else "free"
            lines.append(f"  landmark {i}: {where(rel)}; {state}")
        lines.append("Teammates, from you:")
        lines += [f"  {n}: {where(o)}" for n, o in zip(names, others)]
        return "\n".join(lines)


class SpeakerListenerAdapter(MPEAdapter):
    """simple_speaker_listener: the speaker sees the goal colour (``[goal colour]``); the listener
    ``[vel, landmarks rel, speaker's message]``."""

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        obs = np.asarray(observation, dtype=float)
        colours = self._landmark_colours(env)
        if not self._agent(env, agent).movable:
            return (
                f"You are {agent} (simple_speaker_listener). You cannot move. The listener must reach the "
                f"{colour(obs[:3])} landmark; it does not know which one. Tell it with one word: your "
                "message is what it reads next."
            )
        lms = obs[2 : 2 + 2 * len(colours)].reshape(-1, 2)
        lines = [
            f"You are {agent} (simple_speaker_listener). Go to the landmark the speaker names; only the "
            "speaker knows which.",
            f"You are moving ({obs[0]:+.2f}, {obs[1]:+.2f}).",
            "Landmarks, from you:",
        ]
        lines += [f"  {c} landmark: {where(rel)}" for c, rel in zip(colours, lms)]
        lines.append(heard(obs[2 + 2 * len(colours) :], "The speaker"))
        return "\n".join(lines)


class ReferenceAdapter(MPEAdapter):
    """simple_reference: ``[vel, landmarks rel, the other's goal colour, the other's message]``."""

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        obs = np.asarray(observation, dtype=float)
        colours = self._landmark_colours(env)
        other = next(a for a in env.possible_agents if a != agent)
        k = 2 + 2 * len(colours)
        lms = obs[2:k].reshape(-1, 2)
        lines = [
            f"You are {agent} (simple_reference). You must reach a landmark only {other} knows, and "
            f"{other} must reach the {colour(obs[k : k + 3])} landmark, which only you know: move, and tell "
            f"{other} its colour with one word.",
            f"You are moving ({obs[0]:+.2f}, {obs[1]:+.2f}).",
            "Landmarks, from you:",
        ]
        lines += [f"  {c} landmark: {where(rel)}" for c, rel in zip(colours, lms)]
        lines.append(heard(obs[k + 3 :], other))
        return "\n".join(lines)
