"""The ``lang-pz`` command: list environments, play episodes, train policies, evaluate critics.

One module per group of commands; each registers its commands on the shared Typer ``app``.
"""

from __future__ import annotations

from lang_pz.cli import bench, evaluate, play, skills, train, view  # noqa: F401  (registers the commands)
from lang_pz.cli.common import app

__all__ = ["app", "main"]


def main() -> None:  # pragma: no cover - console entry
    """Run the ``lang-pz`` command line."""
    app()
