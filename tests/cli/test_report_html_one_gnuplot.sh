#!/usr/bin/env bash
# test_report_html_one_gnuplot.sh - the HTML report draws all its plots
# with one gnuplot (report/export/gnuplot_session.c): one start for a page
# of several plots, the roofline's own script among them; a plot whose
# script fails leaves a note with gnuplot's message and the next plot is
# drawn by the same gnuplot; a gnuplot that stops mid-page costs the plot
# it was drawing, and the next one starts another. Each page leaves no
# file in the temporary directory and no gnuplot running.
set -u
. "$(dirname "$0")/cli_lib.sh"
REAL_GNUPLOT=$(command -v gnuplot || true)
if [ -z "$REAL_GNUPLOT" ]; then
	skip "one gnuplot a page" "no gnuplot"
	finish
fi
mkdir "$TMP/bin" "$TMP/tmp"
# A stand-in that notes each start (its pid) and passes everything on;
# with $TMP/stop_once present, the first start passes the commands up to
# the end of the first plot only, then gnuplot reads the end of its input
# and stops.
cat >"$TMP/bin/gnuplot" <<EOF
#!/bin/sh
echo \$\$ >>"$TMP/starts"
if [ -f "$TMP/stop_once" ]; then
	rm -f "$TMP/stop_once"
	while IFS= read -r line; do
		printf '%s\\n' "\$line"
		case \$line in "print sprintf"*) break ;; esac
	done | "$REAL_GNUPLOT"
	exit 0
fi
exec "$REAL_GNUPLOT" "\$@"
EOF
chmod +x "$TMP/bin/gnuplot"

figures() { grep -c '<figure class="plot"' "$1"; }
starts() { wc -l <"$TMP/starts"; }
none_running() {
	local pid
	for pid in $(cat "$TMP/starts"); do kill -0 "$pid" 2>/dev/null && return 1; done
	return 0
}
# roofline_drawn FILE: a plot figure holds the roofline's SVG and caption
roofline_drawn() {
	python3 - "$1" <<'PY'
import re, sys
figs = re.findall(r'<figure class="plot".*?</figure>', open(sys.argv[1]).read(), re.S)
assert any("<svg" in f and "<figcaption>Roofline:" in f for f in figs), len(figs)
PY
}
# page NAME CAPTURE [TMPDIR]: the HTML report of CAPTURE with the stand-in
page() {
	local tmp=${3:-$TMP/tmp}
	rm -f "$TMP/starts"
	PATH="$TMP/bin:$PATH" TMPDIR="$tmp" run report --format=html -o "$TMP/$1.html" "$2"
	expect_status "$1: html" 0
	expect_that "$1: nothing left in the temporary directory" test -z "$(ls -A "$tmp")"
	expect_that "$1: no gnuplot left running" none_running
}

# four plots (utilisation, memory, the roofline's own script) by one gnuplot
page roofline "$PERFKIT_TEST_DATA/rollout_naive_roofline.sqlite"
expect_that "roofline: $(figures "$TMP/roofline.html") plots drawn, the roofline among them" \
	test "$(figures "$TMP/roofline.html")" -ge 3 -a "$(grep -c 'could not be drawn' "$TMP/roofline.html")" = 0
expect_that "roofline: one gnuplot started (got $(starts))" test "$(starts)" = 1
expect_that "roofline: the roofline's own script drawn in the page" roofline_drawn "$TMP/roofline.html"

# the utilisation plot's script fails (its capture's GPU work has no time
# span to draw): the note says gnuplot's error, the next plot is drawn by
# the same gnuplot
page failed "$PERFKIT_TEST_DATA/faults/context_failed_queued.sqlite"
expect_that "failed: the note gives gnuplot's message" \
	grep -q 'could not be drawn: gnuplot failed on util.gp: x range is invalid' "$TMP/failed.html"
expect_that "failed: the plot after it drawn ($(figures "$TMP/failed.html"))" test "$(figures "$TMP/failed.html")" = 1
expect_that "failed: one gnuplot started (got $(starts))" test "$(starts)" = 1

# gnuplot stops after the first plot: the plot it was given next is lost
# with a note, the one after is drawn by a second gnuplot
page whole "$PERFKIT_TEST_DATA/transformer_naive.sqlite"
whole=$(figures "$TMP/whole.html")
touch "$TMP/stop_once"
page stopped "$PERFKIT_TEST_DATA/transformer_naive.sqlite"
expect_that "stopped: $whole plots when gnuplot lasts, one fewer when it stops ($(figures "$TMP/stopped.html"))" \
	test "$whole" -ge 3 -a "$(figures "$TMP/stopped.html")" = $((whole - 1))
expect_that "stopped: the lost plot's note says gnuplot stopped" \
	test "$(grep -c 'could not be drawn: gnuplot stopped on' "$TMP/stopped.html")" = 1
expect_that "stopped: a second gnuplot drew the rest (got $(starts) starts)" test "$(starts)" = 2

# a temporary directory whose name holds a quote, and one with a line
# break, which gnuplot's commands cannot carry: the same plots drawn
quote="$TMP/it's here" nl="$TMP/line
break"
mkdir "$quote" "$nl"
page quote "$PERFKIT_TEST_DATA/transformer_naive.sqlite" "$quote"
expect_that "quote: the same page as in a plain temporary directory" cmp -s "$TMP/whole.html" "$TMP/quote.html"
page line_break "$PERFKIT_TEST_DATA/transformer_naive.sqlite" "$nl"
expect_that "line break: the same page as in a plain temporary directory" cmp -s "$TMP/whole.html" "$TMP/line_break.html"
finish
