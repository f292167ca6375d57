/* run_meta.c - the capture of a session: its output file claimed, the
 * run's metadata while it runs and once it ended, the hardware metrics
 * imported. */
#include "run_session_parts.h"
#include "run_session_impl.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "prof/protocol.h"
#include "prof/trace_opts.h"

void run__remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

void run__meta_int(struct prof_writer *w, const char *key, long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	prof_writer__meta(w, key, num);
}

char *run_session__command_line(char **argv)
{
	size_t len = 1;
	char *cmd;

	for (int i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	cmd = calloc(1, len);
	for (int i = 0; cmd && argv[i]; i++) {
		if (i)
			strcat(cmd, " ");
		strcat(cmd, argv[i]);
	}
	return cmd;
}

void run__meta_command(struct prof_writer *w, char **argv)
{
	char *cmd = run_session__command_line(argv);

	prof_writer__meta(w, "command", cmd ? cmd : argv[0]);
	free(cmd);
}

const char *run_session__file(const struct run_session *s)
{
	return s->beside ? prof_output__temp_path(s->beside) : s->output;
}

/* The capture's file as it is now: nothing writes it again until the
 * finish, which checks that it is still there as it was (output_fate). */
static void note_output(struct run_session *s)
{
	struct stat st;

	s->out_known = stat(run_session__file(s), &st) == 0;
	if (s->out_known) {
		s->out_dev = st.st_dev;
		s->out_ino = st.st_ino;
		s->out_bytes = st.st_size;
	}
}

/* What a reader of the unfinished output needs to follow the run: the
 * program, its pid, when it started and where its processes write. */
void run__write_live_meta(struct run_session *s)
{
	struct prof_error err;
	char host[256] = "";

	run__meta_command(s->w, s->argv);
	run__meta_int(s->w, "start_ns", (long long)s->start_ns);
	run__meta_int(s->w, PROF_META_PID, (long long)s->pid);
	run__meta_int(s->w, PROF_META_RUN_PID, (long long)getpid());
	gethostname(host, sizeof(host) - 1);
	prof_writer__meta(s->w, PROF_META_HOST, host);
	run__meta_trace(s->w, s->opt.trace_list);
	prof_writer__meta(s->w, PROF_META_LIVE_DIR, s->dir);
	if (run__windows_asked(s))
		prof_writer__meta(s->w, PROF_META_WINDOWED, "1");
	if (s->metrics_dir[0])
		prof_writer__meta(s->w, PROF_META_LIVE_METRICS_DIR, s->metrics_dir);
	if (s->beside)
		prof_writer__meta(s->w, PROF_META_OUTPUT, run__base_name(s->output));
	prof_writer__flush(s->w, &err);
	note_output(s);
}

void run__meta_trace(struct prof_writer *w, const char *trace_list)
{
	prof_writer__meta(w, "trace", trace_list && *trace_list ? trace_list : PROF_TRACE_DEFAULT_LIST);
}

void run__meta_merged(struct prof_writer *w, const char *gpu)
{
	if (gpu)
		prof_writer__meta(w, "gpu", gpu);
	prof_writer__meta(w, "perfkit_version", PERFKIT_VERSION);
	/* The folders are gone once merged: a finished capture names no live
	 * data, and it is at its name. */
	prof_writer__meta(w, PROF_META_LIVE_DIR, NULL);
	prof_writer__meta(w, PROF_META_LIVE_METRICS_DIR, NULL);
	prof_writer__meta(w, PROF_META_OUTPUT, NULL);
}

void run__write_meta(struct run_session *s, const char *gpu)
{
	char host[256] = "";

	run__meta_command(s->w, s->argv);
	gethostname(host, sizeof(host) - 1);
	prof_writer__meta(s->w, PROF_META_HOST, host);
	run__meta_int(s->w, "start_ns", (long long)s->start_ns);
	run__meta_int(s->w, "duration_ns", (long long)(s->end_ns - s->start_ns));
	run__meta_int(s->w, "exit_status", s->exit_status);
	run__meta_trace(s->w, s->opt.trace_list);
	if (run__python_sampling_hz(s) > 0)
		run__meta_int(s->w, PROF_META_PYTHON_SAMPLING_HZ, run__python_sampling_hz(s));
	run__meta_merged(s->w, gpu);
}

/* Metrics rows, and this GPU's cached `perfkit peaks`, into the capture. */
void run__metrics_import(const struct run_messages *msg, const char *output, char *dir)
{
	struct prof_error err;
	int rows;

	if (dir[0]) {
		rows = prof_analysis__import_metrics_dir(output, dir, &err);
		if (rows < 0)
			msg->warning("hardware metrics not stored: %s", err.msg);
		else
			fprintf(stderr, "perfkit: %d kernel launches with hardware metrics\n", rows);
		run__remove_dir(dir);
		dir[0] = '\0';
	}
	if (peaks_doc__store_cached(output, &err) < 0)
		msg->warning("cached peaks not stored: %s", err.msg);
}

/* The output as prof/output.h's rule says: refused as it must be, claimed
 * when its name is free, or with -f onto an existing file a temporary file
 * beside it (see run_session.h). */
int run__create_output(struct run_session *s, struct prof_error *err)
{
	const struct prof_output_spared program = { s->program_path, "the program to run" };
	unsigned flags = s->opt.force ? PROF_OUTPUT_REPLACE : 0;
	struct stat st;
	int rc;

	rc = prof_output__check(s->output, flags, &program, err);
	if (rc)
		return rc;
	if (lstat(s->output, &st) != 0)
		return prof_writer__create(s->output, 0, &s->w, err);
	rc = prof_output__open(s->output, flags | PROF_OUTPUT_BY_NAME | PROF_OUTPUT_KEEP_ON_SIGNAL,
			       &program, &s->beside, err);
	if (!rc)
		rc = prof_writer__create(prof_output__temp_path(s->beside), PROF_WRITER_CLAIMED, &s->w,
					 err);
	if (!rc && prof_writer__set_name(s->w, s->output) < 0)
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc) {
		prof_writer__delete(s->w);
		s->w = NULL;
		prof_output__delete(s->beside);
		s->beside = NULL;
	}
	return rc;
}
