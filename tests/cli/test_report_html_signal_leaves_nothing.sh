#!/usr/bin/env bash
# test_report_html_signal_leaves_nothing.sh - SIGINT, SIGTERM or SIGHUP
# while `perfkit report --format=html -o FILE` draws its plots: perfkit ends
# by that signal, FILE is what it was before (or still absent), and neither
# the temporary file beside it nor the perfkit-html-* folder of the plots is
# left in the temporary directory, nor gnuplot running. Before, the page
# was left half written at FILE and the plot folder stayed.
#
# gnuplot is a stand-in that records its pid and sleeps, so the export is
# caught in the middle of its first plot, whatever the machine's speed.
set -u
. "$(dirname "$0")/cli_lib.sh"
DATA=$(cd "$(dirname "$0")/../data" && pwd)
X=$DATA/rollout_naive.sqlite
mkdir "$TMP/bin" "$TMP/tmp" "$TMP/outs"
cat >"$TMP/bin/gnuplot" <<EOF
#!/bin/sh
echo \$\$ >"$TMP/gnuplot.pid"
exec sleep 120
EOF
chmod +x "$TMP/bin/gnuplot"

plot_folder() { ls -d "$TMP/tmp"/perfkit-html-* >/dev/null 2>&1; }
gnuplot_started() { [ -s "$TMP/gnuplot.pid" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
nothing_left() {
	[ -z "$(ls -A "$TMP/tmp")" ] && [ -z "$(find "$TMP/outs" -name '.*.perfkit-*' -print -quit)" ]
}

# interrupt SIGNAL NUMBER FORCE: the export started (with --force over an
# existing page when FORCE is 1), the signal sent once gnuplot runs.
interrupt() {
	local sig=$1 num=$2 force=$3 out=$TMP/outs/$1.html pid args=()

	rm -f "$TMP/gnuplot.pid"
	if [ "$force" = 1 ]; then
		echo "the page before" >"$out"
		cp "$out" "$out.was"
		args=(--force)
	fi
	# A background job of a script starts with SIGINT ignored; perfkit
	# keeps a signal it inherits ignored, as it should, so the job gets
	# the default disposition back (set -m: a job of its own).
	set -m
	TMPDIR=$TMP/tmp PATH=$TMP/bin:$PATH "$PERFKIT" report --format=html "${args[@]}" \
		-o "$out" "$X" >/dev/null 2>"$TMP/err" &
	pid=$!
	set +m
	if ! wait_until "$WAIT_S" gnuplot_started; then
		status=-1
		fail "$sig: the export never ran gnuplot"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return
	fi
	expect_that "$sig: the plots' folder is in TMPDIR while gnuplot runs" plot_folder
	kill -"$sig" "$pid"
	wait "$pid"
	status=$?
	expect_status "$sig during the HTML export" $((128 + num))
	if [ "$force" = 1 ]; then
		expect_that "$sig: the page before is unchanged" cmp -s "$out" "$out.was"
	else
		expect_that "$sig: no page is left" test ! -e "$out"
	fi
	expect_that "$sig: no temporary file or plot folder is left" nothing_left
	expect_that "$sig: gnuplot is stopped" wait_until "$WAIT_S" gone "$(cat "$TMP/gnuplot.pid")"
}

interrupt INT 2 1
interrupt TERM 15 0
interrupt HUP 1 1
finish
