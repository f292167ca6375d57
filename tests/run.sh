#!/usr/bin/env bash
# The test command: builds perfkit twice (plain, and AddressSanitizer + UBSan)
# and runs every unit and command-line test in both builds.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

# The plain build has MPI, so the MPI map and reduce of a job is tested
# (tests/cli/test_job_mapreduce.sh under mpirun --oversubscribe -n 3).
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFKIT_MPI=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

# The sanitizer build skips CUDA code (device code is not what it checks).
cmake -S . -B build-asan -DPERFKIT_SANITIZE=ON -DPERFKIT_NO_CUDA=ON \
      -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
