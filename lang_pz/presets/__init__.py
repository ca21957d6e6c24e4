"""The papers' setups as configs: ``lang-pz train --preset NAME --backend openai:MODEL``.

Each preset is a YAML file of :class:`~lang_pz.training.config.TrainConfig` fields in this
package (one setup a file, its header says which settings are the setup's and which are lang_pz
defaults). LangMARL: HotpotQA, MATH-500 and HumanEval as agent teams, the five Overcooked-AI
layouts, Pistonball with 10, 12, 16 and 20 pistons; MASkills: HotpotQA, and skill transfer
(GSM8K -> MATH-500, with ``lang-pz skills eval``).

Held-out splits come with the run: task envs and Overcooked play each phase's own items or start
states (:mod:`lang_pz.training.phases`). Task data is read from ``$LANG_PZ_DATA_DIR``
(:func:`lang_pz.tasks.datasets.load_items`).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from lang_pz.configfile import load_yaml
from lang_pz.error import InvalidKwargError

__all__ = ["load_preset", "preset_names", "preset_path"]

_HERE = Path(__file__).parent


def preset_names() -> list[str]:
    """The presets' names, sorted."""
    return sorted(p.stem for p in _HERE.glob("*.yaml"))


def preset_path(name: str) -> Path:
    """The YAML file of preset ``name`` (copy it to change more than ``--set`` does).

    Raises:
        InvalidKwargError: no preset has that name (the message suggests the closest and lists all).
    """
    path = _HERE / f"{name}.yaml"
    if not isinstance(name, str) or "/" in name or not path.is_file():
        close = difflib.get_close_matches(str(name), preset_names(), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InvalidKwargError(f"unknown preset {name!r}; {hint}presets: {', '.join(preset_names())}")
    return path


def load_preset(name: str) -> dict[str, Any]:
    """Preset ``name``'s settings (a dict of TrainConfig fields).

    Raises:
        InvalidKwargError: an unknown name.
    """
    loaded = load_yaml(preset_path(name))
    assert isinstance(loaded, dict), f"preset {name} is not a mapping"
    return loaded
