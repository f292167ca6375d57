# test_cli_report_input.sh - `perfkit report` on files it must refuse: one
# line naming the file on stderr, exit status 2, never a crash.
. "$(dirname "$0")/cli_lib.sh"

store="$TMP/good.sqlite"
"$PERFKIT_TEST_TOOLS/write_report_store" "$store" || { echo "FAIL: cannot write a store" >&2; exit 1; }

refuse() { # NAME FILE
	run report "$2"
	expect_status "$1" 2
	expect_one_error_line "$1" "$(basename "$2")"
}

refuse "missing file" "$TMP/does-not-exist.sqlite"

head -c 65536 /dev/urandom >"$TMP/random.bin"
refuse "random bytes" "$TMP/random.bin"

: >"$TMP/empty.sqlite"
refuse "empty file" "$TMP/empty.sqlite"

size=$(stat -c %s "$store")
head -c $((size / 2)) "$store" >"$TMP/truncated.sqlite"
refuse "truncated store" "$TMP/truncated.sqlite"

python3 - "$TMP/other.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE recipes (id INTEGER PRIMARY KEY, title TEXT)")
db.execute("INSERT INTO recipes (title) VALUES ('soup')")
db.commit()
PY
refuse "SQLite file of another application" "$TMP/other.sqlite"

cp "$store" "$TMP/newer.sqlite"
python3 - "$TMP/newer.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
version = db.execute("PRAGMA user_version").fetchone()[0]
db.execute("PRAGMA user_version = %d" % (version + 100))
db.commit()
PY
refuse "store with a newer schema" "$TMP/newer.sqlite"

refuse "a directory" "$TMP"

# The good store itself is accepted.
run report "$store"
expect_status "good store" 0

# -o to a folder that does not exist
run report -o "$TMP/no/such/dir/out.txt" "$store"
expect_status "unwritable output" 2
expect_one_error_line "unwritable output" "cannot write"

finish
