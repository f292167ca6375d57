#!/usr/bin/env bash
# test_outputs_never_clobbered.sh - every writer of a file the user names
# (report --format=... -o, diff -o, baseline save -o, gate --junit,
# roofline --plot, merge -o) follows one rule (libprof's prof/output.h):
# an existing file is replaced only with --force (-f where the command has
# it) and only once the new one is complete; a symbolic link is never
# written through; a FIFO, a device or a directory is refused; a usage
# error found after the output was opened leaves the old file as it was;
# no temporary file is left behind. Before, each of these overwrote the
# file, wrote through the link into its target, and a late usage error
# emptied the output.
set -u
. "$(dirname "$0")/cli_lib.sh"
DATA=$(cd "$(dirname "$0")/../data" && pwd)
X=$DATA/rollout_naive.sqlite
ROOF=$DATA/rollout_naive_roofline.sqlite
OUT=$TMP/outs
mkdir "$OUT"

# precious FILE: a file the user cares about, and a copy to compare it with.
precious() { echo "precious $(basename "$1")" >"$1"; cp "$1" "$1.was"; }
unchanged() { cmp -s "$1" "$1.was"; }
no_temp_left() { [ -z "$(find "$OUT" -name '.*.perfkit-*' -print -quit)" ]; }

# ---- report: every format --------------------------------------------------------
formats="text csv json chrome folded html"
if "$PERFKIT" report --format=perfetto -o "$TMP/probe.pftrace" "$X" >/dev/null 2>&1; then
	formats="$formats perfetto"
else
	skip "report --format=perfetto -o" "built without protobuf-c"
fi
for f in $formats; do
	case $f in
	text | csv | json) args=(--format=$f --report=cuda_gpu_kern_sum) ;;
	*) args=(--format=$f) ;;
	esac
	"$PERFKIT" report "${args[@]}" "$X" >"$OUT/$f.want" 2>/dev/null

	out=$OUT/$f.out
	precious "$out"
	run report "${args[@]}" -o "$out" "$X"
	expect_status "$f -o onto an existing file" 2
	expect_one_error_line "$f -o onto an existing file" "$f\.out exists; use --force to overwrite it"
	expect_that "$f: the existing file is unchanged" unchanged "$out"

	run report "${args[@]}" --force -o "$out" "$X"
	expect_status "$f --force -o" 0
	expect_that "$f --force: the file holds what stdout gets" cmp -s "$out" "$OUT/$f.want"

	precious "$OUT/$f.victim"
	ln -s "$f.victim" "$OUT/$f.link"
	run report "${args[@]}" --force -o "$OUT/$f.link" "$X"
	expect_status "$f --force -o onto a symbolic link" 2
	expect_one_error_line "$f -o onto a symbolic link" "$f\.link is a symbolic link; perfkit does not write through one"
	expect_that "$f: the link's target is unchanged" unchanged "$OUT/$f.victim"
	expect_that "$f: the link is still a link" test -L "$OUT/$f.link"
done

# A usage error found once the output is open (the range is looked up in
# the capture) leaves the old output byte for byte.
for f in chrome folded; do
	out=$OUT/late-$f.out
	precious "$out"
	run report --format=$f --range=nosuch --force -o "$out" "$X"
	expect_status "$f --range=nosuch" 2
	expect_one_error_line "$f --range=nosuch" "no NVTX range is named 'nosuch'"
	expect_that "$f --range=nosuch: the old output is unchanged" unchanged "$out"
	run report --format=$f --from=10s --to=5s --force -o "$out" "$X"
	expect_status "$f --from=10s --to=5s" 2
	expect_that "$f --from after --to: the old output is unchanged" unchanged "$out"
done

# What is not a regular file is never written, --force or not; a FIFO
# would have blocked the writer.
mkfifo "$OUT/fifo"
run_bounded() { timeout 60 "$PERFKIT" "$@" >"$TMP/out" 2>"$TMP/err"; status=$?; }
run_bounded report --format=chrome --force -o "$OUT/fifo" "$X"
expect_status "-o onto a FIFO" 2
expect_one_error_line "-o onto a FIFO" "fifo is a FIFO, not a regular file"
expect_that "the FIFO is still a FIFO" test -p "$OUT/fifo"
run report --format=chrome --force -o "$OUT" "$X"
expect_status "-o onto a directory" 2
expect_one_error_line "-o onto a directory" "outs is a directory, not a file"
if [ "$(id -u)" = 0 ] && mknod "$OUT/null" c 1 3 2>/dev/null; then
	run report --format=chrome --force -o "$OUT/null" "$X"
	expect_status "-o onto a character device" 2
	expect_one_error_line "-o onto a character device" "null is a character device, not a regular file"
	expect_that "the device is still a device" test -c "$OUT/null"
else
	skip "-o onto a character device made with mknod" "not root, or mknod refused"
fi

# ---- diff -o -----------------------------------------------------------------
"$PERFKIT" diff "$X" "$DATA/rollout_optimized.sqlite" >"$OUT/diff.want" 2>/dev/null
precious "$OUT/diff.out"
run diff -o "$OUT/diff.out" "$X" "$DATA/rollout_optimized.sqlite"
expect_status "diff -o onto an existing file" 2
expect_one_error_line "diff -o onto an existing file" "diff\.out exists; use --force"
expect_that "diff: the existing file is unchanged" unchanged "$OUT/diff.out"
run diff --force -o "$OUT/diff.out" "$X" "$DATA/rollout_optimized.sqlite"
expect_status "diff --force -o" 0
expect_that "diff --force: the file holds what stdout gets" cmp -s "$OUT/diff.out" "$OUT/diff.want"

# ---- baseline save -o, gate --junit ----------------------------------------------
run baseline save -o "$OUT/fresh.json" "$X"
expect_status "baseline save to a new file" 0
precious "$OUT/baseline.json"
run baseline save -o "$OUT/baseline.json" "$X"
expect_status "baseline save -o onto an existing file" 2
expect_one_error_line "baseline save onto an existing file" "baseline\.json exists; use -f to overwrite it"
expect_that "baseline: the existing file is unchanged" unchanged "$OUT/baseline.json"
run baseline save -f -o "$OUT/baseline.json" "$X"
expect_status "baseline save -f" 0
expect_that "baseline save -f: the file is the baseline" cmp -s "$OUT/baseline.json" "$OUT/fresh.json"
precious "$OUT/baseline.victim"
ln -s baseline.victim "$OUT/baseline.link"
run baseline save -f -o "$OUT/baseline.link" "$X"
expect_status "baseline save -f onto a symbolic link" 2
expect_that "baseline: the link's target is unchanged" unchanged "$OUT/baseline.victim"

run gate --baseline "$OUT/fresh.json" --junit="$OUT/fresh.xml" "$X"
expect_status "gate --junit to a new file" 0
precious "$OUT/junit.xml"
run gate --baseline "$OUT/fresh.json" --junit="$OUT/junit.xml" "$X"
expect_status "gate --junit onto an existing file" 2
expect_one_error_line "gate --junit onto an existing file" "junit\.xml exists; use --force"
expect_that "gate: the existing file is unchanged" unchanged "$OUT/junit.xml"
run gate --baseline "$OUT/fresh.json" --junit="$OUT/junit.xml" --force "$X"
expect_status "gate --junit --force" 0
expect_that "gate --force: the file is the JUnit XML" cmp -s "$OUT/junit.xml" "$OUT/fresh.xml"

# ---- roofline --plot DIR ------------------------------------------------------------
mkdir "$OUT/plot"
precious "$OUT/plot/roofline.gp"
run roofline --plot "$OUT/plot" "$ROOF"
expect_status "roofline --plot over an existing script" 2
expect_one_error_line "roofline --plot over an existing script" "roofline\.gp exists; use --force"
expect_that "roofline: the existing script is unchanged" unchanged "$OUT/plot/roofline.gp"
expect_that "roofline: no data file is written either" test ! -e "$OUT/plot/roofline-points.dat"
precious "$OUT/plot.victim"
ln -s ../plot.victim "$OUT/plot/roofline-points.dat"
run roofline --plot "$OUT/plot" --force "$ROOF"
expect_status "roofline --plot onto a symbolic link" 2
expect_that "roofline: the link's target is unchanged" unchanged "$OUT/plot.victim"
expect_that "roofline: the script is unchanged too" unchanged "$OUT/plot/roofline.gp"
rm "$OUT/plot/roofline-points.dat"
run roofline --plot "$OUT/plot" --force "$ROOF"
expect_status "roofline --plot --force" 0
expect_that "roofline --force: the script is replaced" grep -q "^plot 'roofline-roofs.dat'" "$OUT/plot/roofline.gp"
# one line a kernel with FLOPs, as roofline's own rows count them
points=$(grep -vc '^#' "$OUT/plot/roofline-points.dat")
rows=$("$PERFKIT" roofline --format=csv "$ROOF" | tail -n +2 | wc -l)
expect_that "roofline --force: the points are written ($points of $rows kernels)" \
	test "$points" -gt 0 -a "$points" -le "$rows"

# ---- merge -o ------------------------------------------------------------------------
precious "$OUT/job.sqlite"
run merge -o "$OUT/job.sqlite" "$X" "$DATA/rollout_optimized.sqlite"
expect_status "merge -o onto an existing file" 2
expect_one_error_line "merge -o onto an existing file" "job\.sqlite exists; use -f to overwrite it"
expect_that "merge: the existing file is unchanged" unchanged "$OUT/job.sqlite"
precious "$OUT/job.victim"
ln -s job.victim "$OUT/job.link"
run merge -f -o "$OUT/job.link" "$X" "$DATA/rollout_optimized.sqlite"
expect_status "merge -f onto a symbolic link" 2
expect_that "merge: the link's target is unchanged" unchanged "$OUT/job.victim"
run merge -f -o "$OUT/job.sqlite" "$X" "$DATA/rollout_optimized.sqlite"
expect_status "merge -f" 0
kernels() { sqlite3 -readonly "$1" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"; }
expect_that "merge -f: the file is the merged capture" \
	test "$(kernels "$OUT/job.sqlite")" = $(($(kernels "$X") + $(kernels "$DATA/rollout_optimized.sqlite")))

expect_that "no temporary file is left behind" no_temp_left
finish
