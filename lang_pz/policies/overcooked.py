"""Scripted Overcooked partners: overcooked_ai's greedy planning agent, and a random one.

:class:`OvercookedGreedyPolicy` wraps overcooked_ai's ``GreedyHumanModel`` (Carroll et al.,
"On the Utility of Learning about Humans for Human-AI Coordination", NeurIPS 2019, App. C:
the hand-coded "greedy human model" that fetches onions, fills the pot, fetches a dish when a
soup is nearly ready, and serves). It is a *centralised scripted partner*: it is built with
the environment and reads the full game state (``env.unwrapped.game_state``), not the agent's
text observation, which it ignores. Use it as a teammate or baseline, not as a decentralised
policy.

Teams: any mix of :class:`lang_pz.policies.LLMPolicy`, this greedy policy and
:class:`lang_pz.policies.RandomPolicy` (:func:`overcooked_partner` builds the scripted ones)::

    env = lang_pz.make("overcooked/cramped_room-v0", actions="macro")
    policies = {"player_0": LLMPolicy("Always pick up onions.", llm),
                "player_1": overcooked_partner("greedy", env, "player_1", seed=0)}
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from lang_pz.error import LangPZError
from lang_pz.policies.base import Decision, Policy, mixed_rng
from lang_pz.policies.random import RandomPolicy

#: Partner kinds :func:`overcooked_partner` builds.
PARTNERS: tuple[str, ...] = ("greedy", "random")


_GLOBAL_NUMPY = threading.Lock()


@contextlib.contextmanager
def _global_numpy_seeded(rng: np.random.Generator) -> Iterator[None]:
    """Seed NumPy's *global* generator from ``rng`` for the duration, then restore it.

    ``GreedyHumanModel`` draws its un-sticking moves from ``np.random``; this makes them
    reproducible per policy without leaving the global state changed. A lock serialises
    policies deciding in parallel threads (as ``lang_pz.rollout`` may run them).
    """
    with _GLOBAL_NUMPY:
        saved = np.random.get_state()
        np.random.seed(int(rng.integers(2**32)))
        try:
            yield
        finally:
            np.random.set_state(saved)


def _game(env: Any) -> Any:
    from lang_pz.envs.overcooked import OvercookedParallelEnv

    game = getattr(env, "unwrapped", None)
    if not isinstance(game, OvercookedParallelEnv):
        raise LangPZError(
            f"OvercookedGreedyPolicy needs an environment made with lang_pz.make('overcooked/<layout>-v0'), "
            f"got {type(env).__name__}"
        )
    return game


def greedy_skill(mdp: Any, state: Any, index: int) -> str:
    """The skill ``GreedyHumanModel.ml_action`` would pursue for player ``index``.

    Same priorities as overcooked_ai 1.1.0's ``ml_action``: empty-handed, fetch a dish if a
    soup is cooking or ready and the teammate holds no dish, else start a full pot, else fetch
    an onion; holding an onion, put it in a pot; a dish, fill it; a soup, deliver it.
    """
    player, other = state.players[index], state.players[1 - index]
    if player.has_object():
        return {"onion": "put onion in pot", "dish": "fill dish with soup", "soup": "deliver soup"}.get(
            player.get_object().name, "place on counter"
        )
    pots = mdp.get_pot_states(state)
    other_dish = other.has_object() and other.get_object().name == "dish"
    if (pots["ready"] or pots["cooking"]) and not other_dish:
        return "pick up dish"
    if mdp.get_full_but_not_cooking_pots(pots):
        return "start cooking"
    return "pick up onion"


class OvercookedGreedyPolicy(Policy):
    """overcooked_ai's ``GreedyHumanModel`` playing ``agent`` (a centralised scripted partner).

    Primitive actions: the model's own action. Skills: the skill its ``ml_action`` priorities
    pick (:func:`greedy_skill`), or ``wait 1`` if that skill is impossible now.

    Args:
        env: a language Overcooked environment from ``lang_pz.make`` (parallel or AEC).
        agent: ``"player_0"`` or ``"player_1"``.
        seed: seed of the model's random un-sticking moves (``None``: OS entropy).

    Raises:
        LangPZError: ``env`` is not a lang_pz Overcooked environment, or ``agent`` is not one
            of its players.
    """

    def __init__(self, env: Any, agent: str, seed: int | None = None) -> None:
        from overcooked_ai_py.agents.agent import GreedyHumanModel

        self.game = _game(env)
        if agent not in self.game.possible_agents:
            raise LangPZError(f"agent must be one of {self.game.possible_agents}, got {agent!r}")
        self.agent = agent
        self.index = self.game.index(agent)
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.model = GreedyHumanModel(self.game.planners.mlam)
        self._reset_model()

    def reset(self, seed: int | None = None) -> None:
        """A new episode: forget the model's state and reseed its un-sticking moves from the
        construction seed and ``seed``."""
        self.rng = mixed_rng(self.seed, seed)
        self._reset_model()

    def _reset_model(self) -> None:
        # Agent.reset() also forgets the agent index and the mdp: set them again
        self.model.reset()
        self.model.set_agent_index(self.index)
        self.model.set_mdp(self.game.mdp)
        self._last_timestep = -1

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """Act from the game state; ``observation`` and ``info`` are not used."""
        from lang_pz.envs.overcooked.macro_actions import PRIMITIVES, SKILL_WORDS

        t0 = time.perf_counter()
        state = self.game.game_state
        if state.timestep <= self._last_timestep:
            self._reset_model()  # a new episode: forget the previous state
        self._last_timestep = state.timestep
        if self.game.action_level == "primitive":
            from overcooked_ai_py.mdp.actions import Action

            with _global_numpy_seeded(self.rng):
                action, _ = self.model.action(state)
            word = PRIMITIVES[Action.ACTION_TO_INDEX[action]]
        else:
            word = greedy_skill(self.game.mdp, state, self.index)
            if not self.game.skill_mask(self.agent)[SKILL_WORDS.index(word)]:
                word = "wait 1"
        return Decision(action=word, raw_output=word, latency_s=time.perf_counter() - t0)


def overcooked_partner(kind: str, env: Any, agent: str, seed: int | None = None) -> Policy:
    """A scripted partner for ``agent``: ``"greedy"`` (:class:`OvercookedGreedyPolicy`) or
    ``"random"`` (:class:`lang_pz.policies.RandomPolicy`: uniform over ``info["legal_actions"]``,
    i.e. the six moves, or the skills possible now).

    Raises:
        LangPZError: unknown ``kind`` (names the valid ones), or a bad ``env`` / ``agent``.
    """
    if kind == "greedy":
        return OvercookedGreedyPolicy(env, agent, seed=seed)
    if kind == "random":
        _game(env)
        return RandomPolicy(seed=seed)
    raise LangPZError(f"partner kind must be one of {list(PARTNERS)}, got {kind!r}")
