"""SuperSuit's Stable-Baselines3 vector wrapper, made to accept SB3's seeding (imports SB3)."""

from __future__ import annotations

from typing import Any

from supersuit.vector.sb3_vector_wrapper import SB3VecEnvWrapper


class SeededSB3VecEnv(SB3VecEnvWrapper):
    """``SB3VecEnvWrapper`` whose ``seed(s)`` is kept for the next ``reset`` (SuperSuit 3.11
    forwards it to a gymnasium vector env that has no ``seed`` method)."""

    def __init__(self, venv: Any) -> None:
        super().__init__(venv)
        self._next_seed: int | None = None

    def seed(self, seed: int | None = None) -> list[int | None]:
        self._next_seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if seed is not None:
            self._next_seed = seed
        observations, self.reset_infos = self.venv.reset(seed=self._next_seed, options=options)
        self._next_seed = None
        return observations
