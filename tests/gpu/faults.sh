#!/usr/bin/env bash
# faults.sh - on the GPU machine: faults around a capture (issue list in
# docs/reliability.md, "Faults around the capture"). Each case runs
# tests/gpu/gpu_faults (which knows how many kernels it launched) under
# `perfkit run` while something goes wrong, then checks the program's exit
# status, what perfkit said, and the capture (check_capture.py). Prints a
# PASS/FAIL table last. Leaves one file in $OUT, faults.tar.xz: the small
# captures, faults.log, faults.tsv (figures), faults_results.txt, flood.rss.
#
#   tests/gpu/faults.sh DIR [CASE...]
#
# DIR mirrors a build (tests/gpu/run.sh --stage). CASES: flood (10M
# launches; FLOOD=N to change), diskfull, readonly, outdir_gone, two_runs,
# kill_perfkit, read_truncated, spawn, graph, streams, contexts, mps, fault.
set -u
D=$(cd "$1" && pwd)
shift
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
export LD_LIBRARY_PATH=$D/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
PK=$D/cli/perfkit
GF=$D/tests/gpu/gpu_faults
W=$(mktemp -d)
LOG=$OUT/faults.log
TSV=$OUT/faults.tsv
FLOOD=${FLOOD:-10000000}
RESULTS=()
: >"$LOG"
printf 'case\tfigure\tvalue\n' >"$TSV"

log() { printf '%s\n' "$*" >>"$LOG"; }
result() { RESULTS+=("$(printf '%-4s  %-34s %s' "$2" "$1" "$3")"); }
figure() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$TSV"; log "figure $1 $2 = $3"; }
now_ns() { date +%s%N; }

# check NAME CAPTURE CHECK ARGS...: check_capture.py's lines as results.
check() {
	local name=$1 line res test detail
	shift
	while read -r line; do
		log "$name: $line"
		read -r res test detail <<<"$line"
		result "$name:$test" "$res" "$detail"
	done < <(python3 "$SRC/check_capture.py" "$@" 2>&1 | sed -n 's/^\(PASS\|FAIL\) /&/p;t;s/^/FAIL python /p')
}
expect() { # NAME WANT GOT
	if [ "$2" = "$3" ]; then result "$1" PASS "$3"; else result "$1" FAIL "got $3, want $2"; fi
}
# one_line NAME FILE PATTERN: FILE's perfkit lines include one matching PATTERN.
one_line() {
	if grep -E -- "$3" "$2" | grep -q '^perfkit'; then result "$1" PASS "$(grep -m1 -E -- "$3" "$2" | cut -c1-90)"
	else result "$1" FAIL "no perfkit line /$3/ in $(tail -2 "$2" | tr '\n' ' ' | cut -c1-120)"; fi
}
readable() { # NAME CAPTURE: perfkit report reads it (exit 0)
	"$PK" report "$2" >"$W/$1.report" 2>&1
	expect "$1:readable" 0 $?
}

# rss_sampler PID FILE: VmRSS (kB) of PID and its children, once a second.
rss_sampler() {
	local pid=$1 file=$2 p
	while kill -0 "$pid" 2>/dev/null; do
		for p in $pid $(pgrep -P "$pid"); do
			printf '%s %s %s\n' "$(date +%s)" "$p" \
				"$(awk '/VmRSS/ { print $2 }' /proc/$p/status 2>/dev/null)" >>"$file"
		done
		sleep 1
	done
}

case_flood() {
	local t0 t_end end_ns pid
	log "=== flood $FLOOD"
	t0=$(now_ns)
	"$PK" run -f -o "$W/flood.sqlite" -- "$GF" flood "$FLOOD" >"$W/flood.log" 2>&1 &
	pid=$!
	rss_sampler "$pid" "$W/flood.rss" &
	wait "$pid"
	expect flood:status 0 $?
	t_end=$(now_ns)
	end_ns=$(sed -n 's/^end_ns=//p' "$W/flood.log")
	figure flood run_s "$(awk -v a="$t0" -v b="$t_end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')"
	[ -n "$end_ns" ] && figure flood ready_after_exit_s \
		"$(awk -v a="$end_ns" -v b="$t_end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')"
	figure flood capture_mb "$(du -m "$W/flood.sqlite" | cut -f1)"
	# RSS of perfkit and of the program: first and last full minute, peak.
	awk -v perfkit="$pid" 'NF < 3 { next } { who = ($2 == perfkit) ? "perfkit" : "program"; n[who]++;
		if (n[who] == 3) first[who] = $3; last[who] = $3; if ($3 > peak[who]) peak[who] = $3 }
		END { for (w in n) printf "%s rss_kb third_sample %s last %s peak %s\n", w, first[w], last[w], peak[w] }' \
		"$W/flood.rss" | while read -r who _ _ a _ b _ c; do
		figure flood "${who}_rss_kb_third/last/peak" "$a/$b/$c"
	done
	check flood "$W/flood.sqlite" kernels "$FLOOD"
	check flood "$W/flood.sqlite" partial "$FLOOD"
}

# The disk fills: a small tmpfs where the machine lets us mount one, else a
# file-size limit (SIGXFSZ ignored, so writes fail with EFBIG like ENOSPC).
case_diskfull() {
	local dir=$W/small how
	mkdir -p "$dir"
	if mount -t tmpfs -o size=4m tmpfs "$dir" 2>/dev/null; then how=tmpfs-4MiB
		(cd "$dir" && TMPDIR=$dir "$PK" run -o "$dir/full.sqlite" -- "$GF" steady 4) >"$W/diskfull.log" 2>&1
		expect diskfull:status 0 $?
		cp "$dir/full.sqlite" "$W/full.sqlite" 2>/dev/null
		[ -e "$dir/full.sqlite-wal" ] && cp "$dir/full.sqlite-wal" "$W/full.sqlite-wal"
		umount "$dir"
	else how=ulimit-f-4MiB
		(trap '' XFSZ; ulimit -f 4096; TMPDIR=$dir "$PK" run -o "$dir/full.sqlite" -- "$GF" steady 4) \
			>"$W/diskfull.log" 2>&1
		expect diskfull:status 0 $?
		cp "$dir/full.sqlite" "$W/full.sqlite" 2>/dev/null
	fi
	log "diskfull by $how"; cat "$W/diskfull.log" >>"$LOG"
	one_line diskfull:message "$W/diskfull.log" "disk filled|no room"
	expect diskfull:no_wal_beside yes "$([ -s "$W/full.sqlite-wal" ] && echo no || echo yes)"
	local n; n=$(sed -n 's/^launches=//p' "$W/diskfull.log")
	if [ -f "$W/full.sqlite" ]; then
		readable diskfull "$W/full.sqlite"
		check diskfull "$W/full.sqlite" partial "${n:-0}"
	else result diskfull:file FAIL "no capture left ($how)"; fi
}

case_readonly() {
	local dir=$W/ro
	mkdir -p "$dir"
	if mount -t tmpfs -o size=4m,ro tmpfs "$dir" 2>/dev/null; then
		"$PK" run -o "$dir/x.sqlite" -- "$GF" child 10 >"$W/readonly.log" 2>&1
		expect readonly:status 2 $?
		one_line readonly:message "$W/readonly.log" "[Rr]ead-only|cannot"
		umount "$dir"
	else
		log "readonly: cannot mount a read-only tmpfs here (root inside a container?)"
		result readonly:setup SKIP "no read-only mount possible"
	fi
}

# The output's folder is removed while the program runs.
case_outdir_gone() {
	local dir=$W/gone pid kept
	mkdir -p "$dir"
	"$PK" run -o "$dir/x.sqlite" -- "$GF" steady 3 >"$W/outdir_gone.log" 2>&1 &
	pid=$!
	sleep 1
	rm -rf "$dir"
	wait "$pid"
	expect outdir_gone:status 0 $?
	cat "$W/outdir_gone.log" >>"$LOG"
	one_line outdir_gone:message "$W/outdir_gone.log" "folder is gone.*kept as"
	kept=$(sed -n 's/^perfkit: warning: .*the capture is kept as \(.*\)$/\1/p' "$W/outdir_gone.log")
	if [ -n "$kept" ] && [ -f "$kept" ]; then
		cp "$kept" "$W/outdir_gone.sqlite"
		readable outdir_gone "$W/outdir_gone.sqlite"
		check outdir_gone "$W/outdir_gone.sqlite" kernels "$(sed -n 's/^launches=//p' "$W/outdir_gone.log")"
		rm -rf "$(dirname "$kept")"
	else result outdir_gone:kept FAIL "no capture named in the message"; fi
}

case_two_runs() {
	local a b kept
	"$PK" run -o "$W/same.sqlite" -- "$GF" steady 2 >"$W/two_a.log" 2>&1 &
	a=$!
	sleep 0.3
	"$PK" run -o "$W/same.sqlite" -- "$GF" steady 2 >"$W/two_b.log" 2>&1
	b=$?
	wait "$a"
	expect two_runs:first_status 0 $?
	expect two_runs:second_refused 2 "$b"
	one_line two_runs:message "$W/two_b.log" "exists"
	check two_runs "$W/same.sqlite" kernels "$(sed -n 's/^launches=//p' "$W/two_a.log")"
	# with -f the second takes the name; the first, ending later, keeps its
	# capture in its run folder and names it: both complete
	"$PK" run -o "$W/same_f.sqlite" -- "$GF" steady 2 >"$W/two_fa.log" 2>&1 &
	a=$!
	sleep 0.3
	"$PK" run -f -o "$W/same_f.sqlite" -- "$GF" steady 1 >"$W/two_fb.log" 2>&1
	expect two_runs:force_second_status 0 $?
	wait "$a"
	expect two_runs:force_first_status 0 $?
	check two_runs_force_second "$W/same_f.sqlite" kernels \
		"$(sed -n 's/^launches=//p' "$W/two_fb.log")"
	kept=$(sed -n 's/^perfkit: warning: .*the capture is kept as \(.*\)$/\1/p' "$W/two_fa.log")
	if [ -n "$kept" ] && [ -f "$kept" ]; then
		check two_runs_force_first "$kept" kernels "$(sed -n 's/^launches=//p' "$W/two_fa.log")"
		rm -rf "$(dirname "$kept")"
	else result two_runs:force_first_kept FAIL "no capture named in the message"; fi
}

# perfkit run gets SIGKILL: the program runs on and ends with its status;
# `perfkit recover` then merges everything it recorded.
case_kill_perfkit() {
	local pid prog n
	"$PK" run -f -o "$W/killed.sqlite" -- "$GF" steady 3 >"$W/killed.log" 2>&1 &
	pid=$!
	sleep 1
	prog=$(pgrep -P "$pid" | head -1)
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$prog" 2>/dev/null || break; sleep 0.1; done
	sleep 0.5
	n=$(sed -n 's/^launches=//p' "$W/killed.log")
	expect kill_perfkit:program_finished yes "$([ -n "$n" ] && echo yes || echo no)"
	"$PK" report "$W/killed.sqlite" >"$W/killed_report.log" 2>&1
	expect kill_perfkit:report_refuses 2 $?
	one_line kill_perfkit:report_message "$W/killed_report.log" "perfkit recover"
	"$PK" recover "$W/killed.sqlite" >"$W/recover.log" 2>&1
	expect kill_perfkit:recover 0 $?
	cat "$W/killed.log" "$W/recover.log" >>"$LOG"
	check kill_perfkit "$W/killed.sqlite" kernels "${n:-0}"
}

# A capture truncated while `perfkit report` reads it: one line, no crash.
case_read_truncated() {
	local src=$W/flood.sqlite pid rc
	[ -f "$src" ] || src=$W/killed.sqlite
	cp "$src" "$W/trunc.sqlite"
	"$PK" report --format=json "$W/trunc.sqlite" >/dev/null 2>"$W/trunc.err" &
	pid=$!
	sleep 0.2
	truncate -s 1M "$W/trunc.sqlite"
	wait "$pid"
	rc=$?
	log "read_truncated: exit $rc: $(cat "$W/trunc.err")"
	expect read_truncated:no_crash yes "$([ "$rc" -lt 128 ] && echo yes || echo "signal $((rc - 128))")"
	expect read_truncated:status 2 "$rc"
	expect read_truncated:lines_on_stderr 1 "$(wc -l <"$W/trunc.err")"
	one_line read_truncated:message "$W/trunc.err" "trunc\.sqlite: truncated"
}

case_spawn() {
	"$PK" run -f -o "$W/spawn.sqlite" -- "$GF" spawn 64 1000 >"$W/spawn.log" 2>&1
	expect spawn:status 0 $?
	check spawn "$W/spawn.sqlite" procs 64 1000
}

case_graph() {
	"$PK" run -f -o "$W/graph.sqlite" -- "$GF" graph 10000 5 >"$W/graph.log" 2>&1
	expect graph:status 0 $?
	check graph "$W/graph.sqlite" kernels 50000
}

case_streams() {
	"$PK" run -f -o "$W/streams.sqlite" -- "$GF" streams 128 100 >"$W/streams.log" 2>&1
	expect streams:status 0 $?
	check streams "$W/streams.sqlite" streams 128 100
}

case_contexts() {
	"$PK" run -f -o "$W/contexts.sqlite" -- "$GF" contexts 4 500 >"$W/contexts.log" 2>&1
	expect contexts:status 0 $?
	check contexts "$W/contexts.sqlite" contexts 4 500
}

# The program's context fails (a kernel writes through a null pointer): the
# program's own status, the kernels it synchronised before keep their GPU
# times (each successful synchronisation makes the writer flush), and the
# reports say where the context failed. Queued without synchronisation,
# CUPTI has the times of none (a figure, not a check).
case_fault() {
	"$PK" run -f -o "$W/fault.sqlite" -- "$GF" fault 50 50 >"$W/fault.log" 2>&1
	expect fault:status 3 $?
	check fault "$W/fault.sqlite" fault 49 49
	"$PK" report "$W/fault.sqlite" >"$W/fault_report.log" 2>&1
	expect fault:report_status 0 $?
	if grep -q "CUDA context failed at .*cudaErrorIllegalAddress" "$W/fault_report.log"; then
		result fault:report_says PASS "$(grep -m1 -o "CUDA context failed at [^:]*: [^(]*" "$W/fault_report.log")"
	else
		result fault:report_says FAIL "no context failure in the report"
	fi
	"$PK" run -f -o "$W/fault_queued.sqlite" -- "$GF" fault 100 50 0 >"$W/fault_queued.log" 2>&1
	expect fault:queued_status 3 $?
	figure fault queued_kernels_kept "$(python3 -c 'import sqlite3,sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0])' "$W/fault_queued.sqlite")"
}

# Processes sharing one GPU through MPS, where the daemon can be started.
case_mps() {
	local pipe=$W/mps
	mkdir -p "$pipe"
	export CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$pipe
	if command -v nvidia-cuda-mps-control >/dev/null && nvidia-cuda-mps-control -d 2>>"$LOG"; then
		"$PK" run -f -o "$W/mps.sqlite" -- "$GF" spawn 8 1000 >"$W/mps.log" 2>&1
		expect mps:status 0 $?
		check mps "$W/mps.sqlite" procs 8 1000
		echo quit | nvidia-cuda-mps-control
	else
		result mps:setup SKIP "MPS daemon not available"
	fi
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}

CASES=${*:-flood diskfull readonly outdir_gone two_runs kill_perfkit read_truncated spawn graph streams contexts mps fault}
for c in $CASES; do
	log "=== $c"
	t=$(now_ns)
	"case_$c"
	figure "$c" seconds "$(awk -v a="$t" -v b="$(now_ns)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
done
for f in "$W"/*.log; do { echo "--- $(basename "$f")"; cat "$f"; } >>"$LOG"; done
# Small captures (fixtures for CI's readers), compressed.
printf '%s\n' "${RESULTS[@]}" | tee "$W/faults_results.txt"
echo; awk -F '\t' '{ printf "%-14s %-34s %s\n", $1, $2, $3 }' "$TSV"
grep -c '^FAIL' "$W/faults_results.txt" | sed 's/^/FAIL count: /'
# At most 4 files come back: small captures (fixtures for CI's readers) and
# the texts (log, figures, results, RSS samples), in one archive.
cp "$LOG" "$TSV" "$W/" 2>/dev/null
(cd "$W" && { ls ./*.sqlite | grep -v -e flood -e trunc; ls faults.log faults.tsv faults_results.txt flood.rss 2>/dev/null; } |
	tar cf - -T - 2>/dev/null | xz -6 >"$OUT/faults.tar.xz")
rm -f "$LOG" "$TSV"
