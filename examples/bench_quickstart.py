"""Tutorial: benchmark teams with lang_pz.bench (Python API), mixed teams included.

Every team plays the same seeds; each episode is written to OUT/episodes.jsonl as it ends, so
running this again skips what is done. The table gives each team's mean team return with a 95 %
bootstrap interval (scipy), its LLM calls and tokens, and the seconds it took.

    python examples/bench_quickstart.py --out /tmp/bench_quickstart           # scripted teams, seconds
    python examples/bench_quickstart.py --out /tmp/bench_quickstart --llm     # + an LLM piston (embedded model)

The same from the command line::

    lang-pz bench --out /tmp/b --env butterfly/pistonball-v0 --kw n_pistons=5 --kw hold=5 --seeds 0-9 \\
        --team random --team heuristic --team "llm + heuristic=:piston_0=llm;*=heuristic"
"""

from __future__ import annotations

import argparse

from lang_pz.bench import EnvCase, parse_team, run_bench, summaries, write_results
from lang_pz.bench.report import markdown_table


def main(out: str, llm: bool = False, seeds: int = 6) -> str:
    teams = [
        parse_team("random"),
        parse_team("constant:down", name="all down"),
        parse_team("heuristic"),
        parse_team("piston_0=constant:up;*=heuristic", name="one piston always up + 4 heuristic"),
    ]
    if llm:
        teams.append(parse_team("piston_0=llm;*=heuristic", name="LLM piston_0 + 4 heuristic"))
    case = EnvCase("butterfly/pistonball-v0", kwargs={"n_pistons": 5, "hold": 5}, seeds=range(100, 100 + seeds), teams=teams)
    records = run_bench([case], out, backend="embedded")
    rows = summaries([case], records)
    write_results(rows, out)
    return markdown_table(rows)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench_quickstart")
    ap.add_argument("--llm", action="store_true", help="add a team with one embedded-model piston")
    ap.add_argument("--seeds", type=int, default=6)
    args = ap.parse_args()
    print(main(args.out, args.llm, args.seeds))
