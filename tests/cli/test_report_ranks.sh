# test_report_ranks.sh - ranks on the command line: --rank for report,
# diagnose, roofline, the traces, the folded stacks and the HTML report;
# rank_sum and nccl_sum in every format; one process per rank in the Chrome
# and Perfetto traces; the HTML report's Ranks section. On jobs made of two
# real captures by tests/tools/make_job (their CUDA rows are the captures';
# the process info, a launcher and the GPUs are written by the tool), on a
# single capture and on an nsys export.
. "$(dirname "$0")/cli_lib.sh"

a="$PERFKIT_TEST_DATA/cases/case_steady_50.sqlite"
b="$PERFKIT_TEST_DATA/cases/case_steady_44_slow.sqlite"
nsys="$PERFKIT_TEST_DATA/nsys/saxpy-mpi-cuda-rank0.sqlite"
job="$TMP/job.sqlite"
noinfo="$TMP/job_noinfo.sqlite"
"$PERFKIT_TEST_TOOLS/make_job" "$job" "$a" "$b" &&
	"$PERFKIT_TEST_TOOLS/make_job" --no-info "$noinfo" "$a" "$b" ||
	{ echo "FAIL: cannot make the jobs" >&2; exit 1; }
kernels_b=$(sqlite3 "$b" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
kernels_all=$(sqlite3 "$job" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
rank1="rank 1 · node-a · GPU 0 (GPU-e465080f)"

run report --list
expect_status "report --list" 0
expect_out "list names rank_sum" '^rank_sum +Ranks: Steps and Time$'
expect_out "list names nccl_sum" '^nccl_sum +NCCL Collectives by Kind and Message Size$'

# rank_sum: one row per rank, named, in every format
run report --report=rank_sum "$job"
expect_status "rank_sum text" 0
expect_out "rank_sum names rank 0" "rank 0 · node-a · GPU 0 \(GPU-e465080f\) +50 "
expect_out "rank_sum names rank 1" "$(printf '%s' "$rank1" | sed 's/[()]/\\&/g') +44 "
run report --report=rank_sum --format=json "$job"
expect_status "rank_sum json" 0
expect_that "rank_sum json rows" python3 - "$TMP/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
assert r["name"] == "rank_sum" and r["rows_left_out"] == 0, r.keys()
rows = r["rows"]
assert [x["Rank"] for x in rows] == [0, 1] and [x["Steps"] for x in rows] == [50, 44], rows
for x in rows:
    assert x["GPU Busy (ns)"] + x["Idle (ns)"] == x["Window (ns)"], x
    assert x["Step Med (ns)"] <= x["Step P95 (ns)"], x
PY
run report --report=rank_sum --format=csv "$job"
expect_status "rank_sum csv" 0
expect_out "rank_sum csv header" '^Rank,Process,Steps,Step Med \(ns\),Step P95 \(ns\),Window \(ns\)'
expect_that "rank_sum csv rows" test "$(wc -l <"$TMP/out")" -eq 3
run report --report=nccl_sum "$job"
expect_status "nccl_sum on a job without NCCL" 0
expect_out "nccl_sum says no data" '^\(no data\)$'
run report --report=nccl_sum --format=json "$job"
expect_status "nccl_sum json" 0
expect_out "nccl_sum json notes" '"sizes_unknown": ?0'

# ranks from CUDA work where the capture does not number them
run report --report=rank_sum --format=csv "$noinfo"
expect_status "rank_sum without process info" 0
expect_out "rank 0 by pid order" '^0,rank 0 · node-a · GPU 0,50,'
expect_out "rank 1 by pid order" '^1,rank 1 · node-a · GPU 0,44,'

# --rank narrows every report
run report --report=cuda_gpu_kern_sum --format=csv --rank=1 "$job"
expect_status "--rank=1 kern_sum" 0
expect_that "--rank=1 counts rank 1's kernels" test "$(awk -F, 'NR > 1 { n += $3 } END { print n }' "$TMP/out")" -eq "$kernels_b"
run report --report=cuda_gpu_kern_sum --format=csv --rank=0,1 "$job"
expect_that "--rank=0,1 counts every kernel" test "$(awk -F, 'NR > 1 { n += $3 } END { print n }' "$TMP/out")" -eq "$kernels_all"
run report --rank=1 "$job"
expect_status "--rank=1 overview" 0
run report --report=rank_sum --format=csv --rank=1 "$job"
expect_that "--rank=1 rank_sum has rank 1 alone" test "$(sed -n '2,$p' "$TMP/out" | cut -d, -f1 | tr '\n' ' ')" = "1 "
run diagnose --format=json --rank=1 "$job"
expect_status "diagnose --rank=1" 0
expect_that "diagnose --rank=1 finds rank 1's loop" python3 -c '
import json, sys
w = json.load(open(sys.argv[1]))["window"]
assert w["iterations"] == 44, w' "$TMP/out"
run roofline --rank=0 "$job"
expect_status "roofline --rank=0" 0
run report --format=folded "$job"
expect_that "folded: a job's stacks start at their rank" test "$(cut -d';' -f1 "$TMP/out" | sort -u | tr '\n' ,)" = "rank 0,rank 1,"
run report --format=folded --rank=0 "$job"
expect_status "folded --rank=0" 0
expect_that "folded --rank=0 holds rank 0's stacks alone" test "$(cut -d';' -f1 "$TMP/out" | sort -u)" = "rank 0"

# unknown and malformed ranks: one line, exit 2
for cmd in "report --report=rank_sum" "diagnose" "roofline" "report --format=chrome" "report --format=html -o $TMP/x.html"; do
	run $cmd --rank=2 "$job"
	expect_status "$cmd --rank=2" 2
	expect_one_error_line "$cmd --rank=2" 'job\.sqlite has no rank 2 \(ranks 0-1\)$'
done
for bad in "" x "1," "-1" "0;1"; do
	run report --rank="$bad" "$job"
	expect_status "--rank='$bad'" 2
	expect_one_error_line "--rank='$bad'" 'rank'
done
run report --report=cuda_gpu_kern_sum --rank=0 "$nsys"
expect_status "an export's one rank" 0
run report --rank=1 "$nsys"
expect_status "an export has no rank 1" 2
expect_one_error_line "an export has no rank 1" 'has no rank 1 \(rank 0\)$'

# Chrome: one process per rank, its streams under it
run report --format=chrome -o "$TMP/job.json" "$job"
expect_status "chrome job" 0
expect_that "chrome: a process per rank, streams inside" python3 - "$TMP/job.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
assert sorted(names.values()) == ["rank 0 · node-a · GPU 0 (GPU-e465080f)",
                                  "rank 1 · node-a · GPU 0 (GPU-e465080f)"], names
kernel_pids = {e["pid"] for e in ev if e.get("cat") == "kernel"}
assert kernel_pids == set(names), (kernel_pids, names)
threads = {(e["pid"], e["args"]["name"]) for e in ev if e.get("name") == "thread_name"}
assert all((p, "GPU 0 stream 7") in threads for p in names), threads
PY
run report --format=chrome --rank=1 -o "$TMP/rank1.json" "$job"
expect_that "chrome --rank=1: rank 1 alone" python3 - "$TMP/rank1.json" "$kernels_b" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in ev if e.get("name") == "process_name"]
assert names == ["rank 1 · node-a · GPU 0 (GPU-e465080f)"], names
assert sum(e.get("cat") == "kernel" for e in ev) == int(sys.argv[2])
PY
# a single capture keeps its layout: the GPU as its own process
run report --format=chrome -o "$TMP/one.json" "$a"
expect_that "chrome of one process: GPU process" python3 - "$TMP/one.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = [e["args"]["name"] for e in ev if e.get("name") == "process_name"]
assert any(n.startswith("GPU 0") for n in names) and not any(n.startswith("rank") for n in names), names
PY

# Perfetto: the rank's name and label
if "$PERFKIT" report --format=perfetto -o "$TMP/job.pftrace" "$job" 2>/dev/null && command -v protoc >/dev/null; then
	protoc --proto_path="$PERFKIT_SOURCE/report/export/perfetto" --decode=perfetto.protos.Trace \
		perfetto_subset.proto <"$TMP/job.pftrace" >"$TMP/job.pf.txt"
	expect_that "perfetto: rank 1's process label" grep -q 'process_labels: "rank 1"' "$TMP/job.pf.txt"
	expect_that "perfetto: trace checks" python3 "$PERFKIT_SOURCE/tests/tools/check_perfetto_trace.py" \
		"$job" "$TMP/job.pf.txt"
else
	echo "skip: perfetto (no protobuf-c in this build, or no protoc)"
fi

# HTML: the Ranks section for a job, none for one process
run report --format=html -o "$TMP/job.html" "$job"
expect_status "html job" 0
expect_that "html: Ranks section with its tables and plots" python3 - "$TMP/job.html" <<'PY'
import re, sys
h = open(sys.argv[1], encoding="utf-8").read()
assert 'id="ranks"' in h and 'id="rank_sum"' in h and 'id="nccl_sum"' in h, "no Ranks section"
sec = h[h.index('id="ranks"'):]
if "gnuplot was not found" not in sec:
    assert sec.count("<svg") >= 2, "no plots in the Ranks section"
PY
run report --format=html -o "$TMP/one.html" "$a"
expect_that "html: no Ranks section for one process" bash -c "! grep -q 'id=\"ranks\"' '$TMP/one.html'"
run report --format=html --rank=0 -o "$TMP/rank0.html" "$job"
expect_status "html --rank=0" 0

finish
