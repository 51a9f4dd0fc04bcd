#!/usr/bin/env bash
# Installs what opscope needs to build (Debian packages), then builds build/opscope (Release)
# and the Python package, and installs the package for Debian's python3 (into
# /usr/local/lib/python3.N/dist-packages, so `import opscope` works from any directory).
# This is the first half of the README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DOPSCOPE_BUILD_TESTS=OFF -DOPSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build build -j "${OPSCOPE_JOBS:-2}" --target opscope opscope_python
if ! cmake --install build --component python >/dev/null; then
  echo "build.sh: could not install the Python package (not root?); use it from the tree:" \
       "PYTHONPATH=$PWD/build/python /usr/bin/python3" >&2
fi
