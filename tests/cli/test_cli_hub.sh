# test_cli_hub.sh - the perfkit hub: help, version, unknown commands and
# options (with suggestions), option parsing and exit statuses.
. "$(dirname "$0")/cli_lib.sh"

run
expect_status "no arguments" 2
grep -q '^usage: perfkit' "$TMP/err" && pass "no arguments prints usage on stderr" \
	|| fail "no arguments: usage not on stderr"

run --help
expect_status "--help" 0
expect_out "--help" '^   report +'

run -h
expect_status "-h" 0

run help
expect_status "help" 0
expect_out "help" '^usage: perfkit'

run --version
expect_status "--version" 0
expect_out "--version" '^perfkit [0-9]'

run --list-cmds
expect_status "--list-cmds" 0
expect_out "--list-cmds" '^report$'

run help report
expect_status "help report" 0
expect_out "help report" '^usage: perfkit report'
expect_out "help report lists options" '--format=FMT'

run report --help
expect_status "report --help" 0
expect_out "report --help" '^usage: perfkit report'

run rpeort x.sqlite
expect_status "unknown command" 2
expect_err_line "unknown command" "perfkit: unknown command 'rpeort'; did you mean 'report'?"

run frobnicate
expect_status "unknown command without a near name" 2
expect_err_line "unknown command without a near name" "perfkit: unknown command 'frobnicate'"

run help rpeort
expect_status "help of unknown command" 2
expect_err_line "help of unknown command" "perfkit: unknown command 'rpeort'; did you mean 'report'?"

run --verison
expect_status "unknown global option" 2
expect_err_line "unknown global option" "perfkit: unknown option '--verison'; did you mean '--version'?"

run report --fromat=csv x.sqlite
expect_status "unknown option" 2
expect_err_line "unknown option" "perfkit: unknown option '--fromat'; did you mean '--format'?"

run report -q x.sqlite
expect_status "unknown short option" 2
expect_one_error_line "unknown short option" "unknown option '-q'"

run report x.sqlite --format
expect_status "option without its value" 2
expect_one_error_line "option without its value" "option '--format' needs a value"

run report --list --list=3
expect_status "flag given a value" 2
expect_one_error_line "flag given a value" "option '--list' takes no value"

run report --format=xml x.sqlite
expect_status "unknown format" 2
expect_one_error_line "unknown format" "unknown format 'xml'"

run report --format=jsno x.sqlite
expect_status "misspelt format" 2
expect_err_line "misspelt format" "perfkit: unknown format 'jsno'; did you mean 'json'?"

run report --report=cuda_gpu_kern_summ x.sqlite
expect_status "unknown report" 2
expect_err_line "unknown report" \
	"perfkit: unknown report 'cuda_gpu_kern_summ'; did you mean 'cuda_gpu_kern_sum'?"

run report --report=, x.sqlite
expect_status "empty report list" 2
expect_one_error_line "empty report list" "at least one report"

run report
expect_status "report without a file" 2
expect_one_error_line "report without a file" "needs a capture file"

# two files are one job: the first that cannot be read is named
run report a.sqlite b.sqlite
expect_status "report with two missing files" 2
expect_one_error_line "report with two missing files" "a.sqlite: no such file"

run report --list
expect_status "report --list" 0
expect_out "report --list" '^cuda_gpu_kern_sum +CUDA GPU Kernel Summary'

# `--` ends options: what follows is a file name, even when it starts with '-'.
run report -- --format=csv
expect_status "-- ends option parsing" 2
expect_one_error_line "-- ends option parsing" "--format=csv"

finish
