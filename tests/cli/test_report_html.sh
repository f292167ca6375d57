# test_report_html.sh - `perfkit report --format=html`: capture strings are
# text, never markup; the page references nothing outside itself; without
# gnuplot it still renders, with a note; and a real browser (headless
# Chromium) loads it without console errors, with the flame graph and the
# plots in its DOM, and draws it.
. "$(dirname "$0")/cli_lib.sh"

store="$TMP/hostile.sqlite"
"$PERFKIT_TEST_TOOLS/write_report_store" "$store" || { echo "FAIL: cannot write a store" >&2; exit 1; }
# The tool's names already hold quotes, '&' and '<'; one of them (a kernel
# and the NVTX range around it) becomes a script element.
python3 - "$store" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("UPDATE StringIds SET value = '<script>alert(1)</script>' "
               "WHERE value = 'plain_kernel'").rowcount
assert n == 1, n
db.commit()
PY

# no_external_refs FILE: the only URLs are XML namespace names.
no_external_refs() {
	python3 - "$1" <<'PY'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
for m in re.finditer(r"[a-z]+://", html):
    before = html[max(0, m.start() - 40):m.start()]
    assert re.search(r'\sxmlns(:\w+)?="$', before), html[m.start() - 60:m.end() + 40]
assert not re.search(r"<(script|iframe|object|embed|link\s+rel=\"stylesheet\")", html, re.I)
assert not re.search(r"\s(src|srcset)=", html), "a src attribute"
assert "@import" not in html and "url(http" not in html
PY
}

run report --format=html -o "$TMP/report.html" "$store"
expect_status "html" 0
if grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;' "$TMP/report.html" && ! grep -qi '<script' "$TMP/report.html"; then
	pass "a kernel named <script>alert(1)</script> is text"
else
	fail "the script kernel is not escaped"
fi
if grep -qF 'void gemm&lt;float, &quot;tiled&quot;&gt;(int, int)' "$TMP/report.html" &&
   grep -qF 'a&lt;b &amp;&amp; c&gt;d' "$TMP/report.html" && ! grep -qF 'a<b && c>d' "$TMP/report.html"; then
	pass "NVTX text with quotes and & is text"
else
	fail "NVTX text is not escaped"
fi
if no_external_refs "$TMP/report.html"; then pass "no external references"; else fail "external references"; fi
if grep -q 'id="cuda_gpu_kern_sum"' "$TMP/report.html" && grep -q 'id="nvtx_kern_sum"' "$TMP/report.html" &&
   grep -q '<svg class="flame"' "$TMP/report.html"; then
	pass "tables and flame graph"
else
	fail "tables or flame graph missing"
fi

# Without gnuplot on PATH (perfkit itself is run by its full path).
PATH=/nonexistent "$PERFKIT" report --format=html -o "$TMP/noplot.html" "$store" >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status "html without gnuplot" 0
if grep -q 'class="note">gnuplot was not found on PATH' "$TMP/noplot.html" &&
   ! grep -q '<figure class="plot"' "$TMP/noplot.html" && grep -q 'id="cuda_api_sum"' "$TMP/noplot.html" &&
   grep -q '</html>' "$TMP/noplot.html"; then
	pass "without gnuplot: tables and a note"
else
	fail "without gnuplot the page is wrong"
fi

# The browser check runs on a real capture when there is one.
page_store=$store
nplots=2 # the tool's store has no device memory events
capture="$PERFKIT_TEST_DATA/transformer_naive.sqlite"
if [ -f "$capture" ]; then
	page_store=$capture
	nplots=3
fi
run report --format=html -o "$TMP/page.html" "$page_store"
expect_status "html of $(basename "$page_store")" 0
if command -v gnuplot >/dev/null; then
	got=$(grep -c '<figure class="plot"' "$TMP/page.html")
	if [ "$got" -eq "$nplots" ]; then pass "$nplots gnuplot plots inlined"; else fail "wanted $nplots plots, got $got"; fi
	if no_external_refs "$TMP/page.html"; then pass "page has no external references"; else fail "page refers outside"; fi
fi

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	if [ "${CI:-}" = true ]; then
		fail "chromium is not installed (scripts/install-deps.sh installs it)"
	else
		echo "skipped: the browser check needs chromium (scripts/install-deps.sh installs it)"
	fi
	finish
	exit 0
fi
chrome() { # ARGS... : headless Chromium on the page, console messages on stderr
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$TMP/chromium" --enable-logging=stderr --v=0 "$@" \
		"file://$TMP/page.html"
}
chrome --dump-dom >"$TMP/dom.html" 2>"$TMP/chrome.err"
status=$?
expect_status "chromium --dump-dom" 0
# The page runs no script, so any console message is an error: a blocked
# load, a policy violation, a parse failure.
if grep -q 'CONSOLE' "$TMP/chrome.err"; then
	fail "console messages: $(grep 'CONSOLE' "$TMP/chrome.err" | head -3)"
else
	pass "no console messages"
fi
if python3 - "$TMP/dom.html" "$nplots" <<'PY'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
figures = re.findall(r'<figure class="plot"[^>]*>\s*<svg\b(.*?)</svg>', dom, re.S)
assert len(figures) == int(sys.argv[2]), len(figures)
for body in figures:
    assert body.count("<path") + body.count("<rect") > 10, "an empty plot"
flame = re.search(r'<svg class="flame".*?</svg>', dom, re.S)
assert flame and flame.group(0).count("<rect") > 3, "no flame graph"
PY
then pass "the DOM holds the flame graph and $nplots plots"; else fail "plots missing from the DOM"; fi
chrome --screenshot="$TMP/page.png" --window-size=1280,4000 >/dev/null 2>&1
if [ "$(stat -c %s "$TMP/page.png" 2>/dev/null || echo 0)" -gt 100000 ]; then
	pass "screenshot drawn"
	[ -n "${PERFKIT_SCREENSHOT_DIR:-}" ] && cp "$TMP/page.png" "$PERFKIT_SCREENSHOT_DIR/report_html.png"
else
	fail "screenshot missing or blank"
fi

finish
