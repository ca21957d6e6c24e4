"""Pistonball: configurations without a meaningful episode, images computed only when read,
the per-piston cost of its text."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lang_pz
from lang_pz.error import InvalidKwargError

PB = "butterfly/pistonball-v0"


# -- degenerate configurations (measured: lang_pz/envs/pistonball.py docstring) --------------


@pytest.mark.parametrize("api", ["parallel", "aec"])
def test_two_pistons_are_refused_with_the_reason(api):
    with pytest.raises(InvalidKwargError, match="n_pistons=2 .* every episode ends after its first step"):
        lang_pz.make(PB, api=api, n_pistons=2)


def test_two_pistons_really_end_after_one_step_in_pettingzoo():
    # the fact behind the refusal, on PettingZoo's own env, for several seeds and both drops
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pettingzoo.butterfly import pistonball_v6
    for drop in (True, False):
        for seed in range(5):
            env = pistonball_v6.parallel_env(n_pistons=2, continuous=False, random_drop=drop)
            env.reset(seed=seed)
            env.step(dict.fromkeys(env.agents, 2))
            assert not env.agents and env.unwrapped.distance_to_wall_at_game_start == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_pistons": 3}, "3 pistons"),
        ({"n_pistons": 4, "hold": 3}, "4 pistons and hold=3"),
        ({"n_pistons": 6, "hold": 5, "max_cycles": 4}, "max_cycles=4 < hold=5"),
    ],
)
def test_degenerate_configurations_warn(kwargs, match):
    with pytest.warns(UserWarning, match=match):
        lang_pz.make(PB, **kwargs)


@pytest.mark.parametrize(
    "kwargs", [{"n_pistons": 4}, {"n_pistons": 4, "hold": 2}, {"n_pistons": 5, "hold": 5}, {"n_pistons": 20}]
)
def test_meaningful_configurations_do_not_warn(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        lang_pz.make(PB, **kwargs)


# -- images only when read ---------------------------------------------------------------


@pytest.fixture
def observe_calls(monkeypatch):
    from pettingzoo.butterfly.pistonball.pistonball import raw_env

    calls = []
    real = raw_env.observe

    def counting(self, agent):
        calls.append(agent)
        return real(self, agent)

    monkeypatch.setattr(raw_env, "observe", counting)
    return calls


@pytest.mark.parametrize("api", ["parallel", "aec"])
@pytest.mark.parametrize("hold", [1, 3])
def test_text_steps_compute_no_image(api, hold, observe_calls):
    env = lang_pz.make(PB, api=api, n_pistons=5, hold=hold, max_cycles=30)
    if api == "parallel":
        env.reset(seed=0)
        while env.agents:
            env.step(dict.fromkeys(env.agents, "up"))
    else:
        env.reset(seed=0)
        for _ in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else "up")
    env.state_text()
    assert observe_calls == []  # PettingZoo's parallel env would have built 2 images per piston and cycle


@pytest.mark.parametrize("api", ["parallel", "aec"])
def test_raw_observation_is_the_real_image_on_demand(api, observe_calls):
    env = lang_pz.make(PB, api=api, n_pistons=5)
    env.reset(seed=0)
    if api == "parallel":
        env.step(dict.fromkeys(env.agents, "up"))
    else:
        for _ in env.possible_agents:
            env.step("up")
    image = env.raw_observation("piston_2")
    assert observe_calls == ["piston_2"]
    assert isinstance(image, np.ndarray) and image.shape == (457, 120, 3) and image.dtype == np.uint8
    assert np.array_equal(image, env.unwrapped.observe("piston_2"))


# -- the text's cost per piston ------------------------------------------------------------


class CountingList(list):
    reads = 0

    def __getitem__(self, i):
        CountingList.reads += 1
        return super().__getitem__(i)

    def __iter__(self):
        CountingList.reads += len(self)
        return super().__iter__()


def test_one_pistons_text_reads_only_its_window():
    env = lang_pz.make(PB, n_pistons=20)
    env.reset(seed=0)
    raw = env.unwrapped
    raw.pistonList = CountingList(raw.pistonList)
    CountingList.reads = 0
    env.adapter.observation_text(env.env, "piston_10", None)
    assert CountingList.reads <= 4  # itself, two neighbours, its top for the ball (was all 20)


def test_ball_physics_arguments_reach_pettingzoo():
    """PettingZoo's pistonball tutorials (SB3, RLlib) pass ball_mass, ball_friction, ball_elasticity."""
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, ball_mass=2.0, ball_friction=0.1, ball_elasticity=0.5)
    env.reset(seed=0)
    raw = env.unwrapped
    assert (raw.ball_mass, raw.ball_friction, raw.ball_elasticity) == (2.0, 0.1, 0.5)
    shape = next(iter(raw.ball.shapes))
    assert (raw.ball.mass, shape.friction, shape.elasticity) == (2.0, 0.1, 0.5)  # the pymunk ball itself
    with pytest.raises(InvalidKwargError, match=r"ball_mass must be > 0, got 0 \(PettingZoo's default: 0.75\)"):
        lang_pz.make("butterfly/pistonball-v0", ball_mass=0)
    with pytest.raises(InvalidKwargError, match="ball_elasticity must be a number, got 'x'"):
        lang_pz.make("butterfly/pistonball-v0", ball_elasticity="x")


# -- the same episodes as PettingZoo's wrappers -----------------------------------------------


def _pettingzoo_stack(n_pistons: int, hold: int, continuous: bool, api: str):
    """Language Pistonball over PettingZoo's own parallel form, as lang_pz built it before
    :class:`~lang_pz.envs.pistonball.PistonballParallel`."""
    from pettingzoo.butterfly import pistonball_v6
    from pettingzoo.utils.conversions import aec_to_parallel, parallel_to_aec
    from supersuit import frame_skip_v0

    from lang_pz.envs.pistonball import PistonballAdapter
    from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper
    from lang_pz.wrappers.lazy import ObserveOnDemand

    env = aec_to_parallel(ObserveOnDemand(pistonball_v6.env(n_pistons=n_pistons, continuous=continuous, max_cycles=60)))
    env = frame_skip_v0(env, hold) if hold > 1 else env
    adapter = PistonballAdapter()
    if continuous:
        adapter.action_names = None
    return LanguageAECWrapper(parallel_to_aec(env), adapter) if api == "aec" else LanguageParallelWrapper(env, adapter)


def _raw_state(env) -> tuple:
    raw = env.unwrapped
    names = ("rewards", "_cumulative_rewards", "terminations", "truncations", "agent_selection", "agents", "frames")
    physics = (  # exact floats: the direct chipmunk calls of PistonballParallel._cycle make the same moves
        [tuple(p.position) + tuple(p.velocity) for p in raw.pistonList],
        tuple(raw.ball.position) + tuple(raw.ball.velocity) + (raw.ball.angle, raw.ball.angular_velocity),
    )
    return tuple(getattr(raw, n) for n in names) + (raw.ball_prev_pos, raw.terminate, raw.truncate, physics)


@pytest.mark.parametrize(
    ("n_pistons", "hold", "continuous", "api"),
    [
        (20, 7, False, "parallel"),
        (5, 1, False, "parallel"),
        (3, 2, False, "parallel"),  # the ball reaches the wall: terminated, not truncated
        (5, 3, True, "parallel"),
        (5, 4, False, "aec"),
        (5, 1, True, "aec"),
    ],
)
def test_every_step_is_pettingzoos(n_pistons, hold, continuous, api):
    """Same observations, rewards, ends, infos and images as PettingZoo's wrappers, whatever
    the actions (out-of-bounds numbers included), to the end of the episode."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 3 pistons: degenerate episodes, wanted here
        ours = lang_pz.make(PB, api=api, n_pistons=n_pistons, hold=hold, continuous=continuous, max_cycles=60)
    theirs = _pettingzoo_stack(n_pistons, hold, continuous, api)
    rng = np.random.default_rng(n_pistons + hold)
    words = ["-1.5", "-0.3", "0", "0.7", "2"] if continuous else ["down", "stay", "up", "jump"]
    for seed in (0, None):  # unseeded: the env's generator goes on from the first episode (holds draw from it)
        assert ours.reset(seed=seed) == theirs.reset(seed=seed)
        if api == "parallel":
            while theirs.agents:
                actions = {a: words[rng.integers(len(words))] for a in theirs.agents}
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # PettingZoo warns of clipped numbers
                    assert ours.step(actions) == theirs.step(actions)
                assert _raw_state(ours) == _raw_state(theirs)
            assert not ours.agents
        else:
            for agent in theirs.agent_iter():
                assert ours.agent_selection == agent and ours.last() == theirs.last()
                assert ours.state_text() == theirs.state_text() and ours.infos == theirs.infos
                _, _, term, trunc, _ = theirs.last()
                action = None if term or trunc else words[rng.integers(len(words))]
                ours.step(action)
                theirs.step(action)
            assert not ours.agents
        assert np.array_equal(ours.unwrapped.observe("piston_1"), theirs.unwrapped.observe("piston_1"))


def test_sprites_are_loaded_once_and_copied():
    """Every env has its own surfaces with the pixels, size and flags PettingZoo's loading gives
    (the PNGs are decoded once per process: ``_load_sprites_once``)."""
    import os

    import pygame
    from pettingzoo.butterfly.pistonball import pistonball as module

    first, second = (lang_pz.make(PB, n_pistons=5).unwrapped for _ in range(2))
    for name, file in (
        ("piston_sprite", "piston.png"),
        ("piston_body_sprite", "piston_body.png"),
        ("background", "background.png"),
    ):
        image = pygame.image.load(os.path.join(os.path.dirname(module.__file__), file))
        expected = pygame.Surface(image.get_size(), flags=pygame.SRCALPHA)
        expected.blit(image, (0, 0))  # PettingZoo's get_image
        a, b = getattr(first, name), getattr(second, name)
        assert a is not b
        for got in (a, b):
            assert (got.get_size(), got.get_flags(), got.get_bitsize(), got.get_masks()) == (
                expected.get_size(),
                expected.get_flags(),
                expected.get_bitsize(),
                expected.get_masks(),
            )
            assert pygame.image.tobytes(got, "RGBA") == pygame.image.tobytes(expected, "RGBA")
