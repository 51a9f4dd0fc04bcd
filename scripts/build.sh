#!/usr/bin/env bash
# Installs what opscope needs to build (Debian packages), then builds build/opscope (Release).
# This is the first half of the README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DOPSCOPE_BUILD_TESTS=OFF -DOPSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build build -j "${OPSCOPE_JOBS:-2}" --target opscope
