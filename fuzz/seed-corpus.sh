#!/usr/bin/env bash
# Writes the seed inputs of every fuzz target into fuzz/corpus/<target>/ from
# the real captures (tests/data, ../shared/nsys-exports) and from files the
# perfkit command itself writes (`perfkit baseline save`). Run once when a
# target is added; the campaign then grows the corpora (fuzz/campaign.sh).
# Usage: fuzz/seed-corpus.sh [BUILD_DIR]   (a build with the perfkit command)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
perfkit=$build/cli/perfkit
corpus=fuzz/corpus
nsys=../shared/nsys-exports
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Captures: a few of each dialect and variant (metrics, memory, NVTX, PyTorch).
# A job: two ranks and their launcher, NCCL kernels, NVTX payloads and schemas.
fuzz/make-seeds.py "$tmp/cap" tests/data/{clean_loop,gpu_work,torch_train,rollout_naive_roofline,rollout_naive_memory}.sqlite \
  tests/data/ddp/ddp2_straggler.sqlite "$nsys"/cloverleaf-cuda.sqlite "$nsys"/saxpy-mpi-cuda-rank0.sqlite >/dev/null
for t in store_open summary diagnose export; do
  mkdir -p "$corpus/$t"
  cp "$tmp"/cap/{clean_loop,gpu_work,torch_train,ddp2_straggler,cloverleaf-cuda,saxpy-mpi-cuda-rank0}.sqlite "$corpus/$t/"
done
mkdir -p "$corpus/roofline"
cp "$tmp"/cap/{rollout_naive_roofline,rollout_naive_memory,clean_loop,cloverleaf-cuda}.sqlite "$corpus/roofline/"

# Thresholds: the documented example, every key at its default, the refusals.
mkdir -p "$corpus/thresholds"
printf '{\n  "severity.high": 0.3,\n  "launch_bound.max_kernel_us": 50\n}\n' >"$corpus/thresholds/example.json"
"$perfkit" diagnose --list-settings |
  awk 'BEGIN { printf "{" } { printf "%s\n  \"%s\": %s", (NR > 1 ? "," : ""), $1, $2 } END { print "\n}" }' \
  >"$corpus/thresholds/defaults.json"
printf '{"foo": 1}' >"$corpus/thresholds/unknown_key.json"
printf '{"severity.low": -1e400}' >"$corpus/thresholds/negative.json"

# Option values: the first byte picks the parser (see fuzz_options.c).
mkdir -p "$corpus/options"
seed() { { printf "\\x0$2"; printf '%s' "$3"; } >"$corpus/options/$1"; }
seed set 0 'severity.high=0.3,launch_bound.max_kernel_us=50'
seed set_bad 0 'window.whole_run=1,iterations.min=x'
seed trace 1 'cuda,nvtx,memory,api'
seed trace_bad 1 'cuda,,gpu'
seed time_ms 2 '2.5ms'
seed time_s 2 '0.0015s'
seed duration 3 '100us'
seed percent 4 '10%'
seed names 5 'json'

# Command lines: NUL-separated words (see fuzz_cli_parse.c).
mkdir -p "$corpus/cli_parse"
printf -- '-v\0--output=out.json\0capture.sqlite\0--count\0-3\0--noise=2.5\0--replay\0--\0-x' \
  >"$corpus/cli_parse/all_types"
printf -- '-oout\0-n\00x10\0--nois\0--help' >"$corpus/cli_parse/typos"

# Output name patterns: the buffer size as one byte, then NUL-separated words
# (see fuzz_output_pattern.c): the pattern, host, pid, environment. The
# README's example, the unit test's patterns, and what `perfkit run` refuses.
mkdir -p "$corpus/output_pattern"
pattern() {
  local name=$1 cap=$2
  shift 2
  { printf "\\x$cap"; printf '%s\0' "$@"; } >"$corpus/output_pattern/$name"
}
pattern srun ff 'job-%h-%r.sqlite' node-03 4242 SLURM_PROCID=3 SLURM_NTASKS=8
pattern torchrun_in_slurm ff 'job-%h-%r.sqlite' node-03 4242 SLURM_PROCID=0 RANK=5
pattern variable ff 'out/%q{JOB}-%p-100%%.sqlite' node-03 4242 JOB=run7
pattern unknown ff 'a-%x' node-03 4242
pattern lone_percent ff 'a-%' node-03 4242
pattern unset ff 'a-%q{NOPE}' node-03 4242
pattern no_braces ff 'a-%q{JOB' node-03 4242 JOB=run7
pattern slash ff 'a-%q{SLASH}' node-03 4242 SLASH=a/b
pattern empty ff 'a-%q{EMPTY}' node-03 4242 EMPTY=
pattern no_rank ff 'x-%r' h 1
pattern too_long 10 '%h234567890123456' h 1
pattern dots ff 'a-%q{DOTS}' node-03 4242 DOTS=..
pattern newline ff 'a-%q{NL}' node-03 4242 "NL=$(printf 'a\nb')"
pattern escape ff 'a-%q{ESC}' node-03 4242 "ESC=$(printf '\033[31m')"
pattern bad_rank ff 'r-%r' node-03 4242 RANK=abc
pattern bad_rank_escape ff 'r-%r' node-03 4242 "PMI_RANK=$(printf '\033[2J')" SLURM_PROCID=-1
pattern huge_rank ff 'r-%r' node-03 4242 RANK=12345678901234567890

# Baselines from `perfkit baseline save`, one with a per-key budget.
mkdir -p "$corpus/baseline" "$corpus/gate"
"$perfkit" baseline save -o "$tmp/hash.json" tests/data/hash_embedding_optimized{,_2,_3}.sqlite >/dev/null
cp "$tmp/hash.json" "$corpus/baseline/hash_embedding.json"
sed '0,/"mad": [0-9]*/s//&, "max_regression": "10%"/' "$tmp/hash.json" >"$corpus/baseline/budget.json"
# Gate: a baseline saved from the seed capture, then the capture itself.
for c in clean_loop torch_train saxpy-mpi-cuda-rank0; do
  "$perfkit" baseline save -o "$tmp/$c.json" "$tmp/cap/$c.sqlite" >/dev/null
  cat "$tmp/$c.json" "$tmp/cap/$c.sqlite" >"$corpus/gate/$c"
done

# NVTX payloads: schema records, then one blob (see fuzz_nvtx_payload.c).
# NCCL's all-reduce struct {comm u64, bytes size_t, op enum} with its
# reduction enum, the send/recv struct with a negative peer, a fixed-length
# string, a struct nested in another, and a blob given whole with a header
# that lies about its size.
mkdir -p "$corpus/nvtx_payload"
payload() { printf "$2" >"$corpus/nvtx_payload/$1"; }
redop='\x00\x0b\x00\x04\x00\x02\x0b\x00\x02\x0b\x01\x02\x0b\x02'
allreduce='\x00\x05\x01\x18\x00\x01\x05\x00\x12\x00\x00\x00\x00\x00\x01\x05\x01\x16\x00\x08\x00\x00\x00\x01\x05\x02\x8b\x00\x10\x00\x00\x00'
payload allreduce "$redop$allreduce"'\x03\x00\x05\xee\xff\xc0\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00'
payload sendrecv '\x00\x09\x01\x18\x00\x01\x09\x00\x12\x00\x00\x00\x00\x00\x01\x09\x01\x16\x00\x08\x00\x00\x00\x01\x09\x03\x05\x00\x10\x00\x00\x00\x03\x00\x09\x01\x00\x00\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00'
payload string '\x00\x14\x01\x10\x00\x01\x14\x00\x01\x10\x00\x00\x0c\x00\x01\x14\x01\x05\x00\x0c\x00\x00\x00\x03\x00\x14bucket_7\x00abc\x07\x00\x00\x00'
payload nested "$redop$allreduce"'\x00\x15\x01\x20\x00\x01\x15\x00\x05\x00\x00\x00\x00\x00\x01\x15\x01\x85\x00\x08\x00\x00\x00\x03\x00\x15\x0c\x00\x00\x00\x00\x00\x00\x00\x63\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00'
payload whole_blob "$redop$allreduce"'\x03\x01\x07\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x01\x00\x00\x00\x00\xff\x00\x00\x00\x00\x00\x00\x00\x1f\x01\x00\x00\x00\x00\x00\x00\x01\x02\x03'
du -sh "$corpus"
