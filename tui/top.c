/* top.c - perfkit top's main loop: refresh (stores -> model), then draw
 * (model -> screen), then keys, as nvtop does. The refresh step has a time
 * budget so a frame stays short however far behind the reading is; the
 * draw step happens after a refresh, a key or a resize. */
#include "top.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml.h"
#include "top_draw.h"
#include "top_layout.h"
#include "top_model.h"
#include "top_source.h"

#define KEY_WAIT_MS 50                  /* longest wait for a key */
#define REFRESH_BUDGET_NS 60000000LL    /* reading time per refresh; drawing gets the rest of 100 ms */
#define NVML_PERIOD_NS 1000000000LL     /* NVML's own counters move about once a second */
#define REDRAW_PERIOD_NS 1000000000LL   /* the elapsed clock moves even when nothing else does */
#define KEY_ESCAPE 27

struct top_loop {
	const struct top_config *cfg;
	struct top_model m;
	struct top_feed *feed;
	struct nvml *nvml;
	struct nvml *gpu_nvml[TOP_MAX_GPUS]; /* the GPU panel's rows, by the model's order */
	bool gpu_nvml_tried[TOP_MAX_GPUS];
	struct top_ui ui;
	struct top_view kernels, ranges;
	struct top_layout layout;
	bool quit;
	bool quit_when_program_ends;
	bool program_ended;
	bool capture_failed;        /* the program's capture could not be completed */
	int exit_status;
	int64_t next_nvml_ns;       /* monotonic: next NVML sample */
	int nvml_waits;             /* samples skipped waiting for the GPU's UUID */
	bool nvml_tried;
	bool dirty;                 /* something to draw */
	bool views_stale;           /* model or sort/filter changed */
};

static int64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- refresh step -------------------------------------------------------------- */

/* How a file was lost, for the status line (the message is on the footer). */
static const char *const loss_words[] = {
	[TOP_LOSS_NONE] = "lost",
	[TOP_LOSS_DELETED] = "deleted",
	[TOP_LOSS_REPLACED] = "replaced",
	[TOP_LOSS_TRUNCATED] = "truncated",
	[TOP_LOSS_DAMAGED] = "damaged",
};

static void set_status(struct top_loop *t)
{
	struct top_ui *ui = &t->ui;
	int lost = top_feed__lost_files(t->feed);
	size_t used;

	switch (top_feed__state(t->feed)) {
	case TOP_FEED_LIVE:
		snprintf(ui->status, sizeof ui->status, "%s",
			 t->cfg->program ? "running" : "live capture");
		break;
	case TOP_FEED_LOADING:
		snprintf(ui->status, sizeof ui->status, "reading the capture");
		break;
	case TOP_FEED_REPLAY:
		snprintf(ui->status, sizeof ui->status, "replay %gx", t->cfg->feed.speed);
		break;
	case TOP_FEED_FINISHED:
		if (t->cfg->program && lost)
			/* what the capture lacks follows */
			snprintf(ui->status, sizeof ui->status, "program exited (status %d)",
				 t->exit_status);
		else if (t->cfg->program)
			snprintf(ui->status, sizeof ui->status, "program exited (status %d); %s",
				 t->exit_status, t->capture_failed
				 ? "the capture failed (why: on quitting)" : "capture complete");
		else if (t->cfg->feed.replay)
			snprintf(ui->status, sizeof ui->status, "replay finished");
		else
			snprintf(ui->status, sizeof ui->status, "finished capture");
		break;
	case TOP_FEED_LOST:
		snprintf(ui->status, sizeof ui->status, "capture %s; nothing more is read",
			 loss_words[top_feed__loss(t->feed)]);
		return;
	}
	/* a process file of a run lost: the capture will lack its rows */
	used = strlen(ui->status);
	if (lost && used < sizeof ui->status)
		snprintf(ui->status + used, sizeof ui->status - used, "; %d process file%s %s", lost,
			 lost == 1 ? "" : "s", lost == 1 ? loss_words[top_feed__loss(t->feed)] : "lost");
}

static void rebuild_views(struct top_loop *t);

static void poll_program(struct top_loop *t)
{
	const struct top_program *p = t->cfg->program;
	int64_t duration_ns = 0;

	if (!p || t->program_ended || !p->poll(p->ctx, &t->exit_status, &duration_ns))
		return;
	/* read the last rows while the per-process files still exist, then
	 * let the merge fold them into the capture (which may take a while:
	 * say so on the screen first) */
	top_feed__drain(t->feed, &t->m);
	snprintf(t->ui.status, sizeof t->ui.status,
		 "program exited (status %d); writing the capture", t->exit_status);
	rebuild_views(t);
	top_draw__frame(&t->m, &t->kernels, &t->ranges, &t->ui, &t->layout);
	t->capture_failed = p->finish(p->ctx) < 0;
	top_feed__program_done(t->feed, &t->m, t->exit_status, duration_ns);
	t->m.gpu_live = false;
	t->program_ended = true;
	t->views_stale = t->dirty = true;
	if (t->quit_when_program_ends)
		t->quit = true;
}

/* With several GPUs, each row's NVML metrics, by the GPU's UUID only: a
 * GPU NVML does not know keeps N/A rather than another GPU's numbers. */
static void sample_gpus(struct top_loop *t)
{
	if (t->m.ngpus < 2)
		return;
	for (int i = 0; i < t->m.ngpus; i++) {
		struct top_gpu *g = &t->m.gpus[i];

		if (!t->gpu_nvml_tried[i] && g->uuid[0]) {
			t->gpu_nvml_tried[i] = true;
			t->gpu_nvml[i] = nvml__open_exact(t->cfg->nvml_soname ? t->cfg->nvml_soname
									 : NVML_SONAME, g->uuid, NULL);
		}
		nvml__sample(t->gpu_nvml[i], &g->live);
	}
}

static void refresh_step(struct top_loop *t, int64_t mono)
{
	top_feed__refresh(t->feed, &t->m, now_ns(CLOCK_REALTIME), mono, mono + REFRESH_BUDGET_NS);
	t->m.gpu_live = top_feed__state(t->feed) == TOP_FEED_LIVE;
	if (t->m.gpu_live && mono >= t->next_nvml_ns) {
		t->next_nvml_ns = mono + NVML_PERIOD_NS;
		/* the capture names its GPU by UUID once a device record is in;
		 * give it a few seconds before settling for the first GPU */
		if (!t->nvml_tried && (t->m.gpu_uuid[0] || ++t->nvml_waits > 3)) {
			t->nvml_tried = true;
			t->nvml = nvml__open(t->cfg->nvml_soname ? t->cfg->nvml_soname : NVML_SONAME,
					     t->m.gpu_uuid[0] ? t->m.gpu_uuid : NULL, NULL);
		}
		nvml__sample(t->nvml, &t->m.gpu);
		sample_gpus(t);
	} else if (!t->m.gpu_live) {
		memset(&t->m.gpu, 0, sizeof t->m.gpu);
		for (int i = 0; i < t->m.ngpus; i++)
			memset(&t->m.gpus[i].live, 0, sizeof t->m.gpus[i].live);
	}
	t->views_stale = t->dirty = true;
}

static void rebuild_views(struct top_loop *t)
{
	if (top_model__kernel_view(&t->m, t->ui.sort, t->ui.ascending, t->ui.filter, &t->kernels) ||
	    top_model__range_view(&t->m, &t->ranges))
		t->m.out_of_memory = true;
	if (t->m.out_of_memory && !t->m.error[0])
		snprintf(t->m.error, sizeof t->m.error, "out of memory: some rows are not shown");
	t->views_stale = false;
}

/* ---- keys ------------------------------------------------------------------------ */

static void scroll_to(struct top_loop *t, int row)
{
	int page = top_draw__page_rows(&t->layout), last = (int)t->kernels.n - page;

	if (row > last)
		row = last;
	t->ui.scroll = row < 0 ? 0 : row;
}

static void edit_key(struct top_loop *t, int ch)
{
	struct top_ui *ui = &t->ui;
	size_t len = strlen(ui->edit);

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		snprintf(ui->filter, sizeof ui->filter, "%s", ui->edit);
		ui->editing = false;
		ui->scroll = 0;
		t->views_stale = true;
	} else if (ch == KEY_ESCAPE) {
		ui->editing = false;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (len)
			ui->edit[len - 1] = '\0';
	} else if (ch >= 0x20 && ch < 0x7F && len + 1 < sizeof ui->edit) {
		/* printable ASCII only: the prompt is drawn as typed */
		ui->edit[len] = (char)ch;
		ui->edit[len + 1] = '\0';
	}
}

static void key(struct top_loop *t, int ch)
{
	struct top_ui *ui = &t->ui;
	int page = top_draw__page_rows(&t->layout);

	t->dirty = true;
	if (ui->editing) {
		edit_key(t, ch);
		return;
	}
	if (ui->help && ch != 'q' && ch != 'Q' && ch != KEY_RESIZE) {
		ui->help = false;
		return;
	}
	switch (ch) {
	case 'q':
	case 'Q':
		t->quit = true;
		break;
	case 's':
		ui->sort = (enum top_sort)((ui->sort + 1) % TOP_SORT__COUNT);
		t->views_stale = true;
		break;
	case 'S':
		ui->ascending = !ui->ascending;
		t->views_stale = true;
		break;
	case 'p':
	case 'P':
		ui->paused = !ui->paused;
		top_feed__pause(t->feed, ui->paused, now_ns(CLOCK_MONOTONIC));
		break;
	case '/':
		ui->editing = true;
		snprintf(ui->edit, sizeof ui->edit, "%s", ui->filter);
		break;
	case 'h':
	case 'H':
	case '?':
		ui->help = true;
		break;
	case KEY_UP:
		scroll_to(t, ui->scroll - 1);
		break;
	case KEY_DOWN:
		scroll_to(t, ui->scroll + 1);
		break;
	case KEY_PPAGE:
		scroll_to(t, ui->scroll - page);
		break;
	case KEY_NPAGE:
		scroll_to(t, ui->scroll + page);
		break;
	case KEY_HOME:
		scroll_to(t, 0);
		break;
	case KEY_END:
		scroll_to(t, (int)t->kernels.n);
		break;
	case KEY_RESIZE:
		/* everything is laid out again; repaint the whole terminal */
		clearok(curscr, TRUE);
		break;
	default:
		break;
	}
}

/* ---- the loop ----------------------------------------------------------------------- */

static bool terminal_is_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);

	return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

static void loop(struct top_loop *t)
{
	int64_t next_refresh = 0, next_redraw = 0;

	while (!t->quit) {
		int64_t mono = now_ns(CLOCK_MONOTONIC);
		int sig = t->cfg->take_signal ? t->cfg->take_signal() : 0;
		int ch;

		if (sig) {
			/* the program got the terminal's signal too: let it end,
			 * so the capture is complete, then go */
			if (t->cfg->program && !t->program_ended)
				t->quit_when_program_ends = true;
			else
				break;
		}
		top_layout__compute_full(COLS, LINES, t->m.ngpus,
					 top_gpu_metrics__rows(&t->m.gpu_metrics), &t->layout);
		if (mono >= next_refresh && !t->ui.paused) {
			refresh_step(t, mono);
			next_refresh = mono + (int64_t)t->cfg->refresh_ms * 1000000;
		}
		poll_program(t);
		if (t->quit)
			break;
		set_status(t);
		if (t->views_stale)
			rebuild_views(t);
		scroll_to(t, t->ui.scroll);
		if (t->dirty || mono >= next_redraw) {
			top_draw__frame(&t->m, &t->kernels, &t->ranges, &t->ui, &t->layout);
			t->dirty = false;
			next_redraw = mono + REDRAW_PERIOD_NS;
		}
		ch = getch();
		while (ch != ERR) {
			key(t, ch);
			if (t->quit)
				break;
			ch = getch();
		}
	}
}

int top__run(const struct top_config *cfg, bool *program_running, struct prof_error *err)
{
	struct top_loop t;
	SCREEN *screen;
	int rc;

	memset(&t, 0, sizeof t);
	t.cfg = cfg;
	t.exit_status = -1;
	if (program_running)
		*program_running = cfg->program != NULL;
	if (top_model__init(&t.m))
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = top_feed__open(&cfg->feed, &t.m, &t.feed, err);
	if (rc) {
		top_model__exit(&t.m);
		return rc;
	}
	/* the character set only: numbers keep their C formatting */
	setlocale(LC_CTYPE, "");
	t.ui.utf8 = terminal_is_utf8();
	/* newterm, unlike initscr, returns instead of exiting when TERM is unusable */
	screen = newterm(NULL, stdout, stdin);
	if (!screen) {
		rc = prof_error__set(err, PROF_E_USAGE, "cannot use the terminal (TERM=%s)",
				     getenv("TERM") ? getenv("TERM") : "unset");
		goto out;
	}
	set_term(screen);
	cbreak(); /* not raw(): Ctrl-C stays a signal, and reaches the program */
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	timeout(KEY_WAIT_MS);
	loop(&t);
	endwin();
	delscreen(screen);
	if (program_running)
		*program_running = cfg->program && !t.program_ended;
	if (top_feed__problem(t.feed)) {
		*err = *top_feed__problem(t.feed);
		rc = TOP_FILE_LOST;
	}
out:
	nvml__close(t.nvml);
	for (int i = 0; i < TOP_MAX_GPUS; i++)
		nvml__close(t.gpu_nvml[i]);
	top_view__exit(&t.kernels);
	top_view__exit(&t.ranges);
	top_feed__close(t.feed);
	top_model__exit(&t.m);
	return rc;
}
