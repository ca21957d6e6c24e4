"""The classic games: refusals name only legal moves, the turn line after the game ends, the
move grammar compiled once, the old import paths."""

from __future__ import annotations

import pytest

import lang_pz
from lang_pz.error import ActionParseError


def _fill_column_4(env):
    env.reset(seed=0)
    for _ in range(6):
        env.step("4")


@pytest.mark.parametrize("reply", ["I pass", "columns 1 or 2", "4"])
def test_connect_four_refusals_list_only_the_columns_with_room(reply):
    env = lang_pz.make("classic/connect_four-v0", strict=True)
    _fill_column_4(env)
    with pytest.raises(ActionParseError) as exc:
        env.step(reply)
    assert "['1', '2', '3', '5', '6', '7']" in exc.value.reason, exc.value.reason
    assert "'4'," not in exc.value.reason.split("legal")[-1].split("one of")[-1]


def test_connect_four_fallback_skips_a_full_column():
    env = lang_pz.make("classic/connect_four-v0")
    _fill_column_4(env)
    for _ in range(6):
        env.step("1")  # column 1 full too
    env.step("4")
    assert env.infos["player_0"]["action"] == 1  # column 2: the leftmost with room


@pytest.mark.parametrize(
    ("env_id", "moves"),
    [
        ("classic/tictactoe-v0", ["1", "4", "2", "5", "3"]),  # X wins the top row
        ("classic/connect_four-v0", ["1", "2", "1", "2", "1", "2", "1"]),  # player_0 wins column 1
    ],
)
def test_no_one_is_offered_moves_once_the_game_is_over(env_id, moves):
    env = lang_pz.make(env_id)
    env.reset(seed=0)
    for m in moves:
        env.step(m)
    assert all(env.terminations.values())
    for agent in env.agents:
        text = env.observe(agent)["text"]
        assert text.endswith("The game is over."), text
        assert env.infos[agent]["legal_actions"] == []


def test_the_tictactoe_grammar_is_compiled_once(monkeypatch):
    from lang_pz.envs.classic import turns

    built = []
    real = turns.PhraseTable.__init__

    def counting(self, phrases):
        built.append(len(phrases))
        real(self, phrases)

    monkeypatch.setattr(turns.PhraseTable, "__init__", counting)
    env = lang_pz.make("classic/tictactoe-v0")
    env.reset(seed=0)
    for move in ("center", "top left", "square 3", "I take 9", "bottom-left"):
        env.step(move)
    assert built == []  # the game's grammar was compiled at import, not per parse
    table = {"alpha": 0, "beta": 1}
    for text in ("alpha", "beta", "say alpha"):
        turns.parse_phrases(text, table)
    assert len(built) == 1  # a plain mapping is compiled on first use, then memoised


def test_old_import_paths_still_work():
    from lang_pz.envs.classic import (
        make_tictactoe,
    )

    assert lang_pz.registry["classic/tictactoe-v0"].load() is make_tictactoe


def test_tictactoe_unreadable_reply_is_told_the_free_squares():
    env = lang_pz.make("classic/tictactoe-v0", strict=True)
    env.reset(seed=0)
    env.step("5")
    with pytest.raises(ActionParseError, match=r"no square found; legal: \['1', '2', '3', '4', '6', '7', '8', '9'\]"):
        env.step("the corner")
