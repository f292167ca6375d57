# test_cli_report_formats.sh - every report in text, CSV and JSON on a store
# whose names hold quotes, commas, newlines, <, &, ESC and invalid UTF-8:
# CSV and JSON must parse (python3), text must carry no control bytes.
. "$(dirname "$0")/cli_lib.sh"

store="$TMP/names.sqlite"
"$PERFKIT_TEST_TOOLS/write_report_store" "$store" || { echo "FAIL: cannot write a store" >&2; exit 1; }
reports="cuda_api_sum cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum cuda_gpu_trace nvtx_sum nvtx_kern_sum overview"

for r in $reports; do
	run report --report="$r" --format=csv "$store"
	expect_status "$r csv" 0
	if python3 - "$TMP/out" <<'PY'
import csv, io, sys
data = open(sys.argv[1], "rb").read().decode("utf-8")  # must be valid UTF-8
rows = list(csv.reader(io.StringIO(data, newline="")))
assert rows, "no rows"
# Reports are separated by an empty record; within one, every row has the
# header's width.
width = None
for row in rows:
    if not row:
        width = None
    elif width is None:
        width = len(row)
    else:
        assert len(row) == width, (row, width)
PY
	then pass "$r csv parses"; else fail "$r csv does not parse"; fi

	run report --report="$r" --format=json "$store"
	expect_status "$r json" 0
	if python3 - "$TMP/out" "$r" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
names = [rep["name"] for rep in doc["reports"]]
assert sys.argv[2] in names or sys.argv[2] == "overview", names
for rep in doc["reports"]:
    for row in rep["rows"]:
        assert set(row) == set(rep["columns"]), (row, rep["columns"])
PY
	then pass "$r json parses"; else fail "$r json does not parse"; fi

	run report --report="$r" --format=text "$store"
	expect_status "$r text" 0
	if LC_ALL=C grep -q $'\x1b' "$TMP/out"; then fail "$r text holds ESC"; else pass "$r text has no ESC"; fi
	if python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' "$TMP/out"; then
		pass "$r text is UTF-8"
	else
		fail "$r text is not UTF-8"
	fi
done

# Kernel names survive CSV and JSON (invalid UTF-8 as U+FFFD); CSV shows
# control characters as '?', as the text output does.
run report --report=cuda_gpu_kern_sum --format=csv "$store"
if python3 - "$TMP/out" <<'PY'
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(open(sys.argv[1], encoding="utf-8").read(), newline="")))
names = {r["Name"] for r in rows}
want = {"plain_kernel", 'void gemm<float, "tiled">(int, int)', "line1?line2", "esc?[31mred", "a<b && c>d"}
assert want <= names, names
assert any("\ufffd" in n for n in names), names
assert len(rows) == 6, len(rows)
# Instances 1..6 written, sorted by total time: the last-written name has most.
assert [int(r["Instances"]) for r in rows] == sorted([int(r["Instances"]) for r in rows], reverse=True)
PY
then pass "csv keeps hostile names"; else fail "csv lost hostile names"; fi

run report --report=cuda_gpu_kern_sum,nvtx_kern_sum --format=json "$store"
if python3 - "$TMP/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
assert [r["name"] for r in doc["reports"]] == ["cuda_gpu_kern_sum", "nvtx_kern_sum"]
kern = {row["Name"] for row in doc["reports"][0]["rows"]}
assert 'void gemm<float, "tiled">(int, int)' in kern and "line1\nline2" in kern, kern
nvtx = doc["reports"][1]["rows"]
# each range enclosed the launches of the kernel of the same name
assert all(r["NVTX Range"] == r["Kernel Name"] for r in nvtx), nvtx
assert len(nvtx) == 6, len(nvtx)
PY
then pass "json holds both reports with names"; else fail "json reports wrong"; fi

# -o writes the file, stdout stays empty.
run report --format=json -o "$TMP/out.json" "$store"
expect_status "-o FILE" 0
if [ ! -s "$TMP/out" ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out.json"; then
	pass "-o FILE holds the JSON"
else
	fail "-o FILE"
fi

# The overview: run metadata, busy %, no warning without dropped records.
run report "$store"
expect_status "overview" 0
expect_out "overview command" 'Command +\./app --size="big"'
expect_out "overview busy" 'GPU Busy'
[ -s "$TMP/err" ] && fail "overview without drops warns" || pass "overview without drops is quiet"

"$PERFKIT_TEST_TOOLS/write_report_store" "$TMP/dropped.sqlite" 42
run report "$TMP/dropped.sqlite"
expect_status "overview with dropped records" 0
expect_one_error_line "overview with dropped records" "warning: 42 activity records were dropped"
expect_out "overview warning section" '42 activity records were dropped'

finish
