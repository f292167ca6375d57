#!/usr/bin/env bash
# test_extreme_times_left_out_or_saturated.sh - captures whose kernels hold
# the extreme times a damaged or hostile file can: one kernel starting at
# INT64_MIN, one ending at INT64_MAX, one 2^62 ns long, and 40 of 2^62 ns.
# Every export, every report in every format, diagnose, roofline, diff,
# baseline save, gate, merge and top --replay end within the time limit,
# exit 0 (or 2 with one line), and what they write holds no negative
# duration and no wrapped sum: a row whose span no 64-bit count of ns holds
# (the INT64_MIN start) is left out and counted, as the summaries leave out
# an end before its start; sums of sound durations hold at INT64_MAX. The
# expected counts and totals are the damaged copies' own, computed from
# their rows with Python's unbounded integers. Runs in both builds: in the
# sanitizer build UBSan aborts on any overflow, so running is the check.
. "$(dirname "$0")/cli_lib.sh"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 is needed" >&2; exit 1; }

src="$PERFKIT_TEST_DATA/clean_loop.sqlite"
K=CUPTI_ACTIVITY_KIND_KERNEL
LIMIT_S=20
CAPTURES="min_start max_end one_2p62 forty_2p62"
[ "$(sqlite3 "$src" "SELECT count(*) FROM $K")" -ge 40 ] ||
	{ echo "FAIL: $src has fewer than 40 kernels" >&2; exit 1; }

# damage NAME SQL: a copy of the real capture changed by SQL
damage() {
	cp "$src" "$TMP/$1.sqlite" && sqlite3 "$TMP/$1.sqlite" "$2" ||
		{ echo "FAIL: cannot make $1" >&2; exit 1; }
}
first="(SELECT min(rowid) FROM $K)"
cp "$src" "$TMP/orig.sqlite"
damage min_start "UPDATE $K SET start = -9223372036854775808 WHERE rowid = $first"
damage max_end "UPDATE $K SET end = 9223372036854775807 WHERE rowid = $first"
damage one_2p62 "UPDATE $K SET end = start + 4611686018427387904 WHERE rowid = $first"
damage forty_2p62 "UPDATE $K SET end = start + 4611686018427387904
	WHERE rowid IN (SELECT rowid FROM $K ORDER BY rowid LIMIT 40)"

# What each damaged copy holds: the rows with a bad span of every table
# (in $TMP/NAME.left_out, for the notes), the kernels' sound durations and
# each kernel name's exact sum of them (in facts.json, for the checks at
# the end). One Python for all: it starts slowly on a loaded machine.
python3 - "$TMP" $CAPTURES <<'PY' || { echo "FAIL: cannot read the damaged copies" >&2; exit 1; }
import json, sqlite3, sys
MAX = 2**63 - 1
bad = lambda s, e: s is None or e is None or e < s or e - s > MAX
spans = {"CUPTI_ACTIVITY_KIND_KERNEL": "", "CUPTI_ACTIVITY_KIND_MEMCPY": "",
         "CUPTI_ACTIVITY_KIND_MEMSET": "", "CUPTI_ACTIVITY_KIND_RUNTIME": "",
         "CUPTI_ACTIVITY_KIND_DRIVER": "", "NVTX_EVENTS": " WHERE eventType IN (59, 60)"}
facts = {}
for c in sys.argv[2:]:
    db = sqlite3.connect("%s/%s.sqlite" % (sys.argv[1], c))
    left_out = {t: sum(bad(s, e) for s, e in db.execute("SELECT start, end FROM %s%s" % (t, w)))
                for t, w in spans.items()}
    by_name, durations = {}, []
    for name, s, e in db.execute("SELECT v.value, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                                 "JOIN StringIds v ON v.id = k.demangledName"):
        if not bad(s, e):
            by_name[name] = by_name.get(name, 0) + e - s
            durations.append(e - s)
    facts[c] = {"left_out": sum(left_out.values()),
                "kernels_left_out": left_out["CUPTI_ACTIVITY_KIND_KERNEL"],
                "by_name": by_name, "durations": sorted(durations)}
    open("%s/%s.left_out" % (sys.argv[1], c), "w").write("%d\n" % facts[c]["left_out"])
json.dump(facts, open(sys.argv[1] + "/facts.json", "w"))
PY

# timed NAME ARGS...: perfkit ARGS under the time limit, stdout and stderr
# kept as $TMP/NAME.out and .err; it must end in time, exit 0 or 2 with
# one line on stderr, and overflow nothing (UBSan ends the sanitizer build
# with an exit of its own). 0 when it exited 0.
timed() {
	local name=$1
	shift
	timeout "$LIMIT_S" "$PERFKIT" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	status=$?
	cp "$TMP/$name.err" "$TMP/err"
	if [ "$status" -eq 124 ]; then
		fail "$name: still running after ${LIMIT_S} s"
	elif grep -q "runtime error\|Sanitizer" "$TMP/$name.err"; then
		fail "$name: the sanitizer reports"
	elif [ "$status" -eq 0 ] || { [ "$status" -eq 2 ] && [ "$(wc -l <"$TMP/$name.err")" -eq 1 ] &&
		grep -q '^perfkit: ' "$TMP/$name.err"; }; then
		pass "$name: ends in time (exit $status)"
		return "$status"
	else
		fail "$name: exit $status"
	fi
	return 1
}

# expect_note NAME CAPTURE WHAT: NAME's stderr is the one warning that N
# rows with an impossible span were left out of WHAT, N the capture's own;
# nothing at all when it has none.
expect_note() {
	local n want
	n=$(cat "$TMP/$2.left_out")
	if [ "$n" -eq 0 ]; then
		[ ! -s "$TMP/$1.err" ] && pass "$1: no note" || fail "$1: a note where no row was left out"
		return
	fi
	want="^perfkit: warning: .*: $n rows? with an impossible span .* left out of $3\$"
	if [ "$(wc -l <"$TMP/$1.err")" -eq 1 ] && grep -qE "$want" "$TMP/$1.err"; then
		pass "$1: says $n left out"
	else
		fail "$1: stderr is not the one note of $n rows left out"
	fi
}

reports=$("$PERFKIT" report --list | awk '{ print $1 }' | paste -sd, -)
[ -n "$reports" ] || { echo "FAIL: report --list names no report" >&2; exit 1; }
timed orig.api report --format=folded --weight=api -o "$TMP/orig.api.folded" "$TMP/orig.sqlite"

for c in $CAPTURES; do
	f="$TMP/$c.sqlite"
	timed "$c.chrome" report --format=chrome -o "$TMP/$c.trace.json" "$f" &&
		expect_note "$c.chrome" "$c" "the trace"
	timed "$c.folded_gpu" report --format=folded --weight=gpu -o "$TMP/$c.gpu.folded" "$f" &&
		expect_note "$c.folded_gpu" "$c" "the folded stacks"
	timed "$c.folded_api" report --format=folded --weight=api -o "$TMP/$c.api.folded" "$f" &&
		expect_note "$c.folded_api" "$c" "the folded stacks"
	expect_that "$c.folded_api: the calls as in the undamaged capture" \
		cmp -s "$TMP/$c.api.folded" "$TMP/orig.api.folded"
	timed "$c.html" report --format=html -o "$TMP/$c.html" "$f" &&
		expect_note "$c.html" "$c" "the HTML report's plots and flame graph"
	expect_that "$c.html: a whole page" grep -q '</html>' "$TMP/$c.html"
	# it wrote without end before: a trace of its capture's size
	timed "$c.perfetto" report --format=perfetto -o "$TMP/$c.pftrace" "$f" &&
		expect_note "$c.perfetto" "$c" "the trace"
	expect_that "$c.perfetto: under 5 MB" test "$(stat -c %s "$TMP/$c.pftrace")" -lt 5000000

	timed "$c.text" report --report="$reports" "$f"
	timed "$c.csv" report --format=csv --report="$reports" "$f"
	timed "$c.json" report --format=json --report="$reports" "$f"
	timed "$c.diagnose" diagnose "$f"
	timed "$c.diagnose_json" diagnose --format=json "$f"
	timed "$c.roofline" roofline "$f"
	timed "$c.diff" diff --format=json "$TMP/orig.sqlite" "$f"
	timed "$c.baseline" baseline save -o "$TMP/$c.baseline.json" "$f"
	timed "$c.gate" gate --baseline="$TMP/$c.baseline.json" "$f"
	# merged with the original, and read back (a merge may refuse the
	# same run twice, with one line)
	timed "$c.merge" merge -o "$TMP/$c.merged.sqlite" "$TMP/orig.sqlite" "$f" &&
		timed "$c.merged" report --format=json --report=cuda_gpu_kern_sum "$TMP/$c.merged.sqlite"
done

# What they wrote, against the damaged copies' own figures.
python3 - "$TMP" $CAPTURES >"$TMP/checks" 2>&1 <<'PY'
import csv, decimal, json, os, sys
MAX = 2**63 - 1
tmp = sys.argv[1]
facts = json.load(open(tmp + "/facts.json"))

def check(name, fn, *args):
    try:
        fn(*args)
        print("ok: " + name)
    except Exception as e:
        print("FAIL: %s: %r" % (name, e))

def load(name):
    return json.load(open("%s/%s" % (tmp, name)))

def walk(x, fn, key=""):
    if isinstance(x, dict):
        for k, v in x.items():
            walk(v, fn, k)
    elif isinstance(x, list):
        for v in x:
            walk(v, fn, key)
    else:
        fn(key, x)

def chrome(c, f):
    ev = json.load(open("%s/%s.trace.json" % (tmp, c)), parse_float=decimal.Decimal)["traceEvents"]
    assert all(e["dur"] >= 0 for e in ev if "dur" in e), "a negative dur"
    got = sorted(int(e["dur"] * 1000) for e in ev if e.get("cat") == "kernel")
    assert got == f["durations"], (len(got), len(f["durations"]))

def folded_gpu(c, f):
    w = [int(l.rsplit(" ", 1)[1]) for l in open("%s/%s.gpu.folded" % (tmp, c))]
    assert w and all(0 <= x <= MAX for x in w), w
    total = sum(f["durations"])
    if total <= MAX:
        assert sum(w) == total, (sum(w), total)
    else:
        assert max(w) == MAX, w

def csv_tables(c, f):
    for block in open("%s/%s.csv.out" % (tmp, c), newline="").read().split("\r\n\r\n"):
        rows = list(csv.reader(block.splitlines()))
        assert all(len(r) == len(rows[0]) for r in rows), rows[0]

def reports(c, f):
    reps = {r["name"]: r for r in load(c + ".json.out")["reports"]}
    for r in reps.values():
        for row in r.get("rows", []):
            for col, v in row.items():
                if "(ns)" in col and "Start" not in col and isinstance(v, int):
                    assert 0 <= v <= MAX, (r["name"], col, v)
    for name in ("cuda_gpu_kern_sum", "cuda_gpu_trace"):
        assert reps[name]["rows_left_out"] == f["kernels_left_out"], (name, reps[name]["rows_left_out"])
    want = {n: min(t, MAX) for n, t in f["by_name"].items()}
    got = {row["Name"]: row["Total Time (ns)"] for row in reps["cuda_gpu_kern_sum"]["rows"]}
    assert got == want, (got, want)

def diagnose(c, f):
    d = load(c + ".diagnose_json.out")
    assert d["rows_left_out"] == f["left_out"], d["rows_left_out"]
    def time(key, v):
        if key.endswith("_ns") and isinstance(v, int):
            assert 0 <= v <= MAX, (key, v)
    walk(d, time)

def diff(c, f):
    counts = [r["rows_left_out"] for r in load(c + ".diff.out")["reports"] if "rows_left_out" in r]
    assert counts and all(n == f["kernels_left_out"] for n in counts), counts

def baseline(c, f):
    def number(key, v):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            assert 0 <= v <= 9e18, (key, v)
    walk(load(c + ".baseline.json"), number)

def merged(c, f):
    k = load(c + ".merged.out")["reports"][0]
    assert k["rows_left_out"] == f["kernels_left_out"], k["rows_left_out"]
    assert all(0 <= r["Total Time (ns)"] <= MAX for r in k["rows"])

for c in sys.argv[2:]:
    f = facts[c]
    check(c + ".chrome: the sound kernels, each its own duration, none negative", chrome, c, f)
    check(c + ".folded_gpu: weights in range, the total exact or at INT64_MAX", folded_gpu, c, f)
    check(c + ".csv: every block a table", csv_tables, c, f)
    check(c + ".json: no negative time, kernel totals exact or at INT64_MAX, bad rows counted",
          reports, c, f)
    check(c + ".diagnose_json: bad rows counted, no negative time", diagnose, c, f)
    check(c + ".diff: bad rows counted", diff, c, f)
    check(c + ".baseline: every number between 0 and 9e18", baseline, c, f)
    if os.path.exists("%s/%s.merged.out" % (tmp, c)) and os.path.getsize("%s/%s.merged.out" % (tmp, c)):
        check(c + ".merged: the bad kernels counted, the rest exact or at INT64_MAX", merged, c, f)
PY
cat "$TMP/checks"
failures=$((failures + $(grep -c '^FAIL' "$TMP/checks")))
grep -q '^ok' "$TMP/checks" || fail "the output checks did not run"

# top --replay, where tmux can give it a terminal: it replays to the end
# and quits; the capture starting at INT64_MIN says the row it left out
if ! command -v tmux >/dev/null; then
	skip "top --replay" "tmux is not installed"
else
	. "$(dirname "$0")/tmux_lib.sh"
	for c in $CAPTURES; do
		start_top "$c.top" --replay=1000000000000 "$TMP/$c.sqlite"
		wait_for "$c.top: replays to the end" "replay finished"
		[ "$c" != min_start ] || wait_for "$c.top: says the row it left out" "1 left out (impossible span)"
		tm send-keys -t top q
		expect_exit "$c.top" 0
		! grep -q "runtime error\|Sanitizer" "$TMP/$c.top.err" || fail "$c.top: the sanitizer reports"
	done
fi

finish
