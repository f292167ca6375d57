/* run_session_end.c - the end of a session: the process files folded into
 * the capture and the capture put where it belongs (in place, beside the
 * file -f replaces, kept in the run folder when its place is gone, or left
 * unfinished for `perfkit recover`), then the overview of what it holds. */
#include "run_session_parts.h"
#include "run_session_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/escape.h"
#include "prof/tables.h"
#include "sink/sink.h"
#include "summary/summary.h"

/* Whether a capture that could not be finished is still the unfinished
 * output `perfkit recover` finishes (taking over the process file failed
 * before it was put in place). */
static bool recoverable(const char *output)
{
	struct prof_store *store;
	struct prof_error err;

	if (prof_store__open_capture(output, &store, &err) == 0) {
		prof_store__close(store);
		return false;
	}
	return err.code == PROF_E_UNFINISHED;
}

static bool folder_exists(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return true;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The output's folder was removed while the program ran (the output's
 * file went with it: the writer holds a file nobody can open), or another
 * file has taken the output's name since (another run given -f): the
 * capture is made in the run's folder instead, under the output's name;
 * why says which. 0, or -1 when that could not be created either (the old
 * output is kept writing). Closing the old writer leaves the WAL and
 * shared-memory files under the output's name alone: SQLite checkpoints
 * and removes them only while the name is still its database's. */
static int keep_in_run_folder(struct run_session *s, struct run_finish_outcome *kept,
			      const char *why)
{
	struct prof_writer *w;
	struct prof_error err;
	char path[PATH_MAX];

	if (run__kept_path(s->dir, s->output, path, sizeof path) < 0 ||
	    prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err) < 0)
		return -1;
	snprintf(kept->why, sizeof kept->why, "%s (%s)", why, s->output);
	snprintf(kept->kept, sizeof kept->kept, "%s", path);
	prof_writer__delete(s->w);
	s->w = w;
	/* the file beside the output held only the run's metadata */
	prof_output__delete(s->beside);
	s->beside = NULL;
	snprintf(s->out_path, sizeof s->out_path, "%s", path);
	s->output = s->out_path;
	run__write_live_meta(s);
	return 0;
}

/* What became of the output's file while the program ran (its folder
 * still there): someone else's tools can delete or truncate it, and
 * another `perfkit run -f` onto the same name replaces it with its own. */
enum output_fate { OUTPUT_AS_WRITTEN, OUTPUT_DELETED, OUTPUT_TRUNCATED, OUTPUT_REPLACED };

static enum output_fate output_fate(const struct run_session *s)
{
	struct stat st;

	if (!s->out_known)
		return OUTPUT_AS_WRITTEN;
	/* written beside the output: the file -f was to replace was itself
	 * replaced meanwhile, and is not the one -f was given for */
	if (s->beside && prof_output__taken(s->beside))
		return OUTPUT_REPLACED;
	if (stat(run_session__file(s), &st) < 0)
		return errno == ENOENT ? OUTPUT_DELETED : OUTPUT_AS_WRITTEN;
	if (st.st_dev != s->out_dev || st.st_ino != s->out_ino)
		return OUTPUT_REPLACED;
	return st.st_size < s->out_bytes ? OUTPUT_TRUNCATED : OUTPUT_AS_WRITTEN;
}

/* The output's file was deleted or truncated while the program ran: the
 * writer's file is no longer one it can finish (SQLite refuses to write a
 * deleted file; a truncated one has lost pages). It held only the run's
 * metadata, so it is made anew under the same name. The old writer is
 * closed first: closing it removes the WAL by name, which must not be the
 * new file's. 0, or -1 (the old output stays, and the finish reports why
 * it fails). */
static int rewrite_output(struct run_session *s, enum output_fate fate)
{
	struct prof_error err;

	prof_writer__delete(s->w);
	s->w = NULL;
	if (prof_writer__create(run_session__file(s), PROF_WRITER_OVERWRITE, &s->w, &err) < 0 ||
	    (s->beside && prof_writer__set_name(s->w, s->output) < 0)) {
		s->msg->error("%s", s->w ? prof_writer__last_error(s->w)->msg : err.msg);
		return -1;
	}
	s->msg->warning("%s was %s while the program ran; the capture is written there anew",
			s->output, fate == OUTPUT_DELETED ? "deleted" : "truncated");
	run__write_live_meta(s);
	return 0;
}

/* The capture finished beside the output renamed over it. When another
 * file took the name in the moment since output_fate looked, the capture
 * goes to the run's folder as keep_in_run_folder would have put it (or,
 * on another file system, stays where it is), and outcome says where. */
static void put_beside_in_place(struct run_session *s, struct run_finish_outcome *outcome)
{
	const char *temp = prof_output__temp_path(s->beside);
	struct prof_error err;
	char kept[PATH_MAX];

	if (!outcome->kept[0] && prof_output__commit(s->beside, &err) < 0) {
		if (run__kept_path(s->dir, s->output, kept, sizeof kept) == 0 && rename(temp, kept) == 0)
			snprintf(outcome->kept, sizeof outcome->kept, "%s", kept);
		else
			snprintf(outcome->kept, sizeof outcome->kept, "%s", temp);
		if (err.code == PROF_E_EXISTS)
			snprintf(outcome->why, sizeof outcome->why,
				 "another file took the output's name (%s)", s->output);
		else
			snprintf(outcome->why, sizeof outcome->why, "%s", err.msg);
		/* kept where it is when it could not be moved */
		if (!strcmp(outcome->kept, temp)) {
			prof_output__leave(s->beside);
			s->beside = NULL;
			return;
		}
	}
	/* the capture is in place, or kept elsewhere: the file beside goes */
	prof_output__delete(s->beside);
	s->beside = NULL;
}

/* A capture that could not be finished: the unfinished output beside the
 * old file stays for `perfkit recover`, which finds it by the old name. */
static void leave_unfinished(struct run_session *s)
{
	prof_output__leave(s->beside);
	s->beside = NULL;
}

int run_session__finish(struct run_session *s)
{
	struct run_proc_files files;
	struct run_finish_outcome outcome, moved = { 0 };
	enum output_fate fate;
	char *gpu;
	int rc, scanned, deleted;

	/* the run's end, where recover finds it should the output's disk not
	 * take it; the reserve gives room for it on the run folder's */
	run__reserve_free(s->dir);
	run__end_write(s->dir, s->exit_status, s->end_ns - s->start_ns);
	if (!folder_exists(run_session__file(s))) {
		keep_in_run_folder(s, &moved, "the output's folder is gone");
	} else if ((fate = output_fate(s)) == OUTPUT_REPLACED) {
		/* another run took the name (-f): the capture does not take it back */
		keep_in_run_folder(s, &moved, "another file took the output's name");
	} else if (fate != OUTPUT_AS_WRITTEN && rewrite_output(s, fate) < 0) {
		s->msg->warning("the process files stay in %s", s->dir);
		leave_unfinished(s);
		return -1;
	}
	deleted = run__deleted_proc_files(s->dir);
	if (deleted)
		s->msg->warning("%d process file%s deleted from %s while the program ran: the "
				"capture lacks %s rows", deleted, deleted == 1 ? " was" : "s were",
				s->dir, deleted == 1 ? "its" : "their");
	scanned = run__proc_files(s->msg, s->dir, &files);
	if (scanned == 0 && files.n == 0 && !deleted) {
		/* Nothing initialised CUDA: still a valid capture of the run. */
		prof_writer__process(s->w, (uint32_t)s->pid, s->argv[0]);
		fputs("perfkit: note: ", stderr);
		prof_fputs_term(stderr, s->argv[0]);
		fputs(" made no CUDA calls; the capture holds no GPU activity\n", stderr);
	}
	gpu = run__first_gpu(&files);
	run__write_meta(s, gpu);
	free(gpu);
	rc = run__finish_capture(s->msg, s->w, &files, run__progress_line(), &outcome);
	s->w = NULL;
	s->merged = scanned < 0 || rc != 0 ? -1 : files.n;
	if (rc < 0) {
		/* nothing is removed: the files are all there is of the run */
		if (recoverable(run_session__file(s)))
			s->msg->warning("%s%sthe process files stay in %s: %s`perfkit recover %s` "
					"merges them", outcome.why, outcome.why[0] ? "; " : "", s->dir,
					outcome.out_of_room ? "when there is room, " : "", s->output);
		else
			s->msg->warning("%s%sthe process files stay in %s", outcome.why,
					outcome.why[0] ? "; " : "", s->dir);
		run__proc_files_free(&files);
		leave_unfinished(s);
		return -1;
	}
	if (!outcome.kept[0] && moved.kept[0]) {
		memcpy(outcome.kept, moved.kept, sizeof outcome.kept);
		memcpy(outcome.why, moved.why, sizeof outcome.why);
	}
	if (s->beside)
		put_beside_in_place(s, &outcome);
	if (outcome.kept[0]) {
		snprintf(s->out_path, sizeof s->out_path, "%s", outcome.kept);
		s->output = s->out_path;
	}
	s->ready_ns = run__realtime_ns();
	run__tell_outcome(s->msg, s->output, &files, &outcome);
	run__remove_merged(&files);
	run__proc_files_free(&files);
	if (access(s->dir, F_OK) != 0)
		s->dir[0] = '\0';
	run__metrics_import(s->msg, s->output, s->metrics_dir);
	return 0;
}

/* Past this many kernels and API calls together the end of a run names
 * the report instead of printing the overview (a tenth of a second or so
 * on a core below it). */
#define RUN_OVERVIEW_MAX_ROWS 250000

void run_session__report(const struct run_session *s)
{
	struct prof_store *store = NULL;
	struct rpt_sink *sink;
	struct prof_error err;
	int64_t dropped, kernels, calls;

	fprintf(stderr, "perfkit: capture written to ");
	prof_fputs_term(stderr, s->output);
	/* how long the capture took to be complete once the program had
	 * ended (the last rows merged, the indexes built) */
	if (s->ready_ns > s->end_ns && s->end_ns)
		fprintf(stderr, " (ready %.2f s after the program ended)",
			(double)(s->ready_ns - s->end_ns) / 1e9);
	fputc('\n', stderr);
	if (s->merged <= 0)
		return;
	if (prof_store__open(s->output, &store, &err) < 0) {
		s->msg->error("%s", err.msg);
		return;
	}
	kernels = prof_store__count(store, PROF_T_KERNEL);
	calls = prof_store__count(store, PROF_T_RUNTIME) + prof_store__count(store, PROF_T_DRIVER);
	if (kernels + calls > RUN_OVERVIEW_MAX_ROWS) {
		/* Its medians sort every row: seconds for a million launches,
		 * which the user would wait for at the end of every run. */
		fprintf(stderr, "perfkit: %lld kernels and %lld API calls: `perfkit report ",
			(long long)kernels, (long long)calls);
		prof_fputs_term(stderr, s->output);
		fputs("` gives the overview\n", stderr);
	} else {
		sink = rpt_sink__new(RPT_FORMAT_TEXT, stderr);
		if (sink && summary__overview(store, sink, &err) < 0)
			s->msg->error("%s", err.msg);
		rpt_sink__delete(sink);
	}
	dropped = prof_store__counter(store, "dropped_records");
	if (dropped)
		s->msg->warning("CUPTI dropped %lld records: the capture is incomplete",
				(long long)dropped);
	run__window_report(s, store);
	prof_store__close(store);
}
