#!/usr/bin/env bash
# scale.sh - how every reader command grows with its input: a real capture
# made 1, 10 and 100 times as long (bench/scale_captures.sh's multiply:
# its rows repeated with their times and correlation ids moved on, as a
# longer run records them) and jobs of 10, 100 and 1,000 ranks made from
# real per-rank captures (copies with their processes renumbered, 8 ranks
# a host, named as `perfkit run -o 'job-%h-%r.sqlite'` names them). Each
# command's wall time and peak resident set (/usr/bin/time), and beside
# each size after the first the growth exponent from the size before,
# log(t2/t1) / log(n2/n1): 1 is linear, 2 quadratic (left out, "-", where
# either time is under 0.05 s, which is noise). Then issue 35's goals:
# diagnose of 200 one-rank captures against 50 (at most 5.5x), and folded
# stacks and the HTML report against the Chrome trace of a real DDP
# capture (at most 2x; medians of interleaved rounds, on every core and on
# one thread), the largest job's diagnose (1,000 ranks: at most
# 60 s and 1 GiB), its reports and diagnose under MPI over K = 1 and 2
# processes (wall time, and the busiest process's CPU time, against one
# process's; bench/job_mpi.sh for rounds of them), and nvtx_kern_sum at nsys-ai's scale (transformer_naive with ranges nested
# around each launch, bench/scale_captures.sh's nest_ranges, multiplied
# to 2.2M kernels and 16M ranges: at most 30 s, memory flat). The
# exports' own goals come from bench/scale_exports.sh where it exists.
#
#   bench/scale.sh [BUILD]            (default build)
#   SCALE=small (default): 1x, 10x; 4 and 12 ranks (10 and 30 ranks took
#     25 minutes on the shared 2-core VM under a load of 7, 2026-11-25)
#   SCALE=full: 1x, 10x, 100x; 10, 100 and 1,000 ranks (the 100x capture
#     is 50 MB, the 1,000-rank job 2.4 GB of disk: run it once, alone)
#   SCALE_CAPTURE=FILE  the capture multiplied (default
#     tests/data/rollout_naive_roofline.sqlite: NVTX, API calls, metrics)
#   SCALE_RANK_CAPTURES="A B"  the per-rank captures (default the two ranks
#     of tests/data/ddp/ddp2_rank{0,1}.sqlite)
#   SCALE_MULT="1 10", SCALE_RANKS="10 30": other sizes
#   SCALE_NVTX_MULT=N: the NVTX capture's multiple (full: 431, 2.2M
#     kernels and 16M ranges, 3 GB of disk; small: 10)
#   SCALE_MPI_K="1 2": the MPI process counts of the largest job's report
#     and diagnose (needs a build with -DPERFKIT_MPI=ON and mpirun)
#   SCALE_GOAL_ROUNDS=7: the rounds of the Chrome trace, folded stacks and
#     HTML page that the goals compare
#   SCALE_PARTS="capture job nvtx goals exports": the parts run (e.g. "job
#     goals" for the jobs and issue 35's goals alone)
#   SCALE_JOB_COMMANDS=REGEX: of a job's commands, those whose name matches
#     (e.g. 'diagnose|report \(overview'; default every one)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
PERFKIT=$BUILD/cli/perfkit
DATA=$ROOT/tests/data
SCALE=${SCALE:-small}
CAPTURE=${SCALE_CAPTURE:-$DATA/rollout_naive_roofline.sqlite}
read -r -a RANK_CAPTURES <<<"${SCALE_RANK_CAPTURES:-$DATA/ddp/ddp2_rank0.sqlite $DATA/ddp/ddp2_rank1.sqlite}"
case $SCALE in
small) MULT=${SCALE_MULT:-1 10} RANKS=${SCALE_RANKS:-4 12} NVTX_MULT=${SCALE_NVTX_MULT:-10} ;;
full) MULT=${SCALE_MULT:-1 10 100} RANKS=${SCALE_RANKS:-10 100 1000} NVTX_MULT=${SCALE_NVTX_MULT:-431} ;;
*) echo "scale: SCALE is small or full, not '$SCALE'" >&2; exit 2 ;;
esac
read -r -a MULT <<<"$MULT"
read -r -a RANKS <<<"$RANKS"
read -r -a MPI_K <<<"${SCALE_MPI_K:-1 2}"
[ -x "$PERFKIT" ] || { echo "scale: no $PERFKIT" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "scale: needs the sqlite3 shell" >&2; exit 2; }
command -v script >/dev/null || { echo "scale: needs script(1) (util-linux)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "scale: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/scale.XXXXXX")
trap 'rm -rf "$W"' EXIT
export PERFKIT_THREADS=${PERFKIT_THREADS:-1}

. "$ROOT/tests/tools/job_captures.sh"
. "$ROOT/bench/scale_captures.sh"

PARTS=" ${SCALE_PARTS:-capture job nvtx goals exports} "
JOB_COMMANDS=${SCALE_JOB_COMMANDS:-.}
declare -A T M C P # seconds, peak MiB, CPU seconds (user + system) and the busiest MPI process's, by "command|size"
ORDER=()         # the commands, in the order first run

note() {
	local key=$1 k
	for k in "${ORDER[@]}"; do [ "$k" != "$key" ] || return 0; done
	ORDER+=("$key")
}

# measure NAME SIZE CMD...: the command's time and peak memory
measure() {
	local name=$1 size=$2
	shift 2
	note "$name"
	rm -f "$W/out.pftrace" "$W/out.html" "$W/out.json" "$W/merged.sqlite" "$W/baseline.json"
	if /usr/bin/time -f "%e %M %U %S" -o "$W/time" "$@" >"$W/out" 2>"$W/err"; then
		read -r T["$name|$size"] M["$name|$size"] u s <"$W/time"
		C["$name|$size"]=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
		M["$name|$size"]=$((M["$name|$size"] / 1024))
	else
		local rc=$?
		# a gate that finds a regression exits 1: still a measurement
		if [ "$rc" = 1 ] && [ "${name%% *}" = gate ]; then
			read -r T["$name|$size"] M["$name|$size"] u s < <(tail -1 "$W/time")
			C["$name|$size"]=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
			M["$name|$size"]=$((M["$name|$size"] / 1024))
		else
			T["$name|$size"]=failed M["$name|$size"]=-
			echo "scale: $name at $size failed ($rc): $(head -c 300 "$W/err")" >&2
		fi
	fi
}

# measure_job NAME SIZE CMD...: measure, for a job's command SCALE_JOB_COMMANDS names
measure_job() {
	[[ "$1" =~ $JOB_COMMANDS ]] || return 0
	measure "$@"
}

# measure_top SIZE FILE...: `perfkit top --replay` until its first frame
# shows the kernels (its peak memory is not known: it is stopped there)
measure_top() {
	local size=$1 t0 t1 pid i
	shift
	note "top --replay (first frame)"
	rm -f "$W/top.log"
	t0=$(date +%s.%N)
	(sleep 600 | TERM=xterm-256color script -qfec "stty cols 160 rows 45; $(printf '%q ' "$PERFKIT" top \
		--replay=1000000000 "$@")" "$W/top.log" >/dev/null 2>&1) &
	pid=$!
	for ((i = 0; i < 6000; i++)); do
		grep -q "Kernels:" "$W/top.log" 2>/dev/null && break
		sleep 0.05
	done
	t1=$(date +%s.%N)
	pkill -P "$pid" 2>/dev/null || true
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	T["top --replay (first frame)|$size"]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	M["top --replay (first frame)|$size"]=-
}

# mpi_reports N: the job's reports by map and reduce (`perfkit report
# JOB/`: the overview, rank_sum, nccl_sum and the summaries) and its
# diagnosis under mpirun over each of MPI_K processes, one thread each,
# where perfkit was built with MPI; the time a capture costs is the
# one-process time over N. Each process is timed on its own too (P: the
# CPU of the busiest, which the split should bring to 1/K of one
# process's; C is all of theirs together).
mpi_reports() {
	local n=$1 k cmd name
	grep -q '^PERFKIT_MPI:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null || return 0
	command -v mpirun >/dev/null || return 0
	# Open MPI refuses root without being told
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	for k in "${MPI_K[@]}"; do
		for cmd in "report --force" diagnose; do
			name=${cmd%% *}
			# one SCALE_JOB_COMMANDS leaves out runs nothing, and has no CPU times to read
			[[ "job: $name under MPI, $k processes" =~ $JOB_COMMANDS ]] || continue
			rm -f "$W"/cpu.*
			# shellcheck disable=SC2086 # the command and its option
			CPU_DIR=$W measure_job "job: $name under MPI, $k processes" "$n" mpirun --oversubscribe -n "$k" \
				-x CPU_DIR sh -c 'exec /usr/bin/time -f "%U %S" -o "$CPU_DIR/cpu.$OMPI_COMM_WORLD_RANK" "$@"' \
				sh "$PERFKIT" $cmd "$W/job/"
			P["job: $name under MPI, $k processes|$n"]=$(cat "$W"/cpu.* 2>/dev/null |
				awk '{ c = $1 + $2; if (c > m) m = c } END { printf "%.2f", m }')
		done
	done
}

# table TITLE UNIT SIZES...: the measured rows for these sizes
table() {
	local title=$1 unit=$2 key s prev t p line
	shift 2
	local sizes=("$@")
	echo
	echo "$title"
	line="| command |"
	for s in "${sizes[@]}"; do line="$line $s$unit: s (MiB) |"; [ "$s" = "${sizes[0]}" ] || line="$line growth |"; done
	echo "$line"
	echo "$line" | sed 's/[^|]//g; s/|/|---/g; s/---$//'
	for key in "${ORDER[@]}"; do
		[ -n "${T[$key|${sizes[0]}]:-}" ] || continue
		line="| $key |"
		prev=""
		for s in "${sizes[@]}"; do
			t=${T[$key|$s]:-}
			line="$line ${t:--} (${M[$key|$s]:--}) |"
			if [ -n "$prev" ]; then
				p=${T[$key|$prev]:-}
				line="$line $(awk -v a="$p" -v b="$t" -v n1="$prev" -v n2="$s" 'BEGIN {
					if (a + 0 < 0.05 || b + 0 < 0.05) print "-";
					else printf "%.2f", log(b / a) / log(n2 / n1) }') |"
			fi
			prev=$s
		done
		echo "$line"
	done
}

echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)," \
	"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "perfkit: $("$PERFKIT" --version 2>&1 | head -1); PERFKIT_THREADS=$PERFKIT_THREADS; SCALE=$SCALE"
echo "capture: $CAPTURE ($(sqlite3 "$CAPTURE" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") kernels," \
	"$(sqlite3 "$CAPTURE" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME") API calls)"
echo "ranks: ${RANK_CAPTURES[*]}"

# ---- one capture, longer -------------------------------------------------
if [[ $PARTS == *" capture "* ]]; then
REPORTS=$("$PERFKIT" report --list | awk '{ print $1 }')
for n in "${MULT[@]}"; do
	x=$W/x$n.sqlite
	multiply "$CAPTURE" "$x" "$n"
	# another process's run of the same length: what diff, the baseline
	# and merge read beside it
	rank_copy "$x" "$W/other.sqlite" 1
	for r in $REPORTS; do
		measure "report $r" "$n" "$PERFKIT" report --report="$r" "$x"
		measure "report $r csv" "$n" "$PERFKIT" report --format=csv --report="$r" "$x"
		measure "report $r json" "$n" "$PERFKIT" report --format=json --report="$r" "$x"
	done
	measure "report chrome" "$n" "$PERFKIT" report --format=chrome -o "$W/out.json" "$x"
	measure "report perfetto" "$n" "$PERFKIT" report --format=perfetto -o "$W/out.pftrace" "$x"
	measure "report folded" "$n" "$PERFKIT" report --format=folded "$x"
	measure "report html" "$n" "$PERFKIT" report --format=html -o "$W/out.html" "$x"
	measure "diagnose" "$n" "$PERFKIT" diagnose "$x"
	measure "roofline" "$n" "$PERFKIT" roofline "$x"
	measure "diff" "$n" "$PERFKIT" diff "$x" "$W/other.sqlite"
	measure "baseline save" "$n" "$PERFKIT" baseline save "$x" "$W/other.sqlite" -o "$W/baseline.json"
	"$PERFKIT" baseline save "$x" "$W/other.sqlite" -o "$W/kept.json" >/dev/null 2>&1
	measure "gate" "$n" "$PERFKIT" gate --baseline "$W/kept.json" "$x"
	measure "merge" "$n" "$PERFKIT" merge -o "$W/merged.sqlite" "$x" "$W/other.sqlite"
	measure_top "$n" "$x"
	rm -f "$x" "$W/other.sqlite" "$W/kept.json"
done
table "One capture, longer ($(basename "$CAPTURE") repeated n times)" x "${MULT[@]}"
fi

# ---- a job, wider --------------------------------------------------------
LARGEST=""
if [[ $PARTS == *" job "* ]]; then
ORDER=()
for n in "${RANKS[@]}"; do
	rm -rf "$W/job" "$W/other"
	job "$W/job" "$n" 8 "${RANK_CAPTURES[@]}"
	sync
	measure_job "job: report (overview, map and reduce)" "$n" "$PERFKIT" report "$W/job/"
	measure_job "job: report rank_sum" "$n" "$PERFKIT" report --report=rank_sum "$W/job/"
	measure_job "job: report nccl_sum" "$n" "$PERFKIT" report --report=nccl_sum "$W/job/"
	measure_job "job: report gpu_idle_sum" "$n" "$PERFKIT" report --report=gpu_idle_sum "$W/job/"
	measure_job "job: report cuda_gpu_trace csv" "$n" "$PERFKIT" report --format=csv --report=cuda_gpu_trace "$W/job/"
	measure_job "job: report chrome" "$n" "$PERFKIT" report --format=chrome -o "$W/out.json" "$W/job/"
	measure_job "job: diagnose" "$n" "$PERFKIT" diagnose "$W/job/"
	measure_job "job: diagnose, 2 threads" "$n" env PERFKIT_THREADS=2 "$PERFKIT" diagnose "$W/job/"
	measure_job "job: merge" "$n" "$PERFKIT" merge -o "$W/merged.sqlite" "$W/job/"
	[[ "top --replay" =~ $JOB_COMMANDS ]] && measure_top "$n" "$W/job/"
	LARGEST=$n
	[ "$n" != "${RANKS[-1]}" ] || mpi_reports "$n"
done
table "A job, wider ($(for f in "${RANK_CAPTURES[@]}"; do basename "$f"; done | tr '\n' ' ')as n ranks, 8 a host)" \
	" ranks" "${RANKS[@]}"
rm -rf "$W/job"
fi

# ---- NVTX at nsys-ai's scale ---------------------------------------------
NVTX_SIZE=""
if [[ $PARTS == *" nvtx "* ]]; then
ORDER=()
nvtx1=$W/nvtx1.sqlite
cp "$DATA/transformer_naive.sqlite" "$nvtx1"
nest_ranges "$nvtx1"
for n in 1 "$NVTX_MULT"; do
	x=$W/nvtx$n.sqlite
	[ "$n" = 1 ] || multiply "$nvtx1" "$x" "$n"
	read -r NK NR < <(sqlite3 -separator ' ' "$x" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL),
		(SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59)")
	echo "nvtx capture x$n: $NK kernels, $NR push/pop ranges, $(du -m "$x" | cut -f1) MB"
	measure "nvtx: report nvtx_kern_sum" "$n" "$PERFKIT" report --report=nvtx_kern_sum "$x"
	measure "nvtx: report nvtx_sum" "$n" "$PERFKIT" report --report=nvtx_sum "$x"
	[ "$n" = 1 ] || rm -f "$x"
done
table "NVTX ranges nested around each launch (transformer_naive, nest_ranges, repeated n times)" x 1 "$NVTX_MULT"
NVTX_SIZE="$NK kernels, $NR ranges"
rm -f "$nvtx1"
fi

# ---- issue 35's goals ----------------------------------------------------
if [[ $PARTS == *" goals "* ]]; then
ORDER=()
for n in 50 200; do
	rm -rf "$W/job"
	job "$W/job" "$n" 1000000 "$DATA/clean_loop.sqlite"
	measure "diagnose, one-rank captures" "$n" "$PERFKIT" diagnose "$W/job/"
done
rm -rf "$W/job"
ddp=$DATA/ddp/ddp2_even.sqlite
# The Chrome trace, folded stacks and HTML page of ddp2_even, a fifth of a
# second each: one run of each is noise on a shared machine, so they run
# in SCALE_GOAL_ROUNDS interleaved rounds (default 7; the order turned
# each round) and each is its median. As a user runs them (every core:
# PERFKIT_THREADS unset) and on one thread.
goal_rounds() { # THREADS (empty: every core)
	local threads=$1 r i k cmd t0 t1
	local -a names=(chrome folded html)
	for ((r = 0; r < ${SCALE_GOAL_ROUNDS:-7}; r++)); do
		for ((i = 0; i < 3; i++)); do
			k=${names[(i + r) % 3]}
			rm -f "$W/out.json" "$W/out.html"
			case $k in
			chrome) cmd=(report --format=chrome -o "$W/out.json" "$ddp") ;;
			folded) cmd=(report --format=folded "$ddp") ;;
			html) cmd=(report --format=html -o "$W/out.html" "$ddp") ;;
			esac
			# to the microsecond (time(1) counts hundredths, a tenth of
			# the Chrome trace's time here)
			t0=$EPOCHREALTIME
			if [ -n "$threads" ]; then
				PERFKIT_THREADS=$threads "$PERFKIT" "${cmd[@]}" >/dev/null 2>&1
			else
				env -u PERFKIT_THREADS "$PERFKIT" "${cmd[@]}" >/dev/null 2>&1
			fi
			t1=$EPOCHREALTIME
			echo "${t1/,/.} ${t0/,/.}" | awk '{ printf "%.4f\n", $1 - $2 }' >>"$W/goal.$k"
		done
	done
	for k in "${names[@]}"; do
		T["$k|ddp${threads:+ $threads thread}"]=$(sort -n "$W/goal.$k" | awk '{ v[NR] = $1 } END {
			printf "%.4f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
		rm -f "$W/goal.$k"
	done
}
goal_rounds ""
goal_rounds 1
echo
echo "Goals (issue 35)"
echo "| goal | measured | target |"
echo "|---|---|---|"
awk -v a="${T[diagnose, one-rank captures|50]}" -v b="${T[diagnose, one-rank captures|200]}" \
	-v ca="${C[diagnose, one-rank captures|50]:-0}" -v cb="${C[diagnose, one-rank captures|200]:-0}" 'BEGIN {
	printf "| diagnose, 200 one-rank captures (clean_loop) against 50 | %s s / %s s = %.1fx (CPU %s s / %s s = %.1fx) | at most 5.5x |\n",
		b, a, b / a, cb, ca, (ca > 0 ? cb / ca : 0) }'
for how in "ddp|every core" "ddp 1 thread|one thread"; do
	for f in folded html; do
		awk -v f="$f" -v how="${how#*|}" -v a="${T[chrome|${how%%|*}]}" -v b="${T[$f|${how%%|*}]}" \
			-v r="${SCALE_GOAL_ROUNDS:-7}" 'BEGIN {
			printf "| %s against the Chrome trace, ddp2_even, %s (medians of %d rounds) | %s s / %s s = %.2fx | at most 2x |\n",
				f, how, r, b, a, b / (a > 0.01 ? a : 0.01) }'
	done
done
[ -z "$LARGEST" ] ||
	echo "| diagnose, job of $LARGEST ranks ($(for f in "${RANK_CAPTURES[@]}"; do basename "$f"; done | tr '\n' ' ')copies) |" \
		"${T[job: diagnose|$LARGEST]:--} s (CPU ${C[job: diagnose|$LARGEST]:--} s), ${M[job: diagnose|$LARGEST]:--} MiB;" \
		"2 threads ${T[job: diagnose, 2 threads|$LARGEST]:--} s (CPU ${C[job: diagnose, 2 threads|$LARGEST]:--} s)" \
		"| at most 60 s and 1024 MiB (1,000 ranks) |"
for k in "${MPI_K[@]}"; do
	[ -n "$LARGEST" ] || break
	for name in diagnose report; do
		key="job: $name under MPI, $k processes|$LARGEST"
		[ -n "${T[$key]:-}" ] || continue
		# wall time and the busiest process's CPU time against one process's
		# (on a machine shared with other work the CPU time is what shows the split)
		awk -v name="$name" -v k="$k" -v t="${T[$key]}" -v c="${C[$key]:-0}" -v p="${P[$key]:-0}" -v n="$LARGEST" \
			-v t1="${T[job: $name under MPI, 1 processes|$LARGEST]:-0}" \
			-v p1="${P[job: $name under MPI, 1 processes|$LARGEST]:-0}" 'BEGIN {
			printf "| %s of the %d-rank job under MPI, %d processes | %s s, %.2fx of 1 process (CPU of the %d processes %s s; the busiest %s s, %.2fx of 1 process, %.1f ms a capture) | about 1/%d of 1 process |\n",
				name, n, k, t, (t1 > 0 ? t / t1 : 0), k, c, p, (p1 > 0 ? p / p1 : 0), 1000 * p * k / n, k }'
	done
done
[ -z "$NVTX_SIZE" ] ||
awk -v t="${T[nvtx: report nvtx_kern_sum|$NVTX_MULT]:-0}" -v m="${M[nvtx: report nvtx_kern_sum|$NVTX_MULT]:-0}" \
	-v m1="${M[nvtx: report nvtx_kern_sum|1]:-0}" -v size="$NVTX_SIZE" 'BEGIN {
	printf "| nvtx_kern_sum, %s | %s s, %s MiB (%s MiB at 1x) | at most 30 s, memory flat (16M ranges over 2.2M kernels) |\n", size, t, m, m1 }'
fi
# the exports' goals, their own table (bench/scale_exports.sh): 10M kernels at SCALE=full, 1M at small
[[ $PARTS == *" exports "* ]] || exit 0
EXPORTS_MULT=${EXPORTS_MULT:-$([ "$SCALE" = full ] && echo 12500 || echo 1250)} "$ROOT/bench/scale_exports.sh" "$BUILD"
