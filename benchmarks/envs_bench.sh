#!/usr/bin/env bash
# The bench tables of the envs users bring (results/envs_bench/envs_bench.md; shown in docs/envs/openspiel.md, mpe.md, textarena.md): the LLM
# team on the embedded model (SmolLM2-135M, one llama.cpp thread), random, and the classical
# players (OpenSpiel's CFR+ and MCTS, the MPE scripted baseline), with 95 % bootstrap intervals.
# Each env has an LLM case (fewer episodes: every LLM call is ~10-20 s on a shared 2-core machine)
# and a classical case without LLM seats (many episodes), with a 'no reply' row: a constant seat
# whose word is the env's fallback move (the first legal move: Play 0, x(0,0), [0], [check], stay;
# once that word is illegal, the fallback plays), i.e. what an LLM whose every reply is unreadable
# scores; an LLM row must beat it. Leduc has no such word (its fallback folds to a bet, and Fold is
# not legal at the first move), so it shows 'always call' instead. Each command's wall time, date and load
# average are written beside its table: benchmarks/results/envs_bench/<name>.wall.txt. A re-run
# with the same results folder skips finished episodes; FRESH=1 deletes the folder first.
#   bash benchmarks/envs_bench.sh [NAME ...]          # every table: bash benchmarks/envs_bench.sh
# names: hanabi hanabi_classical leduc leduc_classical spread spread_classical spread3_classical
#        tictactoe tictactoe_classical kuhn_ta kuhn_ta_classical mcts mcts_classical examples replies
# (examples: one observation per new id, benchmarks/envs_examples.py; replies: how many LLM
# replies parsed, benchmarks/envs_bench_replies.py, after the LLM tables). After the runs,
# benchmarks/envs_bench_report.py assembles results/envs_bench/envs_bench.md (done here too).
# Episode counts: LLM_SEEDS (default per table, below: the counts in results/envs_bench), e.g.
# LLM_SEEDS=0-2 for a quick pass. On the shared machine the LLM tables took 10-47 minutes each.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export LANG_PZ_BACKEND_OPTIONS=${LANG_PZ_BACKEND_OPTIONS:-'{"embedded": {"n_threads": 1}}'}
OUT=benchmarks/results/envs_bench
mkdir -p "$OUT"
seeds() { echo "${LLM_SEEDS:-$1}"; }  # the table's LLM seeds unless LLM_SEEDS says otherwise
run() {  # NAME ARGS...
  local name=$1; shift
  [ "${FRESH:-0}" = 1 ] && rm -rf "${OUT:?}/$name"
  local t0 load date; t0=$(date +%s.%N); load=$(cut -d' ' -f1-3 /proc/loadavg); date=$(date -u +%FT%TZ)
  nice -n 10 "$PY" -m lang_pz.cli bench --out "$OUT/$name" --no-plot "$@" > "$OUT/$name.md"
  printf '%.0f s wall, started %s, load average at start %s (end %s): lang-pz bench --out %s --no-plot %s\n' \
    "$(echo "$(date +%s.%N) - $t0" | bc)" "$date" "$load" "$(cut -d' ' -f1-3 /proc/loadavg)" "$OUT/$name" "$*" \
    > "$OUT/$name.wall.txt"
  cat "$OUT/$name.md" "$OUT/$name.wall.txt"
}
ALL="examples hanabi hanabi_classical leduc leduc_classical spread spread_classical spread3_classical tictactoe tictactoe_classical kuhn_ta kuhn_ta_classical mcts mcts_classical replies"
for NAME in ${*:-$ALL}; do
  case $NAME in
    hanabi) run hanabi --env openspiel/hanabi-v0 --objective return:player_0 --seeds "$(seeds 0-9)" \
              --team "llm team=:llm" --team "random=:random" ;;
    hanabi_classical) run hanabi_classical --env openspiel/hanabi-v0 --objective return:player_0 --seeds 0-199 \
              --team "random=:random" --team "no reply=:constant:Play 0" ;;
    leduc) run leduc --env openspiel/leduc_poker-v0 --objective return:player_0 --seeds "$(seeds 0-19)" \
              --team "llm vs cfr=:player_0=llm;*=spiel:cfr" --team "llm vs random=:player_0=llm;*=random" ;;
    leduc_classical) run leduc_classical --env openspiel/leduc_poker-v0 --objective return:player_0 --seeds 0-199 \
              --team "random vs cfr=:player_0=random;*=spiel:cfr" --team "cfr vs random=:player_0=spiel:cfr;*=random" \
              --team "cfr vs cfr=:spiel:cfr" --team "random vs random=:random" \
              --team "always call vs cfr=:player_0=constant:Call;*=spiel:cfr" ;;
    spread) run spread --env mpe/simple_spread-v0 --kw max_cycles=3 --seeds "$(seeds 0-5)" --team "llm team=:llm" ;;
    spread3_classical) run spread3_classical --env mpe/simple_spread-v0 --kw max_cycles=3 --seeds 0-49 \
              --team "random=:random" --team "scripted=:scripted" --team "no reply=:constant:stay" ;;
    spread_classical) run spread_classical --env mpe/simple_spread-v0 --kw max_cycles=10 --seeds 0-29 \
              --team "random=:random" --team "scripted=:scripted" --team "no reply=:constant:stay" ;;
    tictactoe) run tictactoe --env textarena/tictactoe-v0 --objective return:player_0 --seeds "$(seeds 0-6)" \
              --team "llm vs random=:player_0=llm;*=random" ;;
    tictactoe_classical) run tictactoe_classical --env textarena/tictactoe-v0 --objective return:player_0 \
              --seeds 0-49 --team "random vs random=:random" --team "no reply vs random=:player_0=constant:[0];*=random" ;;
    kuhn_ta) run kuhn_ta --env textarena/kuhn_poker-v0 --objective return:player_0 --seeds "$(seeds 0-5)" \
              --team "llm vs random=:player_0=llm;*=random" ;;
    kuhn_ta_classical) run kuhn_ta_classical --env textarena/kuhn_poker-v0 --objective return:player_0 \
              --seeds 0-49 --team "random vs random=:random" --team "no reply vs random=:player_0=constant:[check];*=random" ;;
    mcts) run mcts --env openspiel/tic_tac_toe --objective return:player_0 --seeds "$(seeds 0-3)" \
              --team "llm vs mcts=:player_0=llm;*=spiel:mcts" --team "llm vs random=:player_0=llm;*=random" ;;
    mcts_classical) run mcts_classical --env openspiel/tic_tac_toe --objective return:player_0 --seeds 0-49 \
              --team "mcts vs random=:player_0=spiel:mcts;*=random" --team "random vs mcts=:player_0=random;*=spiel:mcts" \
              --team "mcts vs mcts=:spiel:mcts" --team "random vs random=:random" \
              --team "no reply vs mcts=:player_0=constant:x(0,0);*=spiel:mcts" --team "no reply vs random=:player_0=constant:x(0,0);*=random" ;;
    examples) "$PY" benchmarks/envs_examples.py > "$OUT/examples.md" ;;
    replies) "$PY" benchmarks/envs_bench_replies.py hanabi leduc spread tictactoe kuhn_ta mcts > "$OUT/replies.md" ;;
    *) echo "unknown bench name $NAME; names: $ALL" >&2; exit 2 ;;
  esac
done
"$PY" benchmarks/envs_bench_report.py
