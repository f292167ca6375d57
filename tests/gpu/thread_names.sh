#!/usr/bin/env bash
# thread_names.sh - threads named by what they are, proven on a GPU: the
# collector keeps every traced thread's OS name in ThreadNames (also for
# threads that exited long before the end), an NVTX name wins over it, and
# PyTorch's autograd and pin-memory threads keep theirs; the readers then
# show "main", "stager", "autograd (GPU 0)" in the Chrome trace and the
# folded stacks. Prints PASS/FAIL lines; exits 1 when any check fails.
#
#   OUT=DIR tests/gpu/thread_names.sh [BUILD]   (repository root, GPU machine)
#
# BUILD as tests/gpu/run.sh stages it (cli/perfkit, collectors/, lib/).
# Writes $OUT/thread_names.log and the two captures ($OUT/*.sqlite.xz).
set -u

BUILD=$(cd "${1:-.gpu/collector}" && pwd) || exit 2
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d)}
PERFKIT=$BUILD/cli/perfkit
LOG=$OUT/thread_names.log
W=$(mktemp -d)
export LD_LIBRARY_PATH=$BUILD/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
STATUS=0
: >"$LOG"

log() { printf '%s\n' "$*" | tee -a "$LOG"; }
check() { # NAME COMMAND...: PASS when the command succeeds
	local name=$1
	shift
	if "$@" >>"$LOG" 2>&1; then
		log "PASS  $name"
	else
		log "FAIL  $name"
		STATUS=1
	fi
}

# names DB TID: ThreadNames' names of thread TID of the capture's process, '|'-joined
names() {
	python3 - "$1" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
tid = int(sys.argv[2])
rows = db.execute("SELECT s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId"
                  " WHERE (t.globalTid & 16777215) = ? ORDER BY t.rowid", (tid,)).fetchall()
print("|".join(r[0] for r in rows))
PY
}
is_names() { # DB TID WANT
	local got
	got=$(names "$1" "$2")
	echo "thread $2: ThreadNames '$got', want '$3'"
	[ "$got" = "$3" ]
}
tid_of() { awk -v n="$2" '$1 == "tid" && $2 == n { print $3 }' "$1"; }

log "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"

# ---- a CUDA program whose threads name themselves ----------------------------
"$NVCC" -arch=sm_90 -O2 -o "$W/thread_names" "$SRC/thread_names.cu" -ldl -lpthread >>"$LOG" 2>&1 ||
	log "build thread_names failed"
(cd "$W" && timeout -k 5 90 "$PERFKIT" run -f -o "$W/names.sqlite" -- "$W/thread_names") >"$W/names.log" 2>&1
check "cuda: run exit 0" test $? = 0
cat "$W/names.log" >>"$LOG"
DB=$W/names.sqlite
MAIN=$(tid_of "$W/names.log" main)
check "cuda: main thread (tid = pid) has its row" test -n "$(names "$DB" "$MAIN")"
check "cuda: exited worker keeps its pthread name" is_names "$DB" "$(tid_of "$W/names.log" stager)" stager
check "cuda: 100 ms worker keeps its name" is_names "$DB" "$(tid_of "$W/names.log" blink)" blink
check "cuda: NVTX name wins, one row" is_names "$DB" "$(tid_of "$W/names.log" nvtx_name)" nvtx_name
"$PERFKIT" report --format=chrome -o "$W/names.json" "$DB" >>"$LOG" 2>&1
check "cuda: chrome trace names main and stager" python3 - "$W/names.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
names = sorted({e["args"]["name"] for e in ev if e.get("name") == "thread_name"})
print("thread lanes:", names)
assert "main" in names and "stager" in names and "nvtx_name" in names, names
PY
"$PERFKIT" report --format=folded --weight=api -o "$W/names.folded" "$DB" >>"$LOG" 2>&1
check "cuda: folded stacks' thread frame is stager" grep -q '^[^;]*;stager;' "$W/names.folded"

# ---- PyTorch: a backward on the GPU and a pin-memory DataLoader ---------------
(cd "$W" && timeout -k 5 300 "$PERFKIT" run -f -o "$W/torch.sqlite" -- python3 "$SRC/thread_names_torch.py") >"$W/torch.log" 2>&1
check "torch: run exit 0" test $? = 0
cat "$W/torch.log" >>"$LOG"
DB=$W/torch.sqlite
MAIN=$(awk '$1 == "main_tid" { print $2 }' "$W/torch.log")
check "torch: main thread (tid = pid) has its row" test -n "$(names "$DB" "$MAIN")"
check "torch: pt_autograd_0 in ThreadNames" python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
rows = db.execute("SELECT t.globalTid & 16777215, s.value FROM ThreadNames t JOIN StringIds s"
                  " ON s.id = t.nameId ORDER BY 1").fetchall()
print("ThreadNames:", rows)
api = db.execute("SELECT globalTid & 16777215, count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY 1").fetchall()
print("threads with runtime calls:", api)
named = {t for t, _ in rows}
print("threads with calls and no name:", [t for t, _ in api if t not in named])
dup = db.execute("SELECT globalTid FROM ThreadNames GROUP BY 1 HAVING count(*) > 1").fetchall()
assert not dup, "a thread with two names: %s" % dup
assert "pt_autograd_0" in {n for _, n in rows}
PY
# informational: the pin-memory thread is named when it made CUDA calls
log "INFO  torch: pt_data_pin rows: $(python3 -c "
import sqlite3, sys
db = sqlite3.connect('file:$DB?mode=ro', uri=True)
print(db.execute(\"SELECT count(*) FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId WHERE s.value = 'pt_data_pin'\").fetchone()[0])")"
"$PERFKIT" report --format=chrome -o "$W/torch.json" "$DB" >>"$LOG" 2>&1
check "torch: chrome trace lane 'autograd (GPU 0)'" python3 - "$W/torch.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
names = sorted({e["args"]["name"] for e in ev if e.get("name") == "thread_name"})
print("thread lanes:", names)
assert "main" in names and "autograd (GPU 0)" in names, names
PY

for f in names torch; do xz -9 -c "$W/$f.sqlite" >"$OUT/thread_names_$f.sqlite.xz"; done
rm -rf "$W"
exit $STATUS
