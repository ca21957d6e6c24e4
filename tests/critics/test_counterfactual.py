"""Counterfactual re-runs on real Pistonball with scripted policies; ConstantPolicy; RoleMeter;
finished trajectories.

No LLM is involved: the policies are :class:`ConstantPolicy` / :class:`PistonballHeuristic`
and the backend tests use :class:`ScriptedBackend`.
"""

from __future__ import annotations

import json

import pytest

import lang_pz
from lang_pz.backends.base import GenerationRequest
from lang_pz.backends.meter import RoleMeter
from lang_pz.critics.counterfactual import Counterfactual, counterfactuals
from lang_pz.error import LangPZError
from lang_pz.policies.scripted import ConstantPolicy, PistonballHeuristic
from lang_pz.rollout import rollout
from lang_pz.test import ScriptedBackend
from lang_pz.trajectory import Trajectory, TrajectoryWriter, read_trajectories

KW = {"n_pistons": 5, "hold": 5, "max_cycles": 30}  # at most 6 decisions per episode
SEED = 0


@pytest.fixture(scope="module")
def env():
    return lang_pz.make("butterfly/pistonball-v0", **KW)


def heuristic(env) -> dict:
    return {a: PistonballHeuristic() for a in env.possible_agents}


def constant(env, word: str) -> dict:
    return {a: ConstantPolicy(word) for a in env.possible_agents}


def legal(env, agent: str) -> list[str]:
    _, infos = env.reset(seed=SEED)
    return list(infos[agent]["legal_actions"])


# -- reproducing the factual episode -------------------------------------------------------


def test_same_policies_reproduce_the_factual_return(env):
    pols = heuristic(env)
    pols["piston_1"] = ConstantPolicy("stay")
    traj = rollout(env, pols, seed=SEED)
    groups = [[a] for a in env.possible_agents]
    probes = counterfactuals(env, pols, traj, groups, ["previous"], previous=pols)
    assert [p.agents for p in probes] == [tuple(g) for g in groups]
    for p in probes:
        assert p.delta == 0.0 and p.value == pytest.approx(traj.team_return, abs=1e-3)
        assert p.steps == len(traj.states) and p.replacement == "previous"


def test_replaying_the_played_action_changes_nothing(env):
    traj = rollout(env, constant(env, "up"), seed=SEED)
    (p,) = counterfactuals(env, constant(env, "up"), traj, [["piston_3"]], ["up"])
    assert (p.delta, p.value) == (0.0, round(traj.team_return, 3))


def test_aec_rerun_reproduces_the_factual_return():
    aec = lang_pz.make("butterfly/pistonball-v0", api="aec", **KW)
    pols = heuristic(aec)
    traj = rollout(aec, pols, seed=SEED)
    (p,) = counterfactuals(aec, pols, traj, [["piston_2"]], ["previous"], previous=pols)
    assert p.delta == 0.0


# -- replacements --------------------------------------------------------------------------


def test_alternatives_probe_every_other_legal_action(env):
    pols = constant(env, "up")
    traj = rollout(env, pols, seed=SEED)
    probes = counterfactuals(env, pols, traj, [["piston_0"], ["piston_4"]], ["alternatives"])
    words = [w for w in legal(env, "piston_0") if w != "up"]
    assert len(words) == 2
    assert [(p.agents, p.replacement) for p in probes] == [(("piston_0",), w) for w in words] + [
        (("piston_4",), w) for w in words
    ]
    # each probe is the episode replayed with that one agent playing the word at every step
    p = probes[-1]
    direct = rollout(env, {**pols, "piston_4": ConstantPolicy(p.replacement)}, seed=SEED)
    assert p.value == pytest.approx(direct.team_return, abs=1e-3)
    assert p.delta == pytest.approx(direct.team_return - traj.team_return, abs=1e-3)
    assert p.steps == len(direct.states)


def test_alternatives_keep_every_word_when_the_agent_varied(env):
    pols = heuristic(env)
    traj = rollout(env, pols, seed=SEED)
    varied = [a for a in traj.agents if len({s.raw_output for s in traj.agent_steps(a)}) > 1]
    assert varied, "the heuristic should change its action for some piston on this seed"
    probes = counterfactuals(env, pols, traj, [[varied[0]]], ["alternatives"])
    assert [p.replacement for p in probes] == legal(env, varied[0])


def test_team_level_group_replaces_every_agent(env):
    pols = heuristic(env)
    traj = rollout(env, pols, seed=SEED)
    (p,) = counterfactuals(env, pols, traj, [env.possible_agents], ["down"])
    direct = rollout(env, constant(env, "down"), seed=SEED)
    assert p.agents == tuple(env.possible_agents)
    assert p.value == pytest.approx(direct.team_return, abs=1e-3)
    assert p.describe(env.possible_agents).startswith("if every agent had played down at every step: ")


def test_default_is_the_envs_fallback_action(env):
    pols = constant(env, "up")
    traj = rollout(env, pols, seed=SEED)
    default, stay = counterfactuals(env, pols, traj, [["piston_2"]], ["default", "stay"])
    assert default.replacement == "default"
    assert default.value == stay.value  # Pistonball's documented fallback is "stay"
    direct = rollout(env, {**pols, "piston_2": ConstantPolicy("")}, seed=SEED)
    errs = [s.parse_error for s in direct.agent_steps("piston_2")]
    assert errs and all(e is not None for e in errs)  # the empty text is recorded as unparsable
    assert [s.action for s in direct.agent_steps("piston_2")] == [
        s.action for s in rollout(env, {**pols, "piston_2": ConstantPolicy("stay")}, seed=SEED).agent_steps("piston_2")
    ]


def test_random_replacement_is_seeded(env):
    pols = constant(env, "up")
    traj = rollout(env, pols, seed=SEED)
    a = counterfactuals(env, pols, traj, [["piston_1", "piston_2"]], ["random"], seed=5)
    b = counterfactuals(env, pols, traj, [["piston_1", "piston_2"]], ["random"], seed=5)
    assert a == b and a[0].replacement == "random" and a[0].agents == ("piston_1", "piston_2")


def test_previous_replacement_plays_the_previous_policies(env):
    pols = heuristic(env)
    traj = rollout(env, pols, seed=SEED)
    prev, up = counterfactuals(
        env, pols, traj, [["piston_2"]], ["previous", "up"], previous={"piston_2": ConstantPolicy("up")}
    )
    assert prev.replacement == "previous" and prev.value == up.value


def test_duplicate_replacements_are_probed_once(env):
    pols = constant(env, "up")
    traj = rollout(env, pols, seed=SEED)
    probes = counterfactuals(env, pols, traj, [["piston_0"]], ["down", "alternatives", "down"])
    assert [p.replacement for p in probes] == ["down", "stay"]


# -- errors --------------------------------------------------------------------------------


def test_errors(env):
    pols = constant(env, "up")
    traj = rollout(env, pols, seed=SEED)
    unseeded = Trajectory(episode=4, seed=None, steps=traj.steps, returns=traj.returns)
    with pytest.raises(LangPZError, match="episode 4 has no seed"):
        counterfactuals(env, pols, unseeded, [["piston_0"]], ["down"])
    with pytest.raises(LangPZError, match="piston_9"):
        counterfactuals(env, pols, traj, [["piston_0", "piston_9"]], ["down"])
    with pytest.raises(LangPZError, match="previous"):
        counterfactuals(env, pols, traj, [["piston_0"]], ["previous"])
    with pytest.raises(LangPZError, match="piston_1"):
        counterfactuals(env, pols, traj, [["piston_1"]], ["previous"], previous={"piston_0": ConstantPolicy("up")})


def test_alternatives_need_a_finite_action_set():
    cont = lang_pz.make("butterfly/pistonball-v0", continuous=True, **KW)
    pols = constant(cont, "0.5")
    traj = rollout(cont, pols, seed=SEED)
    with pytest.raises(LangPZError, match="legal_actions"):
        counterfactuals(cont, pols, traj, [["piston_0"]], ["alternatives"])


# -- Counterfactual ------------------------------------------------------------------------


def test_describe_and_as_dict():
    agents = ["piston_0", "piston_1"]
    c = Counterfactual(agents=("piston_0",), replacement="down", value=12.345, delta=-3.21, steps=7)
    assert c.describe(agents) == "if piston_0 had played down at every step: team return 12.3 (-3.2)"
    better = Counterfactual(agents=("piston_0", "piston_1"), replacement="random", value=1.0, delta=0.0, steps=2)
    assert better.describe(agents) == "if every agent had played random actions at every step: team return 1.0 (+0.0)"
    assert better.describe(["piston_0", "piston_1", "piston_2"]).startswith("if piston_0 and piston_1 had played")

    def probe(word):
        return Counterfactual(agents=("a",), replacement=word, value=0.0, delta=1.0, steps=1)

    assert "the default action" in probe("default").describe(["a"])
    assert "its previous policy" in probe("previous").describe(["a"])
    d = json.loads(json.dumps(c.model_dump(mode="json")))
    assert Counterfactual(**d) == c
    win = Counterfactual(agents=("a",), replacement="x", value=1.0, delta=0.5, steps=1, objective="win:a")
    assert win.describe(["a", "b"]).endswith("win:a 1.0 (+0.5)")


def test_constant_policy():
    d = ConstantPolicy("down").decide({"text": "anything"}, {"legal_actions": ["down", "up"]})
    assert (d.action, d.raw_output) == ("down", "down")
    assert repr(ConstantPolicy("up")) == "ConstantPolicy('up')"
    with pytest.raises(TypeError, match="str"):
        ConstantPolicy(2)


# -- finished trajectories -----------------------------------------------------------------


def test_finished_flag_and_reading_finished_only(env, tmp_path):
    assert Trajectory(episode=0, seed=0).finished is False
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as w:
        t0 = rollout(env, heuristic(env), seed=SEED, episode=0, writer=w)
        rollout(env, heuristic(env), seed=SEED + 1, episode=1, writer=w)
    assert t0.finished
    full = read_trajectories(path)
    assert [t.finished for t in full] == [True, True]
    text = path.read_text()
    path.write_text(text[: text.rstrip("\n").rfind("\n") + 1])  # drop episode 1's episode_end record
    both = read_trajectories(path)
    assert [(t.episode, t.finished) for t in both] == [(0, True), (1, False)]
    (kept,) = read_trajectories(path, finished_only=True)
    assert kept.episode == 0 and kept.returns == pytest.approx(t0.returns) and kept.seed == SEED


# -- RoleMeter -----------------------------------------------------------------------------


def _req(text: str) -> GenerationRequest:
    return GenerationRequest(prompt=text, seed=0)


def test_role_meters_count_separately_over_one_backend(tmp_path):
    inner = ScriptedBackend(lambda r: "reply with four words", cache=tmp_path / "cache", prompt_format="chat")
    actor = RoleMeter(inner, "actor", price_per_mtok=(1.0, 2.0))
    critic = RoleMeter(inner, "critic", price_per_mtok=(3.0, 5.0))
    assert (actor.model, actor.prompt_format) == (inner.model, "chat")
    g1 = actor.generate(_req("one two three"))
    g2 = critic.generate(_req("a much longer prompt for the critic role"))
    g3 = critic.generate(_req("another critic prompt"))
    assert not any(g.cached for g in (g1, g2, g3))
    assert actor.report()["calls"] == 1 and critic.report()["calls"] == 2
    assert critic.report()["prompt_tokens"] == g2.prompt_tokens + g3.prompt_tokens
    assert actor.cost_usd == pytest.approx((g1.prompt_tokens * 1.0 + g1.completion_tokens * 2.0) / 1e6)
    assert critic.cost_usd == pytest.approx(sum(g.prompt_tokens * 3.0 + g.completion_tokens * 5.0 for g in (g2, g3)) / 1e6)
    assert inner.usage.calls == 3 and len(inner.requests) == 3  # the shared backend sees every call


def test_cached_calls_cost_nothing(tmp_path):
    inner = ScriptedBackend(lambda r: "same answer", cache=tmp_path / "cache")
    actor = RoleMeter(inner, "actor", price_per_mtok=(1.0, 1.0))
    critic = RoleMeter(inner, "critic", price_per_mtok=(10.0, 10.0))
    actor.generate(_req("shared prompt"))
    cost = actor.cost_usd
    snap = critic.snapshot()
    hit = critic.generate(_req("shared prompt"))  # served from the shared cache
    assert hit.cached and len(inner.requests) == 1
    assert critic.cost_usd == 0.0 and actor.cost_usd == cost > 0
    assert critic.report()["cached_calls"] == 1 and actor.report()["cached_calls"] == 0
    since = critic.since(snap)
    assert since["calls"] == 1 and since["cached_calls"] == 1 and since["cost_usd"] == 0.0
    actor_snap = actor.snapshot()
    actor.generate(_req("a new prompt"))
    assert actor.since(actor_snap)["cost_usd"] > 0 and actor.since(actor_snap)["calls"] == 1


def test_role_meter_rejects_a_negative_price():
    with pytest.raises(ValueError, match="price_per_mtok"):
        RoleMeter(ScriptedBackend([]), "critic", price_per_mtok=(-1.0, 0.0))
    with pytest.raises(ValueError, match="-0.5"):
        RoleMeter(ScriptedBackend([]), "critic", price_per_mtok=(0.0, -0.5))
    assert RoleMeter(ScriptedBackend([]), "free").report()["cost_usd"] == 0.0


def test_replacement_at_chosen_steps_only(env):
    pols = constant(env, "up")
    traj = rollout(env, pols, seed=SEED)
    probe = counterfactuals(env, pols, traj, [["piston_3"]], ["down"], steps=[0, 1])[0]
    assert probe.at_steps == (0, 1) and "at steps [0, 1]" in probe.describe(env.possible_agents)

    # the same re-run played directly: piston_3 plays down at its decisions 0 and 1, up after
    class DownThenUp(ConstantPolicy):
        def __init__(self):
            super().__init__("up")
            self.k = 0

        def decide(self, observation, info=None):
            self.k += 1
            return super().decide(observation, info) if self.k > 2 else ConstantPolicy("down").decide(observation)

    direct = rollout(env, {**pols, "piston_3": DownThenUp()}, seed=SEED)
    assert probe.value == pytest.approx(direct.team_return, abs=1e-3)
    whole = counterfactuals(env, pols, traj, [["piston_3"]], ["down"])[0]
    assert whole.at_steps is None and "at every step" in whole.describe(env.possible_agents)
    assert json.loads(json.dumps(probe.model_dump(mode="json")))["at_steps"] == [0, 1]


def test_alternatives_for_the_second_mover_of_a_turn_based_game():
    """The second mover's action words come from the factual trajectory (it is offered none at reset)."""
    from lang_pz.policies.random import RandomPolicy

    env = lang_pz.make("classic/tictactoe-v0")
    team = {a: RandomPolicy() for a in env.possible_agents}
    traj = rollout(env, team, seed=3)
    probes = counterfactuals(env, team, traj, [["player_2"]], ["alternatives"])
    offered = {w for s in traj.agent_steps("player_2") for w in s.legal_actions}
    assert {p.replacement for p in probes} == offered and len(offered) > 1


def test_counterfactuals_on_an_aec_env_that_was_never_reset():
    from lang_pz.policies.random import RandomPolicy

    played = lang_pz.make("classic/tictactoe-v0")
    team = {a: RandomPolicy() for a in played.possible_agents}
    traj = rollout(played, team, seed=1)
    fresh = lang_pz.make("classic/tictactoe-v0")  # never reset: no agent_selection yet
    probes = counterfactuals(fresh, team, traj, [["player_1"]], ["alternatives"])
    assert probes and all(p.agents == ("player_1",) for p in probes)


def test_steps_the_agent_never_reaches_warn_that_the_reruns_replace_nothing(env):
    from lang_pz.critics.counterfactual import plan_probes

    traj = rollout(env, heuristic(env), seed=SEED)
    made = len(traj.agent_steps("piston_0"))
    with pytest.warns(UserWarning, match=rf"piston_0 made {made} decisions .* replace nothing"):
        plan_probes(traj, [["piston_0"]], ["down"], steps=[made, made + 100])
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan_probes(traj, [["piston_0"]], ["down"], steps=[0, made + 100])  # one decision it makes: no warning


def test_replacements_that_are_no_action_word_and_malformed_groups_are_refused(env):
    from lang_pz.critics.counterfactual import plan_probes

    traj = rollout(env, heuristic(env), seed=SEED)
    with pytest.raises(LangPZError, match=r"\['sideways'\] for \['piston_0'\] are neither .* \(down, stay, up\)"):
        plan_probes(traj, [["piston_0"]], ["sideways"])
    with pytest.raises(TypeError, match="replacements must be a list, got the str 'up'"):
        plan_probes(traj, [["piston_0"]], "up")
    with pytest.raises(LangPZError, match="non-empty list of agents"):
        plan_probes(traj, [[]], ["up"])
    with pytest.raises(LangPZError, match="non-empty list of agents"):
        plan_probes(traj, ["piston_0"], ["up"])
    assert [p.replacement for p in plan_probes(traj, [["piston_0"]], ["up", "random"])] == ["up", "random"]


def test_a_group_naming_an_agent_that_did_not_act_is_refused(env):
    from lang_pz.critics.counterfactual import plan_probes

    traj = rollout(env, heuristic(env), seed=SEED)
    with pytest.raises(LangPZError, match=r"name \['piston_9'\], who did not act in episode 0"):
        plan_probes(traj, [["piston_9"]], ["alternatives"])
