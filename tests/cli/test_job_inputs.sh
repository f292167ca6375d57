#!/usr/bin/env bash
# test_job_inputs.sh - every reader command takes a job: several captures
# or a directory of them, read as the one capture `perfkit merge` makes of
# them. report (every report, JSON), diagnose and roofline print what they
# print on the merged capture, but for the name of what they read (diagnose
# of one job's captures; of two programs' it reads each rank in its own
# capture, so each rank's advice is for its own program); diff,
# baseline save and gate take a directory as one run, its merged capture's
# (the same as it; within the budget of a baseline saved from it); top
# --replay takes a job; nothing is left in TMPDIR; --save refuses a job.
# The job is two programs' captures, run one after the other: no one job's,
# which every command refuses unless --force
# (test_job_refuses_same_capture_or_two_jobs.sh), so each is given it.
. "$(dirname "$0")/cli_lib.sh"
D=$PERFKIT_TEST_DATA
a="$D/torch_train.sqlite"
b="$D/clean_loop.sqlite"
export TMPDIR="$TMP/tmpdir"
mkdir "$TMPDIR"

# same_but_name A B: the JSON documents in files A and B are equal once the
# name of what was read is left out (the overview's File row, diagnose's file)
same_but_name() {
	python3 - "$1" "$2" <<'PY'
import json, sys
def docs(path):
    dec, text, out, i = json.JSONDecoder(), open(path).read(), [], 0
    while i < len(text):
        if text[i].isspace(): i += 1; continue
        doc, i = dec.raw_decode(text, i)
        out.append(doc)
    return out
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k != "file" and x.get("Item") != "File"}
    if isinstance(x, list):
        return [strip(v) for v in x if not (isinstance(v, dict) and v.get("Item") == "File")]
    return x
sys.exit(0 if [strip(d) for d in docs(sys.argv[1])] == [strip(d) for d in docs(sys.argv[2])] else 1)
PY
}

"$PERFKIT" merge --force -o "$TMP/merged.sqlite" "$a" "$b" >/dev/null || { echo "FAIL: merge" >&2; exit 1; }
reports=$("$PERFKIT" report --list | awk '{ print $1 }' | paste -sd, -)

# command, then its arguments: the job's captures vs the merged capture
check_same() {
	local name=$1
	shift
	"$PERFKIT" "$@" --force "$a" "$b" >"$TMP/job.json" 2>"$TMP/err"
	status=$?
	expect_status "$name of a job" 0
	"$PERFKIT" "$@" "$TMP/merged.sqlite" >"$TMP/merged.json" 2>/dev/null
	expect_that "$name of a job prints what it prints of the merged capture" \
		same_but_name "$TMP/job.json" "$TMP/merged.json"
}
check_same "every report" report --format=json --report="$reports"
# diagnose reads a job by map and reduce, each rank's own rules on its own
# capture: one job's ranks, each with the program's command, read as
# their merged capture
ranks=("$D/ddp/ddp2_rank0.sqlite" "$D/ddp/ddp2_rank1.sqlite")
"$PERFKIT" merge -o "$TMP/ddp.sqlite" "${ranks[@]}" >/dev/null || fail "merge of the DDP ranks"
"$PERFKIT" diagnose --format=json "${ranks[@]}" >"$TMP/job.json" 2>/dev/null
"$PERFKIT" diagnose --format=json "$TMP/ddp.sqlite" >"$TMP/merged.json" 2>/dev/null
expect_that "diagnose of a job prints what it prints of the merged capture" \
	same_but_name "$TMP/job.json" "$TMP/merged.json"
# The merged capture's command names both programs, so each rank of it
# read as a PyTorch program; read in its own capture, clean_loop's rank
# (no PyTorch kernels, a command without torch) is advised as it is
run diagnose --force --format=json "$a" "$b"
expect_status "diagnose of two programs' captures" 0
expect_that "diagnose of two programs: PyTorch advice for the PyTorch rank's own findings alone" \
	python3 - "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = {r["rank"]: r["process"] for r in d["ranks"]}
own = [f for f in d["findings"] if f["per_rank"]]
by_rank = {}
for f in own:
    by_rank.setdefault(f["share_rank"], []).append("In PyTorch" in f["change"])
# torch_train's rank has PyTorch advice somewhere, clean_loop's nowhere
assert len(by_rank) == 2 and sorted(any(v) for v in by_rank.values()) == [False, True], (by_rank, names)
PY
"$PERFKIT" merge --force -o "$TMP/roof.sqlite" "$D/rollout_naive_roofline.sqlite" \
	"$D/rollout_optimized_roofline.sqlite" >/dev/null
run roofline --force --format=json "$D/rollout_naive_roofline.sqlite" "$D/rollout_optimized_roofline.sqlite"
expect_status "roofline of a job" 0
cp "$TMP/out" "$TMP/job.json"
run roofline --format=json "$TMP/roof.sqlite"
expect_that "roofline of a job: the merged capture's" same_but_name "$TMP/job.json" "$TMP/out"
expect_that "roofline of a job measures both captures' kernels" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["reports"][0]["rows"]
sys.exit(0 if sum(r["Measured"] for r in rows) > 0 and len({r["Kernel"] for r in rows}) > 1 else 1)' "$TMP/job.json"

# the overview names the job by what it was given
run report --force "$a" "$b"
expect_out "the overview names the job" "^File +$a $b"

# a directory: the same job
mkdir "$TMP/job"
cp "$a" "$TMP/job/rank-0.sqlite"
cp "$b" "$TMP/job/rank-1.sqlite"
run report --force --format=json --report=cuda_gpu_kern_sum,overview "$TMP/job"
expect_status "report of a directory" 0
cp "$TMP/out" "$TMP/dir.json"
run report --format=json --report=cuda_gpu_kern_sum,overview "$TMP/merged.sqlite"
expect_that "a directory reads as its captures" same_but_name "$TMP/dir.json" "$TMP/out"
run report --force --format=chrome -o "$TMP/job.trace.json" "$TMP/job"
expect_status "chrome trace of a job" 0
expect_that "chrome trace of a job parses" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' \
	"$TMP/job.trace.json"

# diff, baseline save and gate: a directory is one run, its merged capture's
run diff --force "$TMP/job" "$TMP/merged.sqlite"
expect_status "diff of a job against its merged capture" 0
# the verdict opens with the step (issue 38): the same, rank with rank
expect_out "diff of a job against its merged capture" "its step takes the same wall time as BASE's \(within noise\)"
expect_that "diff of a job against its merged capture: every kernel, copy and range the same, totals too" \
	python3 - "$PERFKIT" "$TMP/job" "$TMP/merged.sqlite" <<'PY'
import json, subprocess, sys
out = subprocess.run([sys.argv[1], "diff", "--force", "--format=json", sys.argv[2], sys.argv[3]],
                     capture_output=True, text=True, check=True).stdout
reps = {r["name"]: r for r in json.loads(out)["reports"]}
entries = [x for n in ("diff_kernels", "diff_copies", "diff_ranges", "diff_api") for x in reps[n]["rows"]]
assert entries and all(x["Change"] == "same" for x in entries), entries
assert all(x["Delta"] == 0 for x in reps["diff_totals"]["rows"]), reps["diff_totals"]
PY
run baseline save -o "$TMP/baseline.json" "$TMP/merged.sqlite"
expect_status "baseline of a job's merged capture" 0
run gate --force --baseline="$TMP/baseline.json" "$TMP/job"
expect_status "gate of a job against its merged capture's baseline" 0
expect_out "gate of a job against its merged capture's baseline" "^gate passed"
# a job whose own loop search settles elsewhere has its loop found again by
# the other side's marker, on its merged capture while it is open (it
# cannot be opened again by its name)
run diff --force "$b" "$TMP/job"
expect_status "diff of a capture against a job whose loop is marked otherwise" 0
expect_that "the job's loop found again by the capture's marker" python3 - "$PERFKIT" "$b" "$TMP/job" <<'PY'
import json, subprocess, sys
out = subprocess.run([sys.argv[1], "diff", "--force", "--format=json", sys.argv[2], sys.argv[3]],
                     capture_output=True, text=True, check=True).stdout
loops = {r["Capture"]: r for r in {r["name"]: r for r in json.loads(out)["reports"]}["diff_loops"]["rows"]}
assert loops["NEW"]["Loop"] == loops["BASE"]["Loop"] and loops["NEW"]["Iterations"] > 0, loops
PY
run baseline save -o "$TMP/baseline-b.json" "$b"
run gate --force --baseline="$TMP/baseline-b.json" "$TMP/job"
expect_status "gate of a job against another program's baseline" 2
expect_one_error_line "gate of a job against another program's baseline" "job is a capture of '.*' but the baseline"

# top --replay: a job, and one line for one it cannot read
run top --replay "$a" "$TMP/missing.sqlite"
if grep -q "built without ncurses" "$TMP/err"; then
	skip "top --replay of a job" "this perfkit was built without ncurses"
else
	expect_status "top --replay of a job with a missing capture" 2
	expect_one_error_line "top --replay of a job with a missing capture" "missing.sqlite: no such file"
	run top "$a" "$b"
	expect_status "top follows one capture" 2
	expect_one_error_line "top follows one capture" "--replay replays a job"
fi

# --save stores findings in one capture
run diagnose --force --save "$a" "$b"
expect_status "diagnose --save of a job" 2
expect_one_error_line "diagnose --save of a job" "merge the job first"

expect_that "nothing is left in TMPDIR" [ -z "$(ls -A "$TMPDIR")" ]
finish
