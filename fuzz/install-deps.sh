#!/usr/bin/env bash
# Installs what the fuzzing campaign needs and CI does not: clang (libFuzzer),
# AFL++ and llvm (llvm-symbolizer for readable sanitizer reports), with the
# packages every build needs. The normal build and its corpus replay need
# none of these three.
exec "$(dirname "$0")/../scripts/install-deps.sh" clang llvm afl++
