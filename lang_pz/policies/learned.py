"""Learned RL policies inside lang_pz rollouts: trained weights of an existing library, acting from
the raw observation underneath the text, next to LLM agents.

:class:`SB3Policy` wraps a Stable-Baselines3 model trained by ``benchmarks/train_sb3_pistonball.py``:
PPO ``MlpPolicy`` on the observation text through :func:`lang_pz.interop.to_vector_env`
(``observation="text"``: it reads what an LLM reads, encoded as in training), or PPO ``CnnPolicy``
on the raw ``pistonball_v6`` pixels (``observation="raw"``, the default). The raw form opts in with
:attr:`~lang_pz.policies.base.Policy.reads_raw_observation` (every step it plays is recorded with
``meta["raw_observation"] = True``) and applies to ``info["raw_observation"]`` exactly the
preprocessing of training: :class:`SuperSuitPixels` is both the SuperSuit wrapper chain of the
training script (:meth:`SuperSuitPixels.wrap`) and the same transforms, by the same SuperSuit
functions, on one agent's observation (:meth:`SuperSuitPixels.frame`), with the frame stack kept per
episode by the policy.

It acts greedily (``deterministic=True``: the most probable action), so the same episode seed gives
the same episode.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from lang_pz.error import DependencyNotInstalled, LangPZError
from lang_pz.policies.base import Decision, Policy, legal_actions


class SuperSuitPixels:
    """SuperSuit's pixel preprocessing: ``color_reduction_v0(mode)``, ``resize_v1(size, size)``
    (bilinear) and ``frame_stack_v1(stack)``, as an env wrapper chain and per observation.

    Args:
        size: side of the resized square image, in pixels.
        color: ``"R"``, ``"G"``, ``"B"`` (one channel) or ``"full"`` (grey).
        stack: frames stacked on the last axis (1: no stacking).

    Raises:
        LangPZError: a size or stack < 1, or an unknown colour mode.
    """

    def __init__(self, size: int = 42, color: str = "B", stack: int = 3) -> None:
        if size < 1 or stack < 1:
            raise LangPZError(f"size and stack must be >= 1, got size={size}, stack={stack}")
        if color not in ("R", "G", "B", "full"):
            raise LangPZError(f"color must be 'R', 'G', 'B' or 'full', got {color!r}")
        self.size, self.color, self.stack = size, color, stack

    def __repr__(self) -> str:
        return f"SuperSuitPixels(size={self.size}, color={self.color!r}, stack={self.stack})"

    def wrap(self, env: Any) -> Any:
        """The training env: ``env`` (a PettingZoo env with RGB image observations) through the
        SuperSuit wrappers."""
        import supersuit as ss

        env = ss.color_reduction_v0(env, mode=self.color)
        env = ss.resize_v1(env, x_size=self.size, y_size=self.size)
        return ss.frame_stack_v1(env, self.stack) if self.stack > 1 else env

    def frame(self, raw: np.ndarray) -> np.ndarray:
        """One raw RGB observation (H x W x 3, uint8), colour-reduced and resized: (size, size)."""
        from supersuit.utils.basic_transforms import color_reduction, resize

        raw = np.asarray(raw)
        if raw.ndim != 3 or raw.shape[2] != 3:
            raise LangPZError(
                f"SuperSuitPixels needs an RGB image (H, W, 3), got shape {raw.shape}; "
                "is this the raw observation of an image env such as pistonball_v6?"
            )
        rgb_space = spaces.Box(0, 255, raw.shape, np.uint8)
        grey = color_reduction.change_observation(raw, rgb_space, self.color)
        grey_space = spaces.Box(0, 255, grey.shape, np.uint8)
        return resize.change_observation(grey, grey_space, (self.size, self.size, True))

    def start(self) -> np.ndarray | None:
        """An empty frame stack (zeros, as ``frame_stack_v1`` starts an episode); ``None`` if stack is 1."""
        from supersuit.utils.frame_stack import stack_init

        if self.stack == 1:
            return None
        return stack_init(spaces.Box(0, 255, (self.size, self.size), np.uint8), self.stack)

    def push(self, stack: np.ndarray | None, raw: np.ndarray) -> np.ndarray:
        """The model input after seeing ``raw``: the stack with the new frame last (or the frame)."""
        from supersuit.utils.frame_stack import stack_obs

        frame = self.frame(raw)
        if stack is None:
            return frame
        return stack_obs(stack, frame, spaces.Box(0, 255, frame.shape, np.uint8), self.stack)


class SB3Policy(Policy):
    """A Stable-Baselines3 model acting from ``info["raw_observation"]`` (or from the text).

    Args:
        model: a loaded SB3 model (anything with ``predict(obs, deterministic=True)`` and a
            ``Discrete`` ``action_space``).
        preprocess: turns the raw observation into the model's input; :class:`SuperSuitPixels`
            (stateful per episode: its frame stack) or any callable ``raw -> np.ndarray``. With
            ``observation="text"``: the text encoder of training (e.g.
            :class:`lang_pz.interop.HashedBagOfWords`), applied to the observation text.
        observation: ``"raw"`` (opts in to the raw observation) or ``"text"`` (a model trained
            through :func:`lang_pz.interop.to_vector_env` on the same text an LLM reads; no opt-in).
        actions: the action words in the model's index order (default: ``info["legal_actions"]``,
            which lists the words of a Discrete action space in index order; it must have as many
            words as the model has actions).

    Raises:
        LangPZError: from :meth:`decide`, when ``info`` carries no raw observation (the policy was
            not run by :func:`lang_pz.rollout.rollout` or an env without one), or the action
            words do not match the model's action count.
    """

    reads_raw_observation = True

    def __init__(
        self, model: Any, preprocess: SuperSuitPixels | Any, actions: Sequence[str] | None = None, observation: str = "raw"
    ) -> None:
        if observation not in ("raw", "text"):
            raise LangPZError(f"observation must be 'raw' or 'text', got {observation!r}")
        self.observation = observation
        self.reads_raw_observation = observation == "raw"
        if not isinstance(getattr(model, "action_space", None), spaces.Discrete):
            raise LangPZError(
                f"SB3Policy needs a model with a Discrete action space, got {getattr(model, 'action_space', None)}"
            )
        self.model = model
        self.preprocess = preprocess
        self.actions = list(actions) if actions is not None else None
        self._stack: np.ndarray | None = None

    @classmethod
    def load(
        cls,
        path: str | Path,
        preprocess: SuperSuitPixels | Any,
        actions: Sequence[str] | None = None,
        algo: str = "PPO",
        observation: str = "raw",
    ) -> SB3Policy:
        """Load weights saved by ``model.save(path)`` (a ``.zip``) with SB3's ``algo`` class,
        unpickling nothing from the file (:mod:`lang_pz.policies.sb3_zip`): a model someone
        hands over cannot run code.

        Raises:
            DependencyNotInstalled: stable-baselines3 is missing (``pip install 'lang_pz[sb3]'``).
            FileNotFoundError: no file at ``path``.
            LangPZError: an unknown ``algo``, or the zip holds an entry that only unpickling could read.
        """
        try:
            import stable_baselines3
        except ImportError as exc:
            raise DependencyNotInstalled("SB3Policy needs stable-baselines3: pip install 'lang_pz[sb3]'") from exc
        p = Path(path)
        if not p.exists() and not p.with_suffix(".zip").exists():
            raise FileNotFoundError(f"no SB3 model at {p}; train one with benchmarks/train_sb3_pistonball.py --out {p}")
        algo_cls = getattr(stable_baselines3, algo, None)
        if algo_cls is None:
            raise LangPZError(f"stable_baselines3 has no algorithm {algo!r}; e.g. 'PPO', 'A2C', 'DQN'")
        from lang_pz.policies.sb3_zip import plain_objects

        model = algo_cls.load(str(p), device="cpu", custom_objects=plain_objects(p, algo_cls))
        return cls(model, preprocess, actions, observation)

    def reset(self, seed: int | None = None) -> None:
        """A new episode: empty the frame stack (the policy is deterministic; ``seed`` is unused)."""
        self._stack = self.preprocess.start() if isinstance(self.preprocess, SuperSuitPixels) else None

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        t0 = time.perf_counter()
        if self.observation == "text":
            from lang_pz.policies.base import observation_text

            if isinstance(self.preprocess, SuperSuitPixels):
                raise LangPZError(
                    "SB3Policy(observation='text') needs the text encoder of training as "
                    "preprocess (e.g. lang_pz.interop.HashedBagOfWords), not SuperSuitPixels"
                )
            return self._act(np.asarray(self.preprocess(observation_text(observation))), info, t0)
        if not info or "raw_observation" not in info:
            raise LangPZError(
                "SB3Policy reads info['raw_observation'] (reads_raw_observation=True): run it "
                "with lang_pz.rollout.rollout on a lang_pz env, or pass the raw observation in info"
            )
        raw = info["raw_observation"]
        if isinstance(self.preprocess, SuperSuitPixels):
            if self._stack is None and self.preprocess.stack > 1:
                self._stack = self.preprocess.start()
            x = self.preprocess.push(self._stack, raw)
            self._stack = x if self.preprocess.stack > 1 else None
            x = x.copy()
        else:
            x = np.asarray(self.preprocess(raw))
        return self._act(x, info, t0)

    def _act(self, x: np.ndarray, info: Mapping[str, Any] | None, t0: float) -> Decision:
        index, _ = self.model.predict(x, deterministic=True)
        index = int(np.asarray(index).reshape(-1)[0])
        words = self.actions if self.actions is not None else legal_actions(info)
        n = int(self.model.action_space.n)
        if words is None or len(words) != n:
            raise LangPZError(
                f"the model has {n} actions but the action words are {words}; pass actions=[...] in the model's index order"
            )
        word = words[index]
        return Decision(
            action=word, raw_output=str(index), latency_s=time.perf_counter() - t0, meta={"learned_action_index": index}
        )
