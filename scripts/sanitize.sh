#!/usr/bin/env bash
# The sanitizer stage of CI (issue 6): builds the whole test suite with AddressSanitizer +
# UndefinedBehaviorSanitizer (g++, build-asan/, -O1) and runs it under CTest, then builds the
# libFuzzer targets (clang, build-fuzz/) and runs each from its seed corpus for a bounded time.
# Any sanitizer report fails the stage (leaks included).
# Usage: scripts/sanitize.sh [FUZZ_SECONDS_PER_TARGET (default 30; 0 skips fuzzing)]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${1:-30}
jobs=${OPSCOPE_JOBS:-2}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
start=$(date +%s)

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
  -DOPSCOPE_SANITIZE=address,undefined -DOPSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j "$jobs"
ctest --test-dir build-asan -j "$jobs" --output-on-failure --timeout 600
echo "sanitize: test suite under ASan+UBSan passed after $(( $(date +%s) - start ))s"

if (( fuzz_seconds > 0 )); then
  scripts/fuzz.sh "$fuzz_seconds"
fi
echo "sanitize: done in $(( $(date +%s) - start ))s"
