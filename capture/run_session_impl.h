/* run_session_impl.h - the steps of folding a run's process files into a
 * capture, shared by a session's end (run_session.c) and `perfkit recover`
 * (run_recover.c), which does the same for a run that was killed first. */
#ifndef PERFKIT_RUN_SESSION_IMPL_H
#define PERFKIT_RUN_SESSION_IMPL_H

#include "run_session.h"

/* The proc-<pid>.sqlite files of a run's folder, in name order, and which
 * of them the capture holds once it is finished. */
struct run_proc_files {
	char *dir;
	char **paths;
	bool *in_capture;
	int n;
};

/* 0, or -1 after a message (files is then empty). */
int run__proc_files(const struct run_messages *msg, const char *dir, struct run_proc_files *files);
void run__proc_files_free(struct run_proc_files *files);
/* Process files of dir deleted while their processes wrote them, told by
 * what SQLite leaves of such a file: its -wal and -shm files (a writer
 * removes them when it closes, but only under its database's own name).
 * Those leftovers are removed, since nothing can read them alone; returns
 * how many process files they were. */
int run__deleted_proc_files(const char *dir);
/* The name of the first GPU the files recorded (malloc'd; NULL: none). */
char *run__first_gpu(const struct run_proc_files *files);

/* What the finish made of the files, for the line that tells it. */
struct run_finish_outcome {
	int in_capture;      /* process files the capture holds */
	bool out_of_room;    /* a file was left out, or the finish stopped, for want of room */
	char kept[PATH_MAX]; /* where the capture lies when its place would not take it; "": there */
	char why[PROF_ERROR_MSG_MAX]; /* why it is kept there, or the want of room that stopped it */
};

/* Fold the files into w, which holds the run's metadata already, and finish
 * it: the capture at w's path is then complete. The reserved room of the
 * files' folder is given back first (run__reserve_free). The largest file
 * is taken over (prof_writer__take_over), the others merged into it; a file
 * that cannot be merged stays where it is (files->in_capture false). When
 * the finished capture cannot be put at w's path (its folder gone, no room
 * there), it is kept in the files' folder under that name (outcome->kept).
 * Frees w. progress: how to report the steps (NULL: not at all). 0; 1 when
 * a file could not be merged (the capture holds the others); -1 when the
 * capture could not be finished: w's file is then still the run's
 * unfinished output, which `perfkit recover` finishes (that is also what
 * is left when no room was found for any of the files). Failures other
 * than want of room are told through msg; run__tell_outcome tells the rest. */
int run__finish_capture(const struct run_messages *msg, struct prof_writer *w,
			struct run_proc_files *files, const struct prof_progress *progress,
			struct run_finish_outcome *outcome);
/* One line on what a finished capture at path lacks: files left in their
 * folder, rows not written, indexes left out (all for want of room), the
 * capture kept elsewhere. Nothing when it lacks nothing. */
void run__tell_outcome(const struct run_messages *msg, const char *path,
		       const struct run_proc_files *files, const struct run_finish_outcome *outcome);
/* buf = dir/the output's file name: where a capture whose place is gone is
 * kept. 0, or -1 when it does not fit. */
int run__kept_path(const char *dir, const char *output, char *buf, size_t cap);
/* Remove the files the capture holds (and SQLite's companions), the run's
 * reserve and end record, then the folder if nothing else is left in it. */
void run__remove_merged(const struct run_proc_files *files);
/* The program's exit status and how long it ran, kept in the run folder
 * dir for `perfkit recover` should the output not take them (run_end.c).
 * read: 0, or -1 when dir holds no such record. */
void run__end_write(const char *dir, int exit_status, int64_t duration_ns);
int run__end_read(const char *dir, int *exit_status, int64_t *duration_ns);
void run__end_remove(const char *dir);
/* Room kept back in dir for the finish (run_reserve.c). */
void run__reserve_make(const char *dir);
void run__reserve_free(const char *dir);
/* A progress line on stderr, rewritten in place and erased at the end, when
 * stderr is a terminal; NULL (silence) otherwise. */
const struct prof_progress *run__progress_line(void);
/* Remove dir and the files in it. */
void run__remove_dir(const char *dir);
void run__meta_int(struct prof_writer *w, const char *key, long long v);
void run__meta_command(struct prof_writer *w, char **argv);
/* The trace list a run recorded with (NULL or "": everything). */
void run__meta_trace(struct prof_writer *w, const char *trace_list);
/* What every merged capture records last: its GPU, this perfkit's version,
 * and that no live folder is left. */
void run__meta_merged(struct prof_writer *w, const char *gpu);
/* Import the metrics files of dir (then removed; dir emptied) and the cached
 * peaks into the finished capture at output. */
void run__metrics_import(const struct run_messages *msg, const char *output, char *dir);

#endif
