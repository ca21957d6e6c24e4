"""TextArena through lang_pz's AEC bridge: the game's own text, listed moves offered and parsed,
bracketed actions elsewhere, rewards at the end, and seeds that hold with two games side by side."""

from __future__ import annotations

import pytest

import lang_pz
from lang_pz.envs.textarena.bridge import listed_moves
from lang_pz.error import ActionParseError, UnknownEnvironmentError

pytest.importorskip("textarena")


def test_tictactoe_offers_the_listed_squares_and_reads_them_back():
    env = lang_pz.make("textarena/tictactoe-v0", strict=True)
    env.reset(seed=0)
    text = env.observe("player_0")["text"]
    assert text.startswith("Game: TicTacToe (TextArena TicTacToe-v0), 2 players. You are player_0")
    assert "Current Board" in text and text.endswith("Reply with one move.")
    assert env.infos["player_0"]["legal_actions"] == [f"[{i}]" for i in range(9)]
    env.step("I take the centre: 4")
    assert env.infos["player_0"]["action"] == "[4]"
    assert "[4]" not in env.infos["player_1"]["legal_actions"]
    with pytest.raises(ActionParseError, match="ambiguous.*listed moves: \\[0\\], \\[1\\]"):
        env.step("0 or 1")
    # a bracketed move takes priority; of two, the last one (a reply ends with its move)
    assert env.adapter.parse_reply(env.env, "player_1", "[0] or, on reflection, [1]", None, {}) == "[1]"
    with pytest.raises(ActionParseError, match="listed moves"):
        env.step("[4]")  # taken


def test_a_won_game_pays_the_winner():
    env = lang_pz.make("textarena/tictactoe-v0")
    env.reset(seed=0)
    first = env.agent_selection
    for move in ("[0]", "[3]", "[1]", "[4]", "[2]"):
        env.step(move)
    assert all(env.terminations.values())
    assert env.rewards[first] == 1 and sum(env.rewards.values()) == 0
    assert env.observe(first)["text"].endswith("The game is over. Your reward: 1.")


def test_a_game_without_listed_moves_takes_bracketed_actions():
    env = lang_pz.make("textarena/nim-v0", strict=True)
    env.reset(seed=0)
    agent = env.agent_selection
    assert "legal_actions" not in env.infos[agent]
    assert "in square brackets" in env.observe(agent)["text"]
    with pytest.raises(ActionParseError, match="no action in square brackets"):
        env.step("take three from pile zero")
    env.step("[0 3]")
    assert env.infos[agent]["parse_error"] is None and env.agent_selection != agent


@pytest.mark.parametrize(
    ("env_id", "offender", "valid"),
    [
        ("textarena/nim-v0", "player_0", "[0 1]"),  # the mover's invalid take
        ("textarena/nim-v0", "player_1", "[0 1]"),
        ("textarena/TruthAndDeception-v0", "player_1", "[I am not sure]"),  # the guesser's unreadable guess
    ],
)
def test_an_invalid_move_loses_for_the_seat_that_made_it(env_id, offender, valid):
    # An adversary's question: can a seat score by answering nonsense? TextArena's rule for an
    # invalid move (its error allowance, then a loss) must land on the offender, not its opponent.
    env = lang_pz.make(env_id)
    env.reset(seed=0)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(max_iter=200):
        _, reward, term, trunc, _ = env.last()
        returns[agent] += reward
        env.step(None if term or trunc else "[zzz]" if agent == offender else valid)
    assert all(env.terminations.values()), "the game should end on the offender's invalid moves"
    (other,) = [a for a in env.possible_agents if a != offender]
    assert returns[offender] < 0 < returns[other]


def test_same_seed_same_game_even_with_two_games_side_by_side():
    envs = [lang_pz.make("textarena/kuhn_poker-v0") for _ in range(2)]
    texts: list[list[str]] = [[], []]
    for env in envs:
        env.reset(seed=3)
    for _ in range(6):  # interleaved: each game's draws must not touch the other's
        for env, seen in zip(envs, texts):
            if not env.agents:
                continue
            agent = env.agent_selection
            seen.append(env.observe(agent)["text"])
            env.step(None if env.terminations[agent] or env.truncations[agent] else env.infos[agent]["legal_actions"][-1])
    assert texts[0] == texts[1]
    alone = lang_pz.make("textarena/kuhn_poker-v0")
    alone.reset(seed=3)
    assert alone.observe(alone.agent_selection)["text"] == texts[0][0]


def test_any_textarena_game_by_id_and_typos():
    env = lang_pz.make("textarena/ConnectFour-v0")
    env.reset(seed=0)
    assert "Connect Four" in env.observe(env.agent_selection)["text"]
    with pytest.raises(UnknownEnvironmentError, match="Did you mean 'ConnectFour-v0'"):
        lang_pz.make("textarena/ConectFour-v0")


@pytest.mark.parametrize(
    ("message", "moves"),
    [
        ("Available Moves: '[0]', '[1]', '[8]'", ["[0]", "[1]", "[8]"]),
        ("Your available actions are: '[check]', '[bet]'", ["[check]", "[bet]"]),
        ("Valid moves: '[e2e4]', '[g1f3]'\nBoard:", ["[e2e4]", "[g1f3]"]),
        ("Remove objects with the format '[pile quantity]'", None),
    ],
)
def test_listed_moves(message, moves):
    assert listed_moves(message) == moves


def test_nims_example_move_is_in_nims_form():
    """The example was '[4]' for every game without listed moves; in Nim ('[pile quantity]') a reply
    copied from it is an invalid move every time, and two of them lose the game."""
    env = lang_pz.make("textarena/nim-v0")
    env.reset(seed=0)
    agent = env.agent_selection
    example = env.infos[agent]["reply_format"]["example"]
    assert example == "[0 3]"
    assert env.observe(agent)["text"].endswith(f"in the game's format (e.g. {example}).")
    env.step("take three")
    said = env.infos[agent]["parse_error"]
    assert said == f"no action in square brackets; write it as the game asks, e.g. {example}"
    assert env.infos[agent]["fallback"] and env.infos[agent]["action"] == "[pass]"
    assert "[4]" not in env.observe(agent)["text"].splitlines()[-1]
