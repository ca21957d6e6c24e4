"""Random action strings through every registered game env: nothing but the documented outcomes.

Each action is applied (parsed or the fallback) or, in strict mode, refused with an
ActionParseError carrying the action; nothing else may escape, and every observation stays in
its space. ``LANG_PZ_FUZZ_N`` sets the actions per env and API (default 300; the hardening
issue asks for 10,000, e.g. ``LANG_PZ_FUZZ_N=10000 pytest tests/test_wrapper_fuzz.py``).
"""

from __future__ import annotations

import os
import string
import zlib

import numpy as np
import pytest

import lang_pz
from lang_pz.error import ActionParseError

N = int(os.environ.get("LANG_PZ_FUZZ_N", "300"))
CASES = [
    (env_id, api) for env_id, s in sorted(lang_pz.registry.items()) if not env_id.startswith("tasks/") for api in s.apis
]
_PIECES = [
    "up",
    "down",
    "stay",
    "left",
    "right",
    "rock",
    "1",
    "4",
    "9",
    "center",
    "top-left",
    "wait 1",
    "pick up onion",
    "action:",
    "move:",
    '{"action": ',
    "}",
    "[",
    "]",
    "-",
    ".",
    "e",
    "1e999",
    "nan",
    "\u00e9",
    "\U0001f600",
    "\x00",
    "\t",
    "\n",
    " ",
    "'",
    '"',
    "\\",
    "\ud800",
]


def random_action(rng: np.random.Generator) -> object:
    kind = rng.integers(10)
    if kind == 0:  # not a string at all
        return [None, 3, 2.5, b"up", ["up"], {"action": "up"}][int(rng.integers(6))]
    if kind == 1:  # deep nesting or a huge number
        n = int(rng.integers(1, 5000))
        return ["[" * n + "]" * n, '{"action": ' * n + "1" + "}" * n, "9" * n, "-" * n + "1"][int(rng.integers(4))]
    if kind == 2:  # random characters, any code point
        return "".join(
            chr(int(c)) for c in rng.integers(0, 0x10FFFF, size=int(rng.integers(0, 40))) if not 0xD800 <= int(c) <= 0xDFFF
        )
    if kind == 3:  # printable noise, sometimes past the 1024-character bound
        size = int(rng.choice([5, 50, 1023, 1024, 1025, 3000]))
        return "".join(rng.choice(list(string.printable), size=size))
    return " ".join(_PIECES[int(i)] for i in rng.integers(0, len(_PIECES), size=int(rng.integers(1, 6))))


def _check(env, agent, obs):
    space = env.observation_space(agent) if agent is not None else env.observation_space
    assert space.contains(obs), obs


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("env_id", "api"), CASES)
def test_random_actions_have_only_documented_outcomes(env_id, api, strict):
    env = lang_pz.make(env_id, api=api, strict=strict, **lang_pz.registry[env_id].test_kwargs)
    rng = np.random.default_rng(zlib.crc32(f"{env_id} {api} {strict}".encode()))
    done, seed, sent = True, 0, 0
    while sent < N:
        if done:
            env.reset(seed=seed)
            seed += 1
            done = False
        action = random_action(rng)
        sent += 1
        try:
            if api == "aec":
                _, _, term, trunc, _ = env.last()
                env.step(None if term or trunc else action)
                if env.agents:
                    _check(env, env.agent_selection, env.observe(env.agent_selection))
                done = not env.agents
            elif api == "parallel":
                obs, _, _, _, _ = env.step(dict.fromkeys(env.agents, action))
                for a, o in obs.items():
                    _check(env, a, o)
                done = not env.agents
            else:
                obs, _, term, trunc, _ = env.step(action)
                _check(env, None, obs)
                done = term or trunc
        except ActionParseError as exc:
            assert strict, f"non-strict mode raised for {action!r:.80}"
            assert exc.text == action or exc.text is action
            assert exc.reason
