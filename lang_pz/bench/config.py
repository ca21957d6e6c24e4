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

import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lang_pz.bench.runner import EnvCase
from lang_pz.bench.teams import parse_team
from lang_pz.configfile import ConfigFileError, load_yaml, where
from lang_pz.error import InvalidKwargError

#: The keys of a bench config and of one of its env entries.
TOP_LEVEL_KEYS: tuple[str, ...] = ("envs", "backend")
ENTRY_KEYS: tuple[str, ...] = ("id", "kwargs", "objective", "seeds", "teams", "label", "api")


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
    allowed = set(ENTRY_KEYS)
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
    """The cases of a YAML bench config and its other top-level settings (``backend``).

    Raises:
        ConfigFileError: (an ``InvalidKwargError`` and a ``ValueError``) no file at ``path``, malformed YAML (``FILE:LINE:COLUMN``), not a
            mapping with a non-empty ``envs`` list, an unknown key (``FILE:LINE`` of it, with a
            did-you-mean), or an invalid env entry (``FILE:LINE`` of the entry and why).
    """
    raw = load_yaml(path)
    if not isinstance(raw, Mapping) or not isinstance(raw.get("envs"), list) or not raw["envs"]:
        raise ConfigFileError(f"{path}: a bench config is a mapping with a non-empty 'envs' list")
    unknown = [k for k in raw if k not in TOP_LEVEL_KEYS]
    if unknown:
        raise ConfigFileError(
            f"{where(path, unknown[0])}: unknown key {unknown[0]!r} in a bench config{_close(unknown[0], TOP_LEVEL_KEYS)}; "
            f"valid: {list(TOP_LEVEL_KEYS)}"
        )
    cases = []
    for i, entry in enumerate(raw["envs"]):
        bad = [k for k in entry if k not in ENTRY_KEYS] if isinstance(entry, Mapping) else []
        if bad:
            raise ConfigFileError(
                f"{where(path, 'envs', i, bad[0])}: unknown key {bad[0]!r} in a bench env entry"
                f"{_close(bad[0], ENTRY_KEYS)}; valid: {sorted(ENTRY_KEYS)}"
            )
        try:
            cases.append(case_from_dict(entry, data_dir))
        except InvalidKwargError as exc:
            raise ConfigFileError(f"{where(path, 'envs', i)}: {exc}") from None
    return cases, {k: v for k, v in raw.items() if k != "envs"}


def _close(key: object, valid: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(key), list(valid), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
