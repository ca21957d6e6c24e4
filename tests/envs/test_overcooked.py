"""Overcooked-AI language environment: text, skills, rewards, kwargs, partners, install."""

from __future__ import annotations

import importlib.metadata
import sys

import numpy as np
import pytest

import lang_pz
from lang_pz.envs.overcooked import LAYOUTS, make_env
from lang_pz.envs.overcooked.macro_actions import AGENTS, PRIMITIVES, SKILL_WORDS, SkillRun, next_action, skill_targets
from lang_pz.error import ActionParseError, DependencyNotInstalled, InvalidKwargError, LangPZError
from lang_pz.policies import LLMPolicy, OvercookedGreedyPolicy, RandomPolicy, overcooked_partner
from lang_pz.test import language_api_test

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def make(layout: str = "cramped_room", **kwargs):
    return lang_pz.make(f"overcooked/{layout}-v0", **kwargs)


def run_skill(env, agent: str, skill: str, teammate: str = "wait 10", limit: int = 30):
    """Give ``agent`` the same skill until it is done (the teammate waits); return the summed
    reward of ``agent`` and of the teammate, and the last observations and infos."""
    own = mate = 0.0
    for _ in range(limit):
        acts = {a: skill if a == agent else teammate for a in env.agents}
        obs, rewards, _, _, infos = env.step(acts)
        other = next(a for a in rewards if a != agent)
        own, mate = own + rewards[agent], mate + rewards[other]
        assert infos[agent]["parse_error"] is None, infos[agent]["parse_error"]
        status = infos[agent]["skill"]["status"]
        if status == "done":
            return own, mate, obs, infos
        assert status == "in progress", infos[agent]["skill"]
    raise AssertionError(f"{skill!r} not done after {limit} steps")


def cook_one_soup(env, agent: str = "player_0") -> list[float]:
    """The whole recipe by one player (skills): the rewards of each skill, in order."""
    out = []
    for _ in range(3):
        out.append(run_skill(env, agent, "pick up onion")[0])
        out.append(run_skill(env, agent, "put onion in pot")[0])
    for skill in ("start cooking", "pick up dish", "fill dish with soup", "deliver soup"):
        out.append(run_skill(env, agent, skill)[0])
    return out


# -- compliance at the skill level (the primitive level runs in tests/test_compliance.py) ----


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_skills_pass_api_seed_and_language_tests(layout):
    assert language_api_test(f"overcooked/{layout}-v0", kwargs={"actions": "macro", "horizon": 30}) == ["parallel", "aec"]


def test_registered_ids():
    assert {f"overcooked/{layout}-v0" for layout in LAYOUTS} <= set(lang_pz.registry)
    assert all(lang_pz.registration.spec(f"overcooked/{layout}-v0").extra == "overcooked" for layout in LAYOUTS)


# -- text ---------------------------------------------------------------------------------


def test_text_shows_map_players_pots_orders_time():
    env = make(horizon=50)
    obs, infos = env.reset(seed=0)
    game = env.unwrapped
    me, mate = game.game_state.players
    text = obs["player_0"]["text"]
    for y, row in enumerate(game.mdp.terrain_mtx):
        drawn = "".join("A" if (x, y) == me.position else "B" if (x, y) == mate.position else t for x, t in enumerate(row))
        assert f"{y} {drawn}" in text
    assert f"You (A): at ({me.position[0]},{me.position[1]})" in text
    assert f"Teammate (B): at ({mate.position[0]},{mate.position[1]})" in text
    assert "holding nothing" in text
    for x, y in game.mdp.get_pot_locations():
        assert f"Pot ({x},{y}): empty." in text
    order = game.game_state.all_orders[0]
    assert f"soup of 3 onions ({order.value} points, cooks {order.time} steps)" in text
    assert "Step 0 of 50, 50 left." in text
    assert text.splitlines()[-1] == "Actions: " + ", ".join(PRIMITIVES)
    # the other player sees itself as A and player_0 as B
    assert f"You (A): at ({mate.position[0]},{mate.position[1]})" in obs["player_1"]["text"]
    assert "You are player_1 (A); your teammate is player_0 (B)." in obs["player_1"]["text"]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_text_is_compact_and_deterministic(layout):
    texts = []
    for _ in range(2):
        env = make(layout, actions="macro", horizon=40)
        obs, infos = env.reset(seed=3)
        rng = np.random.default_rng(0)
        seen = [obs["player_0"]["text"]]
        while env.agents:
            acts = {a: infos[a]["legal_actions"][int(rng.integers(len(infos[a]["legal_actions"])))] for a in env.agents}
            obs, _, _, _, infos = env.step(acts)
            seen += [obs[a]["text"] for a in obs]
        texts.append(seen)
    assert texts[0] == texts[1]
    assert max(len(t) for t in texts[0]) < 1100  # small models read it


def test_text_tracks_held_objects_pot_progress_and_counters():
    env = make(actions="macro")
    env.reset(seed=0)
    _, _, obs, _ = run_skill(env, "player_0", "pick up onion")
    assert "You (A):" in obs["player_0"]["text"] and "holding an onion." in obs["player_0"]["text"]
    assert "Teammate (B):" in obs["player_1"]["text"] and "holding an onion." in obs["player_1"]["text"]
    _, _, obs, _ = run_skill(env, "player_0", "place on counter")
    game = env.unwrapped
    ((pos, obj),) = game.game_state.objects.items()
    assert obj.name == "onion"
    assert f"On counters: onion ({pos[0]},{pos[1]})." in obs["player_0"]["text"]
    row = obs["player_0"]["text"].splitlines()[3 + pos[1]]
    assert row[2 + pos[0]] == "o"  # drawn on the map
    assert "Your last skill 'place on counter': done" in obs["player_0"]["text"]
    for _ in range(3):
        run_skill(env, "player_0", "pick up onion")
        run_skill(env, "player_0", "put onion in pot")
    _, _, obs, _ = run_skill(env, "player_0", "start cooking")
    soup = game.game_state.get_object(game.mdp.get_pot_locations()[0])
    assert f"cooking, {soup.cook_time_remaining} more steps." in obs["player_0"]["text"]
    run_skill(env, "player_0", "pick up dish")
    _, _, obs, _ = run_skill(env, "player_0", "fill dish with soup")
    assert "holding a soup of 3 onions." in obs["player_0"]["text"]


def test_state_text_names_both_players():
    env = make(actions="macro")
    env.reset(seed=0)
    run_skill(env, "player_1", "pick up onion")
    text = env.state_text()
    assert "player_0: at" in text and "player_1: at" in text and "You" not in text
    assert "Its last skill 'pick up onion': done" in text
    assert env.unwrapped.render() is None
    ansi = make(render_mode="ansi")
    ansi.reset()
    assert ansi.unwrapped.render() == ansi.state_text()


# -- skills -------------------------------------------------------------------------------


def test_skills_cook_and_serve_a_soup_with_sparse_reward():
    env = make(actions="macro")
    env.reset(seed=0)
    rewards = cook_one_soup(env)
    value = env.unwrapped.game_state.all_orders[0].value
    assert value == 20
    assert rewards == [0.0] * 9 + [float(value)]
    assert env.unwrapped.soups_delivered == 1
    assert env.unwrapped.game_state.players[0].held_object is None


def test_shaped_reward_in_the_papers_units():
    from overcooked_ai_py.mdp.overcooked_mdp import BASE_REW_SHAPING_PARAMS as P

    env = make(actions="macro", shaping_factor=1.0)
    env.reset(seed=0)
    rewards = cook_one_soup(env)
    onion, pot = 0.0, float(P["PLACEMENT_IN_POT_REW"])
    assert rewards == [onion, pot] * 3 + [0.0, float(P["DISH_PICKUP_REWARD"]), float(P["SOUP_PICKUP_REWARD"]), 20.0]
    assert (P["PLACEMENT_IN_POT_REW"], P["DISH_PICKUP_REWARD"], P["SOUP_PICKUP_REWARD"]) == (3, 3, 5)


def test_reward_is_shared_by_the_team():
    env = make(actions="macro")
    env.reset(seed=0)
    for _ in range(3):
        run_skill(env, "player_0", "pick up onion")
        run_skill(env, "player_0", "put onion in pot")
    for skill in ("start cooking", "pick up dish", "fill dish with soup"):
        run_skill(env, "player_0", skill)
    own, mate, _, infos = run_skill(env, "player_0", "deliver soup")
    assert own == mate == 20.0
    assert infos["player_0"]["sparse_reward"] == 20.0 and infos["player_1"]["sparse_reward"] == 0.0
    assert infos["player_1"]["soups_delivered"] == 1


def test_counter_skills_pass_items_in_forced_coordination():
    env = make("forced_coordination", actions="macro")
    env.reset(seed=0)
    game = env.unwrapped
    left = next(a for a in AGENTS if game.game_state.players[game.index(a)].position[0] < 2)
    right = next(a for a in AGENTS if a != left)
    assert not game.skill_mask(right)[SKILL_WORDS.index("pick up onion")]  # no onion on its side
    run_skill(env, left, "pick up onion")
    run_skill(env, left, "place on counter")
    assert game.skill_mask(right)[SKILL_WORDS.index("pick up onion")]
    run_skill(env, right, "pick up onion")
    assert game.game_state.players[game.index(right)].held_object.name == "onion"
    _, _, obs, _ = run_skill(env, right, "put onion in pot")
    assert "1 onion of 3, not cooking." in obs[right]["text"]


def test_wait_takes_its_ticks_and_steps_end_with_the_first_skill():
    env = make(actions="macro")
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"player_0": "wait 5", "player_1": "wait 2"})
    assert infos["player_0"]["ticks"] == 2 and env.unwrapped.game_state.timestep == 2
    assert infos["player_1"]["skill"]["status"] == "done"
    assert infos["player_0"]["skill"] == {"skill": "wait 5", "status": "in progress", "ticks": 2, "reason": ""}


def test_both_skill_players_never_deadlock_on_one_pot():
    env = make(actions="macro", horizon=120)
    obs, infos = env.reset(seed=0)
    team = {a: overcooked_partner("greedy", env, a, seed=0) for a in env.agents}
    blocked = 0
    while env.agents:
        obs, _, _, _, infos = env.step({a: team[a](obs[a], infos[a]) for a in env.agents})
        blocked += sum(i.get("skill", {}).get("status") == "blocked" for i in infos.values())
    assert env.unwrapped.soups_delivered >= 2
    assert blocked <= 5


# -- impossible and unreadable skills -----------------------------------------------------


def test_impossible_skill_is_reported_in_info_and_next_observation():
    env = make(actions="macro")
    obs, infos = env.reset(seed=0)
    assert "deliver soup" not in infos["player_0"]["legal_actions"]
    obs, _, _, _, infos = env.step({"player_0": "deliver soup", "player_1": "wait 1"})
    info = infos["player_0"]
    assert info["fallback"] is True and "impossible" in info["parse_error"]
    assert "you must hold a soup, but you hold nothing" in info["parse_error"]
    assert (
        "'deliver soup' was impossible: you must hold a soup, but you hold nothing, so you did 'wait 1' instead."
        in obs["player_0"]["text"]
    )
    assert env.unwrapped.game_state.timestep == 1  # it cost one tick, standing still


def test_unreadable_reply_is_reported_and_waits():
    for level, fallback in (("macro", "wait 1"), ("primitive", "stay")):
        env = make(actions=level)
        env.reset(seed=0)
        before = env.unwrapped.game_state.players[0].pos_and_or
        obs, _, _, _, infos = env.step({"player_0": "I like turtles", "player_1": infos_word(level)})
        assert infos["player_0"]["parse_error"] and infos["player_0"]["fallback"]
        assert f"Your last reply named no action, so you did '{fallback}' instead." in obs["player_0"]["text"]
        assert env.unwrapped.game_state.players[0].pos_and_or == before
        # the note is shown once
        obs, _, _, _, _ = env.step({"player_0": infos_word(level), "player_1": infos_word(level)})
        assert "named no action" not in obs["player_0"]["text"]


def infos_word(level: str) -> str:
    return "wait 1" if level == "macro" else "stay"


def test_strict_mode_raises_on_impossible_skill_with_the_text():
    env = make(actions="macro", strict=True)
    env.reset(seed=0)
    with pytest.raises(ActionParseError, match="impossible now") as exc:
        env.step({"player_0": "fill dish with soup", "player_1": "wait 1"})
    assert exc.value.text == "fill dish with soup"
    assert env.unwrapped.game_state.timestep == 0


def test_skill_that_becomes_impossible_midway_ends_with_a_reason():
    env = make(actions="macro")
    env.reset(seed=0)
    game = env.unwrapped
    for _ in range(3):
        run_skill(env, "player_0", "pick up onion")
        run_skill(env, "player_0", "put onion in pot")
    run_skill(env, "player_1", "pick up onion")
    run = SkillRun("put onion in pot")
    next_action(game.planners, game.game_state, 1, run)  # the pot is full now
    assert run.status == "impossible" and run.reason == "there is no pot with room for an onion you can reach"
    assert skill_targets(game.planners, game.game_state, 0, "deliver soup") == (
        [],
        "you must hold a soup, but you hold nothing",
    )


# -- kwargs and dependencies --------------------------------------------------------------


def test_the_old_name_of_macro_actions_still_works_with_a_warning():
    with pytest.warns(DeprecationWarning, match="actions='macro'"):
        env = lang_pz.make("overcooked/cramped_room-v0", actions="skills", horizon=5)
    assert env.unwrapped.action_level == "macro"


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"actions": "macros"}, ["actions", "'macros'", "primitive", "macro"]),
        ({"horizon": 0}, ["horizon", "0", ">= 1"]),
        ({"horizon": 12.5}, ["horizon", "12.5"]),
        ({"shaping_factor": -1}, ["shaping_factor", "-1", ">= 0"]),
        ({"shaping_factor": "1"}, ["shaping_factor", "'1'"]),
        ({"strict": "yes"}, ["strict", "'yes'"]),
        ({"render_mode": "human"}, ["render_mode", "'human'", "ansi"]),
        ({"api": "gymnasium"}, ["api", "gymnasium", "parallel"]),
        ({"layout": "kitchen"}, ["unexpected keyword argument 'layout'", "horizon"]),  # fixed by the id
        ({"split": "val"}, ["split", "'val'", "'validation'", "None"]),
    ],
)
def test_bad_kwargs_raise_naming_value_and_fix(kwargs, names):
    with pytest.raises(InvalidKwargError) as exc:
        lang_pz.make("overcooked/cramped_room-v0", **kwargs)
    for name in names:
        assert name in str(exc.value)


def test_make_env_rejects_unknown_layout():
    with pytest.raises(InvalidKwargError, match="layout must be one of .*cramped_room.*'kitchen'"):
        make_env(layout="kitchen")


def test_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "overcooked_ai_py.mdp.overcooked_env", None)
    with pytest.raises(DependencyNotInstalled, match=r"lang_pz\[overcooked\].*--no-deps overcooked-ai==1.1.0"):
        make()


# -- seeded start states (split=) ---------------------------------------------------------


def _first_texts(env, seed):
    obs, _ = env.reset(seed=seed)
    return [obs[a]["text"] for a in AGENTS], env.unwrapped.item_id


def test_fixed_start_by_default_seeded_disjoint_starts_with_split():
    fixed = make()
    firsts = {seed: _first_texts(fixed, seed) for seed in (0, 1, 1000, 2000)}
    assert len({tuple(t) for t, _ in firsts.values()}) == 1  # the layout's one start: every seed
    assert firsts[0][1] == "cramped_room: player_0 (1,2) up, player_1 (3,1) up"
    train, validation = make(split="train"), make(split="validation", api="aec")
    t0, id0 = _first_texts(train, 0)
    validation.reset(seed=1000)
    v0 = [validation.observe(a)["text"] for a in AGENTS]
    assert t0 != v0 and id0 != validation.unwrapped.item_id  # the phases' first observations differ
    assert _first_texts(train, 0) == (t0, id0)  # same seed, same start
    assert _first_texts(make(split="train"), 0) == (t0, id0)  # in a new env too
    assert len({_first_texts(train, s)[1] for s in range(20)}) == 20  # consecutive seeds: distinct starts


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_start_sets_are_disjoint_by_cells_and_keep_each_player_in_its_region(layout):
    from overcooked_ai_py.mdp.overcooked_mdp import OvercookedGridworld

    from lang_pz.envs.overcooked.starts import start_states

    mdp = OvercookedGridworld.from_layout_name(LAYOUTS[layout])
    every, _ = start_states(mdp, "all")
    cells = {}
    for part in ("train", "validation", "test"):
        starts, order = start_states(mdp, part)
        assert sorted(order) == list(range(len(starts))) and len(starts) % 16 == 0
        cells[part] = {(a[0], b[0]) for a, b in starts}
    assert not (cells["train"] & cells["validation"] or cells["train"] & cells["test"])
    assert not cells["validation"] & cells["test"]
    assert sum(len(c) for c in cells.values()) * 16 == len(every)
    middle = {"asymmetric_advantages": 4, "forced_coordination": 2}.get(layout)  # a counter parts the players
    if middle is not None:
        x0, x1 = (p[0] for p in mdp.start_player_positions)
        assert (x0 < middle) != (x1 < middle)
        assert all((a[0][0] < middle) == (x0 < middle) and (b[0][0] < middle) == (x1 < middle) for a, b in every)


def test_greedy_team_plays_other_episodes_on_validation_seeds():
    """The issue: with one fixed start, greedy validation seed 1000 replayed training seed 0."""
    plays = []
    for split, seed in (("train", 0), ("validation", 1000), ("validation", 1000)):
        env = make(horizon=150, split=split)
        obs, infos = env.reset(seed=seed)
        team = {a: OvercookedGreedyPolicy(env, a, seed=i) for i, a in enumerate(env.possible_agents)}
        actions = []
        while env.agents:
            step = {a: team[a](obs[a], infos[a]) for a in env.agents}
            actions.append(tuple(step.values()))
            obs, _, _, _, infos = env.step(step)
        plays.append((actions, env.unwrapped.soups_delivered))
    assert plays[0][0] != plays[1][0] and plays[1] == plays[2]
    assert plays[0][1] >= 1 and plays[1][1] >= 1  # a seeded start is still a playable kitchen


def test_seeded_starts_pass_the_api_and_seed_tests():
    assert language_api_test("overcooked/cramped_room-v0", kwargs={"horizon": 20, "split": "test"}) == ["parallel", "aec"]


# -- partners -----------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["primitive", "macro"])
def test_greedy_team_delivers_soups_reproducibly(level):
    results = []
    for _ in range(2):
        env = make(actions=level, horizon=150)
        obs, infos = env.reset(seed=0)
        team = {a: OvercookedGreedyPolicy(env, a, seed=i) for i, a in enumerate(env.possible_agents)}
        state_before = np.random.get_state()[1].copy()
        while env.agents:
            obs, _, _, _, infos = env.step({a: team[a](obs[a], infos[a]) for a in env.agents})
            assert all(i["parse_error"] is None for i in infos.values())
        assert np.array_equal(np.random.get_state()[1], state_before)  # global RNG untouched
        results.append(env.unwrapped.soups_delivered)
    assert results[0] == results[1] >= 2


def test_greedy_in_the_aec_api():
    env = make(actions="macro", api="aec", horizon=100)
    env.reset(seed=0)
    team = {a: OvercookedGreedyPolicy(env, a, seed=0) for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        env.step(None if term or trunc else team[agent](obs, info))
    assert env.unwrapped.soups_delivered >= 1


def test_llm_and_greedy_team_with_a_scripted_model():
    from lang_pz.test import ScriptedBackend

    llm = ScriptedBackend(lambda req: "pick up onion" if "pick up onion" in req.choices else req.choices[-1])
    env = make(actions="macro", horizon=60)
    obs, infos = env.reset(seed=0)
    team = {
        "player_0": LLMPolicy("Always pick up onions.", llm),
        "player_1": overcooked_partner("greedy", env, "player_1", seed=0),
    }
    while env.agents:
        obs, _, _, _, infos = env.step({a: team[a](obs[a], infos[a]) for a in env.agents})
        assert infos["player_0"]["parse_error"] is None
    assert llm.requests and all("Actions:" in (r.prompt or str(r.messages)) for r in llm.requests)
    assert env.unwrapped.game_state.timestep == 60


def test_random_partner_and_bad_partner_arguments():
    env = make(actions="macro")
    assert isinstance(overcooked_partner("random", env, "player_0", seed=1), RandomPolicy)
    with pytest.raises(LangPZError, match="one of \\['greedy', 'random'\\], got 'smart'"):
        overcooked_partner("smart", env, "player_0")
    with pytest.raises(LangPZError, match="player_0.*got 'player_7'"):
        OvercookedGreedyPolicy(env, "player_7")
    with pytest.raises(LangPZError, match="overcooked/<layout>-v0"):
        OvercookedGreedyPolicy(lang_pz.make("classic/rps-v0"), "player_0")


def test_cli_play_greedy():
    from typer.testing import CliRunner

    from lang_pz.cli import app

    result = CliRunner().invoke(
        app,
        [
            "play",
            "overcooked/cramped_room-v0",
            "--policy",
            "greedy",
            "--kw",
            "horizon=80",
            "--kw",
            "actions=macro",
            "--show",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "You are player_0 (A)" in result.output and "episode 0 (seed 0): team return" in result.output
    bad = CliRunner().invoke(app, ["play", "classic/rps-v0", "--policy", "greedy"])
    assert bad.exit_code == 2


# -- the install: pygame-ce survives overcooked-ai -----------------------------------------


def test_pygame_ce_still_serves_pistonball():
    import overcooked_ai_py.mdp.overcooked_env  # noqa: F401  (imported alongside)
    import pygame

    assert getattr(pygame, "IS_CE", False), f"pygame {pygame.version.ver} is not pygame-ce"
    assert importlib.metadata.version("pygame-ce") == pygame.version.ver
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.version("pygame")  # overcooked-ai's pygame was never installed over it
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=4, render_mode="rgb_array")
    env.reset(seed=0)
    env.step(dict.fromkeys(env.agents, "up"))
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.std() > 0


# -- the embedded model -------------------------------------------------------------------


@pytest.mark.integration
def test_embedded_model_plays_a_few_skill_steps(embedded):
    env = make(actions="macro", horizon=400)
    obs, infos = env.reset(seed=0)
    team = {
        "player_0": LLMPolicy("Always pick up an onion, then put it in the pot.", embedded),
        "player_1": overcooked_partner("greedy", env, "player_1", seed=0),
    }
    for _ in range(3):
        actions = {a: team[a](obs[a], infos[a]) for a in env.agents}
        assert actions["player_0"] in infos["player_0"]["legal_actions"]
        obs, _, _, _, infos = env.step(actions)
        assert infos["player_0"]["parse_error"] is None
    assert env.unwrapped.game_state.timestep >= 3


def test_overcooked_public_import_paths_still_work():
    from lang_pz.envs.overcooked.make import make_cramped_room

    assert lang_pz.registry["overcooked/cramped_room-v0"].load() is make_cramped_room
