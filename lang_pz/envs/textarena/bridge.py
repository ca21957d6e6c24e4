"""A TextArena game as a PettingZoo AEC environment (the raw game; text in, text out).

TextArena 0.7.4's loop is ``env.reset(num_players, seed)``, then ``player, messages =
env.get_observation()`` and ``done, info = env.step(text)`` for whoever is to move, and
``rewards = env.close()`` at the end; a player's messages are handed out only on its turn. This
bridge keeps every player's messages as they arrive (the game's own text: prompt, board, the
others' moves), so each agent can be observed at any time, and reads the moves a game lists
(``Available Moves: '[0]', '[4]'``, ``Your available actions are: '[check]', '[bet]'``) into
:attr:`TextArenaAEC.moves`. :class:`lang_pz.envs.textarena.adapter.TextArenaAdapter` turns it
into a language env.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Iterator
from typing import Any

from gymnasium import spaces
from pettingzoo import AECEnv

from lang_pz.spaces import ACTION_MAX_LENGTH, OBSERVATION_MAX_LENGTH, text_space

_LISTS_MOVES = re.compile(r"(?:available|valid|legal)\s+(?:moves|actions)[^:\n]*:(.*)", flags=re.IGNORECASE)
_QUOTED_MOVE = re.compile(r"'(\[[^\]\n]{1,80}\])'")


def listed_moves(message: str) -> list[str] | None:
    """The moves a game message lists (``'[e2e4]'`` items after ``Available moves:``), else None."""
    found = None
    for line in _LISTS_MOVES.findall(message):
        moves = _QUOTED_MOVE.findall(line)
        if moves:
            found = list(dict.fromkeys(moves))
    return found


def _reward(value: Any) -> float:
    """A game's reward as a float; 0 for the text some single-player games of TextArena 0.7.4 put
    there after an invalid move (``{0: 'Bad action. Use [k].'}``)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


class TextArenaAEC(AECEnv):
    """One TextArena game as an AEC env (module docstring); agents ``player_0`` ... ``player_{n-1}``.

    Observation: the agent's messages so far, one per line (``[GAME] ...``, ``[Player 1] ...``).
    Action: text, passed to the game (which parses it by its own rules). Rewards: the game's at
    its end. The episode is truncated after ``max_turns`` moves if the game has not ended.

    Args:
        game: a TextArena id, e.g. ``"TicTacToe-v0"`` (its ``-raw`` variant is used when there
            is one: no wrappers that reformat actions or observations).
        num_players: players.
        max_turns: moves before truncation.

    TextArena games draw from Python's global ``random`` (``reset(seed=...)`` seeds it): the
    bridge runs each game call on a generator state of its own, swapped in and out, so two
    games played side by side do not share draws and the same seed gives the same game.
    """

    metadata = {"render_modes": [], "name": "textarena", "is_parallelizable": False}

    def __init__(self, game: str, num_players: int, max_turns: int) -> None:
        super().__init__()
        import textarena
        from textarena.envs.registration import ENV_REGISTRY

        self.game, self.num_players, self.max_turns = game, num_players, max_turns
        self._game = textarena.make(f"{game}-raw" if f"{game}-raw" in ENV_REGISTRY else game)
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._obs_space = spaces.Text(max_length=1_000_000)
        self._act_space = text_space(ACTION_MAX_LENGTH)
        self.history: dict[str, list[str]] = {}
        self.moves: dict[str, list[str] | None] = {}
        self.final_rewards: dict[str, float] = {}
        self._random_state = random.Random().getstate()

    @contextlib.contextmanager
    def _own_random(self) -> Iterator[None]:
        """Run a game call on this env's own ``random`` state (class docstring)."""
        outer = random.getstate()
        random.setstate(self._random_state)
        try:
            yield
        finally:
            self._random_state = random.getstate()
            random.setstate(outer)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        with self._own_random():
            if seed is None:
                random.seed()  # fresh entropy for an unseeded episode, as TextArena would leave it
            self._game.reset(num_players=self.num_players, seed=seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.history = {a: [] for a in self.agents}
        self.moves = dict.fromkeys(self.agents)
        self.final_rewards, self.turns = {}, 0
        self._drain()
        self.agent_selection = self._to_move()

    def _to_move(self) -> str:
        return self.possible_agents[int(self._game.state.current_player_id)]

    def _drain(self) -> None:
        """Move every player's new messages from the game into :attr:`history` (and :attr:`moves`)."""
        roles = getattr(self._game.state, "role_mapping", {}) or {}
        for pid, messages in self._game.state.observations.items():
            agent = self.possible_agents[int(pid)]
            for sender, text, _kind in messages:
                who = "GAME" if sender == -1 else roles.get(sender, f"Player {sender}")
                self.history[agent].append(f"[{who}] {str(text).strip()}")
                listed = listed_moves(str(text))
                if listed is not None:
                    self.moves[agent] = listed
            self._game.state.observations[pid] = []

    def observe(self, agent: str) -> str:
        return "\n".join(self.history[agent])[-OBSERVATION_MAX_LENGTH * 8 :]

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self.moves[agent] = None
        with self._own_random():
            done, _ = self._game.step(str(action))
        self._drain()
        self.turns += 1
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if done:
            with self._own_random():
                closed = self._game.close()
            rewards = closed[0] if isinstance(closed, tuple) else closed
            self.final_rewards = {self.possible_agents[int(p)]: _reward(r) for p, r in (rewards or {}).items()}
            self.rewards = {a: self.final_rewards.get(a, 0.0) for a in self.agents}
            self.terminations = dict.fromkeys(self.agents, True)
        elif self.turns >= self.max_turns:
            self.truncations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self._to_move()
        self._accumulate_rewards()
