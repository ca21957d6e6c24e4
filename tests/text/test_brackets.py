"""A bracketed move takes priority over the other mentions of a reply (TextArena's "[7]" convention):
"reasoning ... [7]" fell back in tic-tac-toe 4 of 5 times ("ambiguous: mentions 2 different squares")."""

from __future__ import annotations

import importlib.util
import warnings

import pytest

import lang_pz
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers import LanguageAECWrapper

# TextArena-style replies: reasoning that names other squares, then the move in brackets (square 7)
REPLIES = [
    "Square 5 is taken by X and 3 would block nothing; the corner is better. [7]",
    "Options: 1, 3, 7, 9. I prefer the bottom-left corner. [7]",
    "X threatens 1-5-9, so 9 matters, but first I set up a fork with [7]",
    "[3] is tempting. On reflection: [7]",
    "I will not play 2 or 4. Final answer: [7]",
]


def _needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


@pytest.mark.parametrize("reply", REPLIES)
def test_classic_tictactoe_plays_the_bracketed_square(reply):
    env = lang_pz.make("classic/tictactoe-v0")
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(reply)
    info = env.infos[agent]
    assert info["parse_error"] is None and info["fallback"] is False
    assert env.unwrapped.board.squares[2] != 0  # square 7 (bottom-left) is PettingZoo's action 2


def test_textarena_tictactoe_plays_the_bracketed_move():
    _needs("textarena")
    for reply in REPLIES:
        env = lang_pz.make("textarena/tictactoe-v0")
        env.reset(seed=0)
        agent = env.agent_selection
        env.step(reply.replace("[3]", "[2]"))  # TextArena numbers squares 0-8: [7] is listed
        assert env.infos[agent]["parse_error"] is None, reply
        assert env.infos[agent]["action"] == "[7]"


def test_openspiel_plays_the_bracketed_move():
    _needs("pyspiel")
    env = lang_pz.make("openspiel/breakthrough-v0", rows=5, columns=4)
    env.reset(seed=0)
    agent = env.agent_selection
    first, second, third = env.infos[agent]["legal_actions"][:3]
    env.step(f"{first} looks fine and {second} is safer, but I play [{third}]")
    assert env.infos[agent]["parse_error"] is None
    assert env.infos[agent]["action"] == env.unwrapped.game_state.history()[-1]
    assert env.unwrapped.game_state.action_to_string(int(env.infos[agent]["action"])).endswith(third)


def _rps():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.classic import rps_v2
    return rps_v2.env(max_cycles=3)


def test_generic_words_last_bracket_that_parses_wins():
    env = LanguageAECWrapper(_rps(), LanguageAdapter(["rock", "paper", "scissors"]))
    env.reset(seed=0)
    agent = env.agent_selection
    env.step("rock beats scissors, paper beats rock: [paper] [not sure]")
    assert env.infos[agent]["action"] == 1 and env.infos[agent]["parse_error"] is None


def test_a_reply_whose_brackets_name_nothing_is_parsed_whole():
    env = LanguageAECWrapper(_rps(), LanguageAdapter(["rock", "paper", "scissors"]))
    env.reset(seed=0)
    agent = env.agent_selection
    env.step("[thinking] I play scissors")
    assert env.infos[agent]["action"] == 2


def test_free_text_actions_are_never_cut_to_a_bracket():
    _needs("textarena")
    env = lang_pz.make("textarena/nim-v0")
    env.reset(seed=0)
    agent = env.agent_selection
    assert env.infos[agent].get("legal_actions") is None  # Nim lists no moves: free text
    adapter, inner = env.adapter, env.env
    reply = "I take from pile [0 1] ... no: [0 2]"
    assert adapter.parse_reply(inner, agent, reply, None, {}) == reply  # the game reads its own text
