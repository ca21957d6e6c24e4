"""A scripted MPE team that reads the same text as an LLM: the baseline of the ``mpe/*`` envs.

From each agent's own observation text only (:mod:`lang_pz.envs.mpe.adapter`):

* simple_spread: go to the nearest landmark marked ``free`` (no teammate is closer to it),
  else the nearest landmark; stay once within 0.05 of it;
* simple_speaker_listener: the speaker says the goal colour; the listener goes to the landmark
  the speaker named (stays while nothing was said);
* simple_reference: say the colour the other agent must reach, and go to the colour it named.

Moves: the larger of the two distances decides (discrete ``left``/``right``/``down``/``up``); in
continuous mode both axes are pushed in proportion (full push from 0.5 away).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lang_pz.error import LangPZError
from lang_pz.policies.base import (
    Decision,
    Policy,
    action_components,
    legal_actions,
    observation_text,
)

_LANDMARK = re.compile(
    r"^\s*(?:landmark (\d+)|(\w+) landmark): ([\d.]+) (left|right), ([\d.]+) (up|down) "
    r"\(distance ([\d.]+)\)(; free)?",
    flags=re.MULTILINE,
)
_GOAL = re.compile(r"must reach the (\w+) landmark(?:; it does not know|, which only you know)")
_HEARD = re.compile(r"says: (\w+)")
#: Within this distance of its landmark an agent stays.
ARRIVED = 0.05


def _landmarks(text: str) -> list[tuple[str, float, float, float, bool]]:
    """``(name, dx, dy, distance, free)`` of every landmark line of the text."""
    out = []
    for number, colour, ax, xdir, ay, ydir, dist, free in _LANDMARK.findall(text):
        dx = float(ax) * (1 if xdir == "right" else -1)
        dy = float(ay) * (1 if ydir == "up" else -1)
        out.append((number or colour, dx, dy, float(dist), bool(free)))
    return out


def _move(dx: float, dy: float, continuous: bool) -> str:
    """The move towards ``(dx, dy)``: a word, or components."""
    if abs(dx) < ARRIVED and abs(dy) < ARRIVED:
        return "stay" if not continuous else "none=0"
    if not continuous:
        return ("right" if dx > 0 else "left") if abs(dx) >= abs(dy) else ("up" if dy > 0 else "down")
    parts = [
        f"{'right' if dx > 0 else 'left'}={min(1.0, abs(dx) * 2):.2f}",
        f"{'up' if dy > 0 else 'down'}={min(1.0, abs(dy) * 2):.2f}",
    ]
    return " ".join(parts)


class MPEScriptedPolicy(Policy):
    """The scripted MPE team member (module docstring); one instance serves any agent.

    Raises:
        LangPZError: from :meth:`decide`, for text that is not an ``mpe/*`` observation.
    """

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        text = observation_text(observation)
        continuous = legal_actions(info) is None and action_components(info) is not None
        lms = _landmarks(text)
        goal = _GOAL.search(text)
        heard = _HEARD.search(text)
        if "(simple_spread)" in text:
            if not lms:
                raise LangPZError(f"no landmark lines in a simple_spread text: {text[:120]!r}")
            free = [lm for lm in lms if lm[4]] or lms
            _, dx, dy, _, _ = min(free, key=lambda lm: lm[3])
            action = _move(dx, dy, continuous)
        elif "(simple_speaker_listener)" in text:
            if goal is not None:  # the speaker
                action = f"{goal.group(1)}=1" if continuous else goal.group(1)
            else:
                target = next((lm for lm in lms if heard and lm[0] == heard.group(1)), None)
                action = _move(target[1], target[2], continuous) if target else ("none=0" if continuous else "stay")
        elif "(simple_reference)" in text and goal is not None:
            target = next((lm for lm in lms if heard and lm[0] == heard.group(1)), None)
            move = _move(target[1], target[2], continuous) if target else ("none=0" if continuous else "stay")
            action = f"{move} say_{goal.group(1)}=1" if continuous else f"{move} and say {goal.group(1)}"
        else:
            raise LangPZError(
                f"not an MPE observation of lang_pz's mpe/* envs: {text[:120]!r}; "
                "MPEScriptedPolicy plays mpe/simple_spread, simple_speaker_listener, simple_reference"
            )
        return Decision(action=action, raw_output=action)
