/* top_feed.c - the stores perfkit top follows and the clock it shows them
 * at (top_feed.h). */
#include "top_feed.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prof/escape.h"
#include "prof/protocol.h"
#include "prof/saturate.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "top_job.h"
#include "top_source.h"

/* Rows reach a live store up to a flush interval (and a CUPTI buffer) after
 * their event: the rates shown lag the wall clock by this much, so the last
 * bucket drawn is whole. */
#define LIVE_LAG_NS 1000000000LL

enum feed_kind {
	FEED_RUN_DIR,   /* per-process files of a `perfkit run` */
	FEED_IN_PLACE,  /* the capture file itself, by rowid */
	FEED_REPLAY,    /* the capture file, by time */
};

struct top_feed {
	enum feed_kind kind;
	enum top_feed_state state;
	char *path;               /* the capture */
	char *dir;                /* FEED_RUN_DIR: the per-process folder */
	bool own_program;         /* top runs the program: it says when it ended */
	struct top_source **src;  /* FEED_RUN_DIR: one per process; else the capture */
	size_t n_src, cap_src;
	int64_t start_ns;         /* the run's start (CLOCK_REALTIME); 0 unknown */
	int64_t duration_ns;      /* finished: the run's length; 0 unknown */
	int exit_status;          /* finished: the program's; -1 unknown */
	bool windowed;            /* it records only inside capture windows (the run's
				   * metadata says so from its start, before any window) */
	int64_t next_check_ns;    /* monotonic: when to look for the end again */
	/* replay */
	double speed;
	int64_t origin_ns;        /* capture time the replay starts at */
	int64_t mono0_ns;         /* monotonic time it started */
	int64_t paused_ns;        /* monotonic time spent paused */
	int64_t paused_at_ns;     /* when the current pause began; 0 running */
	/* files lost while being read (top_source.h): how many, and the first */
	int lost_files;
	enum top_loss loss;
	struct prof_error problem;
	bool job_judged;          /* the finished capture's straggler looked for */
};

/* ---- the capture's metadata ------------------------------------------------ */

static int64_t meta_int(struct prof_store *s, const char *key, int64_t fallback)
{
	char *v = prof_store__meta(s, key);
	int64_t n = fallback;

	if (v && *v)
		n = strtoll(v, NULL, 10);
	free(v);
	return n;
}

/* Header facts PERFKIT_META holds (a perfkit capture; nsys exports have none). */
static void read_meta(struct top_feed *f, struct prof_store *s, struct top_model *m)
{
	char *v;

	if ((v = prof_store__meta(s, "command"))) {
		prof_sanitize_term(m->program, sizeof m->program, v);
		free(v);
	}
	if ((v = prof_store__meta(s, "gpu"))) {
		prof_sanitize_term(m->gpu_name, sizeof m->gpu_name, v);
		free(v);
	}
	m->pid = (uint32_t)meta_int(s, "pid", m->pid);
	f->start_ns = meta_int(s, "start_ns", f->start_ns);
	f->duration_ns = meta_int(s, "duration_ns", f->duration_ns);
	f->exit_status = (int)meta_int(s, "exit_status", f->exit_status);
	f->windowed = meta_int(s, PROF_META_WINDOWED, 0) == 1;
}

/* ---- per-process files ---------------------------------------------------------- */

static int add_source(struct top_feed *f, struct top_source *s)
{
	if (f->n_src == f->cap_src) {
		size_t cap = f->cap_src ? f->cap_src * 2 : 8;
		struct top_source **p = realloc(f->src, cap * sizeof *p);

		if (!p)
			return -1;
		f->src = p;
		f->cap_src = cap;
	}
	f->src[f->n_src++] = s;
	return 0;
}

static bool have_source(const struct top_feed *f, const char *path)
{
	for (size_t i = 0; i < f->n_src; i++)
		if (!strcmp(f->src[i]->path, path))
			return true;
	return false;
}

/* Take up the files of processes that started since the last look. A file
 * that does not open yet (just created, schema not committed) is tried
 * again next time. */
static void scan_dir(struct top_feed *f, struct top_model *m)
{
	DIR *d = opendir(f->dir);
	struct dirent *e;
	char path[4096];

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct top_source *s;
		struct prof_error err;

		if (!prof_proc_file__match(e->d_name) ||
		    snprintf(path, sizeof path, "%s/%s", f->dir, e->d_name) >= (int)sizeof path ||
		    have_source(f, path))
			continue;
		if (top_source__open(path, TOP_READ_ROWID, &s, &err))
			continue;
		if (add_source(f, s)) {
			top_source__close(s);
			m->out_of_memory = true;
		}
	}
	closedir(d);
	m->processes = (int)f->n_src;
}

static void close_sources(struct top_feed *f)
{
	for (size_t i = 0; i < f->n_src; i++)
		top_source__close(f->src[i]);
	f->n_src = 0;
}

static void note_error(struct top_model *m, const struct prof_error *err)
{
	prof_sanitize_term(m->error, sizeof m->error, err->msg);
}

/* A source's file was lost (err says how): counted, the first one kept to
 * be shown and told on exit. */
static void lose(struct top_feed *f, struct top_model *m, const struct top_source *s,
		 const struct prof_error *err)
{
	if (!f->lost_files++) {
		f->loss = s->lost;
		f->problem = *err;
	}
	note_error(m, err);
}

static bool capture_finished(const char *path);

/* Read every source not lost, giving each a share of the time left. With
 * check_files, first see that each file is still there as it was: a
 * process file goes away when a followed `perfkit run` has made the
 * capture of it (then 1: the caller reads the finished capture), and
 * otherwise only when someone deleted, replaced or truncated it, which
 * costs the capture that process's rows. */
static int read_sources(struct top_feed *f, struct top_model *m, int64_t deadline_ns,
			bool check_files)
{
	int64_t dropped = 0;

	for (size_t i = 0; i < f->n_src; i++) {
		struct top_source *s = f->src[i];
		int64_t now = top_monotonic_ns();
		int64_t share = now + (deadline_ns > now ? (deadline_ns - now) / (int64_t)(f->n_src - i) : 0);
		struct prof_error err;
		int rc;

		if (deadline_ns == INT64_MAX)
			share = INT64_MAX;
		if (!s->lost && check_files && top_source__check_file(s, &err) < 0) {
			if (!f->own_program && capture_finished(f->path)) {
				s->lost = TOP_LOSS_NONE;
				return 1;
			}
			lose(f, m, s, &err);
		}
		if (!s->lost) {
			rc = top_source__read(s, m, share, &err);
			if (rc < 0 && s->lost)
				lose(f, m, s, &err);
			else if (rc < 0)
				note_error(m, &err);
			top_source__describe(s, m);
		}
		dropped += s->dropped_records;
	}
	m->dropped_records = dropped;
	return 0;
}

/* The processes in the finished capture that top never saw a file of. */
static void read_unseen_processes(struct top_feed *f, struct top_model *m)
{
	struct top_source *out = NULL;
	struct prof_cursor *c = NULL;
	struct prof_error err;
	uint32_t *pids = NULL;
	size_t n = 0, cap = 0;

	if (top_source__open(f->path, TOP_READ_ROWID, &out, &err)) {
		note_error(m, &err);
		return;
	}
	if (!prof_cursor__open(out->store, "SELECT DISTINCT pid FROM " PROF_T_PROCESSES, &c, &err)) {
		while (prof_cursor__next(c, &err) == 1) {
			uint32_t pid = (uint32_t)prof_cursor__int64(c, 0);
			bool seen = false;

			for (size_t i = 0; i < f->n_src && !seen; i++)
				seen = f->src[i]->pid == pid;
			if (seen)
				continue;
			if (n == cap) {
				uint32_t *p = realloc(pids, (cap = cap ? cap * 2 : 8) * sizeof *p);

				if (!p)
					break;
				pids = p;
			}
			pids[n++] = pid;
		}
		prof_cursor__close(c);
	}
	for (size_t i = 0; i < n; i++)
		if (top_source__read_pid(out, m, pids[i], &err))
			note_error(m, &err);
	if (n)
		m->processes += (int)n;
	free(pids);
	/* the merged capture's counter covers every process */
	m->dropped_records = prof_store__counter(out->store, "dropped_records");
	top_source__close(out);
}

/* The followed `perfkit run` wrote its capture: read the rest and let go. */
static void run_finished(struct top_feed *f, struct top_model *m)
{
	struct top_source *src;
	struct prof_store *s;
	struct prof_error err;

	if (!f->n_src) {
		/* the run ended before any process file was seen: read the
		 * finished capture itself, from the start */
		if (top_source__open(f->path, TOP_READ_ROWID, &src, &err)) {
			note_error(m, &err);
			return;
		}
		if (add_source(f, src)) {
			top_source__close(src);
			m->out_of_memory = true;
			return;
		}
		read_meta(f, src->store, m);
		top_source__disconnect(src);
		f->kind = FEED_IN_PLACE;
		f->state = TOP_FEED_LOADING;
		return;
	}
	/* the process files are merged: whether they are still there is no
	 * matter now, top has them open */
	read_sources(f, m, INT64_MAX, false);
	read_unseen_processes(f, m);
	close_sources(f);
	if (!prof_store__open(f->path, &s, &err)) {
		read_meta(f, s, m);
		prof_store__close(s);
	}
	f->state = TOP_FEED_FINISHED;
}

/* Is the capture at path finished? (A brief connection: its writer needs
 * the file to itself to leave WAL mode.) */
static bool capture_finished(const char *path)
{
	struct prof_store *s;
	struct prof_error err;
	bool done;

	if (prof_store__open(path, &s, &err))
		return false;
	done = prof_store__is_finished(s);
	prof_store__close(s);
	return done;
}

/* ---- opening ---------------------------------------------------------------------- */

static bool is_dir(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int open_capture(struct top_feed *f, const struct top_feed_config *cfg,
			struct top_model *m, struct prof_error *err)
{
	struct top_source *s = NULL;
	struct prof_store *probe;
	char *live_dir;
	bool finished;
	int rc;

	rc = prof_store__open(cfg->path, &probe, err);
	if (rc)
		return rc;
	finished = prof_store__is_finished(probe);
	/* a finished capture is judged as every reader judges it; one still
	 * being written changes under the check */
	rc = finished ? prof_store__check_whole(probe, err) : 0;
	if (rc) {
		prof_store__close(probe);
		return rc;
	}
	live_dir = prof_store__meta(probe, PROF_META_LIVE_DIR);
	read_meta(f, probe, m);
	prof_store__close(probe);
	if (cfg->replay && !finished) {
		free(live_dir);
		return prof_error__set(err, PROF_E_USAGE,
				       "%s: still being written; --replay needs a finished capture",
				       cfg->path);
	}
	if (!finished && is_dir(live_dir)) {
		f->kind = FEED_RUN_DIR;
		f->dir = live_dir;
		f->state = TOP_FEED_LIVE;
		return 0;
	}
	free(live_dir);
	f->kind = cfg->replay ? FEED_REPLAY : FEED_IN_PLACE;
	rc = top_source__open(cfg->path, cfg->replay ? TOP_READ_REPLAY : TOP_READ_ROWID, &s, err);
	if (!rc && add_source(f, s)) {
		top_source__close(s);
		rc = prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", cfg->path);
	}
	if (rc)
		return rc;
	m->processes = 1;
	if (cfg->replay) {
		f->state = TOP_FEED_REPLAY;
		f->speed = cfg->speed > 0 ? cfg->speed : 1;
		rc = top_source__replay_origin(s, m, &f->origin_ns, err);
		f->mono0_ns = top_monotonic_ns();
		m->nvtx_mode = TOP_NVTX_AT_CLOCK;
		top_model__set_clock(m, f->origin_ns);
		return rc;
	}
	f->state = finished ? TOP_FEED_LOADING : TOP_FEED_LIVE;
	top_source__disconnect(s);
	return 0;
}

int top_feed__open(const struct top_feed_config *cfg, struct top_model *m,
		   struct top_feed **out, struct prof_error *err)
{
	struct top_feed *f = calloc(1, sizeof *f);
	int rc = 0;

	*out = NULL;
	if (!f || !(f->path = strdup(cfg->path))) {
		free(f);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	f->exit_status = -1;
	if (cfg->live_dir) {
		f->kind = FEED_RUN_DIR;
		f->own_program = true;
		f->state = TOP_FEED_LIVE;
		f->dir = strdup(cfg->live_dir);
		f->start_ns = cfg->start_ns;
		f->windowed = cfg->windowed;
		m->pid = cfg->pid;
		prof_sanitize_term(m->program, sizeof m->program, cfg->program);
		if (!f->dir)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	} else {
		rc = open_capture(f, cfg, m, err);
	}
	if (rc) {
		top_feed__close(f);
		return rc;
	}
	*out = f;
	return 0;
}

void top_feed__close(struct top_feed *f)
{
	if (!f)
		return;
	close_sources(f);
	free(f->src);
	free(f->path);
	free(f->dir);
	free(f);
}

/* ---- refreshing ----------------------------------------------------------------------- */

static int64_t replay_clock(const struct top_feed *f, int64_t mono_ns)
{
	int64_t now = f->paused_at_ns ? f->paused_at_ns : mono_ns;
	double run_ns = (double)(now - f->mono0_ns - f->paused_ns) * f->speed;

	/* a huge speed reaches the end at once rather than overflowing */
	if (run_ns > 9.0e18 - (double)f->origin_ns)
		return INT64_MAX / 2;
	return f->origin_ns + (int64_t)run_ns;
}

static void refresh_replay(struct top_feed *f, struct top_model *m, int64_t mono_ns,
			   int64_t deadline_ns)
{
	struct top_source *s = f->src[0];
	int64_t clock = replay_clock(f, mono_ns);
	struct prof_error err;

	if (f->state == TOP_FEED_REPLAY) {
		top_model__set_clock(m, clock);
		/* the replay reads the file it opened: deleting it loses nothing,
		 * truncating it does */
		if (top_source__replay(s, m, clock, deadline_ns, &err) < 0) {
			if (s->lost) {
				lose(f, m, s, &err);
				f->state = TOP_FEED_LOST;
			} else {
				note_error(m, &err);
			}
		}
		if (f->state == TOP_FEED_REPLAY && top_source__replay_done(s)) {
			f->state = TOP_FEED_FINISHED;
			top_source__describe(s, m);
			m->dropped_records = s->dropped_records;
		}
	}
	if (f->state == TOP_FEED_FINISHED || f->state == TOP_FEED_LOST) {
		/* the screen stays on the capture's last second */
		top_model__set_clock(m, prof_add_saturated(m->last_ns, TOP_BUCKET_NS));
		m->elapsed_ns = prof_span_saturated(f->origin_ns, m->last_ns);
		return;
	}
	if (!s->described)
		top_source__describe(s, m);
	m->elapsed_ns = prof_span_saturated(f->origin_ns, clock);
}

/* The capture windows at clock (INT64_MAX: as the files hold them now),
 * counted from the time the header's elapsed time counts from. */
static void note_windows(struct top_feed *f, struct top_model *m, int64_t clock)
{
	struct top_windows w = { 0 };
	struct prof_error err;

	for (size_t i = 0; i < f->n_src; i++)
		if (!f->src[i]->lost && top_source__windows(f->src[i], clock, &w, &err) < 0)
			note_error(m, &err);
	/* before its first window a windowed run has no windows table */
	w.any = w.any || f->windowed;
	w.from_ns = f->kind == FEED_REPLAY ? f->origin_ns : f->start_ns ? f->start_ns : m->first_ns;
	w.finished = f->state == TOP_FEED_FINISHED;
	m->windows = w;
}

/* The file followed in place can no longer be read as it was: what was
 * read stays on the screen, nothing more is read. */
static void lost_in_place(struct top_feed *f, struct top_model *m, struct top_source *s,
			  const struct prof_error *err)
{
	lose(f, m, s, err);
	top_source__disconnect(s);
	f->state = TOP_FEED_LOST;
}

static void refresh_in_place(struct top_feed *f, struct top_model *m, int64_t deadline_ns)
{
	struct top_source *s = f->src[0];
	struct prof_error err;
	int rc;

	/* top lets go of the file between reads: one deleted or replaced in
	 * the meantime is gone for good */
	if (top_source__check_file(s, &err) < 0 || top_source__connect(s, &err)) {
		if (s->lost)
			lost_in_place(f, m, s, &err);
		else
			note_error(m, &err);
		return;
	}
	rc = top_source__read(s, m, deadline_ns, &err);
	if (rc < 0 && s->lost) {
		lost_in_place(f, m, s, &err);
		return;
	}
	if (rc < 0)
		note_error(m, &err);
	top_source__describe(s, m);
	m->dropped_records = s->dropped_records;
	if (f->state == TOP_FEED_LIVE && prof_store__is_finished(s->store)) {
		/* rows committed between the read and the look at the meta */
		rc = top_source__read(s, m, INT64_MAX, &err);
		read_meta(f, s->store, m);
		f->state = TOP_FEED_FINISHED;
	} else if (f->state == TOP_FEED_LOADING && rc == 1) {
		f->state = TOP_FEED_FINISHED;
	}
	note_windows(f, m, INT64_MAX);
	top_source__disconnect(s);
}

/* A job's straggler, once its capture is finished: a diagnosis, which
 * takes this one refresh past its budget (a capture of one process costs a
 * look at its metadata). */
static void judge_job(struct top_feed *f, struct top_model *m)
{
	struct prof_error err = { 0 };
	bool finished = f->kind == FEED_REPLAY || f->state == TOP_FEED_LOADING ||
			f->state == TOP_FEED_FINISHED;

	if (f->job_judged || !finished)
		return;
	f->job_judged = true;
	if (top_job__judge(f->path, &m->late, &err))
		note_error(m, &err);
}

void top_feed__refresh(struct top_feed *f, struct top_model *m, int64_t wall_ns,
		       int64_t mono_ns, int64_t deadline_ns)
{
	/* a read error is shown until a refresh goes without one; the last
	 * one before the end stays, and so does a file lost */
	if (f->state != TOP_FEED_FINISHED && f->state != TOP_FEED_LOST)
		m->error[0] = '\0';
	if (f->state != TOP_FEED_LOST)
		judge_job(f, m);
	if (f->kind == FEED_REPLAY) {
		refresh_replay(f, m, mono_ns, deadline_ns);
		note_windows(f, m, f->state == TOP_FEED_REPLAY ? replay_clock(f, mono_ns) : INT64_MAX);
		return;
	}
	if (f->state == TOP_FEED_FINISHED || f->state == TOP_FEED_LOST)
		return;
	if (f->kind == FEED_IN_PLACE) {
		refresh_in_place(f, m, deadline_ns);
	} else {
		scan_dir(f, m);
		if (read_sources(f, m, deadline_ns, true)) {
			run_finished(f, m);
		} else if (!f->own_program && mono_ns >= f->next_check_ns) {
			f->next_check_ns = mono_ns + TOP_FEED_CHECK_NS;
			if (capture_finished(f->path))
				run_finished(f, m);
		}
		if (f->lost_files && !m->error[0])
			note_error(m, &f->problem);
		note_windows(f, m, INT64_MAX);
	}
	if (f->state == TOP_FEED_LIVE) {
		top_model__set_clock(m, wall_ns - LIVE_LAG_NS);
		m->elapsed_ns = f->start_ns ? wall_ns - f->start_ns : m->last_ns - m->first_ns;
	} else {
		top_model__set_clock(m, m->last_ns + TOP_BUCKET_NS);
		m->elapsed_ns = f->duration_ns ? f->duration_ns : m->last_ns - m->first_ns;
	}
}

void top_feed__pause(struct top_feed *f, bool paused, int64_t mono_ns)
{
	if (paused && !f->paused_at_ns) {
		f->paused_at_ns = mono_ns;
	} else if (!paused && f->paused_at_ns) {
		f->paused_ns += mono_ns - f->paused_at_ns;
		f->paused_at_ns = 0;
	}
}

enum top_feed_state top_feed__state(const struct top_feed *f)
{
	return f->state;
}

int top_feed__lost_files(const struct top_feed *f)
{
	return f->lost_files;
}

enum top_loss top_feed__loss(const struct top_feed *f)
{
	return f->loss;
}

const struct prof_error *top_feed__problem(const struct top_feed *f)
{
	return f->lost_files ? &f->problem : NULL;
}

int top_feed__exit_status(const struct top_feed *f)
{
	return f->exit_status;
}

void top_feed__drain(struct top_feed *f, struct top_model *m)
{
	if (f->kind != FEED_RUN_DIR || f->state == TOP_FEED_FINISHED)
		return;
	scan_dir(f, m);
	read_sources(f, m, INT64_MAX, true);
}

void top_feed__program_done(struct top_feed *f, struct top_model *m, int exit_status,
			    int64_t duration_ns)
{
	close_sources(f);
	f->state = TOP_FEED_FINISHED;
	f->exit_status = exit_status;
	f->duration_ns = duration_ns;
	top_model__set_clock(m, m->last_ns + TOP_BUCKET_NS);
	m->elapsed_ns = duration_ns;
}
