"""One numbering: on the masked bridge the number an agent sends means what its text says.

For every registered AEC env with finite moves (the turn-based games first), at every decision of
a few seeded random games: the text ends with exactly the mask's indexes as ``index: move``; each
listed move parses (by the env's own parser) to the game action its index plays; the mask is the
env's legal words; and sending each listed index plays that move: the game's own state shows it
(tic-tac-toe's square, connect four's column, OpenSpiel's last action). Then the learner path
(``observation="raw"``) neither renders nor parses text.
"""

from __future__ import annotations

import importlib.util
import re
import warnings

import numpy as np
import pytest
from pettingzoo.utils.wrappers import BaseWrapper

import lang_pz
from lang_pz.interop import to_masked_aec_env

#: TextArena's moves are free text: the bridge indexes words it is given.
WORDS = {
    "textarena/tictactoe-v0": [f"[{i}]" for i in range(9)],
    "textarena/kuhn_poker-v0": ["[check]", "[bet]", "[call]", "[fold]"],
}
EXTRA_MODULE = {"openspiel": "pyspiel", "textarena": "textarena", "overcooked": "overcooked_ai_py", "mpe": "mpe2"}


def _ids() -> list[str]:
    out = []
    for env_id, spec in sorted(lang_pz.registry.items()):
        if "aec" in spec.apis and not env_id.startswith("tasks/") and env_id != "textarena/nim-v0":  # nim lists no moves
            out.append(env_id)
    return out


def _make(env_id: str, **kw):
    spec = lang_pz.registry[env_id]
    module = EXTRA_MODULE.get(env_id.split("/")[0])
    if module and importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return to_masked_aec_env(lang_pz.make(env_id, api="aec", **spec.test_kwargs), actions=WORDS.get(env_id), **kw)


class Recorder(BaseWrapper):
    """Records the actions the game itself receives."""

    def __init__(self, env):
        super().__init__(env)
        self.sent = []

    def step(self, action):
        self.sent.append(action)
        self.env.step(action)


def _replay(env_id: str, seed: int, history: list[int]):
    env = _make(env_id, keep_text=True)
    env.env = Recorder(env.env)
    env.reset(seed=seed)
    for i in history:
        _advance(env)
        env.step(i)
    _advance(env)
    return env


def _advance(env) -> None:
    """Step the done agents (None) until a live one is to move or the game is over."""
    while env.agents and (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        env.step(None)


def _line_indexes(text: str) -> dict[int, str]:
    last = text.rsplit("\n", 1)[-1]
    head = "reply with the index (the number before the colon): "
    if head not in last:
        return {}
    listed = last.split(head, 1)[1].rstrip(".")
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"(?:^|, )(\d+): (.+?)(?=, \d+: |$)", listed)}


def _effect_ok(env_id: str, before, after, agent: str, move: str, expected) -> bool:
    """The game's state after the move shows it (where the test knows how to read it)."""
    raw = after.unwrapped
    if env_id == "classic/tictactoe-v0":
        square = int(move.split()[-1])  # 'square 5', reading order
        row, col = divmod(square - 1, 3)
        mark = {"player_1": 1, "player_2": 2}[agent]
        return raw.board.squares[3 * col + row] == mark and before[3 * col + row] == 0
    if env_id == "classic/connect_four-v0":
        col = int(move.split()[-1]) - 1  # 'column 4'
        count = lambda board: sum(board[7 * r + col] != 0 for r in range(6))  # noqa: E731
        return count(raw.board) == count(before) + 1
    if env_id.startswith("openspiel/"):
        import pyspiel

        if raw.game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
            return True  # simultaneous moves reach the history once everyone has moved
        state = raw.game_state
        player = raw.agent_name_id_mapping[agent]
        history = [h for h in state.full_history() if h.player == player]
        return bool(history) and history[-1].action == expected
    return True


@pytest.mark.parametrize("env_id", _ids())
def test_every_listed_move_plays_what_the_text_says(env_id):
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(2):
        history: list[int] = []
        env = _replay(env_id, seed, history)
        for _ in range(4):  # decisions per game
            if not env.agents:
                break
            agent = env.agent_selection
            obs = env.observe(agent)
            mask, text = obs["action_mask"], obs["observation"]
            legal = [int(i) for i in np.flatnonzero(mask)]
            listed = _line_indexes(text)
            assert sorted(listed) == legal, (env_id, text[-300:], legal)
            # the mask is the env's own legal words, parsed by the env
            words = env.adapter.legal_actions(env.env, agent, env._for_adapter(agent), env._info(agent))
            if words is not None and env.words is None:
                parsed = {
                    int(env.adapter.parse(env.env, agent, w, env._for_adapter(agent), env._info(agent))) for w in words
                }
                start = int(env.action_space(agent).start)
                assert parsed == {start + i for i in legal}, (env_id, words, legal)
            for i, move in listed.items():
                trial = _replay(env_id, seed, history)
                expected = trial.adapter.parse(trial.env, agent, move, trial._for_adapter(agent), trial._info(agent))
                before = np.array(
                    trial.unwrapped.board.squares
                    if env_id == "classic/tictactoe-v0"
                    else getattr(trial.unwrapped, "board", [0])
                )
                trial.step(i)
                assert trial.env.sent[-1] == expected, (env_id, i, move, trial.env.sent[-1])
                assert trial.infos[agent]["fallback"] is False
                assert _effect_ok(env_id, before, trial, agent, move, expected), (env_id, i, move)
                checked += 1
            history.append(int(rng.choice(legal)))
            env = _replay(env_id, seed, history)
    assert checked > 0


def test_tictactoe_five_is_what_the_text_calls_five():
    """The issue's case: the text's centre is ``square 5``; its index plays the centre."""
    env = _make("classic/tictactoe-v0", keep_text=True)
    env.reset(seed=0)
    listed = _line_indexes(env.observe("player_1")["observation"])
    centre = next(i for i, move in listed.items() if move == "square 5")
    env.step(centre)
    assert env.unwrapped.board.squares[4] == 1  # PettingZoo's centre cell
    assert "X" in env.text("player_2").split("\n")[4]  # the middle row of the drawn board


@pytest.mark.parametrize("env_id", ["classic/connect_four-v0", "classic/tictactoe-v0"])
def test_the_learner_path_renders_and_parses_no_text(env_id, monkeypatch):
    env = _make(env_id, observation="raw")
    for hook in ("render", "parse", "observation_text", "legal_actions"):
        monkeypatch.setattr(env.adapter, hook, lambda *a, **k: pytest.fail("text was rendered or parsed"))
    native = env.observation_space(env.possible_agents[0])["observation"]
    assert native == env.env.observation_space(env.possible_agents[0])["observation"]  # PettingZoo's own
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for _agent in env.agent_iter(100):
        obs, _, term, trunc, info = env.last()
        assert native.contains(obs["observation"])
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert info == {"fallback": False}


def test_text_is_rendered_once_a_step_and_only_when_read(monkeypatch):
    env = _make("classic/connect_four-v0", keep_text=True)
    calls = []
    render = env.adapter.render
    monkeypatch.setattr(env.adapter, "render", lambda *a, **k: calls.append(a[1]) or render(*a, **k))
    env.reset(seed=0)
    env.observe("player_0")
    env.last()
    assert calls == ["player_0"]
    env.step(3)
    assert calls == ["player_0"]  # nothing read since


def test_masked_index_plays_the_fallback_and_the_text_says_so():
    env = _make("classic/connect_four-v0", keep_text=True)
    env.reset(seed=0)
    for _ in range(6):
        env.step(0)  # fill column 1
    env.step(0)  # full: the leftmost legal column is played instead
    assert env.infos["player_0"] == {"fallback": True}
    env.step(6)
    note = env.text("player_0")
    assert "index 0 is not a legal move now" in note and "column 2 was played for you" in note


@pytest.mark.parametrize(
    "env_id", [i for i, spec in sorted(lang_pz.registry.items()) if "parallel" in spec.apis and not i.startswith("tasks/")]
)
def test_parallel_bridge_index_i_is_the_games_action_i(env_id):
    """``to_vector_env``'s index ``i`` is sent as the i-th action word; the env parses that word to
    its own action ``start + i`` (one numbering on the parallel bridge too)."""
    from lang_pz.interop import to_vector_env
    from lang_pz.interop.wrappers import _language_wrapper

    spec = lang_pz.registry[env_id]
    module = EXTRA_MODULE.get(env_id.split("/")[0])
    if module and importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = to_vector_env(lang_pz.make(env_id, api="parallel", **spec.test_kwargs))
    env.reset(seed=0)
    language = _language_wrapper(env)
    words = env.env.env.words  # NumericInfos(EncodeObservations(DiscreteActions))
    for agent in env.agents:
        space = language.adapter.action_space(language.env, agent)
        for i, word in enumerate(words[agent]):
            parsed = language.adapter.parse(language.env, agent, word, language._for_adapter(agent), {})
            assert parsed == int(space.start) + i, (env_id, agent, word, parsed)
