"""Weights & Biases (``pip install 'lang_pz[wandb]'``). In ``offline`` mode nothing leaves the
machine: the run is written under ``DIR/wandb/offline-run-*`` and can be uploaded later with
``wandb sync``; ``online`` mode needs ``WANDB_API_KEY`` in the environment (never on disk)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from lang_pz.error import DependencyNotInstalled
from lang_pz.trackers.base import Tracker


class WandbTracker(Tracker):
    """A W&B run: scalars against their own x axis (``define_metric``), texts as one-cell tables,
    the configuration as the run's config.

    Args:
        mode: ``offline`` or ``online``.
        directory: where W&B writes its ``wandb/`` folder (default: the current folder).
        config: the run's configuration.
        project: the W&B project name.

    Raises:
        DependencyNotInstalled: wandb is not installed.
        ValueError: another mode.
    """

    def __init__(
        self,
        mode: str = "offline",
        directory: str | Path | None = None,
        config: Mapping[str, Any] | None = None,
        project: str = "lang_pz",
    ) -> None:
        super().__init__(config)
        if mode not in ("offline", "online"):
            raise ValueError(f"--log wandb:{mode}: the mode is offline or online, e.g. --log wandb:offline")
        try:
            import wandb
        except ImportError as exc:
            raise DependencyNotInstalled("--log wandb:MODE needs wandb: pip install 'lang_pz[wandb]'") from exc
        self.wandb = wandb
        if directory is not None:
            Path(directory).mkdir(parents=True, exist_ok=True)
        wandb_mode: Literal["offline", "online"] = "offline" if mode == "offline" else "online"
        self.run = wandb.init(
            project=project,
            mode=wandb_mode,
            dir=None if directory is None else str(directory),
            config=self.config,
            reinit="create_new",
        )
        self.axes: set[str] = set()

    def _axis(self, axis: str, keys: list[str]) -> None:
        if axis not in self.axes:
            self.run.define_metric(axis)
            self.axes.add(axis)
        for key in keys:
            self.run.define_metric(key, step_metric=axis)

    def scalars(self, axis: str, step: int, values: Mapping[str, float]) -> None:
        self._axis(axis, list(values))
        self.run.log({axis: step, **values})

    def text(self, axis: str, step: int, tag: str, text: str) -> None:
        self._axis(axis, [tag])
        self.run.log({axis: step, tag: self.wandb.Table(columns=[axis, "text"], data=[[step, text]])})

    def close(self) -> None:
        """Finish the run. W&B's service process writes the run's files on its own: they are complete
        at process exit, or once ``wandb.teardown()`` returns."""
        self.run.finish()
