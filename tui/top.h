/* top.h - perfkit top, the live view of a capture: what cli/cmd_top.c
 * calls once it has parsed the command line (and, for `perfkit top --
 * PROGRAM`, started the program under capture). */
#ifndef TUI_TOP_H
#define TUI_TOP_H

#include <stdbool.h>
#include <stdint.h>

#include "prof/error.h"
#include "top_feed.h"

#define TOP_REFRESH_MS_DEFAULT 250

/* The program top runs, for the loop to know when it ends. */
struct top_program {
	/* 1 once the program has ended (its exit status and run time set), 0
	 * while it runs. Called at every turn of the loop, paused or not. */
	int (*poll)(void *ctx, int *exit_status, int64_t *duration_ns);
	/* The program ended and the feed has read its processes' files: make
	 * the capture complete (merge, metadata). 0, or -1 when it failed.
	 * Messages go to stderr, which the caller keeps off the screen. */
	int (*finish)(void *ctx);
	void *ctx;
};

struct top_config {
	struct top_feed_config feed;
	int refresh_ms;                    /* how often the stores are read */
	const struct top_program *program; /* NULL: following or replaying a file */
	int (*take_signal)(void);          /* SIGINT/SIGTERM caught since last asked, or 0 */
	const char *nvml_soname;           /* NULL: NVML_SONAME */
};

/* What top__run returns when a file it read was deleted, replaced, cut
 * short or damaged while it read it (top_feed__problem). */
#define TOP_FILE_LOST 1

/* Show the screen until q, or a signal (which, while the program runs,
 * means "quit once it has ended": the program got the signal too). Returns
 * 0; TOP_FILE_LOST with err's one line naming the first file lost; or a
 * negative PROF_E_* code with err set when the capture cannot be read or
 * the terminal cannot be used (nothing drawn then).
 * *program_running says whether the program was still running at quit. */
int top__run(const struct top_config *cfg, bool *program_running, struct prof_error *err);

#endif
