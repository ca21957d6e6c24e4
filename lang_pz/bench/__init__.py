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

from lang_pz.bench.config import case_from_dict, load_config, parse_seeds
from lang_pz.bench.report import markdown_table, plot_results, summaries, write_results
from lang_pz.bench.runner import EnvCase, read_episodes, read_failures, run_bench
from lang_pz.bench.stats import Summary, bootstrap_interval, summarise
from lang_pz.bench.teams import BenchTeam, build_team, default_instruction, parse_team

__all__ = [
    "BenchTeam",
    "EnvCase",
    "Summary",
    "bootstrap_interval",
    "build_team",
    "case_from_dict",
    "default_instruction",
    "load_config",
    "markdown_table",
    "parse_seeds",
    "parse_team",
    "plot_results",
    "read_episodes",
    "read_failures",
    "run_bench",
    "summaries",
    "summarise",
    "write_results",
]


def __getattr__(name: str) -> object:
    if name == "Team":  # the former name; training's Team is a mapping of agents to policies
        import warnings

        warnings.warn("lang_pz.bench.Team is now lang_pz.bench.BenchTeam", DeprecationWarning, stacklevel=2)
        return BenchTeam
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
