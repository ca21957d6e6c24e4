"""Which OpenSpiel games pass ``lang_pz.test.language_api_test`` through the generic path.

For every name in ``pyspiel.registered_names()``: ``lang_pz.make("openspiel/<name>")`` with the
game's default parameters, then ``language_api_test`` (PettingZoo's ``api_test`` and
``seed_test`` and lang_pz's text checks) over ``--cycles`` cycles, each game in its own
subprocess with a time limit (a game that hangs or crashes the interpreter fails alone).
Writes a JSON and a Markdown table: pass / fail with the first line of the reason.

    python benchmarks/openspiel_games.py [--cycles 20] [--timeout 120] [--games kuhn_poker ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"

_CHILD = """
import sys, warnings
warnings.simplefilter("ignore")
import lang_pz
from lang_pz.test import language_api_test
env = lang_pz.make("openspiel/" + sys.argv[1])
env.reset(seed=0)
agent = env.agent_selection
print("OBS_CHARS", len(env.observe(agent)["text"]))
language_api_test("openspiel/" + sys.argv[1], num_cycles=int(sys.argv[2]))
print("PASSED")
"""


def check(game: str, cycles: int, timeout: float) -> dict[str, object]:
    """Run the test of ``game`` in a subprocess: ``{"game", "passed", "seconds", "reason", "obs_chars"}``."""
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, game, str(cycles)], check=False, capture_output=True,
                             text=True, timeout=timeout)
        passed = out.returncode == 0 and "PASSED" in out.stdout
        lines = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
        reason = "" if passed else (lines[-1] if lines else f"exit code {out.returncode}")
        chars = next((int(ln.split()[1]) for ln in out.stdout.splitlines() if ln.startswith("OBS_CHARS")), None)
    except subprocess.TimeoutExpired:
        passed, reason, chars = False, f"timed out after {timeout:g} s", None
    return {"game": game, "passed": passed, "seconds": round(time.perf_counter() - t0, 2),
            "reason": reason[:300], "obs_chars": chars}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--games", nargs="*", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "openspiel_games")
    args = parser.parse_args()
    import pyspiel

    games = args.games or sorted(pyspiel.registered_names())
    t0 = time.perf_counter()
    rows = []
    for game in games:
        row = check(game, args.cycles, args.timeout)
        rows.append(row)
        print(f"{game}: {'pass' if row['passed'] else 'FAIL ' + str(row['reason'])} ({row['seconds']} s)",
              file=sys.stderr)
    passed = sum(bool(r["passed"]) for r in rows)
    summary = {"open_spiel": getattr(pyspiel, "__version__", "?"), "games": len(rows), "passed": passed,
               "cycles": args.cycles, "wall_seconds": round(time.perf_counter() - t0, 1), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    lines = [f"# OpenSpiel games through `openspiel/<game>`: {passed} of {len(rows)} pass language_api_test",
             "", (f"`python benchmarks/openspiel_games.py --cycles {args.cycles}` "
                  f"({summary['wall_seconds']} s wall). Default parameters of every game."), "",
             "| game | result | first observation (chars) | reason |", "| --- | --- | --- | --- |"]
    for r in rows:
        reason = str(r["reason"]).replace("|", "/")
        lines.append(f"| {r['game']} | {'pass' if r['passed'] else 'fail'} | {r['obs_chars'] or ''} | {reason} |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{passed} of {len(rows)} games pass", file=sys.stderr)


if __name__ == "__main__":
    main()
