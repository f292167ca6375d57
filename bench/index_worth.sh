#!/usr/bin/env bash
# index_worth.sh - what each of a capture's indexes costs and what it buys.
#
# For every index of CAPTURE (a finished capture, e.g. one bench_finish made):
# its size (dbstat), the CPU seconds to build it (dropped, then created
# again by the sqlite3 shell), and the CPU seconds of every report, diagnose
# and trace export with the index and without it. An index no command slows down
# without is not worth its build time and bytes. One table on stdout.
#
#   bench/index_worth.sh BUILD CAPTURE [INDEX...]   (default: every perfkit_* index)
#   PARALLEL=1: the variants at once, one core each (for a machine with
#   more cores than indexes); TIMEOUT=S: seconds a command may take (120)
set -euo pipefail
BUILD=$(cd "${1:?usage: index_worth.sh BUILD CAPTURE [INDEX...]}" && pwd)
CAPTURE=${2:?usage: index_worth.sh BUILD CAPTURE [INDEX...]}
shift 2
TIMEOUT=${TIMEOUT:-120}
PK=$BUILD/cli/perfkit
W=$(mktemp -d "${TMPDIR:-/tmp}/index_worth.XXXXXX")
trap 'rm -rf "$W"' EXIT
INDEXES=("$@")
[ ${#INDEXES[@]} -gt 0 ] ||
	mapfile -t INDEXES < <(sqlite3 "$CAPTURE" "SELECT name FROM sqlite_master
		WHERE type = 'index' AND name LIKE 'perfkit%' ORDER BY name")

COMMANDS=(
	"report --report=cuda_api_sum --format=csv"
	"report --report=cuda_gpu_kern_sum --format=csv"
	"report --report=cuda_gpu_mem_time_sum --format=csv"
	"report --report=cuda_gpu_trace --format=csv"
	"report --report=nvtx_sum --format=csv"
	"report --report=nvtx_kern_sum --format=csv"
	"report"
	"diagnose"
	"report --format=chrome"
	"report --format=folded --weight=gpu"
	"report --format=folded --weight=api"
)
NAMES=(api_sum kern_sum mem_sum gpu_trace nvtx_sum nvtx_kern overview diagnose chrome fold_gpu fold_api)

# times FILE N: the CPU seconds (user + system) of every command on FILE,
# one line: on a shared machine, steadier than the wall clock, and the
# commands run on one thread. A command still running after $TIMEOUT
# seconds is stopped and shown as ">TIMEOUT".
times() {
	local c t line=""
	for c in "${COMMANDS[@]}"; do
		rm -f "$W/c$2"
		# shellcheck disable=SC2086
		timeout "$TIMEOUT" /usr/bin/time -f "%U %S" -o "$W/c$2" "$PK" $c "$1" >/dev/null 2>&1 || true
		if [ -s "$W/c$2" ] && ! grep -q signal "$W/c$2"; then
			t=$(tail -1 "$W/c$2" | awk '{ printf "%.2f", $1 + $2 }')
		else
			t=">$TIMEOUT"
		fi
		line+=$(printf ' %9s' "$t")
	done
	echo "$line"
}

# variant N INDEX: line N of the table, for the capture without INDEX
# (without none when INDEX is empty), into $W/line.N.
variant() {
	local n=$1 ix=$2 f=$W/v$1.sqlite mib=- build=- ddl
	cp "$W/all.sqlite" "$f"
	if [ -n "$ix" ]; then
		mib=$(sqlite3 "$f" "SELECT printf('%.1f', sum(pgsize) / 1048576.0) FROM dbstat WHERE name = '$ix'")
		ddl=$(sqlite3 "$f" "SELECT sql FROM sqlite_master WHERE name = '$ix'")
		sqlite3 "$f" "DROP INDEX $ix"
		cp "$f" "$f.build"
		/usr/bin/time -f "%U %S" -o "$W/t$n" sqlite3 "$f.build" "$ddl"
		build=$(tail -1 "$W/t$n" | awk '{ printf "%.2f", $1 + $2 }')
		rm -f "$f.build"
	fi
	printf '%-26s %8s %8s%s\n' "${ix:+-}${ix:-(all indexes)}" "$mib" "$build" "$(times "$f" "$n")" \
		>"$W/line.$n"
	rm -f "$f"
}

cp "$CAPTURE" "$W/all.sqlite"
VARIANTS=("" "${INDEXES[@]}")
CORES=$(nproc)
for i in "${!VARIANTS[@]}"; do
	if [ -n "${PARALLEL:-}" ]; then
		# one core each, so that the variants do not slow each other down
		taskset -c $((i % CORES)) bash -c "$(declare -f variant times); W=$W PK=$PK TIMEOUT=$TIMEOUT; $(declare -p COMMANDS); variant $i '${VARIANTS[$i]}'" &
	else
		variant "$i" "${VARIANTS[$i]}"
	fi
done
wait
printf '%-26s %8s %8s' index MiB build_s
printf ' %9s' "${NAMES[@]}"
echo
for i in "${!VARIANTS[@]}"; do cat "$W/line.$i" 2>/dev/null || echo "${VARIANTS[$i]}: stopped"; done
