"""Which TextArena games pass ``lang_pz.test.language_api_test`` through ``textarena/<game>``.

For every base game id of TextArena (``Name-v0``; its ``-raw`` variant is what the bridge
plays), in its own subprocess with a time limit: find a number of players the game accepts
(2, then 1, 3, 4, 5, 6), then run ``language_api_test`` (PettingZoo's ``api_test`` and
``seed_test``, lang_pz's text checks) for ``--cycles`` cycles. Writes a JSON and a Markdown
table with the reason of each failure (an API key it needs, data it downloads, a bridge check).

    python benchmarks/textarena_games.py [--cycles 20] [--timeout 120] [--games TicTacToe-v0 ...]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"

_CHILD = """
import sys, warnings
warnings.simplefilter("ignore")
from lang_pz.envs.textarena import make_textarena
from lang_pz.test import language_api_test
game, cycles = sys.argv[1], int(sys.argv[2])
players, first = None, None
for n in (2, 1, 3, 4, 5, 6):
    try:
        env = make_textarena(game=game, num_players=n, max_turns=cycles)
        env.reset(seed=0)
    except Exception as exc:
        first = first or exc
        continue
    players = n
    break
if players is None:
    raise first
agent = env.agent_selection
print("PLAYERS", players)
print("OBS_CHARS", len(env.observe(agent)["text"]))
print("LISTED", bool(env.infos[agent].get("legal_actions")))
language_api_test(lambda **kw: make_textarena(game=game, num_players=players, max_turns=cycles, **kw),
                  num_cycles=cycles)
print("PASSED")
"""


def _field(stdout: str, key: str) -> str | None:
    return next((ln.split(maxsplit=1)[1] for ln in stdout.splitlines() if ln.startswith(key + " ")), None)


def check(game: str, cycles: int, timeout: float) -> dict[str, object]:
    """Test ``game`` in a subprocess: ``{"game", "passed", "players", "listed_moves", "obs_chars", ...}``."""
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", _CHILD, game, str(cycles)], check=False, capture_output=True,
                             text=True, timeout=timeout)
        passed = out.returncode == 0 and "PASSED" in out.stdout
        lines = [ln.strip() for ln in out.stderr.splitlines() if re.match(r"^\w*(Error|Exception)\b", ln.strip())]
        tail = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
        reason = "" if passed else (lines[-1] if lines else tail[-1] if tail else f"exit code {out.returncode}")
        stdout = out.stdout
    except subprocess.TimeoutExpired:
        passed, reason, stdout = False, f"timed out after {timeout:g} s", ""
    players = _field(stdout, "PLAYERS")
    chars = _field(stdout, "OBS_CHARS")
    return {"game": game, "passed": passed, "players": int(players) if players else None,
            "listed_moves": _field(stdout, "LISTED") == "True", "obs_chars": int(chars) if chars else None,
            "seconds": round(time.perf_counter() - t0, 2), "reason": reason[:300]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--games", nargs="*", default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "textarena_games")
    args = parser.parse_args()
    from textarena.envs.registration import ENV_REGISTRY

    games = args.games or sorted(g for g in ENV_REGISTRY if re.fullmatch(r"[A-Za-z0-9]+-v0", g))
    t0 = time.perf_counter()
    rows = []
    for game in games:
        row = check(game, args.cycles, args.timeout)
        rows.append(row)
        print(f"{game}: {'pass' if row['passed'] else 'FAIL ' + str(row['reason'])} ({row['seconds']} s)",
              file=sys.stderr)
    passed = sum(bool(r["passed"]) for r in rows)
    summary = {"games": len(rows), "passed": passed, "cycles": args.cycles,
               "wall_seconds": round(time.perf_counter() - t0, 1), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    lines = [f"# TextArena games through `textarena/<game>`: {passed} of {len(rows)} pass language_api_test", "",
             (f"`python benchmarks/textarena_games.py --cycles {args.cycles}` ({summary['wall_seconds']} s wall); "
              "TextArena 0.7.4, base ids (`Name-v0`), the first player count the game accepts."), "",
             "| game | result | players | moves listed | first observation (chars) | reason |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        reason = str(r["reason"]).replace("|", "/")
        lines.append(f"| {r['game']} | {'pass' if r['passed'] else 'fail'} | {r['players'] or ''} | "
                     f"{'yes' if r['listed_moves'] else 'no'} | {r['obs_chars'] or ''} | {reason} |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{passed} of {len(rows)} games pass", file=sys.stderr)


if __name__ == "__main__":
    main()
