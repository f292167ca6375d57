#!/usr/bin/env python3
"""check_perfetto_trace.py - checks a Perfetto trace written by perfkit
against the capture it came from, from the text that
`protoc --decode=perfetto.protos.Trace` prints (no protobuf module needed).

  check_perfetto_trace.py CAPTURE.sqlite TRACE.txt [--window] [--events OUT]

Checks: every field decodes (no unknown field numbers); the sequence starts
by clearing its incremental state and every interned id is defined before
use; each track's BEGIN/END pairs nest; one slice per kernel, copy, memset,
runtime and driver call, CUDA graph launch recorded whole and NVTX range of
the capture (one instant per NVTX mark), in the right category, with the capture's start and end times (the
incremental timestamps summed up); every flow id leaves one API call and
arrives at one piece of GPU work; a memory counter where the capture has
device allocations. With --window (a trace narrowed by --from/--to/--range)
the counts are not compared, only the structure. With --events, each track
event goes to OUT as one line, its interned ids resolved (time, type, track,
name, categories, arguments, flows, counter), so that two traces of one
capture can be compared whatever ids and clearings of their incremental
state they wrote. Prints FAIL: and exits 1 on the first problem."""
import collections
import re
import sqlite3
import sys

CLOCK_BOOTTIME, CLOCK_INCREMENTAL = 6, 64
FIELD = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*|[0-9]+)\s*(?::\s*(.*))?\{?\s*$')


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def parse(lines):
    """protoc's text format into nested dicts of lists."""
    root = collections.defaultdict(list)
    stack = [root]
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if s == "}":
            stack.pop()
            continue
        if s.endswith("{"):
            name = s[:-1].strip()
            if name[0].isdigit():
                fail("unknown field %s in the trace" % name)
            child = collections.defaultdict(list)
            stack[-1][name].append(child)
            stack.append(child)
            continue
        name, _, value = s.partition(":")
        if name[0].isdigit():
            fail("unknown field %s in the trace" % name)
        value = value.strip()
        if value.startswith('"'):
            value = bytes(value[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
        stack[-1][name].append(value)
    return root


def one(msg, name, default=None):
    v = msg.get(name)
    return v[0] if v else default


def main():
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
    window = "--window" in sys.argv[3:]
    events = None
    if "--events" in sys.argv[3:]:
        events = open(sys.argv[sys.argv.index("--events") + 1], "w", encoding="utf-8")
    trace = parse(open(sys.argv[2], encoding="utf-8", errors="strict"))
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def rows(sql, table):
        return [tuple(r) for r in db.execute(sql)] if table in tables else []

    packets = trace["packet"]
    if not packets:
        fail("no packets")
    first = packets[0]
    if int(one(first, "sequence_flags", 0)) & 1 == 0 or not first.get("clock_snapshot"):
        fail("the first packet does not clear the incremental state with a clock snapshot")

    interned = {k: {} for k in ("event_names", "event_categories", "debug_annotation_names",
                                "debug_annotation_string_values")}
    tracks = {}
    clock = None
    open_slices = collections.defaultdict(list)  # track -> [(begin ts, name, category)]
    slices = collections.defaultdict(list)       # category -> [(start, end, name)]
    instants = collections.Counter()
    flow_out, flow_in = collections.Counter(), collections.Counter()
    counters = collections.Counter()
    seq_id = None

    for p in packets:
        if seq_id is None:
            seq_id = one(p, "trusted_packet_sequence_id")
        elif one(p, "trusted_packet_sequence_id") != seq_id:
            fail("a packet on another sequence")
        if int(one(p, "sequence_flags", 0)) & 1:
            for k in interned:
                interned[k] = {}
            snap = p["clock_snapshot"][0]["clocks"]
            clock = {int(one(c, "clock_id")): int(one(c, "timestamp")) for c in snap}
            if CLOCK_INCREMENTAL not in clock or CLOCK_BOOTTIME not in clock:
                fail("the snapshot lacks the incremental clock")
        for d in p.get("interned_data", []):
            for k in interned:
                for e in d.get(k, []):
                    text = one(e, "name", one(e, "str"))
                    interned[k][one(e, "iid")] = text
        for d in p.get("track_descriptor", []):
            uuid = one(d, "uuid")
            if uuid in tracks:
                fail("track %s described twice" % uuid)
            tracks[uuid] = d
            parent = one(d, "parent_uuid")
            if parent is not None and parent not in tracks:
                fail("track %s has an unknown parent" % uuid)
        ts = None
        if "timestamp" in p:
            t = int(one(p, "timestamp"))
            if int(one(p, "timestamp_clock_id", CLOCK_INCREMENTAL)) == CLOCK_INCREMENTAL:
                clock[CLOCK_INCREMENTAL] += t
                ts = clock[CLOCK_INCREMENTAL]
            else:
                ts = t
        for ev in p.get("track_event", []):
            if int(one(p, "sequence_flags", 0)) & 2 == 0 and \
                    ("name_iid" in ev or "category_iids" in ev or "debug_annotations" in ev):
                fail("an event using interned data without SEQ_NEEDS_INCREMENTAL_STATE")
            track = one(ev, "track_uuid")
            if track not in tracks:
                fail("event on an undescribed track %s" % track)
            name = None
            if "name_iid" in ev:
                name = interned["event_names"].get(one(ev, "name_iid"))
                if name is None:
                    fail("name iid %s not interned" % one(ev, "name_iid"))
            cats = [interned["event_categories"].get(i) for i in ev.get("category_iids", [])]
            if None in cats:
                fail("category iid not interned")
            for a in ev.get("debug_annotations", []):
                if one(a, "name_iid") not in interned["debug_annotation_names"]:
                    fail("argument name iid not interned")
                if "string_value_iid" in a and \
                        one(a, "string_value_iid") not in interned["debug_annotation_string_values"]:
                    fail("argument value iid not interned")
            kind = one(ev, "type")
            if events:
                args = []
                for a in ev.get("debug_annotations", []):
                    value = {k: v for k, v in a.items() if k not in ("name_iid", "string_value_iid")}
                    if "string_value_iid" in a:
                        value["interned"] = interned["debug_annotation_string_values"][
                            one(a, "string_value_iid")]
                    args.append((interned["debug_annotation_names"][one(a, "name_iid")],
                                 sorted(value.items())))
                events.write("%r\n" % ((ts, kind, track, name, cats, args, ev.get("flow_ids", []),
                                         ev.get("terminating_flow_ids", []),
                                         one(ev, "counter_value")),))
            cat = cats[0] if cats else None
            if kind == "TYPE_SLICE_BEGIN":
                open_slices[track].append((ts, name, cat))
            elif kind == "TYPE_SLICE_END":
                if not open_slices[track]:
                    fail("END without BEGIN on track %s" % track)
                start, bname, bcat = open_slices[track].pop()
                if ts < start:
                    fail("slice %r ends before it starts" % bname)
                slices[bcat].append((start, ts, bname))
            elif kind == "TYPE_INSTANT":
                instants[cat] += 1
            elif kind == "TYPE_COUNTER":
                counters[tracks[track].get("name", ["?"])[0]] += 1
            for f in ev.get("flow_ids", []):
                flow_out[f] += 1
                if cat not in ("cuda_runtime", "cuda_driver"):
                    fail("a flow leaves a %s event" % cat)
            for f in ev.get("terminating_flow_ids", []):
                flow_in[f] += 1
                if cat not in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_graph"):
                    fail("a flow arrives at a %s event" % cat)
    for track, left in open_slices.items():
        if left:
            fail("%d slices never end on track %s" % (len(left), track))
    if any(n != 1 for n in flow_out.values()) or any(n != 1 for n in flow_in.values()) \
            or set(flow_out) != set(flow_in):
        fail("flows do not pair one start to one end (%d out, %d in)" % (len(flow_out), len(flow_in)))

    gpu = {"kernel": "CUPTI_ACTIVITY_KIND_KERNEL", "gpu_memcpy": "CUPTI_ACTIVITY_KIND_MEMCPY",
           "gpu_memset": "CUPTI_ACTIVITY_KIND_MEMSET", "cuda_runtime": "CUPTI_ACTIVITY_KIND_RUNTIME",
           "cuda_driver": "CUPTI_ACTIVITY_KIND_DRIVER", "cuda_graph": "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"}
    if window:
        print("ok: %d packets, %d slices" % (len(packets), sum(map(len, slices.values()))))
        return
    for cat, table in gpu.items():
        want = sorted(rows("SELECT start, end FROM %s" % table, table))
        got = sorted((s, e) for s, e, _ in slices[cat])
        if want != got:
            fail("%s: %d slices, the capture has %d rows (or their times differ)" % (cat, len(got), len(want)))
    want = sorted(rows("SELECT start, end FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL "
                       "AND globalTid IS NOT NULL", "NVTX_EVENTS"))
    got = sorted((s, e) for s, e, _ in slices["user_annotation"])
    if want != got:
        fail("user_annotation: %d slices, the capture has %d ranges" % (len(got), len(want)))
    marks = rows("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34 AND globalTid IS NOT NULL",
                 "NVTX_EVENTS")
    if marks and instants["user_annotation"] != marks[0][0]:
        fail("NVTX marks: %d instants, the capture has %d" % (instants["user_annotation"], marks[0][0]))
    if want and gpu and rows("SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1", "CUPTI_ACTIVITY_KIND_KERNEL") \
            and ("CUPTI_ACTIVITY_KIND_RUNTIME" in tables or "CUPTI_ACTIVITY_KIND_DRIVER" in tables) \
            and not slices["gpu_user_annotation"]:
        fail("NVTX ranges around kernels but no gpu_user_annotation projection")
    if slices["kernel"] and (slices["cuda_runtime"] or slices["cuda_driver"]) and not flow_out:
        fail("kernels and API calls but no flows")
    if rows("SELECT 1 FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind = 2 LIMIT 1",
            "CUDA_GPU_MEMORY_USAGE_EVENTS") and not counters["device memory in use"]:
        fail("device allocations but no memory counter")
    if slices["kernel"] and not counters["busy"]:
        fail("kernels but no GPU busy counter")
    print("ok: %d packets, %d slices, %d flows" % (len(packets), sum(map(len, slices.values())), len(flow_out)))


main()
