"""Bench configs: a YAML file (or the CLI's flags) -> :class:`lang_pz.bench.EnvCase` list.

::

    backend: embedded                 # optional; the CLI's --backend wins
    envs:
      - id: butterfly/pistonball-v0
        kwargs: {n_pistons: 5, hold: 5}
        objective: team_return        # optional: the env's default (lang_pz.objectives)
        seeds: 1000-1009              # "A-B" (inclusive), a list, or one int
        teams:                        # name: team spec (lang_pz.bench.teams)
          random: random
          heuristic: heuristic
          llm + heuristic: "piston_0=llm;*=heuristic"
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from lang_pz.bench.runner import EnvCase
from lang_pz.bench.teams import parse_team
from lang_pz.error import InvalidKwargError


def parse_seeds(value: Any) -> list[int]:
    """Seeds from ``"A-B"`` (inclusive), ``"1,2,5"``, a list of ints or one int.

    Raises:
        InvalidKwargError: anything else, no seed, a negative seed, or a descending range.
    """
    seeds = _seeds(value)
    if not seeds:
        raise InvalidKwargError(f"seeds {value!r} name no seed; give 'A-B' (inclusive) or 'a,b,c', e.g. 0-4")
    negative = [s for s in seeds if s < 0]
    if negative:
        raise InvalidKwargError(f"seeds {negative} are negative; episode seeds are non-negative integers, e.g. 0-4")
    return seeds


def _seeds(value: Any) -> list[int]:
    if isinstance(value, bool):
        raise InvalidKwargError(f"seeds must be ints or 'A-B', got {value!r}")
    if isinstance(value, int):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(s, int) and not isinstance(s, bool) for s in value):
        return list(value)
    if isinstance(value, str):
        text = value.strip()
        a, sep, b = text.partition("-")
        try:
            if sep and a.strip():
                lo, hi = int(a), int(b)
                if hi < lo:
                    raise InvalidKwargError(f"seed range {text!r} is descending; write LOW-HIGH")
                return list(range(lo, hi + 1))
            return [int(s) for s in text.split(",") if s.strip()]
        except ValueError:
            pass
    raise InvalidKwargError(f"seeds must be 'A-B', 'a,b,c', a list of ints or an int; got {value!r}")


def case_from_dict(d: Mapping[str, Any], data_dir: str | None = None) -> EnvCase:
    """One :class:`EnvCase` from a config entry; ``data_dir`` is added to the kwargs of envs
    whose constructor takes one (the task envs).

    Raises:
        InvalidKwargError: a missing ``id``/``seeds``/``teams`` or an unknown key (named).
    """
    allowed = {"id", "kwargs", "objective", "seeds", "teams", "label", "api"}
    unknown = set(d) - allowed
    if unknown:
        raise InvalidKwargError(f"unknown key(s) {sorted(unknown)} in a bench env entry; valid: {sorted(allowed)}")
    for key in ("id", "seeds", "teams"):
        if key not in d:
            raise InvalidKwargError(f"bench env entry {dict(d)!r} has no {key!r}")
    teams = d["teams"]
    if not isinstance(teams, Mapping) or not teams:
        raise InvalidKwargError(f"teams of {d['id']} must be a mapping name -> team spec, got {teams!r}")
    kwargs = dict(d.get("kwargs") or {})
    if data_dir is not None and "data_dir" not in kwargs:
        from lang_pz.registration import kwargs_of

        if "data_dir" in kwargs_of(d["id"]):
            kwargs["data_dir"] = data_dir
    return EnvCase(
        env_id=d["id"],
        teams=[parse_team(str(spec), str(name)) for name, spec in teams.items()],
        seeds=parse_seeds(d["seeds"]),
        kwargs=kwargs,
        objective=d.get("objective"),
        label=d.get("label"),
        api=d.get("api"),
    )


def load_config(path: str | Path, data_dir: str | None = None) -> tuple[list[EnvCase], dict[str, Any]]:
    """The cases of a YAML bench config and its other top-level settings (e.g. ``backend``).

    Raises:
        InvalidKwargError: not a mapping with a non-empty ``envs`` list.
        FileNotFoundError: no file at ``path``.
    """
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(raw, Mapping) or not isinstance(raw.get("envs"), list) or not raw["envs"]:
        raise InvalidKwargError(f"{path}: a bench config is a mapping with a non-empty 'envs' list")
    settings = {k: v for k, v in raw.items() if k != "envs"}
    return [case_from_dict(e, data_dir) for e in raw["envs"]], settings
