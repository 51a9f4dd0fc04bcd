#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz/, clang, ASan + UBSan) and runs each for a bounded
# time from its seed corpus. Any crash, leak, sanitizer report, timeout or out-of-memory fails
# the run and leaves the input in build-fuzz/artifacts/. fuzz/README.md has the details.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]
#   OPSCOPE_JOBS=N         build parallelism (default 2)
#   OPSCOPE_FUZZ_CXX=...   the clang++ to use (default: clang++-19, else clang++)
#   OPSCOPE_FUZZ_NOBUILD=1 run what is built
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-60}
shift || true
all=(fuzz_graph_json fuzz_expr fuzz_hf_config fuzz_hf_quant fuzz_onnx fuzz_device_json fuzz_cli fuzz_gguf
     fuzz_safetensors fuzz_engine_profile fuzz_measurements)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
build=$root/build-fuzz
jobs=${OPSCOPE_JOBS:-2}

cxx=${OPSCOPE_FUZZ_CXX:-}
if [[ -z "$cxx" ]]; then
  if command -v clang++-19 >/dev/null; then cxx=clang++-19; else cxx=clang++; fi
fi
if [[ -z "${OPSCOPE_FUZZ_NOBUILD:-}" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_COMPILER="$cxx" \
    -DOPSCOPE_FUZZ=ON -DOPSCOPE_BUILD_TESTS=OFF -DOPSCOPE_BUILD_BENCH=OFF >/dev/null
  cmake --build "$build" -j "$jobs" --target "${targets[@]}"
fi

# Seed corpora: the repository's fixtures of each kind plus the hostile corpus.
seed() {  # seed TARGET FILE...
  local dir=$build/corpus/$1
  shift
  mkdir -p "$dir"
  local f
  for f in "$@"; do
    [[ -f "$f" ]] || continue
    cp "$f" "$dir/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
  done
}
shopt -s nullglob
seed fuzz_graph_json tests/golden/*.json examples/*.json tests/hostile/graph/*
seed fuzz_expr fuzz/seeds/expr/* tests/hostile/expr/*
seed fuzz_hf_config data/presets/*.json tests/hostile/hf/* tests/fixtures/hf/*/config.json \
  tests/fixtures/hf/*.json
seed fuzz_hf_quant tests/fixtures/hf/*/hf_quant_config.json
seed fuzz_onnx tests/fixtures/onnx/*.onnx tests/hostile/onnx/*
seed fuzz_device_json data/devices.json tests/golden/device.json tests/hostile/device/*
seed fuzz_cli fuzz/seeds/cli/*
seed fuzz_gguf tests/fixtures/gguf/*.gguf
seed fuzz_safetensors tests/fixtures/safetensors/*.safetensors tests/fixtures/safetensors/*/*.safetensors
seed fuzz_engine_profile data/engines/*.json
seed fuzz_measurements fuzz/seeds/measurements/*
shopt -u nullglob

mkdir -p "$build/artifacts" "$build/logs"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=0
for t in "${targets[@]}"; do
  flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
         -artifact_prefix="$build/artifacts/$t-" -print_final_stats=1)
  case $t in
    fuzz_graph_json|fuzz_hf_config|fuzz_hf_quant|fuzz_device_json|fuzz_safetensors|fuzz_engine_profile)
      flags+=(-dict=fuzz/json.dict) ;;
    fuzz_gguf) flags+=(-dict=fuzz/gguf.dict) ;;
    fuzz_cli) flags+=(-close_fd_mask=2 -max_len=512) ;;
    fuzz_expr) flags+=(-max_len=8192) ;;
  esac
  start=$(date +%s)
  if "$build/fuzz/$t" "${flags[@]}" "$build/corpus/$t" >"$build/logs/$t.log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed=1
  fi
  stats=$(grep -E '^#[0-9]+' "$build/logs/$t.log" | tail -1 || true)
  echo "$t: $status in $(( $(date +%s) - start ))s: $stats"
  if [[ $status == FAILED ]]; then tail -40 "$build/logs/$t.log"; fi
done
exit $failed
