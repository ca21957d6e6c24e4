"""Seeded episodes of every game env, as users see them, pinned byte for byte.

Each case plays seeded episodes with a mix of legal words and odd replies (wrong case, marked,
negated, JSON, a number, over-long text, another env's words) and hashes everything the user
gets: observation texts, infos (legal actions, decoding, fallback), rewards, terminations and
the critic's state text. The digests were taken before the per-step speed-ups of
``benchmarks/bench_wrappers.py`` (issue 14); a change to any text or info changes a digest.
If a text is changed on purpose, re-take the digests (``python tests/test_wrapper_transcripts.py``)
and say so in the commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from typing import Any

import numpy as np
import pytest

import lang_pz
from lang_pz.trajectory import to_jsonable

ODD = ["dance", "LEFT", " action: up ", "not rock", '{"action": "paper"}', 123, "x" * 500, "Rock!", "1", "wait 1"]

CASES: list[tuple[str, dict[str, Any]]] = [
    ("classic/tictactoe-v0", {}),
    ("classic/connect_four-v0", {}),
    ("classic/rps-v0", {}),
    ("classic/rps-v0", {"num_actions": 5}),
    ("classic_control/cartpole-v0", {}),
    ("toy_text/frozen_lake-v0", {}),
    ("toy_text/frozen_lake-v0", {"map_name": "8x8", "is_slippery": False}),
    ("overcooked/cramped_room-v0", {"horizon": 60}),
    ("overcooked/counter_circuit-v0", {"horizon": 60}),
    ("overcooked/cramped_room-v0", {"horizon": 80, "actions": "macro"}),
    ("overcooked/forced_coordination-v0", {"horizon": 80, "actions": "macro"}),
    ("butterfly/pistonball-v0", {"n_pistons": 4, "max_cycles": 20}),
]

DIGESTS: dict[str, str] = {
    "classic/tictactoe-v0 aec {}": "4259ac03952753c9b7c1f9fad52758e0ceb700c2922977b7246c7e200d50c2d5",
    "classic/connect_four-v0 aec {}": "ea38eb3357c3ec1501838235e6662bd8f56f60dfa98efef9117e9a90c7103698",
    "classic/rps-v0 parallel {}": "931aeb4bab192beeef2ca13d631351d20c249ef7f31c83ce0f14fe8b499aed7e",
    "classic/rps-v0 aec {}": "c37468c962f799614bb2ca17ec93fc5685af797e8a103236b6a24364571ff732",
    'classic/rps-v0 parallel {"num_actions": 5}': "70376f357429ffde68003373d3e776429bf634f4b6331bb810f567690b759592",
    'classic/rps-v0 aec {"num_actions": 5}': "bafeecb74cb9d0786a5d7dbb018d19406edcc28c0a739ad7ee9a42feff1c56aa",
    "classic_control/cartpole-v0 gymnasium {}": "dde2d5aed7705290ec80c4451cef9a12bc00962313204a0a90a7bddf249391f4",
    "toy_text/frozen_lake-v0 gymnasium {}": "fc32935c14cf0efac5e85ba4a015fb7e95dc581dd03565b4c2d2b9f1447e549f",
    'toy_text/frozen_lake-v0 gymnasium {"is_slippery": false, "map_name": "8x8"}': "736444d8b02ee1ed6a424e210fe4bd966cf1a21d36206e089ff4dbca7eb3548e",
    'overcooked/cramped_room-v0 parallel {"horizon": 60}': "e074f52c1121da175c2e91ff20541020297779608fde5b3f8e05182914520dec",
    'overcooked/cramped_room-v0 aec {"horizon": 60}': "76a66ee5d9be3f49eb38d81c58d86ca942e8c0e1570b611661d9f5421e6130cc",
    'overcooked/counter_circuit-v0 parallel {"horizon": 60}': "952742804b7fb1d8e3c9a0c3d86124e2ecde39ce797c4d5ca591c48c9fbae929",
    'overcooked/counter_circuit-v0 aec {"horizon": 60}': "a6637254d9eebc93314370ca6857b626d11bfe8187bb32a2e2615f28d4beb5c3",
    'overcooked/cramped_room-v0 parallel {"actions": "macro", "horizon": 80}': "9247ccf91fbe2e3f69e9244013257bc3dddbfdcc868c063fffa46ec04de58425",
    'overcooked/cramped_room-v0 aec {"actions": "macro", "horizon": 80}': "dcde7a0a8307dbffcbcc27459c67a85f272f41fad6edc2fdfb3ca87a42851b88",
    'overcooked/forced_coordination-v0 parallel {"actions": "macro", "horizon": 80}': "1c9e636060c4d20ef0d9019042fc6fec1e3ac1f108141ef0974bf212e644330b",
    'overcooked/forced_coordination-v0 aec {"actions": "macro", "horizon": 80}': "d9d15a9fb16d3a1d66604153fe15f68ff5da70fc6d994bf456eca9e402044163",
    'butterfly/pistonball-v0 parallel {"max_cycles": 20, "n_pistons": 4}': "d7f65bb1b08f06296339bdd2adf65521fa07d79ab91f69316f22d2e539c328f7",
    'butterfly/pistonball-v0 aec {"max_cycles": 20, "n_pistons": 4}': "f244b4344401217bc5b1195dcc59308c534219721ad839edb2a06373e7c60b0d",
}


def _choose(rng: np.random.Generator, info: dict[str, Any]) -> Any:
    if rng.random() < 0.2:
        return ODD[int(rng.integers(len(ODD)))]
    legal = info.get("legal_actions")
    if legal:
        return legal[int(rng.integers(len(legal)))]
    lo, hi = info.get("action_range", (0, 1))
    return f"{rng.uniform(lo, hi):.3f}"


def transcript_digest(env_id: str, kwargs: dict[str, Any], api: str, seeds: int = 3) -> str:
    """sha256 of the JSON lines of ``seeds`` seeded episodes of ``env_id`` in ``api``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = lang_pz.make(env_id, api=api, **kwargs)
    digest = hashlib.sha256()

    def emit(*x: Any) -> None:
        digest.update((json.dumps(to_jsonable(list(x)), sort_keys=True, default=repr) + "\n").encode())

    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        if api == "parallel":
            obs, infos = env.reset(seed=seed)
            emit(obs, infos)
            while env.agents:
                acts = {a: _choose(rng, infos[a]) for a in env.agents}
                obs, r, te, tr, infos = env.step(acts)
                emit(acts, obs, r, te, tr, infos)
            emit(env.state_text())
        elif api == "aec":
            env.reset(seed=seed)
            for agent in env.agent_iter():
                obs, r, te, tr, info = env.last()
                emit(agent, obs, r, te, tr, info, env.infos)
                env.step(None if te or tr else _choose(rng, info))
                emit(env.observe(env.possible_agents[0]), env.state_text())
        else:
            obs, info = env.reset(seed=seed)
            emit(obs, info)
            done = False
            while not done:
                a = _choose(rng, info)
                obs, r, te, tr, info = env.step(a)
                emit(a, obs, r, te, tr, info)
                done = te or tr
    env.close()
    return digest.hexdigest()


def _ids() -> list[tuple[str, dict[str, Any], str]]:
    return [(env_id, kw, api) for env_id, kw in CASES for api in lang_pz.registry[env_id].apis]


def _key(env_id: str, kwargs: dict[str, Any], api: str) -> str:
    return f"{env_id} {api} {json.dumps(kwargs, sort_keys=True)}"


@pytest.mark.parametrize(("env_id", "kwargs", "api"), _ids(), ids=lambda x: str(x))
def test_transcript_unchanged(env_id: str, kwargs: dict[str, Any], api: str) -> None:
    if env_id.startswith("overcooked/"):
        pytest.importorskip("overcooked_ai_py")
    assert transcript_digest(env_id, kwargs, api) == DIGESTS[_key(env_id, kwargs, api)]


if __name__ == "__main__":  # print the digests (to re-take them after a deliberate change)
    sys.path.insert(0, ".")
    for case in _ids():
        print(f"    {_key(*case)!r}: {transcript_digest(*case)!r},")
