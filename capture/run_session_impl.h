/* run_session_impl.h - the steps of folding a run's process files into a
 * capture, shared by a session's end (run_session.c) and `perfkit recover`
 * (run_recover.c), which does the same for a run that was killed first. */
#ifndef PERFKIT_RUN_SESSION_IMPL_H
#define PERFKIT_RUN_SESSION_IMPL_H

#include "run_session.h"

/* Merge every proc-<pid>.sqlite of dir into w; *gpu gets the first GPU's
 * name (malloc'd). Returns how many files there were, or < 0. */
int run__merge_dir(const struct run_messages *msg, struct prof_writer *w, const char *dir,
		   char **gpu);
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
