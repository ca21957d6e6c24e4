"""TensorBoard event files through tensorboardX (``pip install 'lang_pz[tensorboard]'``): no
TensorFlow or PyTorch needed. Open them with ``tensorboard --logdir DIR``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lang_pz.error import DependencyNotInstalled
from lang_pz.trackers.base import Tracker, config_text


class TensorBoardTracker(Tracker):
    """Scalars and texts (policies as text, the config under ``config``) in ``log_dir``'s event file.

    Each x axis (``episode``, ``iteration``, ``seed``) is TensorBoard's step of its own tags.

    Args:
        log_dir: the folder of the event file (created).
        config: the run's configuration, logged once as JSON text.

    Raises:
        DependencyNotInstalled: tensorboardX is not installed.
    """

    def __init__(self, log_dir: str | Path, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        try:
            from tensorboardX import SummaryWriter
        except ImportError as exc:
            raise DependencyNotInstalled(
                "--log tensorboard:DIR needs tensorboardX: pip install 'lang_pz[tensorboard]'"
            ) from exc
        self.writer = SummaryWriter(logdir=str(log_dir), flush_secs=5)
        if self.config:
            self.writer.add_text("config", config_text(self.config), 0)

    def scalars(self, axis: str, step: int, values: Mapping[str, float]) -> None:
        for tag, value in values.items():
            self.writer.add_scalar(tag, value, step)

    def text(self, axis: str, step: int, tag: str, text: str) -> None:
        self.writer.add_text(tag, text, step)

    def close(self) -> None:
        self.writer.close()
