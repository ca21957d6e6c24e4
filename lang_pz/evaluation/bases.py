"""The good teams faults are injected into, and the default fault of each environment family.

- ``butterfly/pistonball-v0``: base ``heuristic``
  (:class:`~lang_pz.policies.scripted.PistonballHeuristic`), fault ``misplay``;
- ``overcooked/<layout>-v0``: base ``greedy`` (overcooked_ai's greedy agent for both cooks, a
  centralised scripted team: it reads the game state), fault ``misplay``;
- ``tasks/gsm8k-v0``, ``tasks/math500-v0``: base ``oracle``
  (:class:`~lang_pz.policies.oracle.MathOracle`: the solver writes the gold answer, the
  verifier confirms; centralised scripted: it reads the item), fault ``harmful``;
- anything else: base ``random`` (:class:`~lang_pz.policies.random.RandomPolicy`), fault ``misplay``.

The ``misplay`` fault (:class:`~lang_pz.policies.faulty.FaultyPolicy`) plays, in the wrong
state, an action word the base team itself plays in the unfaulted episode of the same seed
(:func:`repertoire`), so the faulty agent's action words are the team's own. Math tasks have
free-text actions and no repertoire to draw from: their default fault is ``harmful``, a fixed
wrong final answer in the format the environment extracts (:data:`MATH_HARMFUL_TEXT`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lang_pz.critics.base import shown_action
from lang_pz.error import InvalidKwargError
from lang_pz.policies.base import Policy
from lang_pz.trajectory import Trajectory

#: ``(env, agent, seed) -> Policy``: builds one member of the base team for ``env``.
BaseFactory = Callable[[Any, str, int], Policy]
#: Base teams selectable by name (see :func:`base_factory`).
BASES: tuple[str, ...] = ("heuristic", "greedy", "random", "oracle")
#: The base team per environment family when the caller names none (see :func:`env_family`).
DEFAULT_BASES: dict[str, str] = {"pistonball": "heuristic", "overcooked": "greedy", "math": "oracle", "other": "random"}
#: The fault per environment family when the caller names none.
DEFAULT_FAULTS: dict[str, str] = {"pistonball": "misplay", "overcooked": "misplay", "math": "harmful", "other": "misplay"}
#: Pistonball ``harmful``: the opposite of the slope-making move.
PISTONBALL_HARMFUL: Mapping[str, str] = {"up": "down", "down": "up", "stay": "down"}
#: Overcooked ``actions="primitive"`` ``harmful``: the opposite move; ``interact`` and ``stay`` swapped.
OVERCOOKED_HARMFUL_PRIMITIVE: Mapping[str, str] = {
    "up": "down",
    "down": "up",
    "left": "right",
    "right": "left",
    "stay": "interact",
    "interact": "stay",
}
#: Overcooked ``actions="macro"`` ``harmful``: put down whatever the cook carries.
OVERCOOKED_HARMFUL_SKILL = "place on counter"
#: Math task environments ``harmful``: a fixed wrong final answer (wrong unless the gold is 0).
MATH_HARMFUL_TEXT: dict[str, str] = {"gsm8k": "The answer is 0.\n#### 0", "math": "The answer is \\boxed{0}."}


#: Each base team's policy as its agents' instruction text: what the own-policy critic
#: (:mod:`lang_pz.critics.own`) reads as "what the agent was told to play" (a fault benchmark's
#: faulty agent deviates from it). Pistonball's heuristic in the reader's rule form
#: (:mod:`lang_pz.critics.intent`; the two agree on every observation, tests/critics); the greedy
#: cooks and the math oracle in words the reader does not execute (their policies have no
#: readable form: a greedy planner, and solving the problem).
BASE_TEXTS: dict[str, str] = {
    "heuristic": "If the observation says 'px to your right' or 'Ball: out of view', play down. Otherwise, play up.",
    "greedy": "Work greedily: fetch onions for the pot, then a dish for the cooked soup, then serve it.",
    "oracle": "Solve the problem, or check the solver's answer, and end with the final answer.",
    "random": "Play a random offered action.",
}


def base_texts(name: str, agents: Sequence[str]) -> dict[str, str]:
    """agent -> the instruction text of base team ``name`` (:data:`BASE_TEXTS`).

    Raises:
        InvalidKwargError: an unknown base team.
    """
    if name not in BASE_TEXTS:
        raise InvalidKwargError(f"unknown base team {name!r}; choose one of {', '.join(BASE_TEXTS)}")
    return dict.fromkeys(agents, BASE_TEXTS[name])


def env_family(env_id: str) -> str:
    """``"pistonball"``, ``"overcooked"`` (``overcooked/*``), ``"math"`` (``tasks/gsm8k-v0``,
    ``tasks/math500-v0``; an id without its version is its registered one) or ``"other"``."""
    from lang_pz.registration import canonical_id

    env_id = canonical_id(env_id)
    if env_id == "butterfly/pistonball-v0":
        return "pistonball"
    if env_id.startswith("overcooked/"):
        return "overcooked"
    if env_id in ("tasks/gsm8k-v0", "tasks/math500-v0"):
        return "math"
    return "other"


def default_base(env_id: str) -> str:
    """The base team of ``env_id`` when none is named (:data:`DEFAULT_BASES` of its family)."""
    return DEFAULT_BASES[env_family(env_id)]


def default_fault(env_id: str) -> str:
    """The fault of ``env_id`` when none is named (:data:`DEFAULT_FAULTS` of its family)."""
    return DEFAULT_FAULTS[env_family(env_id)]


def base_factory(name: str, env_id: str) -> BaseFactory:
    """The named base team's factory ``(env, agent, seed) -> Policy`` (see the module table).

    Raises:
        InvalidKwargError: an unknown name, or a scripted team made for another family.
    """
    if name not in BASES:
        raise InvalidKwargError(f"unknown base team {name!r}; choose one of {', '.join(BASES)}")
    family = env_family(env_id)
    need = {"heuristic": "pistonball", "greedy": "overcooked", "oracle": "math"}.get(name)
    if need is not None and family != need:
        where = {
            "pistonball": "butterfly/pistonball-v0",
            "overcooked": "overcooked/<layout>-v0",
            "math": "tasks/gsm8k-v0 and tasks/math500-v0",
        }[need]
        raise InvalidKwargError(
            f"base team {name!r} exists only for {where}, not {env_id}; use --base {default_base(env_id)} "
            f"(the default there) or random"
        )
    return {
        "heuristic": _pistonball_heuristic,
        "greedy": _overcooked_greedy,
        "oracle": _math_oracle,
        "random": random_base_policy,
    }[name]


def _pistonball_heuristic(env: Any, agent: str, seed: int) -> Policy:
    from lang_pz.policies.scripted import PistonballHeuristic

    return PistonballHeuristic()


def _overcooked_greedy(env: Any, agent: str, seed: int) -> Policy:
    from lang_pz.policies.overcooked import overcooked_partner

    return overcooked_partner("greedy", env, agent, seed=seed)


def _math_oracle(env: Any, agent: str, seed: int) -> Policy:
    from lang_pz.policies.oracle import MathOracle

    return MathOracle(env, agent)


def random_base_policy(env: Any, agent: str, seed: int) -> Policy:
    """The generic base team: :class:`~lang_pz.policies.random.RandomPolicy` seeded per agent."""
    from lang_pz.policies.random import RandomPolicy

    return RandomPolicy(seed=seed)


def repertoire(trajectory: Trajectory) -> list[str]:
    """Every action word the team played in ``trajectory`` (parsed actions only), in order of
    first use: what a ``misplay`` fault may play."""
    return list(dict.fromkeys(shown_action(s) for s in trajectory.steps if s.parse_error is None))


def default_harmful_action(env_id: str, env: Any) -> str | Mapping[str, str] | None:
    """The ``harmful`` fault's action for ``env`` when the caller gives none, ``None`` if unknown.

    Pistonball: :data:`PISTONBALL_HARMFUL`; Overcooked: :data:`OVERCOOKED_HARMFUL_PRIMITIVE` or
    :data:`OVERCOOKED_HARMFUL_SKILL` per its ``actions`` level; math tasks:
    :data:`MATH_HARMFUL_TEXT`.
    """
    family = env_family(env_id)
    game = getattr(env, "unwrapped", env)
    if family == "pistonball":
        return PISTONBALL_HARMFUL
    if family == "overcooked":
        level = getattr(game, "action_level", "primitive")
        return OVERCOOKED_HARMFUL_SKILL if level == "macro" else OVERCOOKED_HARMFUL_PRIMITIVE
    if family == "math":
        return MATH_HARMFUL_TEXT["gsm8k" if getattr(game, "gsm8k", False) else "math"]
    return None
