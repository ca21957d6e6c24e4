#!/usr/bin/env bash
# The bench tables of the envs users bring (README "OpenSpiel games", "MPE2", "TextArena"):
# the LLM team on the embedded model (SmolLM2-135M), random, and the classical players, with
# 95 % bootstrap intervals. Few LLM episodes: the machine is shared. Each command's wall time is
# written beside its table (benchmarks/results/envs_bench/<name>/wall.txt).
#   bash benchmarks/envs_bench.sh [NAME ...]     (names: hanabi leduc leduc_classical spread
#   spread_classical tictactoe kuhn_ta; the *_classical ones have no LLM seat and many more episodes)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=benchmarks/results/envs_bench
run() {  # NAME ARGS...
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$PY" -m lang_pz.cli bench --out "$OUT/$name" --no-plot "$@" > "$OUT/$name.md"
  echo "$(echo "$(date +%s.%N) - $t0" | bc) s: lang-pz bench --out $OUT/$name --no-plot $*" > "$OUT/$name.wall.txt"
  cat "$OUT/$name.md" "$OUT/$name.wall.txt"
}
want() { [ $# -eq 0 ] || [[ " $* " == *" $NAME "* ]]; }
for NAME in hanabi leduc leduc_classical spread spread_classical tictactoe kuhn_ta; do
  want "$@" || continue
  case $NAME in
    hanabi) run hanabi --env openspiel/hanabi-v0 --objective return:player_0 --seeds 0-2 \
              --team "llm team=:llm" --team "random=:random" ;;
    leduc) run leduc --env openspiel/leduc_poker-v0 --objective return:player_0 --seeds 0-3 \
              --team "llm vs cfr=:player_0=llm;*=spiel:cfr" --team "llm vs random=:player_0=llm;*=random" \
              --team "random vs cfr=:player_0=random;*=spiel:cfr" --team "cfr vs random=:player_0=spiel:cfr;*=random" \
              --team "cfr vs cfr=:spiel:cfr" ;;
    leduc_classical) run leduc_classical --env openspiel/leduc_poker-v0 --objective return:player_0 --seeds 0-199 \
              --team "random vs cfr=:player_0=random;*=spiel:cfr" --team "cfr vs random=:player_0=spiel:cfr;*=random" \
              --team "cfr vs cfr=:spiel:cfr" --team "random vs random=:random" ;;
    spread_classical) run spread_classical --env mpe/simple_spread-v0 --kw max_cycles=25 --seeds 0-29 \
              --team "random=:random" --team "scripted=:scripted" ;;
    spread) run spread --env mpe/simple_spread-v0 --kw max_cycles=10 --seeds 0-1 \
              --team "llm team=:llm" --team "random=:random" --team "scripted=:scripted" ;;
    tictactoe) run tictactoe --env textarena/tictactoe-v0 --objective return:player_0 --seeds 0-2 \
              --team "llm vs random=:player_0=llm;*=random" --team "random vs random=:random" ;;
    kuhn_ta) run kuhn_ta --env textarena/kuhn_poker-v0 --objective return:player_0 --seeds 0-2 \
              --team "llm vs random=:player_0=llm;*=random" --team "random vs random=:random" ;;
  esac
done
