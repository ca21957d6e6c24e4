"""Read a Stable-Baselines3 ``.zip`` without unpickling anything from it.

SB3's ``load`` unpickles (cloudpickle) every entry of the zip's ``data`` JSON that it could not
store as JSON (spaces, schedules, the policy class, buffers): a model file someone hands over
would run their code. :func:`plain_objects` gives ``load(..., custom_objects=...)`` a
replacement for each such entry, rebuilt from the readable fields SB3 writes beside the pickle,
so SB3 decodes none of them; the weights (``*.pth``) SB3 reads with ``torch.load(...,
weights_only=True)``, which loads tensors only.

=========================================  ==============================================
pickled entry                              replaced by
=========================================  ==============================================
``policy_class``                           the algorithm's own policy of that class name
``observation_space``                      a ``Box`` of the stored dtype and shape whose
                                           bounds are each one value (e.g. 0 and 255)
``action_space``                           ``Discrete(n, start)``
``clip_range``, ``clip_range_vf``          the ``ConstantSchedule(val=...)`` value
training state (buffers, schedules SB3     ``None`` (SB3 rebuilds what acting needs)
rebuilds, the last observation)
anything else                              refused: :class:`~lang_pz.error.LangPZError`
=========================================  ==============================================
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from lang_pz.error import LangPZError

#: Pickled entries that only training reads; SB3's ``_setup_model`` rebuilds what acting needs.
TRAINING_STATE = frozenset(
    {
        "_last_obs",
        "_last_episode_starts",
        "_last_original_obs",
        "ep_info_buffer",
        "ep_success_buffer",
        "rollout_buffer_class",
        "replay_buffer_class",
        "lr_schedule",
        "exploration_schedule",
        "action_noise",
    }
)
_NUMBER = re.compile(r"-?inf|-?nan|-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


def _one_value(path: Path, field: str, text: str) -> float:
    values = {float(v) for v in _NUMBER.findall(str(text))}
    if len(values) != 1:
        raise LangPZError(
            f"{path}: the observation space's {field} is not one value ({str(text)[:60]!r}); lang_pz loads "
            "only SB3 models whose Box bounds are uniform (it does not unpickle the space)"
        )
    return values.pop()


def _rebuild(path: Path, key: str, item: dict[str, Any], algo_cls: Any) -> Any:
    from gymnasium import spaces

    kind = str(item.get(":type:", ""))
    if key == "policy_class":
        named = re.search(r"<function (\w+)\.__init__", str(item.get("__init__", "")))
        policies = {cls.__name__: cls for cls in algo_cls.policy_aliases.values()}
        if named and named.group(1) in policies:
            return policies[named.group(1)]
        raise LangPZError(f"{path}: a policy class that is not one of {algo_cls.__name__}'s own ({sorted(policies)})")
    if key == "observation_space" and kind.endswith("spaces.box.Box'>"):
        shape = tuple(json.loads(str(item["_shape"])))
        low, high = (_one_value(path, b, item[b]) for b in ("low", "high"))
        return spaces.Box(low, high, shape, np.dtype(str(item["dtype"])))
    if key == "action_space" and kind.endswith("spaces.discrete.Discrete'>"):
        return spaces.Discrete(int(item["n"]), start=int(item.get("start", 0)))
    if key in ("clip_range", "clip_range_vf"):
        val = re.fullmatch(r"ConstantSchedule\(val=([-0-9.e+]+)\)", str(item.get("value_schedule", "")))
        if val:
            return float(val.group(1))
    if key in TRAINING_STATE:
        return None
    raise LangPZError(
        f"{path}: its entry {key!r} ({kind or 'unknown type'}) could only be unpickled, which would run "
        "whatever code the file's author put in it; lang_pz does not load it"
    )


def plain_objects(path: str | Path, algo_cls: Any) -> dict[str, Any]:
    """A ``custom_objects`` for ``algo_cls.load(path, ...)`` replacing every pickled entry of the
    zip's ``data`` (module docstring), so that loading unpickles nothing from the file.

    Raises:
        LangPZError: the file is not an SB3 zip, or holds a pickled entry with no safe replacement.
    """
    path = Path(path)
    if not path.exists() and path.with_suffix(".zip").exists():
        path = path.with_suffix(".zip")
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise LangPZError(f"{path} is not a Stable-Baselines3 model zip ({exc})") from exc
    return {
        key: _rebuild(path, key, item, algo_cls)
        for key, item in data.items()
        if isinstance(item, dict) and ":serialized:" in item
    }
