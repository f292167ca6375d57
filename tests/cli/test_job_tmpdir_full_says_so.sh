#!/usr/bin/env bash
# test_job_tmpdir_full_says_so.sh - a reader given a job's captures merges
# them into one file under TMPDIR first (diagnose does not: it reads each
# capture as it lies and needs no room there); when TMPDIR has no room it says so
# in words, in one line naming TMPDIR, where it printed the SQL statement
# that found the disk full ("...: PRAGMA page_size = 8192;PRAGMA
# journal_mode = WAL;...: no room left to write"), and leaves nothing
# behind there. Reproduced with a full 64 KiB tmpfs where this test may
# mount one (as root), else with a TMPDIR that cannot be written (not as
# root, whom permissions do not stop); skipped, saying why, where neither
# can be arranged. A TMPDIR that does not exist is said as such everywhere.
. "$(dirname "$0")/cli_lib.sh"

job="$TMP/job"
mkdir -p "$job"
cp "$PERFKIT_TEST_DATA/ddp/ddp2_rank0.sqlite" "$PERFKIT_TEST_DATA/ddp/ddp2_rank1.sqlite" "$job/"

# refuses NAME TMPDIR PATTERN: the readers that merge a job (roofline, the
# traces) end with exit 2 and one line matching PATTERN, no SQL in it, and
# leave nothing in TMPDIR but what was there; diagnose reads the job
refuses() {
	local name=$1 dir=$2 pattern=$3 before after

	before=$(ls -A "$dir" 2>/dev/null)
	TMPDIR=$dir run roofline "$job"
	expect_status "$name: roofline" 2
	expect_one_error_line "$name: roofline" "$pattern"
	grep -qi 'pragma\|select\|insert' "$TMP/err" && fail "$name: the message quotes SQL"
	TMPDIR=$dir run diagnose "$job"
	expect_status "$name: diagnose needs no temporary file" 0
	TMPDIR=$dir run report --format=chrome -o "$TMP/trace.json" "$job"
	expect_status "$name: chrome trace" 2
	expect_one_error_line "$name: chrome trace" "$pattern"
	after=$(ls -A "$dir" 2>/dev/null)
	[ "$before" = "$after" ] && pass "$name: nothing left in TMPDIR" ||
		fail "$name: TMPDIR holds '$after' after, '$before' before"
}

refuses "missing TMPDIR" "$TMP/nonexistent" \
	"cannot make a temporary folder in TMPDIR=$TMP/nonexistent: No such file or directory$"

full="$TMP/full"
mkdir -p "$full"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=64k tmpfs "$full" 2>/dev/null; then
	trap 'umount "$full" 2>/dev/null; rm -rf "$TMP"' EXIT
	# fill it: the next block written finds no room
	dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null
	[ "$(df --output=avail "$full" | tail -n 1)" -eq 0 ] ||
		{ echo "FAIL: the tmpfs is not full" >&2; exit 1; }
	refuses "full TMPDIR" "$full" "^perfkit: no room for temporary files in TMPDIR=$full: "
elif [ "$(id -u)" -ne 0 ]; then
	chmod a-w "$full"
	refuses "TMPDIR not writable" "$full" \
		"cannot make a temporary folder in TMPDIR=$full: Permission denied$"
	chmod u+w "$full"
else
	skip "full or unwritable TMPDIR" "running as root where no tmpfs can be mounted, and root writes any folder"
fi

finish
