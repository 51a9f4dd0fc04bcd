#!/usr/bin/env bash
# Installs what the tests need, builds opscope with its tests (Release, warnings as errors),
# runs the whole suite under CTest, then the sanitizer stage: the suite again under
# AddressSanitizer + UndefinedBehaviorSanitizer and each of the 11 libFuzzer targets for 20 s
# (scripts/sanitize.sh). This is the README's test command and what CI runs (about 30 minutes
# on 2 cores from a clean checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
jobs=${OPSCOPE_JOBS:-2}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPSCOPE_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build -j "$jobs" --output-on-failure --timeout 300
scripts/sanitize.sh "${OPSCOPE_FUZZ_SECONDS:-20}"
