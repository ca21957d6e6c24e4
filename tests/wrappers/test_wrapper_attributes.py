"""What a PettingZoo user expects of the language wrappers' attributes: infos a plain dict,
reads forwarded (also through PettingZoo's conversion wrappers), writes reaching the env."""

from __future__ import annotations

import pytest

import lang_pz
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers import LanguageAECWrapper


@pytest.mark.parametrize("env_id", ["classic/tictactoe-v0", "butterfly/pistonball-v0", "classic/rps-v0"])
def test_aec_infos_is_a_dict_that_keeps_writes_until_the_next_step(env_id):
    env = lang_pz.make(env_id, api="aec")
    env.reset(seed=0)
    agent = env.agent_selection
    assert isinstance(env.infos, dict) and env.infos is env.infos  # not rebuilt on every read
    env.infos[agent]["note"] = "mine"
    assert env.infos[agent]["note"] == "mine" and env.last()[4]["note"] == "mine"
    env.infos = {a: {"replaced": True} for a in env.agents}  # assignment works, like any AEC env
    assert env.infos[agent] == {"replaced": True}
    env.step(env.adapter.action_text(env.env, agent, env.adapter.fallback(env.env, agent, None, {})))
    assert "replaced" not in env.infos[agent] and "note" not in env.infos[agent]  # a step rebuilds
    assert "legal_actions" in env.infos[env.agent_selection]


class CountingAdapter(LanguageAdapter):
    """The generic adapter, counting legal_actions calls."""

    calls = 0

    def __init__(self):
        super().__init__(action_names=["down", "stay", "up"])

    def legal_actions(self, env, agent, observation, info):
        CountingAdapter.calls += 1
        return super().legal_actions(env, agent, observation, info)

    def legal_actions_fixed(self, env, agent):
        return True  # a counting wrapper of the generic method: still fixed


def test_aec_infos_cost_is_constant_per_agent_step_with_20_pistons():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.butterfly import pistonball_v6
    env = LanguageAECWrapper(pistonball_v6.env(n_pistons=20, continuous=False, max_cycles=5), CountingAdapter())
    env.reset(seed=0)
    CountingAdapter.calls = 0
    steps = 0
    for _ in env.agent_iter():
        _, _, term, trunc, info = env.last()
        env.infos  # a second read costs nothing
        env.step(None if term or trunc else "up")
        steps += 1
    # the old property rebuilt every agent's info on each read: about 21 calls per agent step
    assert CountingAdapter.calls <= 3 * steps, (CountingAdapter.calls, steps)


@pytest.mark.parametrize("api", ["parallel", "aec"])
@pytest.mark.parametrize("hold", [1, 5])
def test_env_specific_attributes_are_read_through_conversion_wrappers(api, hold):
    env = lang_pz.make("butterfly/pistonball-v0", api=api, n_pistons=5, hold=hold, max_cycles=30)
    assert env.max_cycles == 30 and env.n_pistons == 5  # PettingZoo's conversions forward neither
    assert env.metadata["name"]  # API attributes still come from the layer below, as in PettingZoo
    with pytest.raises(AttributeError, match="no_such_thing"):
        env.no_such_thing
    with pytest.raises(AttributeError, match="private"):
        env._private_thing


@pytest.mark.parametrize("api", ["parallel", "aec"])
def test_writes_reach_the_attribute_in_the_wrapped_env(api):
    env = lang_pz.make("butterfly/pistonball-v0", api=api, n_pistons=5, max_cycles=125)
    env.max_cycles = 3  # the attribute lives in the raw env: the raw env sees it
    assert env.unwrapped.max_cycles == 3 and env.max_cycles == 3
    env.reset(seed=0)
    cycles = 0
    if api == "parallel":
        while env.agents:
            env.step(dict.fromkeys(env.agents, "stay"))
            cycles += 1
    else:
        for _ in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else "stay")
        cycles = env.unwrapped.frames
    assert cycles == 3
    env.my_label = "run 7"  # a name nobody has stays on the wrapper
    assert env.my_label == "run 7" and not hasattr(env.unwrapped, "my_label")
    env.strict = True  # the wrapper's own attribute
    assert env.strict is True and not hasattr(env.unwrapped, "strict")


def test_wrapping_a_language_env_keeps_each_wrappers_own_adapter():
    inner = lang_pz.make("classic/tictactoe-v0")
    outer = LanguageAECWrapper(inner)  # the outer sets its own adapter, not the inner's
    assert outer.adapter is not inner.adapter and type(inner.adapter).__name__ == "TicTacToeAdapter"


@pytest.mark.parametrize("env_id", ["butterfly/pistonball-v0", "classic/rps-v0"])
def test_parallel_envs_answer_api_attributes_as_pettingzoo_does(env_id):
    # the AEC env under PettingZoo's aec_to_parallel has agent_selection; the parallel env has not
    env = lang_pz.make(env_id, api="parallel")
    env.reset(seed=0)
    assert not hasattr(env, "agent_selection") and not hasattr(env, "terminations")
    assert env.agents == env.possible_agents
