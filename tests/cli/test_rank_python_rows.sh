#!/usr/bin/env bash
# test_rank_python_rows.sh - a job's Python rows are its ranks' own: two
# real captures with module ranges, Python samples and CUDA calls' stacks
# merged into one job (perfkit merge --force: the two runs did not overlap
# in time), `--rank=N` reads module_sum and python_sum exactly as the
# capture of that rank alone gives them (the samples, frames and calls'
# stacks of the other rank left out, the sampling rate kept by the merge
# where the captures agree on it), and without --rank the job holds the
# rows of both.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA/python
a=$D/py_python_hotspots.sqlite
b=$D/py_hf_gpt2_train.sqlite
job=$TMP/job.sqlite

run merge --force -o "$job" "$a" "$b"
expect_status "merge" 0
expect_that "the merge keeps the sampling rate both captures give" \
	test "$(meta "$job" python_sampling_hz)" = "$(meta "$a" python_sampling_hz)"
rank=0
for f in "$a" "$b"; do
	name=$(basename "$f" .sqlite)
	run report --report=module_sum,python_sum --format=csv "$f"
	expect_status "$name alone" 0
	cp "$TMP/out" "$TMP/alone.csv"
	run report --rank=$rank --report=module_sum,python_sum --format=csv "$job"
	expect_status "$name as rank $rank of the job" 0
	expect_that "$name: rank $rank of the job reads its own rows, as the capture alone does" \
		cmp -s "$TMP/out" "$TMP/alone.csv"
	rank=$((rank + 1))
done
both=$(sqlite3 -readonly "$job" "SELECT count(*) FROM PERFKIT_PYTHON_SAMPLES")
each=$(( $(sqlite3 -readonly "$a" "SELECT count(*) FROM PERFKIT_PYTHON_SAMPLES") + \
	$(sqlite3 -readonly "$b" "SELECT count(*) FROM PERFKIT_PYTHON_SAMPLES") ))
expect_that "the job holds both captures' samples ($both of $each)" test "$both" = "$each"
finish
