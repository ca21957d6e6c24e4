"""The bridges given actions an RL library should not send (an adversary's pass): each is refused
naming the value, never read as something else (``1.7`` as 1, ``[1, 2]`` as 1, the text ``'2'``
as index 2, ``None`` as NaN), and a masked index plays the env's documented fallback, said in info."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lang_pz
from lang_pz.error import LangPZError
from lang_pz.interop import to_masked_aec_env, to_vector_env
from lang_pz.interop.gym import GymDiscreteActions

pistonball_kw = {"n_pistons": 5, "max_cycles": 10}


def _vector(**kw):
    env = to_vector_env(lang_pz.make("butterfly/pistonball-v0", **pistonball_kw, **kw))
    env.reset(seed=0)
    return env


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (3, "got 3"),
        (-1, "got -1"),
        (1.7, "got 1.7: not a whole number"),
        (np.float32(2.5), "got 2.5: not a whole number"),
        (float("nan"), "got nan: not a whole number"),
        (float("inf"), "got inf: not a whole number"),  # was an OverflowError
        ("2", "got str '2'"),
        (True, "got bool True"),
        (np.array([1, 2]), "(one number), got 2 values"),
        (None, "got NoneType None"),
    ],
)
def test_an_illegal_index_is_refused_naming_it(bad, said):
    env = _vector()
    actions = dict.fromkeys(env.agents, 1)
    with pytest.raises(LangPZError) as info:
        env.step({**actions, "piston_0": bad})
    assert str(info.value).startswith("action of piston_0 must be an index in 0..2") and said in str(info.value)


@pytest.mark.parametrize("good", [2, np.int64(2), 2.0, np.array([2]), np.array([[2]]), [2]])
def test_an_index_in_the_forms_libraries_send_is_the_word(good):
    env = _vector()
    *_, infos = env.step({**dict.fromkeys(env.agents, 1), "piston_0": good})
    assert infos["piston_0"]["fallback"] is False


def test_an_action_for_an_agent_the_env_lacks_is_named():
    env = _vector()
    with pytest.raises(ValueError, match=r"step got actions for \['piston_9'\], which are not agents of this env"):
        env.step({**dict.fromkeys(env.agents, 1), "piston_9": 1})  # was KeyError: 'piston_9'


def test_step_before_reset_says_reset_first():
    env = lang_pz.make("butterfly/pistonball-v0", **pistonball_kw)
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\)"):
        env.step(dict.fromkeys(env.possible_agents, "up"))  # was AttributeError: no attribute 'agents'


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (np.array([np.nan]), "must be finite, got [nan]"),
        (np.array([1.0, 2.0]), "must have 1 number(s) (shape (1,)), got shape (2,)"),
        ("0.5", "must be 1 number(s), got str '0.5'"),  # text was read as the number
        (None, "must be 1 number(s), got NoneType None"),  # was "must be finite, got nan"
        (np.array(["x"]), "must be 1 number(s), got ndarray"),  # was a bare ValueError
        (True, "must be 1 number(s), got bool True"),
    ],
)
def test_an_illegal_box_action_is_refused_naming_it(bad, said):
    env = _vector(continuous=True)
    actions = {a: np.zeros(1, np.float32) for a in env.agents}
    with pytest.raises(LangPZError, match=re.escape(f"action of piston_0 {said}")):
        env.step({**actions, "piston_0": bad})


def test_a_box_action_out_of_bounds_is_clipped_and_sent_as_text():
    env = to_vector_env(lang_pz.make("butterfly/pistonball-v0", **pistonball_kw, continuous=True), numeric_infos=False)
    env.reset(seed=0)
    *_, infos = env.step({**{a: np.zeros(1, np.float32) for a in env.agents}, "piston_0": np.array([5.0])})
    assert infos["piston_0"]["action_text"] == "1.0" and infos["piston_0"]["fallback"] is False


def test_gymnasium_bridges_refuse_the_same():
    env = GymDiscreteActions(lang_pz.make("toy_text/frozen_lake-v0"))
    env.reset(seed=0)
    with pytest.raises(LangPZError, match="not a whole number"):
        env.step(1.5)
    with pytest.raises(LangPZError, match="got str '1'"):
        env.step("1")


def test_masked_aec_bridge_plays_the_fallback_for_a_masked_index_and_refuses_none_for_a_live_agent():
    env = to_masked_aec_env(lang_pz.make("openspiel/leduc_poker-v0"))
    env.reset(seed=0)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    assert list(mask) == [0, 1, 1]  # fold is not legal before a bet
    env.step(0)
    assert env.infos[agent] == {"fallback": True}
    assert "index 0 is not a legal move now; legal indexes: [1, 2]" in env.text(agent)  # its next text says so
    live = env.agent_selection
    with pytest.raises(LangPZError, match=f"action of {live} is None, but {live} is not done"):
        env.step(None)  # was sent on as None: the fallback, with a NonTextActionWarning
    with pytest.raises(
        LangPZError, match=re.escape(f"action of {live} must be an index in 0..2, got 0.5: not a whole number")
    ):
        env.step(0.5)


@pytest.mark.parametrize(
    ("actions", "said"),
    [
        ("rock", "actions= is a list of action words, e.g. ['down', 'stay', 'up'], not one str: got 'rock'"),
        ({"player_0": ["rock"]}, "actions= has no words for ['player_1']"),  # was KeyError: 'player_1'
    ],
)
def test_bridge_words_given_wrongly_are_refused(actions, said):
    with pytest.raises(LangPZError, match=re.escape(said)):
        to_vector_env(lang_pz.make("classic/rps-v0"), actions=actions)  # a str was read as its letters
