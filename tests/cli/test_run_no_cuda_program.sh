#!/usr/bin/env bash
# A program that never touches CUDA still gives a valid, empty capture (named
# perfkit-PROGRAM-N.sqlite, first free N) and a note saying why it is empty.
set -u
. "$(dirname "$0")/cli_lib.sh"

if built_without_cupti; then
	skip "the capture of a program without CUDA" "built without CUPTI"
	finish
	exit
fi

cd "$TMP"
run run -- true
expect_status "a program without CUDA" 0
if [ -f perfkit-true-1.sqlite ]; then pass "default name perfkit-true-1.sqlite"; else
	fail "default name perfkit-true-1.sqlite missing: $(ls)"; fi
expect_err "a program without CUDA" "^perfkit: note: true made no CUDA calls"
if [ -s "$TMP/out" ]; then fail "perfkit wrote to the program's stdout: $(cat "$TMP/out")"; else
	pass "the program's stdout is its own"; fi
run report perfkit-true-1.sqlite
expect_status "the empty capture is valid" 0
# Nothing ran on the GPU: no rule may claim the host "dominates" it.
run diagnose perfkit-true-1.sqlite
expect_status "diagnose of the empty capture" 0
expect_out "diagnose of the empty capture" "^No findings"
expect_out "diagnose says why" "not run: every rule: the window holds no GPU activity"

run run -- true
if [ -f perfkit-true-2.sqlite ]; then pass "second run takes the next free name"; else
	fail "second run did not take the next free name: $(ls)"; fi
finish
