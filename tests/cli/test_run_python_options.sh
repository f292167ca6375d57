#!/usr/bin/env bash
# test_run_python_options.sh - `perfkit run`'s Python options refuse what
# they cannot do with one line and exit 2 before anything runs or is
# written (--pytorch of another mode, --pytorch=modules without NVTX
# tracing, a sampling rate out of 1..10000, --python-backtrace of another
# kind, --python-native-frames other than on or off or without sampling), and the hook they put on PYTHONPATH leaves a program's own
# sitecustomize running, exactly once, and a program that never imports
# torch untouched.
. "$(dirname "$0")/cli_lib.sh"

cd "$TMP" || exit 1
refused "pytorch mode" "--pytorch: unknown mode 'layers' \(choose modules\)" --pytorch=layers
refused "pytorch without nvtx" "--pytorch=modules records NVTX ranges: add nvtx to --trace" \
	--pytorch=modules --trace=cuda
refused "sampling rate 0" "--python-sampling: '0' is not a rate between 1 and 10000" \
	--python-sampling=0
refused "sampling rate too high" "--python-sampling: '20000' is not a rate" \
	--python-sampling=20000
refused "sampling rate not a number" "--python-sampling: 'fast' is not a rate" \
	--python-sampling=fast
refused "backtrace kind" "--python-backtrace: unknown kind 'python' \(choose cuda\)" \
	--python-backtrace=python
refused "native frames value" "--python-native-frames: 'maybe' is not on or off" \
	--python-sampling --python-native-frames=maybe
refused "native frames without sampling" "--python-native-frames goes with --python-sampling" \
	--python-native-frames=off

# The hook: sitecustomize.py from the build, first on PYTHONPATH as perfkit
# run puts it, with a program's own sitecustomize further along the path.
hook=$(dirname "$PERFKIT")/../python
if [ ! -f "$hook/sitecustomize.py" ] || ! command -v python3 >/dev/null; then
	fail "the build has no python/sitecustomize.py beside perfkit ($hook)"
else
	mkdir -p "$TMP/own"
	echo 'import sys; sys.stderr.write("own sitecustomize ran\n")' >"$TMP/own/sitecustomize.py"
	for mode in "PERFKIT_PYTORCH=modules" "PERFKIT_PYTHON_SAMPLING=1000" ""; do
		env -u PERFKIT_PYTORCH -u PERFKIT_PYTHON_SAMPLING -u PERFKIT_PYTHON_BACKTRACE \
			${mode:+"$mode"} PYTHONPATH="$hook:$TMP/own" PERFKIT_PYTHON_HOOK_DIR="$hook" \
			CUDA_INJECTION64_PATH="$TMP/no-such-collector.so" \
			python3 -c 'import sys; print("torch" in sys.modules, "perfkit_hook" in sys.modules)' \
			>"$TMP/out" 2>"$TMP/err"
		status=$?
		expect_status "hook ${mode:-off}: the program runs" 0
		expect_that "hook ${mode:-off}: the program's own sitecustomize ran once" \
			test "$(grep -c 'own sitecustomize ran' "$TMP/err")" = 1
		expect_out "hook ${mode:-off}: torch not imported by the hook" "^False True$"
	done
	# Sampling asked for with a collector that cannot be loaded: one line
	# says the stacks are off, and the program still runs.
	env PERFKIT_PYTHON_SAMPLING=1000 PYTHONPATH="$hook" CUDA_INJECTION64_PATH="$TMP/x.so" \
		python3 -c 'print("ran")' >"$TMP/out" 2>"$TMP/err"
	status=$?
	expect_status "sampling without a collector: the program runs" 0
	expect_err "sampling without a collector: said once" '^perfkit: recording Python stacks is off: '
fi
finish
