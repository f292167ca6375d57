# scale_captures.sh - sourced by bench/scale.sh: the inputs of the scale
# benchmark made from real captures at run time (never committed). Needs
# the sqlite3 shell and tests/tools/job_captures.sh's rank_copy.

# multiply SRC DST N: SRC as a run N times as long would have recorded it:
# every timed row (start, end, timestamp) repeated N times, copy k moved k
# spans of the run later (its span plus a millisecond) and its
# correlation ids k id spans on, so that each copy's launches still find
# their kernels and metrics; the run's duration follows.
multiply() {
	local src=$1 dst=$2 n=$3 span corr cols sel t c sql=""
	cp "$src" "$dst"
	[ "$n" -gt 1 ] || return 0
	span=$(sqlite3 "$dst" "SELECT max(e) - min(s) + 1000000 FROM (
		SELECT min(start) s, max(coalesce(end, start)) e FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL
		SELECT min(start), max(coalesce(end, start)) FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL
		SELECT min(start), max(coalesce(end, start)) FROM NVTX_EVENTS WHERE start > 0)")
	corr=0
	for t in $(sqlite3 "$dst" "SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite_%'"); do
		has_column "$dst" "$t" correlationId || continue
		c=$(sqlite3 "$dst" "SELECT coalesce(max(correlationId), 0) FROM \"$t\"")
		[ "$c" -le "$corr" ] || corr=$c
	done
	corr=$((corr + 1))
	for t in $(sqlite3 "$dst" "SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite_%'"); do
		has_column "$dst" "$t" start || has_column "$dst" "$t" timestamp ||
			has_column "$dst" "$t" correlationId || continue
		cols=$(sqlite3 "$dst" "SELECT group_concat('\"' || name || '\"', ', ') FROM pragma_table_info('$t')")
		sel=$(sqlite3 "$dst" "SELECT group_concat(CASE
			WHEN name IN ('start', 'end', 'timestamp') THEN '\"' || name || '\" + k * $span'
			WHEN name = 'correlationId' THEN '\"' || name || '\" + k * $corr'
			ELSE '\"' || name || '\"' END, ', ') FROM pragma_table_info('$t')")
		sql="$sql INSERT INTO \"$t\" ($cols) SELECT $sel FROM \"$t\",
			(WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $n - 1)
			 SELECT k FROM n) ORDER BY k, \"$t\".rowid;"
	done
	sqlite3 "$dst" "BEGIN; $sql
		UPDATE PERFKIT_META SET value = value + ($n - 1) * $span WHERE key = 'duration_ns';
		COMMIT; ANALYZE;" 2>/dev/null ||
		sqlite3 "$dst" "BEGIN; $sql COMMIT; ANALYZE;"
}

# export_capture DIR MULT: the path of DIR/gpu_work_xMULT.sqlite, made
# once: gpu_work with only the indexes a capture builds now
# (libprof/src/schema.c; the fixture is older and has more), multiplied.
export_capture() {
	local dir=$1 n=$2 big src
	big=$dir/gpu_work_x$n.sqlite
	if [ ! -s "$big" ]; then
		src=$(mktemp "$dir/gpu_work.XXXXXX")
		cp "$(dirname "${BASH_SOURCE[0]}")/../tests/data/gpu_work.sqlite" "$src"
		sqlite3 "$src" "SELECT 'DROP INDEX \"' || name || '\";' FROM sqlite_master WHERE type = 'index'
			AND name LIKE 'perfkit_%' AND name NOT IN ('perfkit_kernel_corr', 'perfkit_memcpy_corr',
			'perfkit_memset_corr', 'perfkit_sync_corr', 'perfkit_memory_corr', 'perfkit_nvtx_tid')" |
			sqlite3 "$src"
		echo "making $big (gpu_work x$n)" >&2
		multiply "$src" "$big.part" "$n"
		mv "$big.part" "$big"
		rm -f "$src"
	fi
	echo "$big"
}

# renumber_sql FILE: the statements that renumber FILE's process as
# rank @RANK@'s (pid 100000 + rank, as rank_copy does, in one sqlite3 run
# instead of one a column): every globalPid, globalTid, endGlobalTid.
renumber_sql() {
	local old
	old=$(sqlite3 "$1" "SELECT pid FROM PROCESSES LIMIT 1")
	sqlite3 "$1" "SELECT 'UPDATE \"' || m.name || '\" SET ' || p.name || ' = (' || p.name ||
		' & 16777215) | (@PID@ << 24) WHERE (' || p.name || ' >> 24) & 16777215 = $old;'
		FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'
		AND p.name IN ('globalPid', 'globalTid', 'endGlobalTid')"
	echo "UPDATE PROCESSES SET pid = @PID@ WHERE pid = $old;"
	! has_column "$1" PERFKIT_PROCESS_INFO rank ||
		echo "UPDATE PERFKIT_PROCESS_INFO SET rank = @RANK@, host = '@HOST@';
			UPDATE PERFKIT_META SET value = '@HOST@' WHERE key = 'host';
			UPDATE PERFKIT_CLOCKS SET host = '@HOST@';"
}

# job DIR N RANKS_PER_HOST SRC...: N ranks as `perfkit run -o
# 'job-%h-%r.sqlite'` names them, rank r a copy of SRC[r mod count] with
# its process renumbered as rank r's on host node-(r / RANKS_PER_HOST).
job() {
	local dir=$1 n=$2 per=$3 r h k
	shift 3
	local srcs=("$@") sqls=()
	mkdir -p "$dir"
	for k in "${!srcs[@]}"; do
		sqls[k]=$(renumber_sql "${srcs[k]}")
	done
	for ((r = 0; r < n; r++)); do
		h=node-$((r / per))
		k=$((r % ${#srcs[@]}))
		cp "${srcs[k]}" "$dir/job-$h-$r.sqlite"
		sqlite3 "$dir/job-$h-$r.sqlite" "BEGIN; $(printf '%s' "${sqls[k]}" |
			sed "s/@PID@/$((100000 + r))/g; s/@RANK@/$r/g; s/@HOST@/$h/g") COMMIT;"
	done
}

# nest_ranges DST: DST (a capture with runtime and driver calls) with push/pop
# ranges nested around each kernel launch as a program that names its
# layers and ops nests them: 5 to 9 deep by the launch's correlation id
# (7 on average, innermost "nest.5" to "nest.9"), and before every fourth
# launch a sibling range that encloses no call ("gap"). Its ranges then
# number about 7.25 a kernel, the ratio of the nsys export nsys-ai
# reports (15.9M ranges over 2.2M kernels); multiply it after.
nest_ranges() {
	local dst=$1 base
	base=$(sqlite3 "$dst" "SELECT coalesce(max(id), 0) + 1 FROM StringIds")
	sqlite3 "$dst" "BEGIN;
		INSERT INTO StringIds (id, value) SELECT $base + x, 'nest.' || x FROM
			(WITH RECURSIVE d(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM d WHERE x < 9) SELECT x FROM d);
		INSERT INTO StringIds (id, value) VALUES ($base + 10, 'gap');
		CREATE TEMP TABLE launch AS SELECT start s, end e, globalTid t, correlationId c
			FROM (SELECT start, end, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME
			UNION ALL SELECT start, end, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER)
			WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL);
		INSERT INTO NVTX_EVENTS (start, end, eventType, category, globalTid, endGlobalTid, textId, domainId)
		SELECT st, en, 59, 0, t, t, id, 0 FROM (
			SELECT s - (10 - x) st, e + (10 - x) en, t, $base + x id FROM launch,
				(WITH RECURSIVE d(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM d WHERE x < 9) SELECT x FROM d)
				WHERE x <= 5 + c % 5
			UNION ALL SELECT s - 30, s - 20, t, $base + 10 FROM launch WHERE c % 4 = 0)
		ORDER BY t, st, en DESC;
		COMMIT;"
}
