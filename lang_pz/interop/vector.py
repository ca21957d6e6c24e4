"""Gymnasium's vector utilities on Text spaces, and SuperSuit vector envs of language envs.

Gymnasium 1.4 dispatches its vector utilities on the space type (``functools.singledispatch``).
For ``Text`` two of them are wrong for language envs:

- ``iterate`` has no ``Text`` implementation: SuperSuit's ``pettingzoo_env_to_vec_env_v1`` and
  ``concat_vec_envs_v1`` fail ("Space of type Text doesn't have an registered iterate
  function"): SuperSuit iterates a batch with the *single* space, ``iterate(Text, (str, ...))``.
  :func:`register_text_spaces` registers one (a batch of Text values is a tuple of str). Gymnasium's
  own vector envs iterate with the *batched* space, ``Tuple(Text, ..., Text)``, whose rule changes
  once Text has an ``iterate`` (it would iterate every str); so the ``Tuple`` rule is kept as it
  was for tuples of Text (``iter(items)``) and delegated to gymnasium's for every other tuple.
- ``create_shared_memory`` / ``read_from_shared_memory`` for ``Text`` read the shared buffer
  once, into a tuple of str, so ``AsyncVectorEnv(..., shared_memory=True)`` (its default)
  returns the initial '000...' for every text observation forever. :func:`register_text_spaces`
  makes ``create_shared_memory`` refuse Text spaces with gymnasium's ``CustomSpaceError`` naming
  the fix for each caller: ``AsyncVectorEnv`` (which turns it into a ``ValueError``) works with
  ``shared_memory=False``; SuperSuit's ``concat_vec_envs_v1`` (its worker processes,
  ``num_cpus >= 2``, copy observations through shared memory and have no such option) works in
  process (``num_cpus`` 0 or 1) or on encoded observations (:func:`lang_pz.interop.to_vector_env`)
  with any ``num_cpus`` (both measured).

By default both are registered for ``gymnasium.spaces.Text`` itself (every Text space: gymnasium's
shared memory is wrong for all of them). Pass ``space_type=`` a ``Text`` subclass to limit them to it.
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces
from gymnasium.error import CustomSpaceError
from gymnasium.vector.utils import create_shared_memory, iterate

from lang_pz.error import DependencyNotInstalled

#: The message of the shared-memory refusal (the fixes come first, one per caller that uses shared memory).
SHARED_MEMORY_FIX = (
    "Text observations cannot go through shared memory: with gymnasium.vector.AsyncVectorEnv "
    "pass shared_memory=False; with SuperSuit's concat_vec_envs_v1 use num_cpus=0 or 1 (in "
    "process), or encode the observations first (lang_pz.interop.to_vector_env), which works "
    "with any num_cpus. (gymnasium's shared memory for Text reads the buffer once and would "
    "return the first text, '000...', for every observation)"
)


def _iterate_text(space: spaces.Text, items: Any):
    if isinstance(items, str):
        raise TypeError(f"a batch of Text values is a tuple of str, got one str {items[:40]!r}")
    return iter(items)


def _iterate_tuple_of_text(space: spaces.Tuple, items: Any):  # type: ignore[misc]  # mypy's singledispatch plugin: Tuple is a Space
    # A batched Text space is Tuple(Text, ..., Text) (gymnasium's batch_space). Once Text has an
    # iterate, gymnasium's Tuple rule would iterate each str as a batch; keep iter(items) for it,
    # which is what gymnasium does for a Text without one.
    if space.spaces and all(isinstance(s, spaces.Text) for s in space.spaces):
        return iter(items)
    return _GYMNASIUM_ITERATE_TUPLE(space, items)


_GYMNASIUM_ITERATE_TUPLE = iterate.dispatch(spaces.Tuple)


def _refuse_shared_memory(space: spaces.Text, n: int = 1, ctx: Any = None) -> Any:
    raise CustomSpaceError(f"Text(max_length={space.max_length}) observations: {SHARED_MEMORY_FIX}")


def register_text_spaces(space_type: type[spaces.Text] = spaces.Text) -> None:
    """Register ``iterate`` for ``space_type`` and make its shared memory fail loudly (see the
    module docstring). Idempotent; affects this process (the vector env's parent) only.

    Raises:
        TypeError: ``space_type`` is not ``gymnasium.spaces.Text`` or a subclass.
    """
    if not (isinstance(space_type, type) and issubclass(space_type, spaces.Text)):
        raise TypeError(f"space_type must be gymnasium.spaces.Text or a subclass, got {space_type!r}")
    iterate.register(space_type)(_iterate_text)
    if iterate.dispatch(spaces.Tuple) is not _iterate_tuple_of_text:
        iterate.register(spaces.Tuple)(_iterate_tuple_of_text)
    create_shared_memory.register(space_type)(_refuse_shared_memory)


def sb3_vec_env(env: Any, n_envs: int = 1, *, num_cpus: int = 0) -> Any:
    """A Stable-Baselines3 ``VecEnv`` over every agent of a PettingZoo ``ParallelEnv`` (parameter
    sharing: each agent is one sub-env), via SuperSuit's ``pettingzoo_env_to_vec_env_v1`` and
    ``concat_vec_envs_v1(base_class="stable_baselines3")``.

    Args:
        env: a ParallelEnv with numeric spaces (e.g. :func:`lang_pz.interop.to_vector_env`), or a
            raw PettingZoo env; all agents must share spaces.
        n_envs: copies of ``env`` (each has ``len(possible_agents)`` sub-envs).
        num_cpus: worker processes (0: in process). SuperSuit's workers copy observations
            through shared memory: vector observations (:func:`lang_pz.interop.to_vector_env`)
            work with any ``num_cpus``, text observations need 0 or 1.

    Unlike SuperSuit's own ``base_class="stable_baselines3"`` wrapper, the result accepts SB3's
    seeding (``PPO(..., seed=s)`` calls ``env.seed(s)``, which SuperSuit 3.11 turns into an
    AttributeError) and passes the seed to the next reset (sub-env ``i`` gets ``s + i``).

    Raises:
        DependencyNotInstalled: ``stable-baselines3`` is missing (``pip install 'lang_pz[sb3]'``).
    """
    try:
        import stable_baselines3  # noqa: F401
    except ImportError as exc:
        raise DependencyNotInstalled(
            "sb3_vec_env needs stable-baselines3: pip install 'lang_pz[sb3]' (pins torch==2.13.0, the CPU build)"
        ) from exc
    import supersuit as ss

    from lang_pz.interop._sb3 import SeededSB3VecEnv

    register_text_spaces()
    vec = ss.concat_vec_envs_v1(ss.pettingzoo_env_to_vec_env_v1(env), n_envs, num_cpus=num_cpus)
    return SeededSB3VecEnv(vec)
