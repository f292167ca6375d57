#!/usr/bin/env bash
# test_report_full_names.sh - text tables show kernel names in a short form
# (qualified name, template arguments and parameters elided) that stays
# unique within the table; --full-names prints them whole; CSV and JSON
# always carry full names. On tests/data/torch_train.sqlite (PyTorch: names
# of up to 600 characters, three instances of one elementwise template).
. "$(dirname "$0")/cli_lib.sh"
torch="$PERFKIT_TEST_DATA/torch_train.sqlite"
names="$TMP/names.txt"
python3 -c 'import sqlite3, sys
for (n,) in sqlite3.connect(sys.argv[1]).execute("SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = coalesce(k.demangledName, k.shortName)"):
    print(n)' "$torch" >"$names"
longest=$(awk '{ if (length($0) > n) { n = length($0); l = $0 } } END { print l }' "$names")

# last_column FILE: the text table's last column (the name), one per row
last_column() {
	awk '/^---/ { body = 1; next } body && NF == 0 { body = 0 } body' "$1" | sed 's/.*  //'
}

run report --report=cuda_gpu_kern_sum "$torch"
expect_status "kernel summary" 0
last_column "$TMP/out" >"$TMP/shown.txt"
if [ "$(wc -l <"$TMP/shown.txt")" -eq "$(wc -l <"$names")" ] &&
	[ "$(sort -u "$TMP/shown.txt" | wc -l)" -eq "$(wc -l <"$names")" ]; then
	pass "text: one distinct short name per kernel"
else
	fail "text: one distinct short name per kernel (got: $(cat "$TMP/shown.txt"))"
fi
grep -qF "$longest" "$TMP/out" && fail "text: the longest name is shortened" || pass "text: the longest name is shortened"
expect_out "text: the qualified name stays" "^.*  at::native::vectorized_elementwise_kernel<\.\.\.>$"
expect_out "text: instances told apart by their arguments" \
	"  at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<\.\.\.>, std::array<\.\.\.>>$"
awk 'length($0) > 250 { bad = 1 } END { exit bad }' "$TMP/out" && pass "text: no line past 250 columns" ||
	fail "text: no line past 250 columns"

run report --full-names --report=cuda_gpu_kern_sum "$torch"
last_column "$TMP/out" | sort >"$TMP/full.txt"
sort "$names" | cmp -s - "$TMP/full.txt" && pass "--full-names: every name whole" || fail "--full-names: every name whole"

# the overview, the trace and the NVTX kernel table shorten too
run report --report=overview,cuda_gpu_trace,nvtx_kern_sum "$torch"
grep -qF "$longest" "$TMP/out" && fail "overview, trace, nvtx_kern_sum: names shortened" ||
	pass "overview, trace, nvtx_kern_sum: names shortened"

for format in csv json; do
	run report --format="$format" --report=cuda_gpu_kern_sum "$torch"
	grep -qF "$(printf '%s' "$longest" | sed 's/"/""/g')" "$TMP/out" && pass "$format: full names" ||
		fail "$format: full names"
done

# diagnose: offenders in text short, in JSON whole. The offender is the
# first of diagnose's JSON whose name has template arguments; its whole
# name must be one of the capture's kernel names.
run diagnose --format=json "$torch"
whole=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(next(t["name"] for f in d["findings"] for t in f["top"] if "<" in t["name"] and t["name"].startswith("void ")))' "$TMP/out")
grep -qxF "$whole" "$names" && pass "diagnose json: offender whole ($whole)" || fail "diagnose json: offender whole"
short=$(printf '%s' "${whole#void }" | sed 's/<.*/<.../')
run diagnose "$torch"
grep -qF "  $short" "$TMP/out" && ! grep -qF "$whole" "$TMP/out" && pass "diagnose text: offender short ($short)" ||
	fail "diagnose text: offender short"
run diagnose --full-names "$torch"
grep -qF "${whole#void }" "$TMP/out" && pass "diagnose --full-names: offender whole" ||
	fail "diagnose --full-names: offender whole"

# diff: the kernel table shortens in text only
run diff "$torch" "$torch"
expect_status "diff" 0
grep -qF "$longest" "$TMP/out" && fail "diff text: names shortened" || pass "diff text: names shortened"
expect_out "diff text: short kernel name" "  cublasLt::splitKreduce_kernel<\.\.\.>$"
run diff --full-names "$torch" "$torch"
grep -qF "$longest" "$TMP/out" && pass "diff --full-names: names whole" || fail "diff --full-names: names whole"
run diff --format=json "$torch" "$torch"
grep -qF "splitKreduce_kernel<32, 16, int" "$TMP/out" && pass "diff json: names whole" || fail "diff json: names whole"

finish
