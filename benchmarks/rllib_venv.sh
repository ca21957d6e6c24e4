#!/usr/bin/env bash
# RLlib PPO on a lang_pz env through lang_pz.interop, in a venv of its own.
#
# Why a separate venv: ray[rllib] 2.60 pins gymnasium==1.2.2 and numpy 2.x, while lang_pz's main
# venv has gymnasium 1.4 and overcooked-ai's numpy<2. lang_pz's core (Pistonball, classic, task
# envs) runs on either, so RLlib gets its own venv with lang_pz installed from this checkout.
#
#   bash benchmarks/rllib_venv.sh            # venv in ~/.cache/lang_pz/rllib-venv (kept for reuse)
#   RLLIB_VENV=/tmp/v bash benchmarks/rllib_venv.sh
#
# Prints the install time and size of the venv, then trains RLlib PPO for a few hundred steps
# (examples/interop_rllib.py). torch is pinned to 2.13.0 (the CPU build; a newer torch from PyPI is
# the multi-GB CUDA build).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${RLLIB_VENV:-$HOME/.cache/lang_pz/rllib-venv}"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import ray.rllib" 2>/dev/null; then
  start=$(date +%s)
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet torch==2.13.0 "ray[rllib]==2.60.0" .
  end=$(date +%s)
  echo "install: $((end - start)) s, $(du -sm "$VENV" | cut -f1) MB in $VENV"
fi
"$VENV/bin/python" -c "import ray, gymnasium, numpy; print('ray', ray.__version__, 'gymnasium', gymnasium.__version__, 'numpy', numpy.__version__)"
RAY_AUTH_MODE=disabled PYTHONPATH="$PWD" "$VENV/bin/python" examples/interop_rllib.py "$@"
