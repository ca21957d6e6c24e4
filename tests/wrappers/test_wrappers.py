"""The language wrappers: generic wrapping, info keys, strict mode, determinism, Pistonball's text."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, parallel_api_test

import lang_pz
from lang_pz.error import ActionParseError
from lang_pz.spaces import to_unicode_charset
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers import LanguageAECWrapper, LanguageGymWrapper, LanguageParallelWrapper

# Environments made by a language wrapper over a game with a finite or numeric action set. The
# task envs (tasks/*) are natively textual, with free-text actions and no legal_actions; their
# contract is tested in test_task_envs.py and, like every env, in test_compliance.py.
# Envs whose actions are free text, with no list of moves or number range to state: the tasks, and
# TextArena's Nim ("[pile quantity]"; its own tests are in test_env_textarena.py).
FREE_TEXT = ("tasks/", "textarena/nim-v0")
ALL_CASES = [
    (env_id, api) for env_id, s in sorted(lang_pz.registry.items()) if not env_id.startswith(FREE_TEXT) for api in s.apis
]
GARBAGE = "qwzx vbnm!"
DECODE_KEYS = ("action_text", "action", "parse_error", "fallback")


def _make(env_id, api, **kwargs):
    return lang_pz.make(env_id, api=api, **{**lang_pz.registry[env_id].test_kwargs, **kwargs})


def _rps_raw(api):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.classic import rps_v2
    return rps_v2.parallel_env(max_cycles=5) if api == "parallel" else rps_v2.env(max_cycles=5)


def _pistonball_raw(api, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.butterfly import pistonball_v6
    kwargs = {"n_pistons": 5, "max_cycles": 10, **kwargs}
    return pistonball_v6.parallel_env(**kwargs) if api == "parallel" else pistonball_v6.env(**kwargs)


# -- generic wrapping (no adapter) --------------------------------------------------------


def test_generic_parallel_discrete_env():
    env = LanguageParallelWrapper(_rps_raw("parallel"))
    obs, infos = env.reset(seed=0)
    assert obs["player_0"]["text"] == "You are player_0.\nObservation: 3\nActions: 0, 1, 2"
    assert infos["player_0"]["legal_actions"] == ["0", "1", "2"]
    obs, rewards, _, _, infos = env.step({"player_0": "0", "player_1": "I play 1"})
    assert obs["player_0"]["text"].startswith("You are player_0.\nObservation: 1")
    assert rewards == {"player_0": -1, "player_1": 1}  # paper beats rock
    assert infos["player_1"]["action"] == 1 and infos["player_1"]["parse_error"] is None
    parallel_api_test(LanguageParallelWrapper(_rps_raw("parallel")), num_cycles=10)


def test_generic_aec_discrete_env():
    env = LanguageAECWrapper(_rps_raw("aec"))
    api_test(env, num_cycles=10)
    env.reset(seed=0)
    env.step("2")
    assert env.infos["player_0"]["action"] == 2


@pytest.mark.parametrize("api", ["parallel", "aec"])
def test_generic_box_env_continuous_pistonball(api):
    raw = _pistonball_raw(api, continuous=True)
    env = LanguageParallelWrapper(raw) if api == "parallel" else LanguageAECWrapper(raw)
    if api == "parallel":
        obs, infos = env.reset(seed=0)
        text, info = obs["piston_0"]["text"], infos["piston_0"]
    else:
        env.reset(seed=0)
        text, info = env.observe("piston_0")["text"], env.infos["piston_0"]
    # a 457x120x3 image is shown as block means (a coarse picture within the bound), not dumped
    assert "array of shape (457, 120, 3)" in text and "the mean of a block of" in text and len(text) < 4500
    assert "Action: a number from -1 to 1" in text
    assert info["action_range"] == [-1.0, 1.0] and "legal_actions" not in info
    if api == "parallel":
        _, _, _, _, infos = env.step(dict.fromkeys(env.agents, "0.5"))
        assert infos["piston_0"]["action"] == [0.5] and infos["piston_0"]["parse_error"] is None
        parallel_api_test(LanguageParallelWrapper(_pistonball_raw(api, continuous=True)), num_cycles=5)
    else:
        env.step("-0.25")
        assert env.infos["piston_0"]["action"] == [-0.25]
        api_test(LanguageAECWrapper(_pistonball_raw(api, continuous=True)), num_cycles=5)


def test_generic_gymnasium_env():
    import gymnasium as gym

    env = LanguageGymWrapper(gym.make("CartPole-v1"))
    obs, info = env.reset(seed=0)
    assert obs["text"].startswith("Observation (4 numbers, unbounded): [") and obs["text"].endswith("Actions: 0, 1")
    assert info["legal_actions"] == ["0", "1"]
    _, _, _, _, info = env.step("1")
    assert info["action"] == 1


def test_action_mask_is_moved_out_of_info():
    class MaskInInfo(LanguageAdapter):
        pass

    env = LanguageAECWrapper(_rps_raw("aec"), MaskInInfo())
    env.reset(seed=0)
    env.unwrapped.infos["player_0"]["action_mask"] = np.array([0, 1, 0], dtype=np.int8)
    info = env.infos["player_0"]
    assert "action_mask" not in info and info["legal_actions"] == ["1"]
    env.step("0")  # illegal under the mask: falls back to the only legal action
    assert env.infos["player_0"]["action"] == 1 and "not legal" in env.infos["player_0"]["parse_error"]


# -- info keys after a garbage action, strict mode -----------------------------------------


def _step_once(env, api, text):
    """Step the first agent (AEC) / every agent (parallel) / the env with ``text``; its info."""
    if api == "aec":
        env.reset(seed=0)
        agent = env.agent_selection
        env.step(text)
        return env.infos[agent]
    if api == "parallel":
        env.reset(seed=0)
        agent = env.agents[0]
        return env.step(dict.fromkeys(env.agents, text))[4][agent]
    env.reset(seed=0)
    return env.step(text)[4]


@pytest.mark.parametrize(("env_id", "api"), ALL_CASES)
def test_info_keys_after_garbage(env_id, api):
    info = _step_once(_make(env_id, api), api, GARBAGE)
    assert set(DECODE_KEYS) <= set(info)
    assert info["action_text"] == GARBAGE
    assert isinstance(info["parse_error"], str) and info["parse_error"]
    assert info["fallback"] is True
    assert "action_mask" not in info
    assert "legal_actions" in info or "action_range" in info


@pytest.mark.parametrize(("env_id", "api"), ALL_CASES)
def test_info_keys_after_valid_action(env_id, api):
    env = _make(env_id, api)
    if api == "aec":
        env.reset(seed=0)
        word = env.infos[env.agent_selection]["legal_actions"][-1]
    elif api == "parallel":
        _, infos = env.reset(seed=0)
        word = infos[env.agents[0]]["legal_actions"][-1]
    else:
        word = env.reset(seed=0)[1]["legal_actions"][-1]
    info = _step_once(env, api, word)
    assert info["action_text"] == word and info["parse_error"] is None and info["fallback"] is False


@pytest.mark.parametrize(("env_id", "api"), ALL_CASES)
def test_strict_mode_raises_with_raw_text(env_id, api):
    env = _make(env_id, api, strict=True)
    for text in (GARBAGE, "", '{"action": "nothing"}', "\U0001f600" * 10):
        with pytest.raises(ActionParseError) as info:
            _step_once(env, api, text)
        assert info.value.text == text and info.value.reason


def test_strict_tictactoe_rejects_occupied_square_without_moving():
    env = lang_pz.make("classic/tictactoe-v0", strict=True)
    env.reset(seed=0)
    env.step("center")
    assert env.agent_selection == "player_2"
    with pytest.raises(ActionParseError, match="square 5 is taken") as info:
        env.step("5")
    assert info.value.text == "5"
    assert env.agent_selection == "player_2" and not any(env.terminations.values())
    env.step("top-left")
    assert "X | 2 | 3" not in env.observe("player_1")["text"] and " O | 2 | 3" in env.observe("player_1")["text"]


def test_nonstrict_tictactoe_illegal_square_falls_back_to_a_legal_one():
    env = lang_pz.make("classic/tictactoe-v0")
    env.reset(seed=0)
    env.step("1")
    env.step("top-left")  # taken: the first free square in reading order (2) is played
    info = env.infos["player_2"]
    assert info["fallback"] and "taken" in info["parse_error"] and info["action"] == 3
    assert not any(env.terminations.values())  # PettingZoo would end the game on an illegal move
    assert " X | O | 3" in env.observe("player_1")["text"]


def test_connect_four_full_column_and_turns():
    env = lang_pz.make("classic/connect_four-v0")
    env.reset(seed=0)
    for _ in range(6):
        env.step("column 4")
    info = env.infos["player_0"]
    obs = env.observe("player_0")["text"]
    assert "Legal moves: 1, 2, 3, 5, 6, 7." in obs
    assert info["legal_actions"] == ["1", "2", "3", "5", "6", "7"]
    env.step("4")
    assert "not legal" in env.infos["player_0"]["parse_error"] and env.infos["player_0"]["action"] == 0
    assert "Not your turn" in env.observe("player_0")["text"]
    assert env.infos["player_0"]["legal_actions"] == []


# -- sample texts, grammar in the game ------------------------------------------------------


def test_tictactoe_text_names_your_mark_and_board():
    env = lang_pz.make("classic/tictactoe-v0")
    env.reset(seed=0)
    env.step("top-right")
    text = env.observe("player_2")["text"]
    assert "You are player_2 and play O" in text
    assert " 1 | 2 | X" in text
    assert "Legal moves: 1, 2, 4, 5, 6, 7, 8, 9." in text
    assert "You are player_1 and play X" in env.observe("player_1")["text"]


def test_connect_four_text_is_relative_to_the_observer():
    env = lang_pz.make("classic/connect_four-v0")
    env.reset(seed=0)
    env.step("1")
    env.step("7")
    bottom0 = env.observe("player_0")["text"].splitlines()[-2]
    bottom1 = env.observe("player_1")["text"].splitlines()[-2]
    assert bottom0 == "X . . . . . O" and bottom1 == "O . . . . . X"


@pytest.mark.parametrize("api", ["parallel", "aec"])
def test_rps_text_reports_last_round(api):
    env = lang_pz.make("classic/rps-v0", api=api, max_cycles=3)
    if api == "parallel":
        env.reset(seed=0)
        obs = env.step({"player_0": "scissors", "player_1": "paper"})[0]
        text = obs["player_1"]["text"]
    else:
        env.reset(seed=0)
        env.step("scissors")
        env.step("paper")
        text = env.observe("player_1")["text"]
    assert "Round 2 of 3." in text
    assert "the opponent played scissors" in text and "You played paper: you lost" in text


def test_rps_five_moves_use_the_code_order():
    env = lang_pz.make("classic/rps-v0", num_actions=5)
    _, infos = env.reset(seed=0)
    assert infos["player_0"]["legal_actions"] == ["rock", "paper", "scissors", "spock", "lizard"]
    _, rewards, _, _, _ = env.step({"player_0": "spock", "player_1": "rock"})
    assert rewards["player_0"] == 1  # Spock vaporises rock
    _, rewards, _, _, _ = env.step({"player_0": "lizard", "player_1": "spock"})
    assert rewards["player_0"] == 1  # lizard poisons Spock


def test_frozen_lake_marks_your_position():
    env = lang_pz.make("toy_text/frozen_lake-v0", is_slippery=False)
    obs, _ = env.reset(seed=0)
    assert "@FFF\nFHFH" in obs["text"]
    obs, _, _, _, _ = env.step("down")
    assert "SFFF\n@HFH" in obs["text"] and "row 2, column 1" in obs["text"]
    obs, _, terminated, _, _ = env.step("right")
    assert terminated and "on a hole" in obs["text"]


def test_cartpole_text_has_named_variables_and_units():
    env = lang_pz.make("classic_control/cartpole-v0")
    obs, _ = env.reset(seed=0)
    for part in ("Cart position", " m ", "m/s", "Pole angle", "degrees", "degrees/s", "Actions: left, right"):
        assert part in obs["text"]
    x = env.unwrapped.state[0]
    _, _, _, _, info = env.step("push right")
    assert info["action"] == 1 and env.unwrapped.state[1] > 0 and env.unwrapped.state[0] != x


# -- determinism, charset -------------------------------------------------------------------


def _texts(env_id, api, seed, steps=4):
    env = _make(env_id, api)
    out = []
    if api == "aec":
        env.reset(seed=seed)
        out.append(tuple(env.observe(a)["text"] for a in env.agents))
        for _agent in env.agent_iter(steps):
            _, _, term, trunc, info = env.last()
            env.step(None if term or trunc else info["legal_actions"][0] if info.get("legal_actions") else "0")
            out.append(tuple(env.observe(a)["text"] for a in env.agents))
    elif api == "parallel":
        obs, infos = env.reset(seed=seed)
        out.append(tuple(o["text"] for o in obs.values()))
        for _ in range(steps):
            if not env.agents:
                break
            obs, *_, infos = env.step({a: infos[a].get("legal_actions", ["0"])[0] for a in env.agents})
            out.append(tuple(o["text"] for o in obs.values()))
    else:
        obs, info = env.reset(seed=seed)
        out.append(obs["text"])
        for _ in range(steps):
            obs, _, term, trunc, info = env.step(info["legal_actions"][-1])
            out.append(obs["text"])
            if term or trunc:
                break
    return out


@pytest.mark.parametrize(("env_id", "api"), ALL_CASES)
def test_observation_text_deterministic_for_a_seed(env_id, api):
    first = _texts(env_id, api, seed=7)
    assert first == _texts(env_id, api, seed=7)
    flat = [t for item in first for t in (item if isinstance(item, tuple) else (item,))]
    assert all(t and to_unicode_charset(t) == t for t in flat)


def test_pistonball_text_depends_on_the_seed():
    assert _texts("butterfly/pistonball-v0", "parallel", 1, steps=1) != _texts(
        "butterfly/pistonball-v0", "parallel", 2, steps=1
    )


# -- Pistonball: decentralised text, hold ---------------------------------------------------


def _piston_text(env, agent):
    return env.adapter.observation_text(env.env, agent, None)


def test_pistonball_text_is_decentralised():
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=20, random_drop=False)
    env.reset(seed=0)
    raw = env.unwrapped
    before = {a: _piston_text(env, a) for a in ("piston_0", "piston_1", "piston_9", "piston_10", "piston_11")}
    piston = raw.pistonList[10]
    x, y = piston.position
    piston.position = (x, y - 20 if y - 20 >= 427 else y + 20)  # move piston_10 only
    after = {a: _piston_text(env, a) for a in before}
    assert after["piston_0"] == before["piston_0"] and after["piston_1"] == before["piston_1"]
    assert after["piston_10"] != before["piston_10"]
    assert after["piston_9"] != before["piston_9"] and after["piston_11"] != before["piston_11"]
    # and a neighbour's move is seen
    x0, y0 = raw.pistonList[1].position
    raw.pistonList[1].position = (x0, y0 - 20 if y0 - 20 >= 427 else y0 + 20)
    assert _piston_text(env, "piston_0") != before["piston_0"]


def test_pistonball_ball_out_of_view_when_far():
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=20)
    obs, _ = env.reset(seed=0)
    raw = env.unwrapped
    under = int((raw.ball.position[0] - raw.wall_width) // raw.piston_width)
    assert under >= 5  # the ball starts at the right end
    assert "Ball: out of view." in obs["piston_0"]["text"]
    assert "out of view" not in obs[f"piston_{under}"]["text"]
    assert "Ball:" in obs[f"piston_{under}"]["text"]


@pytest.mark.parametrize("hold", [1, 3, 5])
@pytest.mark.parametrize("api", ["parallel", "aec"])
def test_hold_advances_k_cycles_per_language_step(hold, api):
    env = lang_pz.make("butterfly/pistonball-v0", api=api, n_pistons=4, hold=hold, max_cycles=50)
    env.reset(seed=0)
    raw = env.unwrapped
    assert raw.frames == 0
    if api == "parallel":
        env.step(dict.fromkeys(env.agents, "up"))
    else:
        for _ in env.possible_agents:
            env.step("up")
    assert raw.frames == hold


def test_gym_wrapper_records_constructor_args():
    env = lang_pz.make("classic_control/cartpole-v0", strict=True)
    assert isinstance(env, LanguageGymWrapper)
    recorded = env.spec.additional_wrappers[-1]
    assert recorded.kwargs["strict"] is True
    assert isinstance(env.observation_space, spaces.Dict) and isinstance(env.action_space, spaces.Text)


PARALLEL_CASES = [(env_id, api) for env_id, api in ALL_CASES if api == "parallel"]


@pytest.mark.parametrize(("env_id", "api"), PARALLEL_CASES)
def test_parallel_step_names_missing_agents(env_id, api):
    """``step({"piston_0": "down"})`` raised KeyError 'piston_1' from deep inside PettingZoo."""
    env = _make(env_id, api)
    env.reset(seed=0)
    first, *others = env.agents
    with pytest.raises(ValueError, match=r"no action for live agent\(s\) \[" + repr(others[0])):
        env.step({first: "x"})
    env.step(dict.fromkeys(env.agents, "x"))  # the refused step changed nothing: a full one still works
    env.close()


@pytest.mark.parametrize(("env_id", "api"), PARALLEL_CASES)
def test_parallel_step_refuses_a_bare_action(env_id, api):
    """``step("down")`` raised AttributeError: 'str' object has no attribute 'items'."""
    env = _make(env_id, api)
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"step takes a dict agent -> action text.*got str 'down'"):
        env.step("down")
    env.close()
