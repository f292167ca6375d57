#!/usr/bin/env bash
# html_against_chrome.sh - issue 35's "HTML report within 2x of the Chrome
# trace on any capture": every fixture over 1 MB (tests/data), the Chrome
# trace and the HTML page each written to a file, ROUNDS interleaved
# rounds; per capture the median wall time of each, the median of the
# per-round ratio with its range, and the page's median CPU time. With a
# second build (BEFORE), its page runs in the same rounds, in alternating
# order, and the table adds the per-round ratio after/before.
#
#   bench/html_against_chrome.sh [BUILD [BEFORE]]   (default build)
#   ROUNDS=7             rounds (at least 7 for a claim on a shared machine)
#   CAPTURES="A B"       other captures (default every fixture over 1 MB)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
PERFKIT=$BUILD/cli/perfkit
BEFORE=${2:+$(cd "$2" && pwd)/cli/perfkit}
ROUNDS=${ROUNDS:-7}
[ -x "$PERFKIT" ] || { echo "html_against_chrome: no $PERFKIT" >&2; exit 2; }
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "html_against_chrome: no $BEFORE" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "html_against_chrome: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "html_against_chrome: needs python3 for the table" >&2; exit 2; }
if [ -n "${CAPTURES:-}" ]; then
	read -r -a FILES <<<"$CAPTURES"
else
	mapfile -t FILES < <(find "$ROOT/tests/data" -name '*.sqlite' -size +1M | sort)
fi
[ "${#FILES[@]}" -gt 0 ] || { echo "html_against_chrome: no captures (run the tests' set-up to unpack them)" >&2; exit 2; }
for f in "${FILES[@]}"; do
	[ -r "$f" ] || { echo "html_against_chrome: no capture $f (CAPTURES takes paths)" >&2; exit 2; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/html_against_chrome.XXXXXX")
trap 'rm -rf "$W"' EXIT

# timed ROUND NAME KIND CMD...: one run's wall, user and system time
timed() {
	local r=$1 name=$2 kind=$3
	shift 3
	/usr/bin/time -f "$r|$name|$kind|%e|%U|%S" -a -o "$W/times" "$@" >/dev/null 2>&1 ||
		echo "html_against_chrome: $kind of $name failed" >&2
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); perfkit: $PERFKIT${BEFORE:+ against $BEFORE}"
for ((r = 1; r <= ROUNDS; r++)); do
	for f in "${FILES[@]}"; do
		name=${f#"$ROOT"/tests/data/}
		name=${name%.sqlite}
		timed "$r" "$name" chrome "$PERFKIT" report -f --format=chrome -o "$W/out.json" "$f"
		# the two builds' pages in alternating order, so neither always
		# follows the same command
		if [ -n "$BEFORE" ] && ((r % 2 == 0)); then
			timed "$r" "$name" before "$BEFORE" report -f --format=html -o "$W/out.html" "$f"
		fi
		timed "$r" "$name" html "$PERFKIT" report -f --format=html -o "$W/out.html" "$f"
		if [ -n "$BEFORE" ] && ((r % 2 == 1)); then
			timed "$r" "$name" before "$BEFORE" report -f --format=html -o "$W/out.html" "$f"
		fi
	done
done

python3 - "$W/times" "$ROUNDS" <<'EOF'
import collections, statistics, sys

runs = collections.defaultdict(dict)  # (capture, kind) -> round -> (wall, cpu)
for line in open(sys.argv[1]):
    fields = line.strip().split('|')
    if len(fields) != 6:
        continue  # time's "Command exited with non-zero status" of a failed run
    r, name, kind, wall, user, system = fields
    runs[(name, kind)][int(r)] = (float(wall), float(user) + float(system))
names = sorted({n for n, k in runs})
before = any(k == 'before' for n, k in runs)
med = statistics.median
print(f"\nHTML report against the Chrome trace (issue 35: at most 2x; {sys.argv[2]} interleaved rounds, medians)")
head = "| capture | Chrome s | HTML s | HTML / Chrome per round (range) | HTML CPU s |"
rule = "|---|---|---|---|---|"
if before:
    head += " HTML before s | after / before per round (range) |"
    rule += "---|---|"
print(head)
print(rule)
met = 0
for n in names:
    c, h = runs[(n, 'chrome')], runs[(n, 'html')]
    rounds = sorted(set(c) & set(h))
    if not rounds:
        continue
    ratio = [h[r][0] / max(c[r][0], 0.01) for r in rounds]
    met += med(ratio) <= 2
    row = (f"| {n} | {med(c[r][0] for r in rounds):.2f} | {med(h[r][0] for r in rounds):.2f} | "
           f"{med(ratio):.2f}x ({min(ratio):.2f}-{max(ratio):.2f}) | {med(h[r][1] for r in rounds):.2f} |")
    if before:
        b = runs[(n, 'before')]
        both = [r for r in rounds if r in b]
        ab = [h[r][0] / b[r][0] for r in both] or [float('nan')]
        row += f" {med(b[r][0] for r in both):.2f} | {med(ab):.2f} ({min(ab):.2f}-{max(ab):.2f}) |"
    print(row)
print(f"\nwithin 2x: {met} of {len(names)} captures")
EOF
