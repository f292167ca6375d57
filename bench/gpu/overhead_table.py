"""overhead_table.py - bench/gpu_overhead.sh's tables from its raw values
(program, config, round, value rows; overhead_raw.tsv). Several files are
pooled: each file's rounds are its own (a round of one file is never paired
with a round of another), so rounds run in separate calls on the same kind
of machine add up.

  python3 bench/gpu/overhead_table.py RAW.tsv [RAW.tsv...]
  KIND_SETTINGS="WORD:KINDS ..." (as gpu_overhead.sh passes it)"""
import statistics, sys
vals = {}
rows = []
for i, path in enumerate(sys.argv[1:]):
    for line in open(path).read().splitlines()[1:]:
        p, c, r, v = line.split("\t")
        rows.append((p, c, "%d.%s" % (i, r), v))
for p, c, _, v in rows:
    if v != "nan":
        vals.setdefault((p, c), []).append(float(v))
units = {"launch": "us/launch", "tiny": "us/op", "torch": "ms/step", "transformer": "ms/step",
         "forces_naive": "ms/step", "forces_optimized": "ms/step", "tnaive": "ms/step",
         "launch1m": "s/run", "ready1m": "s after", "after1m": "s after", "ddp": "ms/step",
         "gpt2": "ms/step", "cnn": "ms/step", "graph": "ms/step"}
floor_of = {"perfkit": "floor_selected", "perfkit_no_sync_flush": "floor_selected", "perfkit_api": "floor_selected", "perfkit_api_all": "floor_all", "perfkit_cuda": "floor_gpu"}
configs = ("untraced", "floor_kernels", "floor_gpu", "floor_selected", "floor_rtkind",
           "floor_callback", "floor_callback_all", "floor_all", "perfkit", "perfkit_no_sync_flush", "perfkit_api", "perfkit_api_all", "perfkit_cuda", "perfkit_paused", "profiler")
print("\n%-7s %-9s %-15s %10s %10s %8s %14s" % ("program", "unit", "config", "median", "added", "+%", "vs floor"))
for p in units:
    med = {c: statistics.median(v) for (q, c), v in vals.items() if q == p}
    if not med:
        continue
    if "untraced" not in med:  # a figure of its own (ready1m): medians only
        for c in configs:
            if c in med:
                print("%-7s %-9s %-15s %10.3f %10s %8s %14s" % (p, units[p], c, med[c], "-", "-", "-"))
        continue
    base = med["untraced"]
    for c in configs + tuple(sorted(k for (q, k) in vals if q == p and k.startswith("floor_kinds:"))):
        if c not in med:
            continue
        added = med[c] - base
        ratio = "-"
        f = floor_of.get(c)
        if f in med and med[f] - base > 0:
            ratio = "%.2fx %s" % (added / (med[f] - base), f.replace("floor_", ""))
        print("%-7s %-9s %-15s %10.3f %+10.3f %7.1f%% %14s" % (p, units[p], c, med[c], added,
              100 * added / base, ratio))
if not vals:
    sys.exit("gpu_overhead: no run printed a figure (see bench.log)")
# Each configuration against untraced within its round (paired): the
# median ratio and the rounds' range, which for 7 rounds holds the median
# with 98% confidence (order statistics 1 and 7).
by_round = {}
for p, c, r, v in rows:
    if v != "nan":
        by_round[(p, c, r)] = float(v)
print("\npaired against untraced, per round: median ratio (range over rounds)")
for p in units:
    rows = []
    for c in configs:
        if c == "untraced":
            continue
        rs = [by_round[(q, k, r)] / by_round[(q, "untraced", r)] for (q, k, r) in by_round
              if q == p and k == c and (q, "untraced", r) in by_round and by_round[(q, "untraced", r)] > 0]
        if rs:
            rows.append("%s %.3f (%.3f-%.3f, n=%d)" % (c, statistics.median(rs), min(rs), max(rs), len(rs)))
    if rows:
        print("%-7s %s" % (p, "; ".join(rows)))
# The kind settings: each perfkit setting against the counting consumer
# with the same kinds, paired within the round: perfkit's time over the
# floor's (goal: at most 1.10), median and range over the rounds, and the
# time each adds over untraced.
import os
pairs = [("perfkit_trace:" + s.split(":")[0], "floor_kinds:" + s.split(":")[1], "--trace=" + s.split(":")[0])
         for s in os.environ["KIND_SETTINGS"].split()]
pairs += [("perfkit", "floor_default", "default"),
          ("perfkit_no_sync_flush", "floor_default", "default, no flush after sync"),
          ("perfkit_discard", "floor_default", "default, writer drops buffers"),
          ("perfkit_graph", "floor_default_graph", "default, --cuda-graph-trace=graph")]
pairs += [(k, "floor_default", "default, sync flush gap %s ms" % k.split(":")[1])
          for k in sorted({k for (_, k) in vals if k.startswith("perfkit_sync_flush:")},
                          key=lambda k: int(k.split(":")[1]))]
lines = []
for p in units:
    for pk, fl, name in pairs:
        rs = [by_round[(p, pk, r)] / by_round[(p, fl, r)] for (q, k, r) in by_round
              if q == p and k == pk and (p, fl, r) in by_round and by_round[(p, fl, r)] > 0]
        if not rs:
            continue
        u = statistics.median(vals[(p, "untraced")]) if (p, "untraced") in vals else float("nan")
        f, k = statistics.median(vals[(p, fl)]), statistics.median(vals[(p, pk)])
        lines.append("%-7s %-32s %9.3f %9.3f %9.3f %+7.1f%% %+7.1f%%  %.3f (%.3f-%.3f)" % (
            p, name, u, f, k, 100 * (f - u) / u, 100 * (k - u) / u, statistics.median(rs), min(rs), max(rs)))
if lines:
    print("\nkind settings: perfkit against the floor with the same kinds (paired per round)")
    print("%-7s %-32s %9s %9s %9s %8s %8s  %s" % ("program", "setting", "untraced", "floor", "perfkit",
                                                  "floor+%", "perfkit+%", "perfkit/floor median (range)"))
    print("\n".join(lines))
print("n = %d rounds, interleaved; 'vs floor': perfkit's added time over the matching floor's" %
      min(len(v) for v in vals.values()))
