# job_captures.sh - sourced by the job tests and bench/job_bench.sh: a real
# capture copied and rewritten as another rank's or another host's would be
# (tests/data/README.md, "Jobs of many ranks"). Needs the sqlite3 shell.

# has_column FILE TABLE COLUMN: the capture's table has that column
has_column() {
	[ -n "$(sqlite3 "$1" "SELECT 1 FROM pragma_table_info('$2') WHERE name = '$3'")" ]
}

# rank_copy SRC DST RANK: SRC as rank RANK's capture: its process
# renumbered pid 100000 + RANK (pid, globalPid, globalTid, endGlobalTid in
# every table) and, where PERFKIT_PROCESS_INFO has ranks, that rank
rank_copy() {
	local pid=$((100000 + $3)) old sql="" t c
	cp "$1" "$2"
	old=$(sqlite3 "$2" "SELECT pid FROM PROCESSES LIMIT 1")
	for t in $(sqlite3 "$2" "SELECT name FROM sqlite_master WHERE type = 'table'"); do
		for c in globalPid globalTid endGlobalTid; do
			has_column "$2" "$t" "$c" &&
				sql="$sql UPDATE \"$t\" SET $c = ($c & 16777215) | ($pid << 24)
					WHERE ($c >> 24) & 16777215 = $old;"
		done
	done
	sql="$sql UPDATE PROCESSES SET pid = $pid WHERE pid = $old;"
	! has_column "$2" PERFKIT_PROCESS_INFO rank || sql="$sql UPDATE PERFKIT_PROCESS_INFO SET rank = $3;"
	sqlite3 "$2" "$sql"
}

# as_other_host SRC DST OFFSET_NS ERROR_NS [PPM [HOST]]: SRC as host HOST
# (node-b) would have recorded it: its capture clock OFFSET_NS behind, its
# realtime clock ERROR_NS ahead of SRC's host's, and both its clocks
# running PPM ppm fast against SRC's host's from SRC's first clock pair on
# (a drift between the hosts that their clock pairs, each host's capture
# clock against its own realtime clock, cannot see)
as_other_host() {
	local src=$1 dst=$2 off=$3 error=$4 ppm=${5:-0} host=${6:-node-b} sql="" t c t0
	cp "$src" "$dst"
	t0=$(sqlite3 "$dst" "SELECT min(timestampNs) FROM PERFKIT_CLOCKS WHERE at = 'start'")
	for t in CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_MEMCPY CUPTI_ACTIVITY_KIND_MEMSET \
		CUPTI_ACTIVITY_KIND_RUNTIME CUPTI_ACTIVITY_KIND_DRIVER CUPTI_ACTIVITY_KIND_SYNCHRONIZATION \
		NVTX_EVENTS PROFILER_OVERHEAD CUDA_GPU_MEMORY_USAGE_EVENTS GPU_METRICS; do
		for c in start end timestamp; do
			has_column "$dst" "$t" "$c" &&
				sql="$sql UPDATE $t SET \"$c\" = \"$c\" - $off + ((\"$c\" - $t0) * $ppm) / 1000000;"
		done
	done
	sqlite3 "$dst" "$sql
		UPDATE PERFKIT_CLOCKS SET realtimeNs = realtimeNs + $error + ((timestampNs - $t0) * $ppm) / 1000000,
			timestampNs = timestampNs - $off + ((timestampNs - $t0) * $ppm) / 1000000, host = '$host';
		UPDATE PERFKIT_META SET value = value + $error WHERE key = 'start_ns';
		UPDATE PERFKIT_META SET value = '$host' WHERE key = 'host'"
	! has_column "$dst" PERFKIT_PROCESS_INFO host ||
		sqlite3 "$dst" "UPDATE PERFKIT_PROCESS_INFO SET host = '$host'"
}
