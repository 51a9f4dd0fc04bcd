#!/usr/bin/env bash
# Reproduces the shipped engine profiles data/engines/*.json from committed data, in one command:
#  * trtllm, vllm, sglang: `opscope calibrate` fits data/calibration/ (measured kernels) on top of
#    data/engines/inputs/<engine>.json (defaults, overheads, public AMD entries, device families);
#    the per-class fit errors go to data/engines/fit/<engine>.txt, which scripts/fit-tables.py
#    copies into docs/accuracy.md's kernel-fit tables;
#  * llama.cpp: scripts/llamacpp-profile.py reduces public scoreboards
#    (data/engines/inputs/llama.cpp-scoreboard.csv) to the same parameters;
#  * roofline.json is written by hand (a transparent profile has nothing to fit).
# Usage: scripts/fit-profiles.sh [path/to/opscope]   (default build/opscope; ~30 s)
set -euo pipefail
cd "$(dirname "$0")/.."
opscope="${1:-build/opscope}"
mkdir -p data/engines/fit
for engine in trtllm vllm sglang; do
  "$opscope" calibrate data/calibration --engine "$engine" \
      --base "data/engines/inputs/$engine.json" -o "data/engines/$engine.json" \
      > "data/engines/fit/$engine.txt"
  echo "data/engines/$engine.json: $(grep -c '' "data/engines/fit/$engine.txt") lines of fit report"
done
python3 scripts/fit-tables.py
echo "docs/accuracy.md: kernel-fit tables"
python3 scripts/llamacpp-profile.py
echo "data/engines/llama.cpp.json"
