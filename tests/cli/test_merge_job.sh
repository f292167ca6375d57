#!/usr/bin/env bash
# test_merge_job.sh - `perfkit merge`: the captures of a job as one capture.
# Real captures merged keep every row (kernel summaries add up per name),
# a directory is its captures in natural order, a copy of a capture
# rewritten as another host's keeps its processes apart from the
# original's (same pid, other host), as does a second capture of one host
# whose pid repeats; PERFKIT_META says what the job is. Bad input is one
# line and exit 2. The two programs' captures were run one after the
# other, so they are no one job's: merge refuses them unless --force
# (test_job_refuses_same_capture_or_two_jobs.sh), which these merges give;
# one capture given twice is refused even so.
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
D=$PERFKIT_TEST_DATA
a="$D/torch_train.sqlite"
b="$D/clean_loop.sqlite"

meta() { sqlite3 "$1" "SELECT value FROM PERFKIT_META WHERE key = '$2'"; }

# kern_sum_instances FILE...: "name<TAB>instances" of cuda_gpu_kern_sum, summed over the files
kern_sum_instances() {
	for f in "$@"; do "$PERFKIT" report --report=cuda_gpu_kern_sum --format=json "$f"; done |
		python3 -c '
import json, sys
dec, text, totals = json.JSONDecoder(), sys.stdin.read(), {}
i = 0
while i < len(text):
    if text[i].isspace(): i += 1; continue
    doc, i = dec.raw_decode(text, i)
    for row in doc["reports"][0]["rows"]:
        totals[row["Name"]] = totals.get(row["Name"], 0) + row["Instances"]
for name in sorted(totals): print(f"{name}\t{totals[name]}")'
}

run merge --force -o "$TMP/job.sqlite" "$a" "$b"
expect_status "merge of two captures" 0
expect_out "merge of two captures" "job.sqlite: 2 captures of 1 host"
expect_out "merge of two captures" "^time base: one host\$"
want=$(( $(sqlite3 "$a" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") +
	 $(sqlite3 "$b" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") ))
got=$(sqlite3 "$TMP/job.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
expect_that "merged job holds every kernel ($got of $want)" [ "$got" = "$want" ]
expect_that "kernel summary of the job adds up per name" \
	[ "$(kern_sum_instances "$TMP/job.sqlite")" = "$(kern_sum_instances "$a" "$b")" ]
expect_that "meta: 2 captures" [ "$(meta "$TMP/job.sqlite" job_captures)" = 2 ]
expect_that "meta: 1 host" [ "$(meta "$TMP/job.sqlite" job_hosts)" = 1 ]
expect_that "meta: one host's time base" [ "$(meta "$TMP/job.sqlite" time_base)" = "one host" ]
expect_that "meta: no alignment error" [ "$(meta "$TMP/job.sqlite" time_error_ns)" = 0 ]
want=$(( $(meta "$a" start_ns) < $(meta "$b" start_ns) ? $(meta "$a" start_ns) : $(meta "$b" start_ns) ))
expect_that "meta: the job starts with its first capture" [ "$(meta "$TMP/job.sqlite" start_ns)" = "$want" ]
expect_that "API calls still find their kernels" [ "$(sqlite3 "$TMP/job.sqlite" \
	"SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
	 ON r.correlationId = k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24)")" = \
	"$(( $(sqlite3 "$a" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId") +
	     $(sqlite3 "$b" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId") ))" ]

# a directory: its captures in natural order (rank 2 before rank 10)
mkdir "$TMP/dir"
cp "$a" "$TMP/dir/job-10.sqlite"
cp "$b" "$TMP/dir/job-2.sqlite"
run merge --force -o "$TMP/dir.sqlite" "$TMP/dir"
expect_status "merge of a directory" 0
expect_that "a directory holds the same job" \
	[ "$(kern_sum_instances "$TMP/dir.sqlite")" = "$(kern_sum_instances "$TMP/job.sqlite")" ]
expect_that "a directory's captures come in natural order" \
	[ "$(meta "$TMP/dir.sqlite" command)" = "$(meta "$b" command); $(meta "$a" command)" ]

# another host's copy: same pid, other host; kept apart by the host bits
cp "$a" "$TMP/other-host.sqlite"
sqlite3 "$TMP/other-host.sqlite" "UPDATE PERFKIT_META SET value = 'node-b' WHERE key = 'host'"
run merge -o "$TMP/hosts.sqlite" "$a" "$TMP/other-host.sqlite"
expect_status "merge of two hosts" 0
expect_out "merge of two hosts" "2 captures of 2 hosts"
expect_out "merge of two hosts" "host node-b: 1 capture, not moved"
expect_that "two hosts' processes of one pid stay two" [ "$(sqlite3 "$TMP/hosts.sqlite" \
	"SELECT count(DISTINCT globalPid) || ' ' || count(DISTINCT (globalPid >> 24) & 16777215)
	 || ' ' || group_concat(globalPid >> 48) FROM PROCESSES")" = "2 1 0,1" ]
expect_that "meta: 2 hosts" [ "$(meta "$TMP/hosts.sqlite" job_hosts)" = 2 ]
expect_that "meta: hosts named" [ "$(meta "$TMP/hosts.sqlite" host)" = "$(meta "$a" host), node-b" ]
# without clock pairs two hosts are not moved, and the error is not claimed
expect_that "meta: unaligned without clock pairs" \
	[ "$(meta "$TMP/hosts.sqlite" time_base)" = "unaligned (not every host recorded clock pairs)" ]
expect_that "meta: no error claimed" [ -z "$(meta "$TMP/hosts.sqlite" time_error_ns)" ]
# each kernel is still launched by its own process's call: the range report doubles
instances() {
	"$PERFKIT" report --report=nvtx_kern_sum --format=csv "$1" |
		python3 -c 'import csv, sys; print(sum(int(r["Instances"]) for r in csv.DictReader(sys.stdin)))'
}
single=$(instances "$a")
expect_that "ranges' kernels of two hosts add up ($single twice)" \
	[ "$(instances "$TMP/hosts.sqlite")" = $((single * 2)) ]

# one host, a pid that repeats (two runs one after the other, the second
# a copy of the first started a second after it ended): kept apart too
cp "$a" "$TMP/later.sqlite"
sqlite3 "$TMP/later.sqlite" "UPDATE PERFKIT_META SET value = value +
	(SELECT value FROM PERFKIT_META WHERE key = 'duration_ns') + 1000000000 WHERE key = 'start_ns'"
run merge --force -o "$TMP/again.sqlite" "$a" "$TMP/later.sqlite"
expect_status "merge of two runs whose pid repeats" 0
expect_that "a repeated pid of one host stays two processes" \
	[ "$(sqlite3 "$TMP/again.sqlite" "SELECT count(DISTINCT globalPid) FROM PROCESSES")" = 2 ]
# one capture given twice would count twice: refused, --force or not
run merge --force -o "$TMP/twice.sqlite" "$a" "$a"
expect_status "merge of one capture twice" 2
expect_one_error_line "merge of one capture twice" "given twice"

# bad input
run merge "$a"
expect_status "merge without -o" 2
expect_one_error_line "merge without -o" "needs the output"
run merge -o "$TMP/none.sqlite"
expect_status "merge without captures" 2
expect_one_error_line "merge without captures" "needs the captures"
run merge -o "$TMP/missing-out.sqlite" "$a" "$TMP/missing.sqlite"
expect_status "merge of a missing file" 2
expect_one_error_line "merge of a missing file" "missing.sqlite: no such file"
expect_that "a failed merge leaves no output" [ ! -e "$TMP/missing-out.sqlite" ]
mkdir "$TMP/empty"
run merge -o "$TMP/x.sqlite" "$TMP/empty"
expect_status "merge of an empty directory" 2
expect_one_error_line "merge of an empty directory" "holds no captures"
run merge -o "$TMP/job.sqlite" "$a"
expect_status "merge over an existing file" 2
expect_one_error_line "merge over an existing file" "job\.sqlite exists; use -f to overwrite it"
run merge -f -o "$TMP/job.sqlite" "$TMP/job.sqlite" "$a"
expect_status "merge into one of its inputs" 2
expect_one_error_line "merge into one of its inputs" "the output is one of the captures"
expect_that "the input survives" [ "$(meta "$TMP/job.sqlite" job_captures)" = 2 ]

finish
