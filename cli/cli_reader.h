/* cli_reader.h - the preamble every command that reads captures shares
 * (report, diagnose, roofline, diff, baseline, gate, merge, top): the
 * options they have in common, the one parse of --format, and the reading
 * of the captures named on the command line as one store (cli_input.h),
 * the ranks of --rank selected, the read checked whole, all closed.
 *
 *	struct cli_reader r = { 0 };
 *	const struct cli_option opts[] = {
 *		CLI_FORMAT_OPTION(&format_opt, formats, "text, csv or json"),
 *		CLI_RANK_OPTION(&r.ranks),
 *		CLI_FLAG('f', "force", &r.force, "..." CLI_READ_AS_ONE_JOB_HELP),
 *		CLI_END(),
 *	};
 *	...
 *	if (cli_reader__not_rank0())
 *		return CLI_EXIT_OK;
 *	if ((format = cli_format__parse(format_opt, formats, 3)) < 0)
 *		return CLI_EXIT_USAGE;
 *	if (cli_reader__open(&r, argv, n) == 0 && <read r.store> == 0)
 *		status = cli_reader__check_read(&r);
 *	cli_reader__close(&r);
 */
#ifndef PERFKIT_CLI_READER_H
#define PERFKIT_CLI_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "cli_input.h"
#include "prof/store.h"

/* What --format may name. The first three are report/sink's enum
 * rpt_format, so that a reader hands them to rpt_sink__new as they are. */
enum cli_format {
	CLI_FORMAT_TEXT,
	CLI_FORMAT_CSV,
	CLI_FORMAT_JSON,
	CLI_FORMAT_HTML,
	CLI_FORMAT_CHROME,
	CLI_FORMAT_FOLDED,
	CLI_FORMAT_PERFETTO,
};

/* The --format option, -F, of a command that writes the formats named in
 * the array formats; help names them. -f is --force wherever a command has
 * --force; `-f FMT` of a name in formats, --format's spelling until then,
 * still selects FMT, with a warning. */
#define CLI_FORMAT_OPTION(format, formats, help)                                            \
	CLI_STRING('F', "format", (format), "FMT", (help)),                                 \
	CLI_FORMER_SHORT('f', "format", (formats), sizeof(formats) / sizeof((formats)[0]),  \
			 "-f means --force")

/* The --rank option of the commands that read one store. */
#define CLI_RANK_OPTION(ranks)                                                              \
	CLI_STRING(0, "rank", (ranks), "N[,M]", "only these ranks (processes with CUDA work, or as " \
		   "the launcher numbered them; see --report=rank_sum)")

/* The --window option of the commands that read captures: the reading
 * narrowed to one capture window (summary__select_window). */
#define CLI_WINDOW_HELP "only capture window K (1 for the first; in a capture of several " \
	"processes, the K-th window of each)"
#define CLI_WINDOW_OPTION(window) CLI_STRING(0, "window", (window), "K", CLI_WINDOW_HELP)

/* What --force means to every reader, after what it means to the
 * command's own output ("replace FILE (-o) if it exists" CLI_READ_AS_ONE_JOB_HELP). */
#define CLI_READ_AS_ONE_JOB_HELP                                                            \
	", and read captures that do not look like one job's (two runs, a rank twice, apart in " \
	"time) as one"

/* The --force of a reader whose output is stdout alone. */
#define CLI_READER_FORCE_OPTION(force)                                                      \
	CLI_FLAG('f', "force", (force), "read captures that do not look like one job's "      \
		 "(two runs, a rank twice, apart in time) as one all the same")

/* The format name, one of accepted[0..n) (the command's own, in the order
 * its help gives them), as enum cli_format; an unknown one is reported with
 * the nearest accepted name and -1 returned (the command exits
 * CLI_EXIT_USAGE). */
int cli_format__parse(const char *name, const char *const *accepted, size_t n);

/* Under an MPI launcher (a build with MPI), whether this process is an
 * MPI process other than rank 0: a command that does not share its work
 * among them leaves it to rank 0, which alone prints, and ends at once
 * with status 0 (report/job's job_mpi__not_rank0). */
bool cli_reader__not_rank0(void);

/* One store read from the captures of the command line. */
struct cli_reader {
	/* set by the options */
	const char *ranks; /* --rank: NULL for every rank */
	const char *window; /* --window: NULL for the whole capture */
	bool force;        /* --force: read captures unlike one job's as one */
	/* set by the command: a job of several captures is refused with this
	 * line (one capture is needed, e.g. to write into it) */
	const char *one_capture_only;
	/* when the capture is checked whole (cli_input.h); other than
	 * CLI_CHECK_FIRST only for the command whose output nobody sees before
	 * cli_reader__check_read (a file of -o, put in place only then) */
	enum cli_check check;
	/* set by cli_reader__open */
	struct cli_input input;
	struct prof_store *store;
};

/* Make the capture of args[0..n) (cli_input__make), open it and select
 * the ranks of r->ranks and the capture window of r->window. On failure the error is printed and
 * CLI_EXIT_USAGE returned; cli_reader__close follows either way. */
int cli_reader__open(struct cli_reader *r, char *const *args, int n);
/* Whether what was read came from the whole file as it was opened (a file
 * changed or cut short while read is refused): 0, or CLI_EXIT_USAGE after
 * the error is printed. */
int cli_reader__check_read(struct cli_reader *r);
/* Print err's message and return CLI_EXIT_USAGE: a reader's failure. */
int cli_reader__fail(const struct prof_error *err);
/* The same for a read of r's store that failed: the damage the whole
 * file's check found, when it ran apart and found some, is told instead,
 * as it would have been told before the read. */
int cli_reader__fail_read(struct cli_reader *r, const struct prof_error *err);
/* Close the store and remove a temporary capture. */
void cli_reader__close(struct cli_reader *r);

struct diff_profile;
struct sum_window;
/* The diff profile (report/compare) of one argument: a capture, or a
 * directory of a job's captures (force: as cli_input__make's), narrowed
 * to capture window `window` (--window; NULL: the whole capture); its loop
 * marked as like's is where that marker repeats in it (NULL: its own;
 * diff_profile__load_like). Prints the error and returns CLI_EXIT_USAGE on
 * failure (*p is then empty). */
int cli_reader__profile(char *arg, const struct sum_window *like, bool force, const char *window,
			struct diff_profile *p);

#endif
