#!/usr/bin/env bash
# The real captures under tests/data/ are kept compressed (FILE.sqlite.xz,
# about a seventh of their size) so that the tracked tree stays small enough
# to travel to the GPU machine. This unpacks each one next to itself, once:
# a capture already unpacked and newer than its archive is left alone.
# Run by CMake's configure step, by scripts/quickstart.sh, and by hand.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
while IFS= read -r -d '' archive; do
	capture=${archive%.xz}
	if [[ -f $capture && $capture -nt $archive ]]; then
		continue
	fi
	# Unpack beside it and rename, so an interrupted unpack never leaves a
	# truncated capture that a later run would take as whole.
	tmp=$(mktemp "$capture.XXXXXX")
	if ! xz -dc -- "$archive" >"$tmp"; then
		rm -f -- "$tmp"
		echo "unpack-fixtures: cannot unpack $archive" >&2
		exit 1
	fi
	chmod 644 -- "$tmp"
	mv -f -- "$tmp" "$capture"
done < <(find "$root/tests/data" -name '*.sqlite.xz' -print0)
