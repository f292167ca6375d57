# fuzz/settings.sh - how a harness is run, shared by fuzz/campaign.sh and
# fuzz/rate.sh (sourced, not run): the sanitizers' options and each target's
# libFuzzer flags. docs/reliability.md says why each is what it is.

# fuzz_targets: every target, as fuzz/CMakeLists.txt lists them.
fuzz_targets() {
  sed -n 's/^set(FUZZ_TARGETS \(.*\)/\1/p; s/^    \([a-z_ ]*\))$/\1/p' fuzz/CMakeLists.txt | tr '\n' ' '
}

# AddressSanitizer: every memory error still stops the run, and leaks are
# still looked for after each input (libFuzzer's -detect_leaks, on by
# default, names the input that leaked). Two defaults cost most of the time
# of a capture target, whose every input makes SQLite allocate and free
# thousands of blocks:
#   quarantine_size_mb=16 (default 256): a freed block waits in quarantine
#     until 16 MB more are freed, which still catches a use after free
#     within an input (one frees far less), but lets the allocator reuse
#     warm memory instead of faulting in fresh pages on every allocation;
#   malloc_context_size=5 (default 30): a report shows 5 frames of where a
#     block was allocated and freed; run the harness on the input alone
#     with ASAN_OPTIONS unset for all of them.
# A caller's own ASAN_OPTIONS / UBSAN_OPTIONS win.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1:quarantine_size_mb=16:malloc_context_size=5}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# fuzz_max_len TARGET: the longest input worth trying. A capture seed is a
# real capture cut to 20-34 kB (fuzz/make-seeds.py); growing it past that
# only adds pages no reader reaches. The JSON seeds are under 2 kB, the
# option values, command lines and output name patterns under 300 bytes.
fuzz_max_len() {
  case $1 in
    store_open|summary|diagnose|roofline|export|gate) echo 36864 ;;
    baseline|thresholds) echo 4096 ;;
    *) echo 1024 ;;
  esac
}

# fuzz_dict TARGET: the dictionary of words the target's parser compares
# against, if it has one (the gate's input begins with a baseline).
fuzz_dict() {
  local dict=fuzz/${1/gate/baseline}.dict
  [ -f "$dict" ] && echo "$dict"
  return 0
}

# fuzz_libfuzzer_flags TARGET: the flags every libFuzzer run of it takes.
fuzz_libfuzzer_flags() {
  local dict
  dict=$(fuzz_dict "$1")
  echo "-max_len=$(fuzz_max_len "$1") -timeout=10 -rss_limit_mb=4096 -close_fd_mask=3${dict:+ -dict=$dict}"
}
