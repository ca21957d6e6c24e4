#!/usr/bin/env bash
# The bench tables of the envs users bring (docs/envs/openspiel.md, mpe.md, textarena.md): the LLM team on the
# embedded model (SmolLM2-135M), random, and the classical players, with 95 % bootstrap
# intervals. Each env has an LLM case (few episodes, LLM_SEEDS: the machine is shared) and a
# classical case without LLM seats (many episodes). Each command's wall time is written beside
# its table: benchmarks/results/envs_bench/<name>.wall.txt.
#   bash benchmarks/envs_bench.sh [NAME ...]
# names: hanabi hanabi_classical leduc leduc_classical spread spread_classical
#        tictactoe tictactoe_classical kuhn_ta kuhn_ta_classical
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
LLM_SEEDS=${LLM_SEEDS:-0-2}
OUT=benchmarks/results/envs_bench
mkdir -p "$OUT"
run() {  # NAME ARGS...
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  "$PY" -m lang_pz.cli bench --out "$OUT/$name" --no-plot "$@" > "$OUT/$name.md"
  echo "$(echo "$(date +%s.%N) - $t0" | bc) s wall: lang-pz bench --out $OUT/$name --no-plot $*" > "$OUT/$name.wall.txt"
  cat "$OUT/$name.md" "$OUT/$name.wall.txt"
}
ALL="hanabi hanabi_classical leduc leduc_classical spread spread_classical tictactoe tictactoe_classical kuhn_ta kuhn_ta_classical"
for NAME in ${*:-$ALL}; do
  case $NAME in
    hanabi) run hanabi --env openspiel/hanabi-v0 --objective return:player_0 --seeds "$LLM_SEEDS" \
              --team "llm team=:llm" ;;
    hanabi_classical) run hanabi_classical --env openspiel/hanabi-v0 --objective return:player_0 --seeds 0-199 \
              --team "random=:random" ;;
    leduc) run leduc --env openspiel/leduc_poker-v0 --objective return:player_0 --seeds "$LLM_SEEDS" \
              --team "llm vs cfr=:player_0=llm;*=spiel:cfr" --team "llm vs random=:player_0=llm;*=random" ;;
    leduc_classical) run leduc_classical --env openspiel/leduc_poker-v0 --objective return:player_0 --seeds 0-199 \
              --team "random vs cfr=:player_0=random;*=spiel:cfr" --team "cfr vs random=:player_0=spiel:cfr;*=random" \
              --team "cfr vs cfr=:spiel:cfr" --team "random vs random=:random" ;;
    spread) run spread --env mpe/simple_spread-v0 --kw max_cycles=10 --seeds "$LLM_SEEDS" --team "llm team=:llm" ;;
    spread_classical) run spread_classical --env mpe/simple_spread-v0 --kw max_cycles=10 --seeds 0-29 \
              --team "random=:random" --team "scripted=:scripted" ;;
    tictactoe) run tictactoe --env textarena/tictactoe-v0 --objective return:player_0 --seeds "$LLM_SEEDS" \
              --team "llm vs random=:player_0=llm;*=random" ;;
    tictactoe_classical) run tictactoe_classical --env textarena/tictactoe-v0 --objective return:player_0 \
              --seeds 0-49 --team "random vs random=:random" ;;
    kuhn_ta) run kuhn_ta --env textarena/kuhn_poker-v0 --objective return:player_0 --seeds "$LLM_SEEDS" \
              --team "llm vs random=:player_0=llm;*=random" ;;
    kuhn_ta_classical) run kuhn_ta_classical --env textarena/kuhn_poker-v0 --objective return:player_0 \
              --seeds 0-49 --team "random vs random=:random" ;;
    *) echo "unknown bench name $NAME; names: $ALL" >&2; exit 2 ;;
  esac
done
