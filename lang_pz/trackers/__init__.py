"""Send what a run measures to the experiment trackers people use: TensorBoard, W&B, MLflow.

Each tracker is a :class:`~lang_pz.training.Callback` (:class:`Tracker`, what is logged is listed in
:mod:`lang_pz.trackers.base`) and an optional extra, imported only when used. Build them from
``--log`` specs with :func:`make_tracker` / :func:`open_trackers`::

    tensorboard:DIR          event files in DIR (tensorboardX)
    wandb:offline[:DIR]      a W&B run written under DIR/wandb (no network); wandb:online uploads
    mlflow:DIR               an MLflow run in the file store DIR (no network)
    mlflow:URI               an MLflow run on a tracking server (http(s)://...) or database URI
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.trackers.base import Tracker, Trackers

FORMS = "tensorboard:DIR, wandb:offline[:DIR], wandb:online[:DIR], mlflow:DIR or mlflow:URI"


def make_tracker(spec: str, config: Mapping[str, Any] | None = None) -> Tracker:
    """The tracker a ``--log`` spec names (forms: :data:`FORMS`).

    Raises:
        ValueError: an unknown or malformed spec (the message lists the forms).
        lang_pz.error.DependencyNotInstalled: the tracker's package is missing (names the extra).
    """
    kind, _, rest = spec.partition(":")
    if kind == "tensorboard" and rest:
        from lang_pz.trackers.tensorboard import TensorBoardTracker

        return TensorBoardTracker(rest, config)
    if kind == "wandb" and rest:
        from lang_pz.trackers.wandb import WandbTracker

        mode, _, directory = rest.partition(":")
        return WandbTracker(mode, directory or None, config)
    if kind == "mlflow" and rest:
        from lang_pz.trackers.mlflow import MlflowTracker

        return MlflowTracker(rest, config)
    raise ValueError(f"--log {spec!r} is not a tracker; give {FORMS}")


def open_trackers(specs: Sequence[str], config: Mapping[str, Any] | None = None) -> Trackers:
    """The trackers of ``specs`` together (use as a context manager: they are closed on exit; a
    failure to build one closes those already built).

    Raises:
        ValueError / lang_pz.error.DependencyNotInstalled: as :func:`make_tracker`.
    """
    built: list[Tracker] = []
    try:
        for spec in specs:
            built.append(make_tracker(spec, config))
    except BaseException:
        for t in built:
            t.close()
        raise
    return Trackers(built)


__all__ = ["Tracker", "Trackers", "make_tracker", "open_trackers"]
