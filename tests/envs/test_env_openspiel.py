"""OpenSpiel games through Shimmy: what each seat reads (only what it may know), the moves as the
game's own words, parsing, the generic ``openspiel/<game>`` path and the registries users know."""

from __future__ import annotations

import numpy as np
import pytest

import lang_pz
from lang_pz.envs.openspiel.adapter import move_words
from lang_pz.error import ActionParseError, InvalidKwargError, UnknownEnvironmentError

pyspiel = pytest.importorskip("pyspiel")


def _first(env_id, seed=0, **kwargs):
    env = lang_pz.make(env_id, **kwargs)
    env.reset(seed=seed)
    return env


def test_leduc_each_seat_sees_its_own_card_only():
    env = _first("openspiel/leduc_poker-v0", seed=3)
    state = env.unwrapped.game_state
    mine, theirs = (state.information_state_string(p) for p in (0, 1))
    text = env.observe("player_0")["text"]
    assert "Leduc Poker" in text and "You are player_0 (seat 0 of 2)" in text
    assert mine in text and theirs not in text
    own_card = mine.split("[Private: ")[1].split("]")[0]
    other_card = theirs.split("[Private: ")[1].split("]")[0]
    assert own_card != other_card  # card indices 0-5 are distinct cards
    assert f"[Private: {own_card}]" in text and f"[Private: {other_card}]" not in text
    assert text.endswith("Legal moves: Call, Raise. Reply with one move.")
    assert str(state).strip() in env.state_text()  # the critic's state text has every card


def test_leduc_moves_are_words_and_refusals_list_the_legal_ones():
    env = _first("openspiel/leduc_poker-v0", strict=True)
    env.step("I will raise.")
    assert env.infos["player_0"]["action"] == 2  # OpenSpiel's raise
    assert env.infos["player_1"]["legal_actions"] == ["Fold", "Call", "Raise"]
    with pytest.raises(ActionParseError) as exc:
        env.step("call or raise")
    assert "ambiguous" in exc.value.reason and "Fold, Call, Raise" in exc.value.reason
    with pytest.raises(ActionParseError, match="legal moves now: Fold, Call, Raise"):
        env.step("check")


def test_the_fallback_is_the_first_legal_move_and_the_next_text_says_so():
    env = _first("openspiel/kuhn_poker-v0")
    env.step("no idea")
    assert env.infos["player_0"]["fallback"] is True and env.infos["player_0"]["action"] == 0  # Pass
    env.step("Bet")
    assert "'Pass' was played for you" in env.observe("player_0")["text"]


def test_goofspiel_bids_at_once_and_the_second_bidder_does_not_see_the_first():
    env = _first("openspiel/goofspiel-v0", num_cards=4)
    assert "Players choose at the same time" in env.observe("player_0")["text"]
    before = env.observe("player_1")["text"].rsplit("\n", 1)[0]
    env.step("Bid: 4")
    assert env.agent_selection == "player_1"
    assert env.observe("player_1")["text"].rsplit("\n", 1)[0] == before  # nothing of player_0's bid
    assert env.infos["player_1"]["legal_actions"] == ["Bid: 1", "Bid: 2", "Bid: 3", "Bid: 4"]
    env.step("1")  # a bare number is the one move that names it
    assert "P0 hand: 1 2 3 \n" in env.unwrapped.game_state.information_state_string(0) + "\n"


def test_hanabi_is_cooperative_and_hides_the_own_hand():
    env = _first("openspiel/hanabi-v0", seed=5)
    text = env.observe("player_0")["text"]
    own_hand = text.split("Cur player\n")[1].split("-----")[0]
    assert set(own_hand.split()) - {"||"} <= {w for w in own_hand.split() if w.startswith("XX")}
    assert "Play 0" in env.infos["player_0"]["legal_actions"]
    env.step(
        "Reveal player +1 color R" if "Reveal player +1 color R" in env.infos["player_0"]["legal_actions"] else "Play 0"
    )
    while env.agents:
        assert len(set(env.rewards.values())) == 1, env.rewards  # one shared score
        _, _, term, trunc, info = env.last()
        env.step(None if term or trunc else info["legal_actions"][0])
    assert env.unwrapped.game_state.is_terminal()  # played to its end, not truncated


def test_game_over_line_names_the_return():
    env = _first("openspiel/kuhn_poker-v0", seed=1)
    env.step("Bet")
    env.step("Pass")  # player_1 folds: player_0 wins the ante
    text = env.observe("player_0")["text"]
    assert text.endswith("The game is over. Your return: 1.")


def test_any_openspiel_game_through_the_generic_path():
    env = _first("openspiel/liars_dice", players=2, numdice=1)
    text = env.observe("player_0")["text"]
    assert text.startswith("Game: Liars Dice (OpenSpiel liars_dice)")
    assert env.infos["player_0"]["legal_actions"][:2] == ["1-1", "1-2"]
    with pytest.raises(InvalidKwargError, match="numdice"):
        lang_pz.make("openspiel/liars_dice", num_dice=1)
    with pytest.raises(UnknownEnvironmentError, match="liars_dice"):
        lang_pz.make("openspiel/liars_dic")


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (["[P0]Bid: 1", "[P0]Bid: 2"], ["Bid: 1", "Bid: 2"]),
        (["(Play 0)", "(Discard 0)"], ["Play 0", "Discard 0"]),
        (["[P0]x", "[P1]x"], ["[P0]x", "[P1]x"]),  # cleaning would merge them
        (["a", "A"], ["a #0", "A #1"]),
    ],
)
def test_move_words_stay_distinct(raw, words):
    assert move_words(raw) == words


def test_pettingzoo_registry_makes_lang_pz_ids_with_the_same_checks():
    pettingzoo = pytest.importorskip("pettingzoo")
    if not hasattr(pettingzoo, "make"):
        pytest.skip("this PettingZoo has no registry")
    env = pettingzoo.make("aec", "openspiel/kuhn_poker-v0")
    env.reset(seed=0)
    assert env.last()[0]["text"].startswith("Game: Kuhn Poker")
    with pytest.raises(InvalidKwargError, match="Did you mean 'players'"):
        pettingzoo.make("aec", "openspiel/kuhn_poker-v0", player=3)


# -- OpenSpiel's classical players ------------------------------------------------------------


def test_cfr_player_solves_kuhn_once_and_plays_near_nash(tmp_path, monkeypatch):
    from lang_pz.policies.openspiel import OpenSpielPlayer, cfr_strategy

    monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(tmp_path))
    cfr_strategy.cache_clear()
    strategy = cfr_strategy("kuhn_poker()", 200)
    assert strategy["2b"][1] > 0.95  # a King facing a bet always calls
    assert strategy["0b"][0] > 0.95  # a Jack facing a bet always folds
    assert list((tmp_path / "cfr").glob("*.json"))
    cfr_strategy.cache_clear()
    assert cfr_strategy("kuhn_poker()", 200) == strategy  # read back from disk
    env = _first("openspiel/kuhn_poker-v0", seed=2)
    player = OpenSpielPlayer(env, "player_0", "cfr", iterations=200, seed=0)
    player.reset(7)
    word = player(env.observe("player_0"), env.infos["player_0"])
    assert word in env.infos["player_0"]["legal_actions"]
    with pytest.raises(lang_pz.error.LangPZError, match="not player_1's turn"):
        OpenSpielPlayer(env, "player_1", "random")(env.observe("player_1"), env.infos["player_1"])


def test_mcts_plays_boards_and_is_refused_where_cards_are_hidden():
    from lang_pz.policies.openspiel import OpenSpielPlayer

    env = _first("openspiel/breakthrough-v0", rows=5, columns=4)
    mcts = OpenSpielPlayer(env, "player_0", "mcts", simulations=20, seed=0)
    mcts.reset(1)
    first = mcts(env.observe("player_0"), env.infos["player_0"])
    mcts.reset(1)
    assert mcts(env.observe("player_0"), env.infos["player_0"]) == first  # same seed, same move
    assert first in env.infos["player_0"]["legal_actions"]
    with pytest.raises(InvalidKwargError, match="hides"):
        OpenSpielPlayer(_first("openspiel/leduc_poker-v0"), "player_0", "mcts")


def test_spiel_seats_in_bench_teams():
    from lang_pz.bench.teams import build_team, parse_team

    env = lang_pz.make("openspiel/kuhn_poker-v0")  # as the bench builds teams: before the first reset
    team = build_team(parse_team("player_0=spiel:cfr:50;*=spiel:random"), env, "openspiel/kuhn_poker-v0", llm=lambda: None)
    assert (team["player_0"].kind, team["player_0"].iterations, team["player_1"].kind) == ("cfr", 50, "random")
    with pytest.raises(InvalidKwargError, match="not an openspiel"):
        build_team(parse_team("spiel:cfr"), lang_pz.make("classic/rps-v0"), "classic/rps-v0", llm=lambda: None)
    with pytest.raises(InvalidKwargError, match="positive integer"):
        build_team(parse_team("spiel:cfr:x"), env, "openspiel/kuhn_poker-v0", llm=lambda: None)


@pytest.mark.parametrize(
    "env_id", ["openspiel/kuhn_poker-v0", "openspiel/leduc_poker-v0", "openspiel/hanabi-v0", "openspiel/goofspiel-v0"]
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_agents_collected_rewards_are_its_openspiel_return(env_id, seed):
    env = _first(env_id, seed=seed)
    collected = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(seed)
    for agent in env.agent_iter():
        _, reward, term, trunc, info = env.last()
        collected[agent] += reward
        env.step(None if term or trunc else str(rng.choice(info["legal_actions"])))
    returns = env.unwrapped.game_state.returns()
    assert collected == pytest.approx({a: returns[i] for i, a in enumerate(env.possible_agents)})


def test_any_game_is_openspiel_name_with_or_without_v0():
    """Issue 23's ``make("openspiel/<game>", **params)``, and its ``-v0`` form (an id as every other)."""
    bare, versioned = _first("openspiel/liars_dice", numdice=1), _first("openspiel/liars_dice-v0", numdice=1)
    assert bare.observe("player_0") == versioned.observe("player_0")
    assert "OpenSpiel liars_dice" in versioned.observe("player_0")["text"]
    with pytest.raises(UnknownEnvironmentError, match=r"has version -v0 only; make openspiel/liars_dice-v0"):
        lang_pz.make("openspiel/liars_dice-v1")


def test_a_registered_game_without_version_is_its_registered_id():
    """As pettingzoo.make and gymnasium.make resolve ids: ``openspiel/hanabi`` was the full 5-colour
    game through the generic adapter while ``pettingzoo.make("aec", "openspiel/hanabi")`` was hanabi-v0."""
    ours = _first("openspiel/hanabi")
    assert ours.unwrapped.game_state.get_game().get_parameters()["colors"] == 2  # hanabi-v0's, not OpenSpiel's 5
    assert lang_pz.spec("openspiel/hanabi").id == "openspiel/hanabi-v0"


@pytest.mark.parametrize(
    ("typo", "suggested"),
    [("openspiel/leduc", "'openspiel/leduc_poker'"), ("openspiel/liars_dic-v0", "'openspiel/liars_dice'")],
)
def test_an_unknown_game_names_the_id_and_close_games(typo, suggested):
    with pytest.raises(UnknownEnvironmentError) as info:
        lang_pz.make(typo)
    said = str(info.value)
    assert said.startswith(f"no environment {typo.removesuffix('-v0')!r}") and f"Did you mean {suggested}" in said


@pytest.mark.filterwarnings("ignore::lang_pz.wrappers.common.NonTextActionWarning")
@pytest.mark.parametrize(("game", "params"), [("liars_dice", {"numdice": 1}), ("oh_hell", {}), ("first_sealed_auction", {})])
def test_garbage_through_the_generic_path_plays_the_fallback_and_says_so(game, params):
    """The family ids are not in the registry the fuzz test walks: garbage here too plays the first
    legal move, marked as a fallback with the reason, never a crash and never read as a move."""
    env = _first(f"openspiel/{game}", **params)
    junk = ["", "garbage", None, 3, "0", "x" * 5000, "\x00", {"action": 1}]
    played = 0
    for i in range(60):
        if not env.agents:
            env.reset(seed=i)
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        first = env.unwrapped.game_state.legal_actions()[0]
        env.step(junk[i % len(junk)])
        info = env.infos[agent]
        assert info["fallback"] and info["parse_error"] and info["action"] == first, info
        played += 1
    assert played >= 30
