# test_duration_options_one_grammar.sh - every option that takes a duration
# (report --from/--to, gate --min-time) reads it by one grammar: digits, an
# optional fraction and ns/us/ms/s (ns without one). --min-time used to go
# through strtod, which also took "0x10us", "1e3us", ".5s" and "+5ms".
. "$(dirname "$0")/cli_lib.sh"
: "${PERFKIT_TEST_TOOLS:?}" "${PERFKIT_TEST_DATA:?}"

write() { # PATH COMMAND GPU WALL_NS [NAME COUNT NS]...
	"$PERFKIT_TEST_TOOLS/write_kernel_store" "$@" || { echo "FAIL: cannot write $1" >&2; exit 1; }
}

H100="NVIDIA H100 80GB HBM3"
write "$TMP/base1.sqlite" "./train" "$H100" 40000000 gemm 10 1000000
write "$TMP/base2.sqlite" "./train" "$H100" 41000000 gemm 10 1010000
# gemm 10 ms slower in all
write "$TMP/slow.sqlite" "./train" "$H100" 50000000 gemm 10 2000000
bl="$TMP/baseline.json"
run baseline save -o "$bl" "$TMP/base1.sqlite" "$TMP/base2.sqlite"
expect_status "baseline save" 0
capture="$PERFKIT_TEST_DATA/corpus/phases_no_nvtx.sqlite"

# What the grammar takes, both options alike.
for t in 1000000000 1s 1000ms 1000000us 1.0s 0.5s; do
	run report --format=chrome --from="$t" -o "$TMP/w.json" --force "$capture"
	expect_status "report --from=$t" 0
	# a floor above the 10 ms change: the slower gemm does not fail
	run gate --baseline "$bl" --min-time="$t" "$TMP/slow.sqlite"
	expect_status "gate --min-time=$t passes a change below it" 0
done
# below the change it fails: the value was read, not just accepted
for t in 1ms 1000000 1000us 0.001s; do
	run gate --baseline "$bl" --min-time="$t" "$TMP/slow.sqlite"
	expect_status "gate --min-time=$t fails the change above it" 1
done

# What it refuses, both options alike, each with one line.
for t in 0x10us 1e3us .5s +5ms -5ms "5 ms" 5m inf 5.ms ""; do
	run report --format=chrome --from="$t" -o "$TMP/w.json" --force "$capture"
	expect_status "report --from='$t'" 2
	expect_one_error_line "report --from='$t'" "is not a time"
	run gate --baseline "$bl" --min-time="$t" "$TMP/slow.sqlite"
	expect_status "gate --min-time='$t'" 2
	expect_one_error_line "gate --min-time='$t'" "--min-time expects a duration"
done
finish
