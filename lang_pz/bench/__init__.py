"""Benchmark harness: teams x envs x seeds -> per team the mean objective, a 95 % bootstrap
interval, episodes, LLM calls, tokens and cost, as a table, CSV, JSON and a plot.

::

    from lang_pz.bench import EnvCase, parse_team, run_bench, summaries, write_results

    case = EnvCase("butterfly/pistonball-v0", kwargs={"n_pistons": 5, "hold": 5}, seeds=range(1000, 1010),
                   teams=[parse_team("random"), parse_team("heuristic"),
                          parse_team("piston_0=llm;*=heuristic", name="llm + heuristic")])
    records = run_bench([case], "bench_out", backend="embedded")   # resumable: re-run skips done episodes
    rows = summaries([case], records)
    write_results(rows, "bench_out")                                  # summary.md/.csv/.json/.png

The same from the command line: ``lang-pz bench --config bench.yaml --out bench_out``
(:mod:`lang_pz.bench.config` gives the file's format).
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.bench.config import load_config
from lang_pz.bench.report import summaries, write_results
from lang_pz.bench.runner import EnvCase, read_episodes, run_bench
from lang_pz.bench.teams import BenchTeam, parse_team

__all__ = ["BenchTeam", "EnvCase", "load_config", "parse_team", "read_episodes", "run_bench", "summaries", "write_results"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "Summary": "lang_pz.bench.stats.Summary",
    "Team": "lang_pz.bench.BenchTeam",
    "bootstrap_interval": "lang_pz.bench.stats.bootstrap_interval",
    "build_team": "lang_pz.bench.teams.build_team",
    "case_from_dict": "lang_pz.bench.config.case_from_dict",
    "default_instruction": "lang_pz.bench.teams.default_instruction",
    "markdown_table": "lang_pz.bench.report.markdown_table",
    "parse_seeds": "lang_pz.bench.config.parse_seeds",
    "plot_results": "lang_pz.bench.report.plot_results",
    "read_failures": "lang_pz.bench.runner.read_failures",
    "summarise": "lang_pz.bench.stats.summarise",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
