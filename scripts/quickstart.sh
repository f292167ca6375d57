#!/usr/bin/env bash
# quickstart.sh - the README's main job: install what perfkit needs, build it,
# then capture a reference workload when this machine has a GPU, or report on
# a bundled real capture (tests/data/) when it has none.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
perfkit=build/cli/perfkit

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
	[ -x build/workloads/hash_embedding ]; then
	capture=perfkit-quickstart.sqlite
	"$perfkit" run -f -o "$capture" -- build/workloads/hash_embedding --variant=naive --rows=100K --iters=20
else
	capture=tests/data/hash_embedding_naive.sqlite
	echo "perfkit: no GPU here; reporting on the bundled capture $capture"
fi
"$perfkit" report "$capture"
"$perfkit" diagnose "$capture"
