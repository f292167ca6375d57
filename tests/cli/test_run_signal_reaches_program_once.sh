#!/usr/bin/env bash
# A SIGINT or SIGTERM meant for the program reaches it once under `perfkit
# run`, however it is sent: to perfkit's process group, where the program
# gets its own copy (`kill -INT -PGID` from a shell outside the group;
# timeout(1), which signals perfkit and then its group; a terminal's
# Ctrl-C), or to perfkit's pid alone, which perfkit passes on. perfkit
# exits with the program's status (128 + N when the signal killed it) and
# the capture is finished.
#
# The program (python3) counts every SIGINT and SIGTERM delivered to it:
# signal.set_wakeup_fd writes a byte per delivery, so Python merges none.
# It exits with status 3 once it has seen both. Each case ends with the
# other signal sent to perfkit's pid alone, which perfkit passes on after
# any copy of the first it would pass on wrongly: when the program ends,
# its count is final, with no pause to wait for a second copy.
set -u
. "$(dirname "$0")/cli_lib.sh"

if built_without_cupti; then
	skip "signals passed on to the program" "built without CUPTI"
	finish
	exit
fi
for tool in python3 setsid timeout; do
	if ! command -v "$tool" >/dev/null; then
		skip "signals passed on to the program" "no $tool"
		finish
		exit
	fi
done

cat >"$TMP/count.py" <<'EOF'
import os, select, signal, sys, time
log, seconds = sys.argv[1], float(sys.argv[2])
r, w = os.pipe()
os.set_blocking(w, False)
signal.set_wakeup_fd(w)
for s in (signal.SIGINT, signal.SIGTERM):
    signal.signal(s, lambda *a: None)
with open(log + ".ready", "w") as f:
    f.write(str(os.getpid()))
seen = set()
end = time.monotonic() + seconds
while time.monotonic() < end:
    if not select.select([r], [], [], 0.5)[0]:
        continue
    got = os.read(r, 64)
    with open(log, "a") as f:
        for b in got:
            f.write(signal.Signals(b).name + "\n")
    seen.update(got)
    if {signal.SIGINT, signal.SIGTERM} <= seen:
        sys.exit(3)
sys.exit(4)
EOF

# count LOG SIGNAL: how many times the program got SIGNAL (SIGINT, SIGTERM).
count() {
	local n
	n=$(grep -c "^$2\$" "$1" 2>/dev/null)
	echo "${n:-0}"
}
counted() { [ "$(count "$1" "$2")" -ge "$3" ]; }
ready() { [ -s "$1.ready" ] && [ -n "$(meta "$2" run_pid)" ]; }
ended() {
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)
	[ -z "$state" ] || [ "$state" = Z ]
}

# start NAME [WRAPPER...]: runs WRAPPER perfkit run -- python3 count.py in
# the background, waits until the program counts; sets $log $out $job
# (the background job) $pk (perfkit run's pid, from the capture).
start() {
	local name=$1
	shift
	log=$TMP/$name.log out=$TMP/$name.sqlite
	"$@" "$PERFKIT" run -o "$out" -- python3 "$TMP/count.py" "$log" "$WAIT_S" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" &
	job=$!
	pk=
	if wait_until "$WAIT_S" ready "$log" "$out"; then
		pk=$(meta "$out" run_pid)
	else
		fail "$name: the program did not start; perfkit said: $(head -c 300 "$TMP/$name.err")"
	fi
}

# deliver NAME SIGNAL N COMMAND...: COMMAND sends SIGNAL; waits until the
# program has counted it N times in all.
deliver() {
	local name=$1 sig=$2 n=$3
	shift 3
	"$@"
	wait_until "$WAIT_S" counted "$log" "$sig" "$n" ||
		fail "$name: the program never got $sig number $n"
}

# finish_case NAME INTS TERMS: ends the case (the other signal to perfkit
# alone has been sent), then checks the counts, perfkit's status and the
# capture.
finish_case() {
	local name=$1 ints=$2 terms=$3
	wait "$job"
	status=$?
	expect_that "$name: the program got SIGINT $ints time(s), got $(count "$log" SIGINT)" \
		test "$(count "$log" SIGINT)" -eq "$ints"
	expect_that "$name: the program got SIGTERM $terms time(s), got $(count "$log" SIGTERM)" \
		test "$(count "$log" SIGTERM)" -eq "$terms"
	expect_status "$name: perfkit run exits with the program's status" 3
	expect_that "$name: the capture is finished with that status" \
		test "$(meta "$out" finished),$(meta "$out" exit_status)" = "1,3"
}

# To perfkit's process group from a shell outside it: setsid makes perfkit
# the leader of a group of its own, which the program joins. Three times,
# each after the program counted the one before.
start group_int setsid -w
pgid=$(ps -o pgid= -p "$pk" | tr -d ' ')
expect_that "group: perfkit leads its own process group" test "$pgid" = "$pk"
for n in 1 2 3; do
	deliver group_int SIGINT "$n" kill -INT -- "-$pgid"
done
kill -TERM "$pk"
finish_case "kill -INT -PGID" 3 1

start group_term setsid -w
for n in 1 2 3; do
	deliver group_term SIGTERM "$n" kill -TERM -- "-$pk"
done
kill -INT "$pk"
finish_case "kill -TERM -PGID" 1 3

# timeout: SIGALRM is what its timer sends it; it then signals perfkit and
# perfkit's group (its own). --preserve-status: timeout exits with
# perfkit's status.
start timeout timeout --preserve-status -s INT "$((WAIT_S * 2))"
timeout_pid=$job
deliver timeout SIGINT 1 kill -ALRM "$timeout_pid"
kill -TERM "$pk"
finish_case "timeout -s INT" 1 1

# To perfkit's pid alone: passed on, once each.
start alone
deliver alone SIGINT 1 kill -INT "$pk"
kill -TERM "$pk"
finish_case "kill -INT to perfkit alone" 1 1

# A terminal's Ctrl-C, three times: perfkit runs on a pty (python3's pty
# module) whose foreground group it leads.
python3 - "$PERFKIT" "$TMP/pty.sqlite" "$TMP/count.py" "$TMP/pty.log" "$WAIT_S" \
	>"$TMP/out" 2>"$TMP/err" <<'EOF'
import os, pty, signal, sys, time
perfkit, out, counter, log, wait_s = sys.argv[1:6]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(perfkit, [perfkit, "run", "-o", out, "--", "python3", counter, log, wait_s])
os.set_blocking(fd, False)
said = bytearray()

def until(check):
    end = time.monotonic() + float(wait_s)
    while time.monotonic() < end:
        try:
            said.extend(os.read(fd, 4096))
        except (BlockingIOError, OSError):
            pass
        if check():
            return True
        time.sleep(0.02)
    return False

def ints():
    try:
        return open(log).read().split().count("SIGINT")
    except FileNotFoundError:
        return 0

ok = until(lambda: os.path.exists(log + ".ready"))
for n in (1, 2, 3):
    if ok:
        os.write(fd, b"\x03")
        ok = until(lambda: ints() >= n)
os.kill(pid, signal.SIGTERM)
ended = []
until(lambda: ended.append(os.waitpid(pid, os.WNOHANG)) or ended[-1][0] == pid)
if ended[-1][0] != pid:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    print("perfkit did not end; it said:", said.decode(errors="replace"), file=sys.stderr)
    sys.exit(100)
sys.exit(os.waitstatus_to_exitcode(ended[-1][1]))
EOF
status=$?
log=$TMP/pty.log out=$TMP/pty.sqlite
expect_that "Ctrl-C: the program got SIGINT 3 times, got $(count "$log" SIGINT)" \
	test "$(count "$log" SIGINT)" -eq 3
expect_that "Ctrl-C: the program got SIGTERM once, got $(count "$log" SIGTERM)" \
	test "$(count "$log" SIGTERM)" -eq 1
expect_status "Ctrl-C: perfkit run exits with the program's status" 3
expect_that "Ctrl-C: the capture is finished" test "$(meta "$out" finished)" = 1

# A program the signal kills: perfkit exits 128 + N, the capture finished
# and holding that status. (A background job of this shell ignores SIGINT,
# and so does the program it starts, as it would without perfkit: SIGTERM.)
wait_meta() { [ -n "$(meta "$1" run_pid)" ]; }
for how in group alone; do
	out=$TMP/killed_$how.sqlite
	setsid -w "$PERFKIT" run -o "$out" -- sleep "$WAIT_S" >"$TMP/out" 2>"$TMP/err" &
	job=$!
	wait_until "$WAIT_S" wait_meta "$out"
	pk=$(meta "$out" run_pid)
	if [ "$how" = group ]; then kill -TERM -- "-$pk"; else kill -TERM "$pk"; fi
	wait "$job"
	status=$?
	expect_status "SIGTERM to the $how kills the program: 128 + 15" 143
	expect_that "SIGTERM to the $how: the capture is finished with status 143" \
		test "$(meta "$out" finished),$(meta "$out" exit_status)" = "1,143"
done

# perfkit's helper in the group (the witness it asks whether the group got
# a signal) ends with perfkit, even when perfkit is killed.
start killed setsid -w
program=$(meta "$out" pid)
helpers=$(ps -o pid= --ppid "$pk" | tr -d ' ' | grep -vx "$program")
expect_that "perfkit has one helper process besides the program ($helpers)" \
	test "$(echo "$helpers" | grep -c .)" -eq 1
kill -KILL "$pk"
wait "$job" 2>/dev/null
for h in $helpers; do
	expect_that "the helper $h ends when perfkit is killed" wait_until "$WAIT_S" ended "$h"
done
kill -KILL "$program" 2>/dev/null
wait_until "$WAIT_S" ended "$program"
finish
