"""``pettingzoo.make`` on the OpenSpiel, MPE and TextArena ids: the same envs and the same kwargs
errors as ``lang_pz.make`` (issue 23: "with the same kwargs checks")."""

from __future__ import annotations

import importlib.util

import pytest

import lang_pz
from lang_pz.error import InvalidKwargError

pettingzoo = pytest.importorskip("pettingzoo")
if not hasattr(pettingzoo, "make"):
    pytest.skip("this PettingZoo has no registry", allow_module_level=True)

NEEDS = {"openspiel": "pyspiel", "mpe": "mpe2", "textarena": "textarena"}

# (api, id, bad kwargs, what the error must say)
BAD = [
    ("aec", "openspiel/leduc_poker-v0", {"max_cycle": 3}, "unexpected keyword argument 'max_cycle'"),
    ("aec", "openspiel/hanabi-v0", {"colours": 3}, "Did you mean 'colors'"),
    ("aec", "openspiel/hanabi-v0", {"players": 1}, "players"),
    ("parallel", "mpe/simple_spread-v0", {"max_cycle": 3}, "Did you mean 'max_cycles'"),
    ("parallel", "mpe/simple_spread-v0", {"max_cycles": 0}, "max_cycles must be an integer >= 1, got 0"),
    ("aec", "mpe/simple_reference-v0", {"continuous": True}, "Did you mean 'continuous_actions'"),
    ("aec", "textarena/tictactoe-v0", {"max_turn": 3}, "Did you mean 'max_turns'"),
    ("aec", "textarena/kuhn_poker-v0", {"num_players": 0}, "num_players must be an integer from 1 to 20, got 0"),
]


def _need(env_id: str) -> None:
    module = NEEDS[env_id.split("/")[0]]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


@pytest.mark.parametrize(("api", "env_id", "kwargs", "shown"), BAD)
def test_a_bad_kwarg_is_the_same_clear_error_through_pettingzoo(api, env_id, kwargs, shown):
    _need(env_id)
    with pytest.raises(InvalidKwargError) as ours:
        lang_pz.make(env_id, api=api, **kwargs)
    with pytest.raises(InvalidKwargError) as theirs:
        pettingzoo.make(api, env_id, **kwargs)
    assert shown in str(ours.value)
    assert str(theirs.value) == str(ours.value)


@pytest.mark.parametrize(
    ("api", "env_id", "kwargs"),
    [
        ("aec", "openspiel/leduc_poker-v0", {}),
        ("aec", "openspiel/hanabi-v0", {"colors": 3}),
        ("parallel", "mpe/simple_spread-v0", {"max_cycles": 3}),
        ("aec", "textarena/tictactoe-v0", {"max_turns": 4}),
    ],
)
def test_pettingzoo_make_gives_the_language_env_lang_pz_make_gives(api, env_id, kwargs):
    _need(env_id)
    ours, theirs = lang_pz.make(env_id, api=api, **kwargs), pettingzoo.make(api, env_id, **kwargs)
    assert type(theirs) is type(ours)
    if api == "parallel":
        first, _ = ours.reset(seed=3)
        second, _ = theirs.reset(seed=3)
        assert second == first
    else:
        ours.reset(seed=3)
        theirs.reset(seed=3)
        agent = ours.agent_selection
        assert theirs.agent_selection == agent
        assert theirs.observe(agent) == ours.observe(agent)
        assert "text" in ours.observe(agent)
