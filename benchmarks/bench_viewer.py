"""Page size and load time of ``lang-pz view`` for given run folders, in headless Chromium.

For each folder: the time to write the page, its size on disk (all files; the overview data
``data/view.js``; the largest episode file), the time from opening ``index.html`` (``file://``)
to the drawn first tab, and the time from clicking the largest episode to its drawn grid (that
episode's data file loads only then).

    python benchmarks/bench_viewer.py RUN_DIR [RUN_DIR ...]

Needs ``chromium-headless-shell`` (apt) and ``playwright`` (pip; never ``playwright install``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from lang_pz.viewer import write_view

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def size_mb(paths: list[Path]) -> float:
    return sum(p.stat().st_size for p in paths) / 1e6


def measure(run_dir: Path, browser, out: Path) -> dict[str, object]:
    t0 = time.perf_counter()
    index = write_view(run_dir, out)
    write_s = time.perf_counter() - t0
    files = [p for p in out.rglob("*") if p.is_file()]
    episodes = sorted((out / "data" / "episodes").glob("*.js"), key=lambda p: p.stat().st_size)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    t0 = time.perf_counter()
    page.goto(index.resolve().as_uri())
    page.wait_for_selector("#main h2")
    load_s = time.perf_counter() - t0
    episode_s = None
    if episodes:
        page.goto(index.resolve().as_uri() + "#episodes")
        page.wait_for_selector("table.episode-list")
        t0 = time.perf_counter()
        page.click(f'tr[data-episode="{episodes[-1].stem}"]')
        page.wait_for_selector("#grid td[data-agent]")
        episode_s = time.perf_counter() - t0
    page.close()
    return {
        "run": str(run_dir),
        "files": len(files),
        "total_mb": size_mb(files),
        "view_js_mb": size_mb([out / "data" / "view.js"]),
        "episodes": len(episodes),
        "largest_episode_mb": size_mb(episodes[-1:]),
        "write_s": write_s,
        "load_s": load_s,
        "open_largest_episode_s": episode_s,
        "errors": errors,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--browser", default="/usr/bin/chromium-headless-shell")
    args = ap.parse_args()
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=args.browser, args=ARGS)
        print(
            "| run | files | total MB | view.js MB | episodes | largest episode MB | write s | page load s | "
            "open largest episode s |\n|---|---|---|---|---|---|---|---|---|"
        )
        for i, run in enumerate(args.runs):
            r = measure(run, browser, Path(tmp) / str(i))
            assert not r["errors"], r["errors"]
            ep = "-" if r["open_largest_episode_s"] is None else f"{r['open_largest_episode_s']:.2f}"
            print(
                f"| {r['run']} | {r['files']} | {r['total_mb']:.2f} | {r['view_js_mb']:.3f} | {r['episodes']} | "
                f"{r['largest_episode_mb']:.2f} | {r['write_s']:.2f} | {r['load_s']:.2f} | {ep} |"
            )
        browser.close()


if __name__ == "__main__":
    main()
