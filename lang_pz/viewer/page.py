"""Write a viewable folder as static files: a page that works offline, opened from disk or served.

Layout of the output folder (``OUT``)::

    OUT/index.html                 the page (loads the two files below and data/view.js)
    OUT/viewer.js, OUT/viewer.css  the hand-written viewer (no framework, no CDN, no build step)
    OUT/data/view.js               everything but the episodes' steps: ``LPZ.view({...})``
    OUT/data/episodes/ID.js        one episode (its steps, credits, re-runs): ``LPZ.episode("ID", {...})``

Data files are JavaScript, not JSON, because a page opened from ``file://`` cannot ``fetch()``
a neighbouring file but can load it with a ``<script src>`` tag: the page adds one episode's
script when it is first shown, so a run of many long episodes opens as fast as a small one.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

from lang_pz.error import RunDirError
from lang_pz.viewer.safety import ViewFolder, check_out, check_source
from lang_pz.viewer.source import kind_of

STATIC = ("viewer.js", "viewer.css", "index.html")


def _clean(x: Any) -> Any:
    """``x`` with NaN and infinities as ``None`` (JSON has no NaN)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def _script(call: str, *args: Any) -> str:
    """A data file: one call of the page's loader with JSON arguments (valid JavaScript)."""
    body = ", ".join(json.dumps(_clean(a), ensure_ascii=False, separators=(",", ":")) for a in args)
    return f"{call}({body});\n"


def write_view(source: str | Path, out: str | Path | None = None) -> Path:
    """Write the page of a run, bench or eval-critic folder (:func:`lang_pz.viewer.source.kind_of`).

    Args:
        source: the folder to view (it may still be being written: what is there is shown).
        out: the output folder (default: ``SOURCE/view``): new, empty, or an earlier view's (its
            ``data/`` is replaced).

    Returns:
        The path of ``index.html``.

    Safe on a folder from someone else (:mod:`lang_pz.viewer.safety`): nothing is read unless every
    entry of ``source`` is a regular file or folder inside it (links that stay inside are followed),
    and no file is written through a link (a link at a page file's name is replaced; ``out`` itself
    must not be a link).

    Raises:
        lang_pz.error.RunDirError: ``source`` is not a viewable folder or holds a link out of it or a
            special file (a named pipe, a device), or ``out`` is a link, a file, or a folder holding
            other files.
        OSError: the page cannot be written.
    """
    from lang_pz.viewer.bench import bench_view, critic_view
    from lang_pz.viewer.run import episode_summary, run_episodes, run_overview

    src = Path(source)
    dest = Path(out) if out is not None else src / "view"
    check_source(src, skip=dest)
    kind = kind_of(src)
    check_out(dest)
    try:  # what the folder holds is read before the page is touched (the episodes, one at a time, below)
        view = run_overview(src) if kind == "run" else bench_view(src) if kind == "bench" else critic_view(src)
    except UNREADABLE as exc:
        raise _unreadable(src, kind, exc) from exc
    with ViewFolder(dest) as page, page.fresh("data") as data, data.fresh("episodes") as episodes:
        for name in STATIC:
            page.write(name, resources.files("lang_pz.viewer").joinpath("static").joinpath(name).read_text("utf-8"))
        if kind == "run":
            view["episodes"] = []
            try:
                for ep in run_episodes(src):
                    episodes.write(f"{ep['id']}.js", _script("LPZ.episode", ep["id"], ep))
                    view["episodes"].append(episode_summary(ep))
            except UNREADABLE as exc:
                raise _unreadable(src, kind, exc) from exc
        data.write("view.js", _script("LPZ.view", view))  # last: a folder with data/view.js is a view
    return dest / "index.html"


#: What reading a file that lang_pz did not write that way raises (a value of the wrong type, a
#: missing key, bytes that are not UTF-8); a torn last line or a missing file is no error.
UNREADABLE = (ValueError, KeyError, TypeError, AttributeError, IndexError)


def _unreadable(src: Path, kind: str, exc: BaseException) -> RunDirError:
    if isinstance(exc, RunDirError):
        return exc
    return RunDirError(
        f"{src} looks like a {kind} folder, but a file in it is not as lang_pz writes it "
        f"({type(exc).__name__}: {str(exc)[:200]}); was it edited by hand or by another program?"
    )
