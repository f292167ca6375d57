# test_report_html_top_down.sh - `perfkit report --format=html` reads
# top-down: the verdict and findings come before the first table; then a
# picture of the median step (lanes, the critical path over them) whose
# step and span are the ones perfkit diagnose names; the plots over time
# cover the loop diagnose found; kernel cells show short names with the
# full name in their title; and on the planted-straggler DDP job the Ranks
# section names the straggler diagnose finds and draws its row first.
. "$(dirname "$0")/cli_lib.sh"

capture="$PERFKIT_TEST_DATA/torch_train.sqlite"
run diagnose --format=json "$capture"
expect_status "diagnose torch_train" 0
cp "$TMP/out" "$TMP/diagnosis.json"
run report --format=html -o "$TMP/torch.html" "$capture"
expect_status "html of torch_train" 0

if python3 - "$TMP/torch.html" <<'PY'
import sys
html = open(sys.argv[1], encoding="utf-8").read()
findings = html.index('<section id="findings">')
assert findings < html.index("<table"), "a table before the findings"
assert html.index('<article class="finding') < html.index("<table")
assert html.index("Verdict:") < html.index("<table")
assert html.index('<section id="step">') < html.index('<section id="plots">')
assert html.index('<section id="summaries">') < html.index('<section id="api">')
PY
then pass "verdict and findings before the first table, the API table after the kernels"
else fail "the page does not lead with the findings"; fi

# The step drawn is the median step of the diagnosis' critical path: its
# number and span as the finding (or the finding it folded into) says them.
if python3 - "$TMP/torch.html" "$TMP/diagnosis.json" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
d = json.load(open(sys.argv[2]))
said = None
for f in d["findings"]:
    for e in [f["evidence"]] + [a["evidence"] for a in f["also"]]:
        m = re.search(r"Step (\d+) of (\d+) \(the median, ([0-9.]+ [a-z]+) from", e)
        if m:
            said = m.groups()
assert said, "diagnose names no median step"
svg = re.search(r'<svg class="step"[^>]*data-step="(\d+)" data-span-ns="(\d+)"[^>]*>(.*?)</svg>', html, re.S)
assert svg, "no step picture"
assert svg.group(1) == said[0], (svg.group(1), said)
assert "Step %s of %s, the median step (%s," % said in html, said
# the span in ns agrees with diagnose's rounded figure
value, unit = said[2].split()
scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
assert abs(int(svg.group(2)) - float(value) * scale) <= 0.0005 * scale, (svg.group(2), said)
body = svg.group(3)
lanes = re.findall(r'<rect class="lane (thread|stream|idle)[ "]', body)
assert {"thread", "stream", "idle"} <= set(lanes), lanes
labels = re.findall(r'<g class="lane-label"><text[^>]*>([^<]*)<', body)
assert len(labels) == len(lanes), (labels, lanes)
# the step's NVTX range runs on the main thread, drawn first
assert labels[0] == "main", labels
path = re.search(r'<g class="path">(.*?)</g>', body, re.S)
assert path and path.group(1).count("<line") >= 2, "no critical path"
assert "critical path: " in path.group(1)
PY
then pass "the step picture is diagnose's median step, with lanes and the critical path"
else fail "the step picture is wrong"; fi

# The plots over time cover the loop: the axis' ends are the window's.
if python3 - "$TMP/torch.html" "$TMP/diagnosis.json" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
w = json.load(open(sys.argv[2]))["window"]
m = re.search(r'class="axis-window" data-from-ns="(\d+)" data-to-ns="(\d+)"', html)
assert m, "no axis window"
assert (int(m.group(1)), int(m.group(2))) == (w["start_ns"], w["end_ns"]), (m.groups(), w)
# the loop is a small part of the run: the axis is not the capture's
assert w["end_ns"] - w["start_ns"] < (w["capture_end_ns"] - w["capture_start_ns"]) / 10
PY
then pass "the plots' time axis is the loop diagnose found"
else fail "the plots' time axis is not the loop"; fi

# Kernel cells: the short form shown, the full name (escaped) in title.
if python3 - "$TMP/torch.html" "$capture" <<'PY'
import html as H, re, sqlite3, sys
page = open(sys.argv[1], encoding="utf-8").read()
db = sqlite3.connect(sys.argv[2])
name = db.execute("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                  "ON s.id = k.demangledName WHERE s.value LIKE '%<%' "
                  "GROUP BY s.value ORDER BY sum(k.end - k.start) DESC LIMIT 1").fetchone()[0]
table = page[page.index('id="cuda_gpu_kern_sum"'):]
table = table[:table.index("</table>")]
cell = re.search(r'<td class="symbol" title="([^"]*)">([^<]*)</td>', table)
assert cell, "no short kernel cell"
titles = [H.unescape(t) for t in re.findall(r'<td class="symbol" title="([^"]*)">', table)]
assert name in titles, name
for full, short in re.findall(r'<td class="symbol" title="([^"]*)">([^<]*)</td>', table):
    assert len(H.unescape(short)) < len(H.unescape(full)), (short, full)
    assert not H.unescape(short).endswith(")"), short  # no parameter list
PY
then pass "kernel cells are short, with the full name in title"
else fail "kernel cells are not short names"; fi

# A hostile templated name is escaped in the title and the short form.
store="$TMP/hostile.sqlite"
"$PERFKIT_TEST_TOOLS/write_report_store" "$store" || { echo "FAIL: cannot write a store" >&2; exit 1; }
run report --format=html -o "$TMP/hostile.html" "$store"
expect_status "html of the hostile store" 0
if grep -qF '<td class="symbol" title="void gemm&lt;float, &quot;tiled&quot;&gt;(int, int)">gemm&lt;...&gt;</td>' \
	"$TMP/hostile.html"; then
	pass "a templated name with quotes is escaped in title and cell"
else
	fail "the templated name's cell is wrong: $(grep -o '<td[^>]*gemm[^/]*' "$TMP/hostile.html" | head -2)"
fi

# The planted straggler: diagnose names it; the Ranks section says so
# first and draws its row first.
job="$PERFKIT_TEST_DATA/ddp/two_gpus/ddp2_straggler.sqlite"
run diagnose --format=json "$job"
expect_status "diagnose the straggler job" 0
late=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(next(f["ranks"][0]["rank"] for f in d["findings"] if f["rule"] == "straggler"))' "$TMP/out")
run report --format=html -o "$TMP/job.html" "$job"
expect_status "html of the straggler job" 0
if python3 - "$TMP/job.html" "$late" <<'PY'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
late = sys.argv[2]
ranks = html[html.index('<section id="ranks">'):]
ranks = ranks[:ranks.index("</section>")]
lead = re.search(r'<p class="straggler"><strong>Rank (\d+) is the straggler', ranks)
assert lead and lead.group(1) == late, lead
assert ranks.index('class="straggler"') < ranks.index("<svg"), "the words come after the picture"
rows = re.findall(r'<g class="rank( late)?" data-rank="(\d+)"', ranks)
assert rows[0] == (" late", late), rows
assert len(rows) == 2 and rows[1][0] == "", rows
# the others' waits for it are drawn; the straggler waits far less
waits = dict(re.findall(r'data-rank="(\d+)">.*?waits ([0-9.]+ [a-z]+) a step', ranks, re.S))
scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
ns = {r: float(v.split()[0]) * scale[v.split()[1]] for r, v in waits.items()}
other = [r for r in ns if r != late][0]
assert ns[other] > 5 * ns[late], ns
assert ranks.count('class="wait"') > 0
PY
then pass "the Ranks section leads with the straggler rank $late"
else fail "the straggler is not first in the Ranks section"; fi

# A job's step is one rank's: its threads named as the flame graph names
# them (their labels are read before the rank's scope).
if python3 - "$TMP/job.html" <<'PY'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
svg = re.search(r'<svg class="step"[^>]*>(.*?)</svg>', html, re.S)
assert svg, "no step picture"
labels = re.findall(r'<rect class="lane thread[^"]*"[^>]*/>\n<g class="lane-label"><text[^>]*>([^<]*)<',
                    svg.group(1))
assert labels and labels[0] == "main", labels
PY
then pass "the job's step names its threads"
else fail "the job's step does not name its threads"; fi

finish
