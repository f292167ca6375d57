#!/usr/bin/env bash
# Renders the HTML report and the folded stacks of every capture under
# tests/data with two builds and says where they differ: a change that
# only makes the exports faster must leave every page byte for byte the
# same.
#   scripts/compare-pages.sh OLD_BUILD NEW_BUILD [OUT_DIR]
# OLD_BUILD may also be a folder of pages an earlier run kept (OUT_DIR/old),
# so the old build need not be kept. Exit status 0 when all are the same,
# 1 when any differs (each named, with the first differing line).
set -uo pipefail
usage="usage: compare-pages.sh OLD_BUILD|OLD_PAGES NEW_BUILD [OUT_DIR]"
old=${1:?$usage}
new=${2:?$usage}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${3:-$(mktemp -d "${TMPDIR:-/tmp}/compare-pages.XXXXXX")}
mkdir -p "$out/new"

mapfile -t fixtures < <(find "$root/tests/data" -name '*.sqlite' | sort)

# render BUILD DIR: every fixture's page and stacks, with the exit status
# and the messages of each command
render() {
	local pk=$1/cli/perfkit dir=$2 f b fmt
	[ -x "$pk" ] || { echo "compare-pages: no $pk" >&2; exit 2; }
	mkdir -p "$dir"
	for f in "${fixtures[@]}"; do
		# a name unique across folders: ddp/two_gpus/x.sqlite -> ddp_two_gpus_x
		b=${f#"$root"/tests/data/}
		b=${b%.sqlite}
		b=${b//\//_}
		for fmt in html folded; do
			"$pk" report -f --format=$fmt -o "$dir/$b.$fmt" "$f" >"$dir/$b.$fmt.stdout" 2>"$dir/$b.$fmt.err"
			echo $? >"$dir/$b.$fmt.rc"
		done
		"$pk" report -f --format=html --weight=api -o "$dir/$b.api.html" "$f" >/dev/null 2>&1
	done
}

if [ -x "$old/cli/perfkit" ]; then
	render "$old" "$out/old"
	old=$out/old
fi
render "$new" "$out/new"
status=0
for a in "$old"/*; do
	b=$out/new/$(basename "$a")
	if ! cmp -s "$a" "$b"; then
		echo "differs: $(basename "$a")"
		cmp "$a" "$b" 2>&1 | head -1
		status=1
	fi
done
n=$(find "$old" -type f | wc -l)
[ "$status" = 0 ] && echo "compare-pages: all $n files the same (${#fixtures[@]} captures)"
exit "$status"
