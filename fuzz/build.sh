#!/usr/bin/env bash
# Builds the fuzz harnesses linked with a fuzzing engine, under AddressSanitizer
# and UBSan, in a build folder of their own (the normal gcc build never needs
# clang; it only replays the corpora, see fuzz/CMakeLists.txt).
#
#   fuzz/build.sh [libfuzzer|afl] [JOBS]
#     libfuzzer  clang -fsanitize=fuzzer            -> build-fuzz/fuzz/fuzz_<target>
#     afl        afl-clang-fast, AFL++'s driver     -> build-afl/fuzz/fuzz_<target>
# Everything the harnesses reach (libprof, report/) is instrumented for
# coverage; SQLite and cJSON are the system's and are not.
set -euo pipefail
cd "$(dirname "$0")/.."
engine=${1:-libfuzzer}
jobs=${2:-1}
case $engine in
  libfuzzer) dir=build-fuzz; cc=clang; cxx=clang++ ;;
  afl)       dir=build-afl;  cc=afl-clang-fast; cxx=afl-clang-fast++ ;;
  *) echo "usage: $0 [libfuzzer|afl] [JOBS]" >&2; exit 2 ;;
esac
command -v "$cc" >/dev/null || { echo "$0: $cc not found (fuzz/install-deps.sh)" >&2; exit 2; }
# afl-cc prints a banner per file otherwise.
export AFL_QUIET=1
cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" \
      -DPERFKIT_SANITIZE=ON -DPERFKIT_NO_CUDA=ON -DPERFKIT_FUZZ=ON >/dev/null
cmake --build "$dir" --target fuzzers -j"$jobs"
