"""Which TextArena games pass ``lang_pz.test.language_api_test`` through ``textarena/<game>``.

For every base game id of TextArena (``Name-v0``; its ``-raw`` variant is what the bridge
plays), one after the other in this process (importing TextArena takes about 10 s) with a time
limit each: find a number of players the game accepts
(2, then 1, 3, 4, 5, 6), then run ``language_api_test`` (PettingZoo's ``api_test`` and
``seed_test``, lang_pz's text checks) for ``--cycles`` cycles. Writes a JSON and a Markdown
table with the reason of each failure (an API key it needs, data it downloads, a bridge check).

    python benchmarks/textarena_games.py [--cycles 20] [--timeout 120] [--games TicTacToe-v0 ...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import signal
import sys
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _census import Column, census_summary, reason_cell, write_census

RESULTS = Path(__file__).parent / "results"

TITLE = "TextArena games through `textarena/<game>`"
COLUMNS: list[Column] = [
    ("players", lambda r: r["players"] or ""),
    ("moves listed", lambda r: "yes" if r["listed_moves"] else "no"),
    ("first observation (chars)", lambda r: r["obs_chars"] or ""),
    ("reason", reason_cell),
]


def intro(summary: Mapping[str, Any]) -> str:
    """The line under the title: how the table was made."""
    return (
        f"`python benchmarks/textarena_games.py --cycles {summary['cycles']}` ({summary['wall_seconds']} s wall); "
        "TextArena 0.7.4, base ids (`Name-v0`), the first player count the game accepts."
    )


class _TimedOut(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _TimedOut


def _first_exception_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}"[:300]


def check(game: str, cycles: int, timeout: int) -> dict[str, object]:
    """Test ``game`` (in this process, with a ``timeout`` in seconds): ``{"game", "passed", "players",
    "listed_moves", "obs_chars", "seconds", "reason"}``."""
    from lang_pz.envs.textarena import make_textarena
    from lang_pz.test import language_api_test

    t0 = time.perf_counter()
    row: dict[str, object] = {
        "game": game,
        "passed": False,
        "players": None,
        "listed_moves": False,
        "obs_chars": None,
        "reason": "",
    }
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        first: BaseException | None = None
        for n in (2, 1, 3, 4, 5, 6):
            try:
                env = make_textarena(game=game, num_players=n, max_turns=cycles)
                env.reset(seed=0)
            except _TimedOut:
                raise
            except Exception as exc:
                first = first or exc
                continue
            agent = env.agent_selection
            row.update(
                players=n,
                obs_chars=len(env.observe(agent)["text"]),
                listed_moves=bool(env.infos[agent].get("legal_actions")),
            )
            break
        if row["players"] is None:
            raise first if first is not None else RuntimeError("no player count from 1 to 6 works")
        players = int(row["players"])  # type: ignore[arg-type]
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            language_api_test(
                lambda **kw: make_textarena(game=game, num_players=players, max_turns=cycles, **kw), num_cycles=cycles
            )
        row["passed"] = True
    except _TimedOut:
        row["reason"] = f"timed out after {timeout} s"
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        row["reason"] = _first_exception_line(exc).replace(sys.prefix, "<prefix>")
    finally:
        signal.alarm(0)
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--timeout", type=int, default=120)
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
        print(f"{game}: {'pass' if row['passed'] else 'FAIL ' + str(row['reason'])} ({row['seconds']} s)", file=sys.stderr)
    summary = census_summary(rows, args.cycles, time.perf_counter() - t0)
    write_census(args.out, summary, TITLE, intro(summary), COLUMNS)
    print(f"{summary['passed']} of {len(rows)} games pass", file=sys.stderr)


if __name__ == "__main__":
    main()
