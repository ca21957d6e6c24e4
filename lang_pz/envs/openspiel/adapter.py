"""The text of an OpenSpiel game, from the game's own strings.

What an agent reads: the game's name and its seat, a short rules note where lang_pz has one
(:data:`lang_pz.envs.openspiel.games.NOTES`), then what OpenSpiel lets that player know:

* imperfect-information games: ``state.information_state_string(player)`` (only what the
  player may know: its own cards, the public moves);
* perfect-information games (and games without an information state string):
  ``state.observation_string(player)`` (the board);

then the legal moves, each as OpenSpiel words it (``state.action_to_string(player, action)``:
``Call``, ``Raise``, ``Play 0``, ``a5a4``), cleaned of the player tag some games prefix
(``[P0]Bid: 1`` -> ``Bid: 1``) and of surrounding parentheses when the words stay distinct.

Parsing: a reply that is exactly one legal move (any case), else the rules of
:func:`lang_pz.envs.classic.turns.parse_phrases` over the legal moves (the last ``move: X``, or
the single move named as a whole word); a refusal lists the legal moves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lang_pz.envs.classic.turns import parse_phrases
from lang_pz.error import ActionParseError
from lang_pz.text.adapter import LanguageAdapter

#: Characters of an observation (under lang_pz's 8,192): a longer information state keeps its
#: tail (the latest moves); a longer move list shows its first moves and how many are left out.
MAX_TEXT_CHARS = 7600
_TAG = re.compile(r"^\[P\d+\]\s*")


def move_words(raw: list[str]) -> list[str]:
    """OpenSpiel's action strings as move words: the player tag and outer parentheses dropped
    while that keeps them distinct, else the raw strings, else the raw strings with ``#N``."""
    clean = [_TAG.sub("", w).strip() for w in raw]
    clean = [w[1:-1].strip() if w.startswith("(") and w.endswith(")") else w for w in clean]
    for words in (clean, [w.strip() for w in raw]):
        if all(words) and len({w.lower() for w in words}) == len(words):
            return words
    return [f"{w} #{i}" for i, w in enumerate(raw)]


class OpenSpielAdapter(LanguageAdapter):
    """Text for a Shimmy ``OpenSpielCompatibilityV0`` environment (module docstring).

    Args:
        note: rules and legend shown under the game's name (``""``: none).
    """

    reads_observation = False

    def __init__(self, note: str = "") -> None:
        super().__init__()
        self.note = note

    # -- what OpenSpiel knows --------------------------------------------------------------
    @staticmethod
    def _state(env: Any) -> Any:
        return env.unwrapped.game_state

    @staticmethod
    def _player(env: Any, agent: str | None) -> int:
        return env.unwrapped.agent_name_id_mapping[agent]

    def _legal(self, env: Any, agent: str | None) -> dict[str, int]:
        """Move word -> OpenSpiel action for ``agent`` now (empty when it may not move)."""
        raw = env.unwrapped
        state = raw.game_state
        key = (id(state), state.history_str(), agent, raw.agent_selection, state.is_terminal())
        memo = self.__dict__.setdefault("_legal_memo", {})
        if memo.get("key") != key:
            player = self._player(env, agent)
            to_move = (
                not state.is_terminal()
                and agent == raw.agent_selection
                and not raw.terminations.get(agent, False)
                and not raw.truncations.get(agent, False)
            )
            actions = list(state.legal_actions(player)) if to_move else []
            words = move_words([state.action_to_string(player, a) for a in actions])
            memo["key"], memo["value"] = key, dict(zip(words, actions))
        return memo["value"]

    def player_text(self, env: Any, agent: str | None, budget: int = MAX_TEXT_CHARS) -> str:
        """What OpenSpiel lets ``agent``'s player know (module docstring), its last ``budget``
        characters if longer."""
        raw = env.unwrapped
        state, game_type, player = raw.game_state, raw.game_type, self._player(env, agent)
        import pyspiel

        private = game_type.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
        if game_type.provides_information_state_string and (private or not game_type.provides_observation_string):
            text = state.information_state_string(player)
        else:
            text = state.observation_string(player)
        text = text.strip("\n")
        if len(text) > budget:
            text = f"[{len(text) - budget} earlier characters left out] " + text[-budget:]
        return text

    def header(self, env: Any, agent: str | None) -> str:
        """``Game: ... You are player_0 (seat 0 of 2).`` and the rules note."""
        raw = env.unwrapped
        game_type = raw.game_type
        n = len(raw.possible_agents)
        at_once = ""
        import pyspiel

        if game_type.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
            at_once = " Players choose at the same time: nobody sees the others' choice before choosing."
        line = (
            f"Game: {game_type.long_name} (OpenSpiel {game_type.short_name}), {n} players. "
            f"You are {agent} (seat {self._player(env, agent)} of {n}).{at_once}"
        )
        return f"{line}\n{self.note}" if self.note else line

    # -- LanguageAdapter hooks ---------------------------------------------------------------
    def observation_text(self, env: Any, agent: str | None, observation: Any, budget: int = MAX_TEXT_CHARS) -> str:
        header = self.header(env, agent)
        return f"{header}\nWhat you know:\n{self.player_text(env, agent, max(200, budget - len(header) - 20))}"

    def render(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> str:
        state = self._state(env)
        legal = list(self._legal(env, agent))
        if legal:
            shown = ", ".join(legal)
            if len(shown) > MAX_TEXT_CHARS // 2:
                cut = shown[: MAX_TEXT_CHARS // 2].rsplit(", ", 1)[0]
                shown = f"{cut} (and {len(legal) - cut.count(', ') - 1} more of this form)"
            line = f"Your turn. Legal moves: {shown}. Reply with one move."
        elif state.is_terminal() or env.terminations.get(agent, False) or env.truncations.get(agent, False):
            returns = state.returns() if state.is_terminal() else None
            score = f" Your return: {returns[self._player(env, agent)]:g}." if returns is not None else ""
            line = f"The game is over.{score}"
        else:
            line = "Not your turn: wait for the others."
        return f"{self.observation_text(env, agent, observation, MAX_TEXT_CHARS - len(line) - 100)}\n{line}"

    def legal_actions(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> list[str]:
        return list(self._legal(env, agent))

    def parse(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> int:
        """The OpenSpiel action ``text`` names among the legal moves.

        Raises:
            ActionParseError: no legal move, two different ones, or not this agent's turn.
        """
        legal = self._legal(env, agent)
        if not legal:
            raise ActionParseError(text, f"{agent} has no move now (not its turn, or the game is over)")
        if isinstance(text, str):
            lowered = {w.lower(): a for w, a in legal.items()}
            hit = lowered.get(text.strip().lower())
            if hit is not None:
                return hit
        try:
            return parse_phrases(text, legal, what="legal move")
        except ActionParseError as exc:
            raise ActionParseError(text, f"{exc.reason}; legal moves now: {', '.join(legal)}") from None

    def fallback(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> int:
        """The first legal move (OpenSpiel's order), or 0 when there is none."""
        legal = self._legal(env, agent)
        return next(iter(legal.values())) if legal else 0

    def action_text(self, env: Any, agent: str | None, action: Any) -> str:
        """The move word of ``action`` now (OpenSpiel's own string if it is not legal now)."""
        for word, a in self._legal(env, agent).items():
            if a == int(action):
                return word
        return self._state(env).action_to_string(self._player(env, agent), int(action))

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        """The whole game state (``str(state)``: every hidden card), for a centralised critic only."""
        raw = env.unwrapped
        return f"{raw.game_type.long_name}, {raw.agent_selection} to move.\n{str(raw.game_state).strip()}"
