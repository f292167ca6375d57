#!/usr/bin/env bash
# scripts/check-includes.py: a tree that follows the module rules passes, and
# each kind of broken include fails and is named with its file.
source "$(dirname "$0")/cli_lib.sh"
check="$PERFKIT_SOURCE/scripts/check-includes.py"
tree="$TMP/tree"
mkdir -p "$tree"/report/{sink,model,summary,analysis,registry,compare,export} "$tree"/cli "$tree"/libprof/src "$tree"/tests/unit \
	"$tree"/capture "$tree"/collectors
echo '#include "sink/table.h"'         >"$tree/report/model/ranks.c"
printf '#include "model/ranks.h"\n#include "sink/table.h"\n' >"$tree/report/summary/summary.c"
printf '#include "summary/summary.h"\n#include "analysis/timeline/gpu_idle.h"\n' >"$tree/report/registry/registry.c"
echo '#include "summary/summary.h"'    >"$tree/report/analysis/diagnose.c"
printf '#include "analysis/diagnose.h"\n#include "registry/registry.h"\n#include "model/window.h"\n' >"$tree/report/export/html.c"
echo '#include "export/export.h"'      >"$tree/cli/cmd_report.c"
echo '#include <sqlite3.h>'            >"$tree/libprof/src/schema.c"
echo '#include "../../collectors/x.c"' >"$tree/tests/unit/test_x.c"
: >"$tree/cli/cli.h"
: >"$tree/capture/run_session.h"
: >"$tree/collectors/collector.h"
printf '#include "cli.h"\n#include "run_session.h"\n' >"$tree/cli/cmd_run.c"
printf '#include "run_session.h"\n#include "prof/protocol.h"\n' >"$tree/capture/run_session.c"
printf '#include "collector.h"\n#include "prof/protocol.h"\n' >"$tree/collectors/inject.c"

check_tree() {
	python3 "$check" "$tree" >"$TMP/out" 2>"$TMP/err"
	status=$?
}
check_tree
expect_status "a tree that follows the rules" 0

# bad FILE LINE WHAT: adding that include alone breaks a rule, named by file.
bad() {
	local file=$1 line=$2 what=$3
	cp -a "$tree" "$TMP/saved"
	echo "$line" >>"$tree/$file"
	check_tree
	expect_status "$what" 1
	expect_out "$what names the file" "^$file:"
	rm -rf "$tree"; mv "$TMP/saved" "$tree"
}
bad report/summary/summary.c '#include "analysis/diagnose.h"' "summary using analysis"
bad report/sink/sink.c       '#include "summary/summary.h"'   "sink using summary"
bad report/model/ranks.c     '#include "summary/summary.h"'   "model using summary"
bad report/model/window.c    '#include "analysis/core/scope.h"' "model using analysis"
bad report/summary/summary.c '#include "registry/registry.h"' "summary using the registry"
bad report/analysis/rules.c  '#include "registry/registry.h"' "analysis using the registry"
bad report/registry/registry.c '#include "export/export.h"'   "the registry using export"
bad report/export/html.c     '#include "model/window_impl.h"' "export past the model's lent headers"
bad cli/cmd_report.c         '#include "model/ranks.h"'       "cli past summary's face to the model"
bad report/compare/diff.c    '#include "export/export.h"'     "compare using export"
bad report/analysis/rules.c  '#include "compare/diff.h"'      "analysis using compare"
bad cli/cmd_report.c         '#include "export/folded.h"'     "cli past a face header"
bad report/summary/query.c   '#include <sqlite3.h>'           "sqlite3.h outside libprof"
bad cli/run.c                '#include "../collectors/trace_opts.h"' "a relative include across modules"
bad collectors/inject.c      '#include "run_session.h"'       "collectors using capture"
bad collectors/inject.c      '#include "cli.h"'               "collectors using cli"
bad capture/run_session.c    '#include "cli.h"'               "capture using cli"
finish
