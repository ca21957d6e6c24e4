"""Which OpenSpiel games pass ``lang_pz.test.language_api_test`` through the generic path.

For every name in ``pyspiel.registered_names()``: ``lang_pz.make("openspiel/<name>")`` with the
game's default parameters (the five names lang_pz registers resolve to their ``-v0`` ids), then ``language_api_test`` (PettingZoo's ``api_test`` and
``seed_test`` and lang_pz's text checks) over ``--cycles`` cycles, with a time limit per game,
in a subprocess that goes from game to game (a game whose fatal error kills the interpreter
fails alone; a new subprocess goes on with the rest).
Writes a JSON and a Markdown table: pass / fail with the first line of the reason.

    python benchmarks/openspiel_games.py [--cycles 20] [--timeout 120] [--games kuhn_poker ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _census import Column, census_summary, reason_cell, write_census

RESULTS = Path(__file__).parent / "results"

TITLE = "OpenSpiel games through `openspiel/<game>`"
COLUMNS: list[Column] = [("first observation (chars)", lambda r: r["obs_chars"] or ""), ("reason", reason_cell)]


def intro(summary: Mapping[str, Any]) -> str:
    """The line under the title: how the table was made."""
    return (
        f"`python benchmarks/openspiel_games.py --cycles {summary['cycles']}` "
        f"({summary['wall_seconds']} s wall). Default parameters of every game."
    )


_CHILD = """
import json, signal, sys, warnings, contextlib, io
warnings.simplefilter("ignore")
import lang_pz
from lang_pz.test import language_api_test
cycles, timeout = int(sys.argv[1]), int(sys.argv[2])
class TimedOut(Exception):
    pass
def alarm(signum, frame):
    raise TimedOut
signal.signal(signal.SIGALRM, alarm)
for game in sys.argv[3:]:
    print(json.dumps({"start": game}), flush=True)
    row = {"game": game, "passed": False, "reason": "", "obs_chars": None}
    signal.alarm(timeout)
    try:
        env = lang_pz.make("openspiel/" + game)
        env.reset(seed=0)
        row["obs_chars"] = len(env.observe(env.agent_selection)["text"])
        with contextlib.redirect_stdout(io.StringIO()):
            language_api_test("openspiel/" + game, num_cycles=cycles)
        row["passed"] = True
    except TimedOut:
        row["reason"] = f"timed out after {timeout} s"
    except BaseException as exc:
        row["reason"] = (type(exc).__name__ + ": " + " ".join(str(exc).split()))[:300]
    finally:
        signal.alarm(0)
    print(json.dumps(row), flush=True)
"""


def check_all(games: list[str], cycles: int, timeout: int) -> list[dict[str, object]]:
    """Test ``games`` in one subprocess after another: each child tests games until one kills
    the interpreter (an OpenSpiel fatal error aborts the process), which is recorded as such; the
    next child goes on with the rest."""
    rows: list[dict[str, object]] = []
    todo = list(games)
    while todo:
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, str(cycles), str(timeout), *todo], check=False, capture_output=True, text=True
        )
        started = None
        for line in out.stdout.splitlines():
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            if "start" in record:
                started = record["start"]
                continue
            record["seconds"] = None
            rows.append(record)
            print(f"{record['game']}: {'pass' if record['passed'] else 'FAIL ' + str(record['reason'])}", file=sys.stderr)
            todo.remove(str(record["game"]))
            started = None
        if started is not None:  # the child died in this game
            last = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
            reason = f"the process died (exit code {out.returncode}): " + (last[-1] if last else "")
            rows.append(
                {
                    "game": started,
                    "passed": False,
                    "reason": reason[:300],
                    "obs_chars": None,
                    "seconds": round(time.perf_counter() - t0, 1),
                }
            )
            print(f"{started}: FAIL {reason}", file=sys.stderr)
            todo.remove(started)
        elif todo and out.returncode != 0:
            raise RuntimeError(f"the census child failed before any game: {out.stderr[-500:]}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--games", nargs="*", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "openspiel_games")
    args = parser.parse_args()
    import pyspiel

    games = args.games or sorted(pyspiel.registered_names())
    t0 = time.perf_counter()
    rows = sorted(check_all(games, args.cycles, args.timeout), key=lambda r: str(r["game"]))
    summary = census_summary(rows, args.cycles, time.perf_counter() - t0, open_spiel=getattr(pyspiel, "__version__", "?"))
    write_census(args.out, summary, TITLE, intro(summary), COLUMNS)
    print(f"{summary['passed']} of {len(rows)} games pass", file=sys.stderr)


if __name__ == "__main__":
    main()
