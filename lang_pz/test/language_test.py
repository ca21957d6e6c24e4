"""Compliance test for language environments: the PettingZoo / Gymnasium API tests plus text checks.

:func:`language_api_test` runs, for each API an environment can be made in:

* ``aec``: ``pettingzoo.test.api_test`` and ``seed_test``;
* ``parallel``: ``pettingzoo.test.parallel_api_test`` and ``parallel_seed_test``;
* ``gymnasium``: ``gymnasium.utils.env_checker.check_env``;

then lang_pz's own checks on a seeded episode that mixes valid and garbage text actions:

* every observation is ``{"text": str}`` and lies in the observation space (charset, length);
* each agent's first observation of an episode is more than a summary of its numbers
  (:func:`lang_pz.test.checks.check_not_summary`: the text says which number is where);
* at each agent's first move of an episode, every legal action has a text that parses back to it
  (:func:`lang_pz.test.checks.check_actions_expressible`);
* every word in ``info["legal_actions"]`` parses to an action that is legal under the
  environment's mask, and the adapter's ``action_text`` of that action parses back to it;
* a valid text action is applied without ``info["parse_error"]``;
* garbage text never crashes the environment: the fallback action is applied and
  ``info["parse_error"]`` (a non-empty reason), ``info["fallback"]`` and ``info["action_text"]``
  are set;
* in strict mode garbage raises :class:`lang_pz.error.ActionParseError` carrying the raw
  ``.text`` and leaves the environment where it was, while valid text still steps.

Failures raise ``AssertionError`` with the environment, agent and text involved. The checks of
one observation, one action's info and the legal words are :mod:`lang_pz.test.checks`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import Env
from pettingzoo import AECEnv, ParallelEnv

from lang_pz.error import ActionParseError
from lang_pz.test.checks import (
    GARBAGE,
    check_actions_expressible,
    check_decoded,
    check_legal_actions,
    check_not_summary,
    check_observation,
)

if TYPE_CHECKING:
    from lang_pz.registration import Api

__all__ = ["language_api_test"]


def _language_wrapper(env: Any) -> Any | None:
    """The lang_pz language wrapper inside ``env``'s wrapper chain (through ``.env`` and
    PettingZoo's conversion wrappers' ``.aec_env``), if there is one."""
    from lang_pz.wrappers import (
        LanguageAECWrapper,
        LanguageGymWrapper,
        LanguageParallelWrapper,
    )
    from lang_pz.wrappers.common import wrapped_layers

    kinds = (LanguageAECWrapper, LanguageParallelWrapper, LanguageGymWrapper)
    return next((e for e in wrapped_layers(env) if isinstance(e, kinds)), None)


def _api_of(env: Any) -> str:
    if isinstance(env, AECEnv):
        return "aec"
    if isinstance(env, ParallelEnv):
        return "parallel"
    if isinstance(env, Env):
        return "gymnasium"
    raise TypeError(f"not a PettingZoo AECEnv/ParallelEnv or Gymnasium Env: {type(env).__name__}")


def _valid_texts(wrapper: Any, agent: str | None, info: Mapping[str, Any], rng: np.random.Generator) -> list[str]:
    if "legal_actions" in info:
        return list(info["legal_actions"])
    if "action_range" in info:
        lo, hi = info["action_range"]
        return [f"{lo:g}", f"{hi:g}", f"{(lo + hi) / 2:g}"]
    if wrapper is not None:
        space = wrapper.adapter.action_space(wrapper.env, agent)
        space.seed(int(rng.integers(2**31)))
        return [wrapper.adapter.action_text(wrapper.env, agent, space.sample())]
    return []


def _pick(rng: np.random.Generator, step: int, valid: list[str], garbage: Sequence[str]) -> tuple[str, bool]:
    # Every third action is garbage (or every one when no valid text is known).
    if garbage and (step % 3 == 2 or not valid):
        return garbage[int(rng.integers(len(garbage)))], True
    if valid:
        return valid[int(rng.integers(len(valid)))], False
    return "", True


# -- per-API episodes ---------------------------------------------------------------------


def _raw_of(wrapper: Any, agent: str) -> tuple[Any, Mapping[str, Any]]:
    """The inner observation and info of ``agent`` that ``wrapper`` (AEC or parallel) parses with."""
    from lang_pz.wrappers import LanguageAECWrapper

    if isinstance(wrapper, LanguageAECWrapper):
        return wrapper.env.observe(agent), wrapper.env.infos.get(agent, {})
    # a parallel wrapper keeps each agent's last raw observation and info for parsing
    return wrapper._raw_obs.get(agent), wrapper._raw_infos.get(agent, {})


def _aec_episode(env: AECEnv, garbage: Sequence[str], max_steps: int, seed: int, name: str) -> None:
    """Play episodes (reset with ``seed``, ``seed + 1`` ...) for ``max_steps`` agent steps in all.

    An action's decoding is checked once ``env.infos`` is renewed: at once for an AEC language
    env, at the end of the cycle for a parallel one under ``parallel_to_aec`` (which steps the
    parallel env when the last agent has acted)."""
    rng = np.random.default_rng(seed)
    wrapper = _language_wrapper(env)
    step, episode = 0, 0
    pending: list[tuple[str, str, bool, str]] = []
    while step < max_steps:
        env.reset(seed=seed + episode)
        episode += 1
        pending.clear()
        for agent in env.agents:
            check_observation(env.observation_space(agent), env.observe(agent), f"{name} reset {agent}")
            if wrapper is not None and agent in wrapper.env.agents:
                check_not_summary(wrapper, agent, _raw_of(wrapper, agent)[0], f"{name} reset {agent}")
        moved: set[str] = set()
        for agent in env.agent_iter(max_steps - step):
            obs, _, terminated, truncated, info = env.last()
            where = f"{name} episode {episode} step {step} {agent}"
            step += 1
            check_observation(env.observation_space(agent), obs, where)
            if terminated or truncated:
                env.step(None)
                continue
            if wrapper is not None and info.get("legal_actions"):
                raw, raw_info = _raw_of(wrapper, agent)
                check_legal_actions(wrapper, agent, raw, raw_info, info["legal_actions"], where)
            if wrapper is not None and agent not in moved and agent in wrapper.env.agents:
                moved.add(agent)
                check_actions_expressible(wrapper, agent, *_raw_of(wrapper, agent), where)
            text, is_garbage = _pick(rng, step, _valid_texts(wrapper, agent, info, rng), garbage)
            before = env.infos
            env.step(text)
            pending.append((agent, text, is_garbage, where))
            if env.infos is not before:
                for a, t, g, w in pending:
                    if a in env.infos:
                        check_decoded(env.infos[a], t, g, w)
                pending.clear()


def _parallel_episode(env: ParallelEnv, garbage: Sequence[str], max_steps: int, seed: int, name: str) -> None:
    """Play episodes (reset with ``seed``, ``seed + 1`` ...) for ``max_steps`` parallel steps in all."""
    rng = np.random.default_rng(seed)
    wrapper = _language_wrapper(env)
    episode = 0
    for step in range(max_steps):
        fresh = step == 0 or not env.agents
        if fresh:
            observations, infos = env.reset(seed=seed + episode)
            episode += 1
        actions: dict[str, str]
        kinds: dict[str, bool]
        actions, kinds = {}, {}
        for agent in env.agents:
            where = f"{name} episode {episode} step {step} {agent}"
            check_observation(env.observation_space(agent), observations[agent], where)
            info = infos.get(agent, {})
            if wrapper is not None and info.get("legal_actions"):
                raw_obs, raw_info = _raw_of(wrapper, agent)
                check_legal_actions(wrapper, agent, raw_obs, raw_info, info["legal_actions"], where)
            if wrapper is not None and fresh:
                raw_obs, raw_info = _raw_of(wrapper, agent)
                check_not_summary(wrapper, agent, raw_obs, where)
                check_actions_expressible(wrapper, agent, raw_obs, raw_info, where)
            actions[agent], kinds[agent] = _pick(rng, step + len(actions), _valid_texts(wrapper, agent, info, rng), garbage)
        observations, _, _, _, infos = env.step(actions)
        for agent, text in actions.items():
            if agent in infos:
                check_decoded(infos[agent], text, kinds[agent], f"{name} episode {episode} step {step} {agent}")


def _gym_episode(env: Env, garbage: Sequence[str], max_steps: int, seed: int, name: str) -> None:
    rng = np.random.default_rng(seed)
    wrapper = _language_wrapper(env)
    obs, info = env.reset(seed=seed)
    if wrapper is not None:
        check_not_summary(wrapper, None, wrapper._raw_obs, f"{name} reset")
        check_actions_expressible(wrapper, None, wrapper._raw_obs, wrapper._raw_info, f"{name} reset")
    for step in range(max_steps):
        where = f"{name} step {step}"
        check_observation(env.observation_space, obs, where)
        if wrapper is not None and info.get("legal_actions"):
            check_legal_actions(wrapper, None, wrapper._raw_obs, wrapper._raw_info, info["legal_actions"], where)
        text, is_garbage = _pick(rng, step, _valid_texts(wrapper, None, info, rng), garbage)
        obs, _, terminated, truncated, info = env.step(text)
        check_decoded(info, text, is_garbage, where)
        if terminated or truncated:
            obs, info = env.reset()


# -- strict mode --------------------------------------------------------------------------


def _expect_strict_error(step: Callable[[], Any], text: str, where: str) -> None:
    try:
        step()
    except ActionParseError as exc:
        assert exc.text == text, f"{where}: ActionParseError.text is {exc.text!r:.80}, not the raw text {text!r:.80}"
        assert exc.reason, f"{where}: ActionParseError without a reason"
        return
    raise AssertionError(f"{where}: strict mode accepted garbage {text!r:.80}")


def _strict_checks(env: Any, api: str, garbage: Sequence[str], seed: int, name: str) -> None:
    from lang_pz.wrappers import LanguageParallelWrapper

    wrapper = _language_wrapper(env)
    if api == "aec" and isinstance(wrapper, LanguageParallelWrapper):
        # under parallel_to_aec an action is parsed only when the cycle's last agent has acted:
        # the parallel language layer is the one to check
        env, api = wrapper, "parallel"
    rng = np.random.default_rng(seed)
    if api == "aec":
        env.reset(seed=seed)
        agent = env.agent_selection
        _, _, _, _, info = env.last()
        for text in garbage:
            _expect_strict_error(partial(env.step, text), text, f"{name} strict")
            assert env.agent_selection == agent, f"{name} strict: a rejected action advanced the game"
        valid = _valid_texts(wrapper, agent, info, rng)
        if valid:
            env.step(valid[0])
    elif api == "parallel":
        _, infos = env.reset(seed=seed)
        agents = list(env.agents)
        for text in garbage:
            actions = dict.fromkeys(agents, text)
            _expect_strict_error(partial(env.step, actions), text, f"{name} strict")
        valid_of = {a: _valid_texts(wrapper, a, infos.get(a, {}), rng) for a in agents}
        if all(valid_of.values()):
            env.step({a: v[0] for a, v in valid_of.items()})
    else:
        _, info = env.reset(seed=seed)
        for text in garbage:
            _expect_strict_error(partial(env.step, text), text, f"{name} strict")
        valid = _valid_texts(wrapper, None, info, rng)
        if valid:
            env.step(valid[0])


# -- entry point --------------------------------------------------------------------------


def _constructors(
    env_id_or_fn: str | Callable[[], Any], api: Api | None, kwargs: Mapping[str, Any] | None
) -> tuple[str, list[tuple[str, Callable[..., Any]]]]:
    """``(name, [(api, make(**extra))])`` for an id (each API it supports) or a constructor."""
    if isinstance(env_id_or_fn, str):
        from lang_pz.registration import make, spec

        s = spec(env_id_or_fn)
        apis: list[Api] = [api] if api is not None else list(s.apis)
        base = {**s.test_kwargs, **(kwargs or {})}
        out: list[tuple[str, Callable[..., Any]]] = []
        for a in apis:

            def fn(_a: Api = a, **extra: Any) -> Any:
                return make(env_id_or_fn, api=_a, **{**base, **extra})

            out.append((a, fn))
        return env_id_or_fn, out
    if not callable(env_id_or_fn):
        raise TypeError(f"expected a registered id or a zero-argument constructor, got {env_id_or_fn!r}")
    probe = env_id_or_fn(**(kwargs or {}))
    found = _api_of(probe)
    probe.close()
    if api is not None and api != found:
        raise ValueError(f"the constructor makes a {found} environment, not {api}")
    name = getattr(env_id_or_fn, "__name__", repr(env_id_or_fn))

    def make_it(**extra: Any) -> Any:
        if extra:
            raise TypeError("a constructor takes no test options")
        return env_id_or_fn(**(kwargs or {}))

    return name, [(found, make_it)]


def _accepts_strict(env_id_or_fn: Any) -> bool:
    if isinstance(env_id_or_fn, str):
        from lang_pz.registration import spec

        return "strict" in inspect.signature(spec(env_id_or_fn).load()).parameters
    return False


def language_api_test(
    env_id_or_fn: str | Callable[..., Any],
    *,
    api: Api | None = None,
    kwargs: Mapping[str, Any] | None = None,
    num_cycles: int = 100,
    seed: int = 0,
    api_tests: bool = True,
    seed_tests: bool = True,
    language_checks: bool = True,
    strict_check: bool = True,
    garbage: Iterable[str] = GARBAGE,
    render_check: bool = False,
) -> list[str]:
    """Check a language environment against its APIs' tests and lang_pz's text checks.

    Args:
        env_id_or_fn: a registered id (tested in every API its spec lists, made with the
            spec's ``test_kwargs``), or a constructor returning a PettingZoo ``AECEnv`` /
            ``ParallelEnv`` or Gymnasium ``Env`` whose observations are ``{"text": str}``.
        api: test only this API (an id's spec may list several).
        kwargs: extra keyword arguments for ``lang_pz.make`` or the constructor.
        num_cycles: cycles for PettingZoo's tests and the language episode.
        seed: seed of the language episode and its random choices.
        api_tests: run PettingZoo's / Gymnasium's API tests (False turns them off).
        seed_tests: run the seed tests (False turns them off).
        language_checks: run lang_pz's text checks (False turns them off).
        strict_check: run the strict-mode parse check (False turns it off).
        garbage: text actions that must not parse (default :data:`GARBAGE`).
        render_check: let ``check_env`` try every render mode (may open a window).

    Returns:
        The APIs tested.

    Raises:
        AssertionError: a check failed (the message names the env, step, agent and text).
        lang_pz.error.UnknownEnvironmentError: ``env_id_or_fn`` is an unknown id.
    """
    from pettingzoo.test import (
        api_test,
        parallel_api_test,
        parallel_seed_test,
        seed_test,
    )

    garbage = tuple(garbage)
    name, constructors = _constructors(env_id_or_fn, api, kwargs)
    tested = []
    for chosen, fn in constructors:
        label = f"{name} [{chosen}]"
        if chosen == "aec":
            if api_tests:
                api_test(fn(), num_cycles=num_cycles)
            if seed_tests:
                seed_test(fn, num_cycles=num_cycles)
        elif chosen == "parallel":
            if api_tests:
                parallel_api_test(fn(), num_cycles=num_cycles)
            if seed_tests:
                parallel_seed_test(fn, num_cycles=num_cycles)
        elif chosen == "gymnasium":
            if api_tests or seed_tests:
                from gymnasium.utils.env_checker import check_env

                check_env(fn(), skip_render_check=not render_check)
        else:
            raise ValueError(f"unknown api {chosen!r}")
        if language_checks:
            env = fn()
            episode = {"aec": _aec_episode, "parallel": _parallel_episode, "gymnasium": _gym_episode}[chosen]
            # AEC steps are per agent; parallel and Gymnasium steps are whole cycles
            steps = num_cycles * len(env.possible_agents) if chosen == "aec" else num_cycles
            episode(env, garbage, steps, seed, label)
            env.close()
        if strict_check and garbage:
            if _accepts_strict(env_id_or_fn):
                env = fn(strict=True)
            else:
                env = fn()
                wrapper = _language_wrapper(env)
                if wrapper is None:
                    env.close()
                    env = None
                else:
                    wrapper.strict = True
            if env is not None:
                _strict_checks(env, chosen, garbage, seed, label)
                env.close()
        tested.append(chosen)
    return tested
