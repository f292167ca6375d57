/* run_session_impl.h - the steps of folding a run's process files into a
 * capture, shared by a session's end (run_session.c) and `perfkit recover`
 * (run_recover.c), which does the same for a run that was killed first. */
#ifndef PERFKIT_RUN_SESSION_IMPL_H
#define PERFKIT_RUN_SESSION_IMPL_H

#include "run_session.h"

/* The proc-<pid>.sqlite files of a run's folder, in name order. */
struct run_proc_files {
	char **paths;
	int n;
};

/* 0, or -1 after a message (files is then empty). */
int run__proc_files(const struct run_messages *msg, const char *dir, struct run_proc_files *files);
void run__proc_files_free(struct run_proc_files *files);
/* The name of the first GPU the files recorded (malloc'd; NULL: none). */
char *run__first_gpu(const struct run_proc_files *files);
/* Fold the files into w, which holds the run's metadata already, and finish
 * it: the capture at w's path is then complete. The largest file is taken
 * over (prof_writer__take_over), the others merged into it. Frees w. progress: how to
 * report the steps (NULL: not at all). 0; 1 when a file could not be
 * merged (the capture holds the others); -1 when the capture could not be
 * finished. Every failure is told through msg. */
int run__finish_capture(const struct run_messages *msg, struct prof_writer *w,
			const struct run_proc_files *files, const struct prof_progress *progress);
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
