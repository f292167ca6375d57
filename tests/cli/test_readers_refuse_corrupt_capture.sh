#!/usr/bin/env bash
# test_readers_refuse_corrupt_capture.sh - every reader judges a damaged
# capture the same way, whatever part of it its output needs: one line
# naming the file ("corrupt database") and status 2 from report (one
# capture, and a job by map and reduce and by merge), diagnose, roofline,
# diff (either side), baseline save, gate, merge, top FILE and top
# --replay. Roofline used to read only the metrics table of a capture
# without metrics and say "no hardware metrics", exit 0, where report and
# diagnose refused the file. The damaged copies are real captures with one
# page overwritten (dd): the root page of the kernel table, of an index,
# of StringIds, a page in the middle of the file zeroed, and a page of an
# nsys export; SQLite's own check (sqlite3's quick_check) confirms each
# is damaged. The same with report's output to a file (-o), where the
# whole file is checked on a thread beside the report: the same one line,
# and no file put in place. diagnose tells the line report does. An undamaged copy still reads.
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }
D=$PERFKIT_TEST_DATA
good=$D/gpu_work.sqlite
other=$D/clean_loop.sqlite

# damaged NAME SRC PAGE FILL: $TMP/NAME.sqlite, SRC with page PAGE (1-based)
# overwritten with bytes FILL ('x' or '\0')
damaged() {
	local out=$TMP/$1.sqlite size
	cp "$2" "$out"
	size=$(sqlite3 "$out" "PRAGMA page_size")
	head -c "$size" /dev/zero | tr '\0' "$4" |
		dd of="$out" bs="$size" seek=$(($3 - 1)) conv=notrunc 2>/dev/null
	[ "$(sqlite3 "$out" "PRAGMA quick_check" 2>/dev/null)" != ok ] ||
		{ echo "FAIL: $1 is not damaged" >&2; exit 1; }
}

root() { sqlite3 "$1" "SELECT rootpage FROM sqlite_master WHERE name = '$2'"; }
pages=$(sqlite3 "$good" "PRAGMA page_count")
damaged kernels "$good" "$(root "$good" CUPTI_ACTIVITY_KIND_KERNEL)" x
damaged index "$good" "$(root "$good" perfkit_kernel_corr)" x
damaged strings "$good" "$(root "$good" StringIds)" x
damaged middle "$good" $((pages / 2)) '\0'
nsys=$D/nsys/cloverleaf-cuda.sqlite
damaged nsys "$nsys" $(($(sqlite3 "$nsys" "PRAGMA page_count") / 2)) x

"$PERFKIT" baseline save -o "$TMP/baseline.json" "$good" >/dev/null ||
	{ echo "FAIL: cannot save a baseline" >&2; exit 1; }
run top
grep -q "built without ncurses" "$TMP/err" && have_top=false || have_top=true
$have_top || skip "top FILE and top --replay" "this perfkit was built without ncurses"

# refuse NAME FILE ARGS...: one line naming FILE as corrupt, exit 2
refuse() {
	local name=$1 file=$2
	shift 2
	run "$@" </dev/null
	expect_status "$name" 2
	expect_one_error_line "$name" "^perfkit: $TMP/$(basename "$file" .sqlite)\.sqlite: corrupt database \("
}

exports="chrome html"
if "$PERFKIT" report --format=perfetto -o "$TMP/probe.pftrace" "$good" >/dev/null 2>&1; then
	exports="$exports perfetto"
else
	skip "report --format=perfetto -o" "built without protobuf-c"
fi

for b in kernels index strings middle nsys; do
	f=$TMP/$b.sqlite
	refuse "report: $b" "$f" report "$f"
	refuse "report csv: $b" "$f" report --format=csv --report=cuda_gpu_kern_sum "$f"
	# to a file (-o) the whole file is checked beside the report; what it
	# finds is told the same, and nothing is put in place
	echo old >"$TMP/out.txt"
	refuse "report -o: $b" "$f" report -f -o "$TMP/out.txt" "$f"
	expect_that "report -o of $b keeps the old file" grep -qx old "$TMP/out.txt"
	for fmt in $exports; do
		run report --format=$fmt "$f" </dev/null
		cp "$TMP/err" "$TMP/err.checked_first"
		refuse "report --format=$fmt -o: $b" "$f" report --format=$fmt -o "$TMP/out.$fmt" "$f"
		expect_that "report --format=$fmt -o of $b leaves no output" [ ! -e "$TMP/out.$fmt" ]
		expect_that "report --format=$fmt -o of $b tells what the check before any read told" \
			cmp -s "$TMP/err" "$TMP/err.checked_first"
	done
	refuse "report of a job by map and reduce: $b" "$f" report --report=cuda_gpu_kern_sum "$other" "$f"
	refuse "report of a job merged: $b" "$f" report "$other" "$f"
	# the line the check before any read tells
	run report "$f" </dev/null
	cp "$TMP/err" "$TMP/err.checked_first"
	refuse "diagnose: $b" "$f" diagnose "$f"
	expect_that "diagnose of $b tells what the check before any read told" \
		cmp -s "$TMP/err" "$TMP/err.checked_first"
	refuse "roofline: $b" "$f" roofline "$f"
	refuse "roofline json: $b" "$f" roofline --format=json "$f"
	refuse "diff base: $b" "$f" diff "$f" "$good"
	refuse "diff new: $b" "$f" diff "$good" "$f"
	refuse "baseline save: $b" "$f" baseline save -o "$TMP/out.json" "$f"
	refuse "gate: $b" "$f" gate --baseline="$TMP/baseline.json" "$f"
	refuse "merge: $b" "$f" merge -o "$TMP/merged.sqlite" "$other" "$f"
	expect_that "merge of $b leaves no output" [ ! -e "$TMP/merged.sqlite" ]
	if $have_top; then
		refuse "top: $b" "$f" top "$f"
		refuse "top --replay: $b" "$f" top --replay=1000 "$f"
	fi
done

# the same readers on an undamaged copy
cp "$good" "$TMP/whole.sqlite"
for args in "report" "diagnose" "roofline" "baseline save -o $TMP/whole.json" \
	"report -o $TMP/whole.txt" "report --format=chrome -o $TMP/whole.trace.json"; do
	run $args "$TMP/whole.sqlite"
	expect_status "$args of an undamaged copy" 0
done
finish
