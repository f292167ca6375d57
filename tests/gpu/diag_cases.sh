#!/usr/bin/env bash
# diag_cases.sh - on the GPU machine: captures the programs of
# tests/gpu/cases (one known problem each, a clean one, two windows of one
# steady program, PyTorch programs), checks the access counters of
# --metrics=memory against ncu, and prints what `perfkit diagnose` says of
# each capture. Captures go to $OUT/cases.tar.xz (fixtures for
# tests/cli/test_diagnose_own_cases.sh), logs to $OUT.
#
#   tests/gpu/diag_cases.sh DIR
#   ACCESS_ONLY=1 tests/gpu/diag_cases.sh DIR   only the ncu comparison
#
# DIR mirrors a build (tests/gpu/run.sh --stage): cli/perfkit,
# collectors/libperfkit-inject.so, tests/gpu/diag_cases, lib/.
set -u
D=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
export LD_LIBRARY_PATH=$D/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
PK=$D/cli/perfkit
CASES=$D/tests/gpu/diag_cases
W=$(mktemp -d)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
ACCESS=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
ACCESS=$ACCESS,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
ACCESS=$ACCESS,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct
RESULTS=()

capture() { # NAME [run options] -- PROGRAM ARGS
	local name=$1 rc
	shift
	timeout -k 5 180 "$PK" run -f -o "$W/$name.sqlite" "$@" >"$W/$name.log" 2>&1
	rc=$?
	RESULTS+=("$(printf '%-28s exit %-3s %s' "$name" "$rc" "$(grep -m1 -o 'metrics in [0-9]* pass.*' "$W/$name.log")")")
}

if [ -z "${ACCESS_ONLY:-}" ]; then
	for c in strided coalesced smem gemm_chain gemm_heads gemm_streams clean host_gaps cross_stream; do
		capture "case_$c" -- "$CASES" "$c"
	done
	capture case_steady_50 -- "$CASES" steady --iters=50
	capture case_steady_44_slow -- "$CASES" steady --iters=44 --slow=1.14
	capture case_gemm_chain_memory --metrics=memory -- "$CASES" gemm_chain --iters=3
	capture case_smem_memory --metrics=memory -- "$CASES" smem --iters=3
	capture torch_mlp -- python3 "$SRC/cases/torch_cases.py" mlp 10
	capture torch_transformer -- python3 "$SRC/cases/torch_cases.py" transformer 10
fi
for c in strided coalesced; do
	capture "case_${c}_memory" --metrics=memory -- "$CASES" "$c" --iters=3
done

echo "== ncu: access counters of the gather kernels"
for c in strided coalesced; do
	"$NCU" --metrics "$ACCESS" --clock-control none --csv --page raw "$CASES" "$c" --iters=3 \
		>"$W/ncu_$c.csv" 2>>"$W/ncu.err" || tail -3 "$W/ncu.err"
	"$NCU" --metrics "$ACCESS" --clock-control none --cache-control none --csv --page raw \
		"$CASES" "$c" --iters=3 >"$W/ncu_${c}_nocache.csv" 2>>"$W/ncu.err"
	python3 "$SRC/metrics/access_check.py" "$W/case_${c}_memory.sqlite" "$W/ncu_$c.csv" 2>&1 |
		tee -a "$W/access_check.txt"
	python3 "$SRC/metrics/access_check.py" "$W/case_${c}_memory.sqlite" "$W/ncu_${c}_nocache.csv" \
		--hit-rates 2>&1 | tee -a "$W/access_check.txt"
done

echo "== what perfkit says"
for f in "$W"/*.sqlite; do
	n=$(basename "$f" .sqlite)
	{
		echo "######## $n"
		"$PK" diagnose "$f" 2>&1 | head -60
	} >>"$W/diagnose.txt"
done
"$PK" diff "$W/case_steady_50.sqlite" "$W/case_steady_44_slow.sqlite" >"$W/diff_steady.txt" 2>&1
cat "$W/diagnose.txt" | grep -E '^#|^ *[0-9]+\.|high|medium' | head -120

# Compressed: captures of SQLite pages shrink about tenfold.
(cd "$W" && tar cf - ./*.sqlite | xz -6 >"$OUT/cases.tar.xz")
ls -l "$W"/*.sqlite | awk '{ print $5, $9 }' >"$OUT/sizes.txt"
cat "$W"/*.log >"$W/capture_logs.txt"
cp "$W/diagnose.txt" "$W/diff_steady.txt" "$W/access_check.txt" "$OUT/" 2>/dev/null
(cd "$W" && tar cf - ./ncu_*.csv ncu.err | xz -6 >"$OUT/ncu.tar.xz")
echo "== captures"
printf '%s\n' "${RESULTS[@]}"
grep -c PASS "$W/access_check.txt" | sed 's/^/access PASS lines: /'
grep FAIL "$W/access_check.txt" | head -20
