"""Render the environment gallery: ``docs/gallery.md`` and its pictures in ``docs/img/gallery/``.

Every id of ``lang_pz.registry`` is made with its default keyword arguments and reset with
``seed=0``; the page shows, per family, each env's picture (its own RGB frame where it has one:
Pistonball, the classic boards, the Gymnasium toys, Overcooked-AI through overcooked_ai's
``StateVisualizer``, MPE2 through its pygame renderer), the first observation text as its first
agent reads it (wrapped and abbreviated for the page) and its action words. Text-only envs (the
tasks, OpenSpiel, TextArena) show their first observation. Run from the repository::

    LANG_PZ_DATA_DIR=/path/to/data python tools/gallery.py

The task envs need the benchmark data (``LANG_PZ_DATA_DIR``); without it they are listed with a
note. Pictures are shrunk and quantised to a palette (a few tens of kB each).
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "img" / "gallery"
PAGE = ROOT / "docs" / "gallery.md"

#: Family prefix -> (heading, the family's page under docs/).
FAMILIES = {
    "butterfly": ("Pistonball (butterfly)", "envs/pistonball.md"),
    "classic": ("Classic games", "envs/classic.md"),
    "classic_control": ("Gymnasium classic control", "envs/classic.md"),
    "toy_text": ("Gymnasium toy text", "envs/classic.md"),
    "overcooked": ("Overcooked-AI", "envs/overcooked.md"),
    "mpe": ("MPE2", "envs/mpe.md"),
    "tasks": ("QA, math and code tasks", "envs/tasks.md"),
    "openspiel": ("OpenSpiel", "envs/openspiel.md"),
    "textarena": ("TextArena", "envs/textarena.md"),
}
MAX_LINES = 12  # observation lines shown
WIDTH = 76  # characters per shown line (no horizontal scrolling at 1280 px)
MAX_SIDE = (360, 220)  # picture width, height at most
THUMBNAILS = {"classic/connect_four-v0"}  # a family's thumbnail, where not its first picture
NO_PICTURE = {"classic/rps-v0"}  # its frame is two labels on a blank canvas


def _stub_ipython() -> None:
    """overcooked_ai's visualiser imports IPython for notebook helpers it never needs here."""
    if "IPython" in sys.modules:
        return
    ipython, display, widgets = (types.ModuleType(n) for n in ("IPython", "IPython.display", "ipywidgets"))
    display.Image = display.display = None  # type: ignore[attr-defined]
    ipython.display = display  # type: ignore[attr-defined]
    widgets.interactive = widgets.IntSlider = None  # type: ignore[attr-defined]
    sys.modules.update({"IPython": ipython, "IPython.display": display, "ipywidgets": widgets})


def first_observation(env: Any, api: str) -> tuple[str, str, dict[str, Any]]:
    """(agent, text, info) of the first observation after ``reset(seed=0)``."""
    if api == "gymnasium":
        obs, info = env.reset(seed=0)
        return "the agent", obs["text"], info
    if api == "aec":
        env.reset(seed=0)
        obs, _, _, _, info = env.last()
        return env.agent_selection, obs["text"], info
    observations, infos = env.reset(seed=0)
    agent = env.agents[0]
    return agent, observations[agent]["text"], infos[agent]


def frame(env_id: str, env: Any) -> np.ndarray | None:
    """The env's RGB picture after the reset, or ``None`` for text-only envs."""
    family = env_id.split("/")[0]
    raw = env.unwrapped
    if env_id in NO_PICTURE:
        return None
    if family == "overcooked":
        _stub_ipython()
        import pygame
        from overcooked_ai_py.visualization.state_visualizer import StateVisualizer

        surface = StateVisualizer().render_state(raw.game_state, grid=raw.mdp.terrain_mtx)
        return pygame.surfarray.array3d(surface).swapaxes(0, 1)
    if family == "mpe":
        raw.render_mode = "rgb_array"
        return raw.render()
    if getattr(env, "render_mode", None) == "rgb_array":
        picture = env.render()
        return picture if isinstance(picture, np.ndarray) else None
    return None


def save_png(picture: np.ndarray, path: Path) -> None:
    from PIL import Image

    image = Image.fromarray(np.asarray(picture, dtype=np.uint8))
    image.thumbnail(MAX_SIDE, Image.Resampling.LANCZOS)
    image = image.quantize(colors=64, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, optimize=True)


def shown(text: str) -> str:
    """The observation as the page shows it: long lines wrapped, at most MAX_LINES lines."""
    lines: list[str] = []
    for line in text.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        lines += textwrap.wrap(line, WIDTH, subsequent_indent=indent + "  ", drop_whitespace=True) or [""]
    if len(lines) > MAX_LINES:
        lines = [*lines[: MAX_LINES - 1], f"[... {len(lines) - MAX_LINES + 1} more lines]"]
    return "\n".join(lines)


def action_words(info: dict[str, Any], env: Any, agent: str) -> str:
    legal = info.get("legal_actions")
    if legal:
        words = [str(w) for w in legal]
        more = f", ... ({len(words)} in all)" if len(words) > 10 else ""
        return ", ".join(f"`{w}`" for w in words[:10]) + more
    return "free text"


def make(env_id: str, spec: Any) -> Any:
    import lang_pz

    api = spec.apis[0]
    family = env_id.split("/")[0]
    kwargs: dict[str, Any] = {}
    if family in ("butterfly", "classic", "classic_control", "toy_text"):
        kwargs["render_mode"] = "rgb_array"
    if env_id == "butterfly/pistonball-v0":
        kwargs["n_pistons"] = 10
    try:
        return lang_pz.make(env_id, **kwargs), api, kwargs
    except Exception:
        kwargs.pop("render_mode", None)
        return lang_pz.make(env_id, **kwargs), api, kwargs


def entry(env_id: str, spec: Any) -> str:
    out = [f"### `{env_id}`", "", spec.description, ""]
    try:
        env, api, kwargs = make(env_id, spec)
        agent, text, info = first_observation(env, api)
        picture = frame(env_id, env)
    except Exception as exc:  # a missing extra or data: said on the page, not fatal
        return "\n".join([*out, f"*Not rendered here: {type(exc).__name__}: {str(exc)[:160]}*", ""])
    if picture is not None:
        name = picture_name(env_id)
        save_png(picture, IMAGES / name)
        out += [f"![{env_id} after reset(seed=0)](img/gallery/{name})", ""]
    made = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if k != "render_mode")
    call = f'lang_pz.make("{env_id}"{", " + made if made else ""})'
    out += [f"What {agent} reads after `{call}` and `reset(seed=0)`:", "", "```text", shown(text), "```", ""]
    out += [f"Actions: {action_words(info, env, agent)}.", ""]
    env.close()
    return "\n".join(out)


def overview(by_family: dict[str, list[str]]) -> str:
    """A table of the families: a thumbnail (the family's first picture), its ids."""
    rows = ["| | family | ids |", "|---|---|---|"]
    for family, ids in by_family.items():
        heading = FAMILIES.get(family, (family, ""))[0]
        shown_first = sorted(ids, key=lambda i: i not in THUMBNAILS)
        pictures = [p for i in shown_first if (p := IMAGES / picture_name(i)).exists()]
        thumb = f'![{heading}](img/gallery/{pictures[0].name}){{ height="90" }}' if pictures else "(text only)"
        anchor = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")
        names = ", ".join(f"`{i.split('/', 1)[1]}`" for i in ids)
        rows.append(f"| {thumb} | [{heading}](#{anchor}) | {names} |")
    return "\n".join(rows) + "\n"


def picture_name(env_id: str) -> str:
    family, name = env_id.split("/", 1)
    return f"{family}-{name.removesuffix('-v0').replace('_', '-')}.png"


HEADER = """# Environment gallery

Every registered environment, as its agents meet it: a picture where the env draws one, the
first observation text (after `reset(seed=0)`; long lines wrapped, long texts cut for this page)
and the action words an agent may reply with. `lang_pz.registry` lists them (as `lang-pz envs`
does on the command line):

```python
import lang_pz

for env_id, spec in sorted(lang_pz.registry.items()):
    print(f"{env_id:36} {spec.description[:48]}")
```

OpenSpiel and TextArena also take any game of theirs by name (`openspiel/<game>`,
`textarena/<id>`), and any PettingZoo or Gymnasium env can be wrapped
([Environments you bring](envs/families.md)). This page is made by `python tools/gallery.py`.
"""


def main() -> None:
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT))
    import lang_pz

    by_family: dict[str, list[str]] = {}
    for env_id in lang_pz.registry:
        by_family.setdefault(env_id.split("/")[0], []).append(env_id)
    sections = []
    for family, ids in by_family.items():
        heading, page = FAMILIES.get(family, (family, "envs/index.md"))
        sections.append(f"## {heading}\n\nMore: [{heading}]({page}).\n")
        for env_id in ids:
            print(env_id, file=sys.stderr)
            sections.append(entry(env_id, lang_pz.registry[env_id]))
    parts = [HEADER, overview(by_family), *sections]
    PAGE.write_text("\n".join(parts).rstrip() + "\n", encoding="utf-8")
    sizes = sorted(IMAGES.glob("*.png"))
    print(f"{PAGE.relative_to(ROOT)}; {len(sizes)} pictures, {sum(p.stat().st_size for p in sizes) // 1024} kB")


if __name__ == "__main__":
    main()
