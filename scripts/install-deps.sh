#!/usr/bin/env bash
# Installs every Debian package opscope needs to build and test (idempotent; needs root).
# Usage: scripts/install-deps.sh [--test]   (--test adds what only the test suite needs)
set -euo pipefail
packages=(
  g++ cmake ninja-build pkg-config
  libsimdjson-dev nlohmann-json3-dev libfmt-dev libcli11-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  # The Python package (src/python/): pybind11 on Debian's python3, numpy for its columns;
  # pip, venv and setuptools to install it into a virtual environment (README "Python").
  python3-dev pybind11-dev python3-numpy python3-pip python3-venv python3-setuptools
)
if [[ "${1:-}" == "--test" ]]; then
  # clang 19 for the libFuzzer targets (fuzz/): clang 14 cannot use libstdc++ 12's std::expected.
  packages+=(libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev clang-19
             libclang-rt-19-dev python3
             python3-pytest python3-pandas  # the Python package's tests (tests/python/)
             chromium)  # headless Chromium: the HTML report test
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
