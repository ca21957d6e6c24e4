"""What happens to an action in every language env: the one bound (check_action_text), the
fallback and its note in the agent's next observation, strict mode."""

from __future__ import annotations

import pytest

import lang_pz
from lang_pz.error import ActionParseError
from lang_pz.spaces import ACTION_MAX_LENGTH

# Envs whose actions are free text, with no list of moves or number range to state: the tasks, and
# TextArena's Nim ("[pile quantity]"; its own tests are in test_env_textarena.py).
FREE_TEXT = ("tasks/", "textarena/nim-v0")
GAME_CASES = [
    (env_id, api) for env_id, s in sorted(lang_pz.registry.items()) if not env_id.startswith(FREE_TEXT) for api in s.apis
]


def _make(env_id, api, **kwargs):
    return lang_pz.make(env_id, api=api, **{**lang_pz.registry[env_id].test_kwargs, **kwargs})


def _first_step(env, api, action):
    """Reset (seed 0), step the first agent (AEC) / every agent (parallel) / the env with
    ``action``; return (the agent, its info after the step, its next observation text)."""
    if api == "aec":
        env.reset(seed=0)
        agent = env.agent_selection
        env.step(action)
        info = env.infos[agent]
        while env.agents and env.agent_selection != agent:  # the others move: its next turn
            _, _, term, trunc, other = env.last()
            env.step(None if term or trunc else other["legal_actions"][0])
        return agent, info, env.observe(agent)["text"]
    if api == "parallel":
        env.reset(seed=0)
        agent = env.agents[0]
        obs, _, _, _, infos = env.step(dict.fromkeys(env.agents, action))
        return agent, infos[agent], obs[agent]["text"]
    env.reset(seed=0)
    obs, _, _, _, info = env.step(action)
    return None, info, obs["text"]


def _a_legal_word(env, api):
    if api == "aec":
        env.reset(seed=0)
        return env.infos[env.agent_selection]["legal_actions"][0]
    if api == "parallel":
        _, infos = env.reset(seed=0)
        return infos[env.agents[0]]["legal_actions"][0]
    return env.reset(seed=0)[1]["legal_actions"][0]


@pytest.mark.parametrize(("env_id", "api"), GAME_CASES)
def test_action_longer_than_the_space_is_refused(env_id, api):
    env = _make(env_id, api)
    word = _a_legal_word(env, api)
    at_bound = word + " " * (ACTION_MAX_LENGTH - len(word))
    _, info, _ = _first_step(env, api, at_bound)
    assert info["parse_error"] is None and not info["fallback"]
    too_long = at_bound + " "
    _, info, _ = _first_step(env, api, too_long)
    assert info["fallback"] is True and "max_length=1024" in info["parse_error"]
    # stored cut at the bound, with its length (the parser saw it whole: its reason names max_length)
    assert info["action_text"] == at_bound and info["action_text_chars"] == ACTION_MAX_LENGTH + 1
    assert info["action_text_truncated"] is True


@pytest.mark.parametrize(("env_id", "api"), GAME_CASES)
@pytest.mark.parametrize("action", [3, b"up", ["up"]])
def test_non_str_action_is_the_fallback(env_id, api, action):
    _, info, _ = _first_step(_make(env_id, api), api, action)
    assert info["fallback"] is True and "must be a str" in info["parse_error"]
    assert info["action_text"] == repr(action)


@pytest.mark.parametrize(("env_id", "api"), GAME_CASES)
def test_strict_refusal_carries_the_whole_action(env_id, api):
    env = _make(env_id, api, strict=True)
    word = _a_legal_word(env, api)
    too_long = word + " " * ACTION_MAX_LENGTH
    with pytest.raises(ActionParseError) as exc:
        _first_step(env, api, too_long)
    assert exc.value.text == too_long and "max_length" in exc.value.reason


@pytest.mark.parametrize(("env_id", "api"), GAME_CASES)
def test_fallback_is_told_in_the_next_observation(env_id, api):
    env = _make(env_id, api)
    _, info, text = _first_step(env, api, "qwzx vbnm!")
    assert info["fallback"] is True
    assert "Your last reply" in text, text
    # only once: a valid reply the next time removes the note (turn-based AEC: test below)
    if api == "gymnasium":
        assert "Your last reply" not in env.step(info["legal_actions"][0])[0]["text"]
    elif api == "parallel" and env.agents:
        _, _, _, _, infos = env.step(dict.fromkeys(env.agents, "qwzx"))
        obs = env.step({a: infos[a]["legal_actions"][0] for a in env.agents})[0]
        assert all("Your last reply" not in o["text"] for o in obs.values())


def test_tictactoe_fallback_note_names_the_square_played():
    env = lang_pz.make("classic/tictactoe-v0")
    env.reset(seed=0)
    env.step("1")
    env.step("top-left")  # taken: square 2 is played for player_2
    env.step("9")
    text = env.observe("player_2")["text"]
    assert "Your last reply was not a legal move (square 1 is taken" in text
    assert "so square 2 was played for you." in text
    assert text.splitlines()[-1].startswith("Your turn.")  # the note comes before the action line
    env.step("5")
    assert "Your last reply" not in env.observe("player_2")["text"]


def test_connect_four_fallback_note_names_the_column_played():
    env = lang_pz.make("classic/connect_four-v0")
    env.reset(seed=0)
    env.step("I pass")
    env.step("3")
    text = env.observe("player_0")["text"]
    assert "Your last reply was not a legal move (no action word found" in text
    assert "so column 1 was played for you." in text


@pytest.mark.parametrize(("env_id", "api"), GAME_CASES)
def test_int_action_is_said_loudly_once_per_env(env_id, api):
    from lang_pz.wrappers.common import NonTextActionWarning

    env = _make(env_id, api)
    with pytest.warns(NonTextActionWarning, match="takes action text, got int 3") as caught:
        _, info, _ = _first_step(env, api, 3)
        _first_step(env, api, 4)  # the same env again: no second warning
    assert len([w for w in caught if issubclass(w.category, NonTextActionWarning)]) == 1
    assert info["fallback"] is True and info["parse_error"] == "the action must be a str (text), got int"
    with pytest.warns(NonTextActionWarning):  # another env warns again
        _first_step(_make(env_id, api), api, 3)


@pytest.mark.parametrize(("env_id", "api"), GAME_CASES[:3])
def test_int_action_is_refused_in_strict_mode(env_id, api):
    with pytest.raises(ActionParseError, match="must be a str") as exc:
        _first_step(_make(env_id, api, strict=True), api, 3)
    assert exc.value.text == 3
