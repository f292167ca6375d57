#!/usr/bin/env bash
# job_compare.sh - one job captured two ways reports the same: the one-file
# capture of a run (`perfkit run -- torchrun ...`) against the same run
# captured as one file per rank (`perfkit run -o 'job-%r.sqlite'` per rank),
# read as a job and merged by `perfkit merge`. Every report in JSON is
# compared but for the overview's run section (its command, start and span
# are each run's own). Prints a pass/fail line per report; exit 1 on any
# difference.
#
#   tests/gpu/job_compare.sh ONE.sqlite RANK_FILE... | RANK_DIR
set -uo pipefail
PERFKIT=${PERFKIT:-build/cli/perfkit}
[ $# -ge 2 ] || { echo "usage: $0 ONE.sqlite RANK_FILE... | RANK_DIR" >&2; exit 2; }
one=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PERFKIT" merge -o "$tmp/merged.sqlite" "$@" || exit 1
failed=0
for r in $("$PERFKIT" report --list | awk '{ print $1 }'); do
	"$PERFKIT" report --format=json --report="$r" "$one" >"$tmp/one.json" 2>/dev/null
	"$PERFKIT" report --format=json --report="$r" "$@" >"$tmp/job.json" 2>/dev/null
	"$PERFKIT" report --format=json --report="$r" "$tmp/merged.sqlite" >"$tmp/merged.json" 2>/dev/null
	for way in job merged; do
		if python3 - "$tmp/one.json" "$tmp/$way.json" <<'PY'; then
import json, sys
def load(p):
    d = json.load(open(p))
    d["reports"] = [r for r in d["reports"] if r["name"] != "overview_run"]
    return d
sys.exit(0 if load(sys.argv[1]) == load(sys.argv[2]) else 1)
PY
			echo "pass: $r ($way)"
		else
			echo "FAIL: $r ($way) differs from the one-file capture"
			failed=1
		fi
	done
done
exit $failed
