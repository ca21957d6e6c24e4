"""Overcooked-AI's planners for the macro-actions: built once per layout, pickled in the user cache.

:func:`load_planners` gives a layout's ``MediumLevelActionManager`` (overcooked_ai's standard
``NO_COUNTERS_PARAMS``: dispenser / pot / serving targets, and the greedy partner) and a
``MotionPlanner`` whose goals include every counter (counter targets), from this process's memo,
else the pickle in :func:`planner_dir`, else built and pickled there (never in site-packages).
:mod:`lang_pz.envs.overcooked.macro_actions` executes the skills with them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import platformdirs

from lang_pz.backends.cache import CACHE_DIR_ENV
from lang_pz.error import LangPZError


def planner_dir() -> Path:
    """Where planners are pickled: ``$LANG_PZ_CACHE_DIR/overcooked`` if the variable is set,
    else ``platformdirs.user_cache_dir("lang_pz")/overcooked`` (as the LLM response cache)."""
    root = os.environ.get(CACHE_DIR_ENV) or platformdirs.user_cache_dir("lang_pz")
    return Path(root).expanduser() / "overcooked"


@dataclass(frozen=True)
class Planners:
    """The planners of one layout.

    Attributes:
        mlam: ``MediumLevelActionManager`` with ``NO_COUNTERS_PARAMS``.
        counter_mp: ``MotionPlanner`` whose goals include every counter cell.
    """

    mlam: Any
    counter_mp: Any

    @property
    def mdp(self) -> Any:
        """The ``OvercookedGridworld`` the planners were built for."""
        return self.mlam.mdp


_MEMO: dict[tuple[str, str], Planners] = {}


def _key(mdp: Any, params: dict[str, Any]) -> str:
    blob = json.dumps(
        {"terrain": mdp.terrain_mtx, "start": mdp.start_player_positions, "orders": mdp.start_all_orders, "params": params},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@contextlib.contextmanager
def _planners_folder(folder: Path) -> Any:
    """Point overcooked_ai's own planner folder at ``folder`` for the duration.

    Building a ``MediumLevelActionManager`` steps an internal ``OvercookedEnv`` whose motion
    planner overcooked_ai pickles into ``overcooked_ai_py/data/planners`` (site-packages) and
    announces on stdout; both are redirected (folder) and silenced (stdout) here.
    """
    import overcooked_ai_py.data.planners as data_planners
    import overcooked_ai_py.planning.planners as planners

    folder.mkdir(parents=True, exist_ok=True)
    saved = (planners.PLANNERS_DIR, data_planners.PLANNERS_DIR)
    planners.PLANNERS_DIR = data_planners.PLANNERS_DIR = str(folder)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        planners.PLANNERS_DIR, data_planners.PLANNERS_DIR = saved


def _load_or_build(path: Path, build: Any, check: Any) -> Any:
    """The object pickled at ``path`` if ``check`` accepts it, else ``build()`` pickled there.

    A pickle that cannot be read for any reason (a corrupt file raises ``UnpicklingError``, but
    also ``TypeError``, ``KeyError``, ``OverflowError``, ... from its opcodes), or that ``check``
    refuses or fails on, is a stale cache: rebuilt, not an error.
    """
    if path.exists():
        try:
            with path.open("rb") as f:
                obj = pickle.load(f)
            if check(obj):
                return obj
        except Exception:
            pass  # stale or corrupt: rebuild below
    obj = build()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(obj, f, pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # atomic: concurrent builders never see half a file
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # left only when the dump or the rename failed
    return obj


def load_planners(mdp: Any) -> Planners:
    """The planners of ``mdp``'s layout: from this process's memo, else from the pickle in
    :func:`planner_dir`, else built (0.03-4 s per layout, 1.6 s more for Counter Circuit's
    counter planner) and pickled there. The file names carry overcooked_ai's version and NumPy's
    major version: NumPy 1 cannot unpickle NumPy 2's arrays (``numpy._core``), and NumPy 2 reads
    NumPy 1's only with a ``DeprecationWarning``, so each keeps its own.

    Args:
        mdp: an ``overcooked_ai_py.mdp.overcooked_mdp.OvercookedGridworld``.

    Raises:
        LangPZError: :func:`planner_dir` cannot be created or written (e.g. ``$LANG_PZ_CACHE_DIR``
            names a file or a read-only folder); the message names the folder and the variable.
    """
    from overcooked_ai_py.planning.planners import (
        NO_COUNTERS_PARAMS,
        MediumLevelActionManager,
        MotionPlanner,
    )

    folder = planner_dir()
    version = metadata.version("overcooked_ai")
    counters = sorted(mdp.get_counter_locations())
    memo_key = (str(folder), _key(mdp, {"v": version}))
    if memo_key in _MEMO:
        return _MEMO[memo_key]
    stem = f"{mdp.layout_name}-{version}-np{metadata.version('numpy').split('.')[0]}"
    try:
        with _planners_folder(folder / "overcooked_ai"):
            mlam = _load_or_build(
                folder / f"{stem}-mlam-{_key(mdp, NO_COUNTERS_PARAMS)}.pkl",
                lambda: MediumLevelActionManager(mdp, NO_COUNTERS_PARAMS),
                lambda m: m.params == NO_COUNTERS_PARAMS and m.mdp == mdp,
            )
            counter_mp = _load_or_build(
                folder / f"{stem}-counter-mp-{_key(mdp, {'counter_goals': counters})}.pkl",
                lambda: MotionPlanner(mdp, counter_goals=counters),
                lambda m: sorted(m.counter_goals) == counters and m.mdp == mdp,
            )
    except OSError as exc:
        raise LangPZError(
            f"cannot keep Overcooked planners in {folder} ({exc.strerror or exc}: {exc.filename}); "
            f"set {CACHE_DIR_ENV} to a writable folder (now {os.environ.get(CACHE_DIR_ENV)!r})"
        ) from exc
    out = Planners(mlam=mlam, counter_mp=counter_mp)
    _MEMO[memo_key] = out
    return out
