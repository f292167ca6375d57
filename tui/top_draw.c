/* top_draw.c - perfkit top's screen in ncurses (top_draw.h). Every string
 * drawn from a capture was sanitised when it entered the model; here it is
 * only cut to its column with text__fit. */
#include "top_draw.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "prof/units.h"
#include "sparkline.h"
#include "text_width.h"

#define LINE_MAX_BYTES 4096

static bool utf8_mode;

/* text at (y, x) in at most w columns */
static void put(int y, int x, int w, const char *text, enum text_cut cut)
{
	char buf[LINE_MAX_BYTES];

	if (w <= 0)
		return;
	text__fit(buf, sizeof buf, text, w, cut, utf8_mode);
	mvaddstr(y, x, buf);
}

/* A panel's title line: a rule with the title on it. */
static void title(const struct top_rect *r, const char *text)
{
	char buf[320];

	/* a plain '-' where the terminal is not UTF-8: some show ACS lines as letters */
	mvhline(r->y, r->x, utf8_mode ? ACS_HLINE : '-', r->w);
	snprintf(buf, sizeof buf, " %s ", text);
	attron(A_BOLD);
	put(r->y, r->x + 1, r->w - 2, buf, TEXT_KEEP_HEAD);
	attroff(A_BOLD);
}

/* ---- header ------------------------------------------------------------------ */

static void na_or(char *buf, size_t cap, bool valid, const char *value)
{
	snprintf(buf, cap, "%s", valid ? value : "N/A");
}

static void draw_header(const struct top_model *m, const struct top_ui *ui,
			const struct top_rect *r)
{
	char line[LINE_MAX_BYTES], a[64], b[64], c[64], d[64], e[64], f[64], v[64], used[24], total[24];
	char windows[160], sep[4] = "";
	const struct nvml_sample *g = &m->gpu;
	const char *gpu = m->gpu_name[0] ? m->gpu_name : (g->name_valid ? g->name : "unknown");
	char procs[32] = "";

	/* seconds with decimals for a short run, a clock for a long one */
	if (m->elapsed_ns < 60000000000LL)
		prof_units__duration(a, sizeof a, m->elapsed_ns, PROF_UNITS_COMPACT);
	else
		prof_units__clock(a, sizeof a, m->elapsed_ns);
	if (m->processes > 1)
		snprintf(procs, sizeof procs, " (+%d processes)", m->processes - 1);
	if (m->pid)
		snprintf(b, sizeof b, "%u", m->pid);
	else
		snprintf(b, sizeof b, "N/A");
	snprintf(line, sizeof line, " perfkit top | %s | pid %s%s | elapsed %s | GPU %s",
		 m->program[0] ? m->program : "unknown program", b, procs, a, gpu);
	attron(A_REVERSE);
	mvhline(r->y, r->x, ' ', r->w);
	put(r->y, r->x, r->w, line, TEXT_KEEP_HEAD);
	attroff(A_REVERSE);

	/* NVML: each value only when valid; a replayed capture has none */
	snprintf(v, sizeof v, "%u%%", g->util_percent);
	na_or(a, sizeof a, g->util_valid, v);
	prof_units__bytes(used, sizeof used, (int64_t)g->memory_used_bytes, PROF_UNITS_COMPACT);
	prof_units__bytes(total, sizeof total, (int64_t)g->memory_total_bytes, PROF_UNITS_COMPACT);
	snprintf(v, sizeof v, "%s / %s", used, total);
	na_or(b, sizeof b, g->memory_valid, v);
	snprintf(v, sizeof v, "%.0f W", g->power_mw / 1000.0);
	na_or(c, sizeof c, g->power_valid, v);
	snprintf(v, sizeof v, "%u MHz", g->sm_clock_mhz);
	na_or(d, sizeof d, g->sm_clock_valid, v);
	snprintf(line, sizeof line, " GPU util %s | memory used %s | power %s | SM clock %s%s", a,
		 b, c, d, m->gpu_live ? "" : "  (live metrics only while capturing)");
	put(r->y + 1, r->x, r->w, line, TEXT_KEEP_HEAD);

	prof_units__count(a, sizeof a, (double)m->kernel_count);
	prof_units__duration(b, sizeof b, m->kernel_total_ns, PROF_UNITS_COMPACT);
	prof_units__count(c, sizeof c, (double)m->copy_count);
	prof_units__bytes(d, sizeof d, m->copy_bytes, PROF_UNITS_COMPACT);
	prof_units__bytes(e, sizeof e, m->device_memory_bytes > 0 ? m->device_memory_bytes : 0,
			  PROF_UNITS_COMPACT);
	/* rows with an impossible span are in no total: said, as the reports say it */
	snprintf(f, sizeof f, " | %lld left out (impossible span)", (long long)m->rows_left_out);
	/* whether the capture records now (capture windows) */
	top_windows__text(&m->windows, windows, sizeof windows);
	if (windows[0])
		snprintf(sep, sizeof sep, " | ");
	snprintf(line, sizeof line,
		 " kernels %s (%s) | copies %s (%s) | device memory in use %s | dropped records %lld%s | %s%s%s%s",
		 a, b, c, d, e, (long long)m->dropped_records, m->rows_left_out > 0 ? f : "", windows, sep,
		 ui->status, ui->paused ? " | PAUSED" : "");
	if (m->dropped_records > 0 || m->rows_left_out > 0)
		attron(A_BOLD);
	put(r->y + 2, r->x, r->w, line, TEXT_KEEP_HEAD);
	attroff(A_BOLD);
}

/* ---- rates ---------------------------------------------------------------------- */

static void draw_rate(const struct top_model *m, const struct top_layout *l, int row,
		      const char *label, const struct spark_ring *ring, bool bytes)
{
	int64_t values[SPARK_RING_LEN], last = top_model__last_bucket(m);
	char num[40], line[128], spark[SPARK_RING_LEN * 4 + 1];
	int y = l->rates.y + row;

	if (bytes) {
		prof_units__bytes(num, sizeof num, spark_ring__get(ring, last), PROF_UNITS_COMPACT);
		strcat(num, "/s");
	} else {
		prof_units__count(num, sizeof num, (double)spark_ring__get(ring, last));
	}
	snprintf(line, sizeof line, " %-12s %9s", label, num);
	put(y, l->rates.x, l->spark_x, line, TEXT_KEEP_HEAD);
	if (l->spark_w <= 0)
		return;
	spark_ring__window(ring, last, l->spark_w, values);
	sparkline__render(values, l->spark_w, utf8_mode, spark, sizeof spark);
	attron(A_BOLD);
	mvaddstr(y, l->rates.x + l->spark_x, spark);
	attroff(A_BOLD);
}

/* ---- GPUs ------------------------------------------------------------------------ */

/* One row per GPU: what the capture saw run on it in the last second and
 * in all, and NVML's live metrics for it (N/A where there are none). */
static void draw_gpus(const struct top_model *m, const struct top_layout *l)
{
	const struct top_rect *r = &l->gpus;
	char line[LINE_MAX_BYTES], t[192], late[128];

	/* the rank the others wait for, beside what each GPU did */
	top_late_rank__say(&m->late, late, sizeof late);
	snprintf(t, sizeof t, "GPUs (%d)%s%s", m->ngpus, late[0] ? " | " : "", late);
	title(r, t);
	for (int i = 0; i < m->ngpus && i < l->gpu_rows; i++) {
		const struct top_gpu *g = &m->gpus[i];
		char kc[32], kt[32], cc[32], cb[32], used[32], total[32], util[16], mem[80], power[16];
		char name[128];

		prof_units__count(kc, sizeof kc, (double)g->kernel_count);
		prof_units__duration(kt, sizeof kt, g->kernel_ns, PROF_UNITS_COMPACT);
		prof_units__count(cc, sizeof cc, (double)g->copy_count);
		prof_units__bytes(cb, sizeof cb, g->copy_bytes, PROF_UNITS_COMPACT);
		snprintf(util, sizeof util, "%u%%", g->live.util_percent);
		prof_units__bytes(used, sizeof used, (int64_t)g->live.memory_used_bytes, PROF_UNITS_COMPACT);
		prof_units__bytes(total, sizeof total, (int64_t)g->live.memory_total_bytes, PROF_UNITS_COMPACT);
		snprintf(mem, sizeof mem, "%s / %s", used, total);
		snprintf(power, sizeof power, "%.0f W", g->live.power_mw / 1000.0);
		top_gpu__label(m, g, name, sizeof name);
		snprintf(line, sizeof line,
			 " GPU %-2d %-24.24s busy %3.0f%% | kernels %s (%s) | copies %s (%s) | util %s"
			 " | memory %s | power %s",
			 g->device, name, top_gpu__busy_percent(m, g), kc, kt,
			 cc, cb, g->live.util_valid ? util : "N/A", g->live.memory_valid ? mem : "N/A",
			 g->live.power_valid ? power : "N/A");
		put(r->y + 1 + i, r->x, r->w, line, TEXT_KEEP_HEAD);
	}
}

/* A sampled GPU metric's row: its mean over the last whole second, and its
 * history against 100%. */
static void draw_gpu_metric(const struct top_model *m, const struct top_layout *l, int row)
{
	int64_t values[SPARK_RING_LEN], last = top_model__last_bucket(m), full;
	char label[32], value[32], line[128], spark[SPARK_RING_LEN * 4 + 1];
	int y = l->rates.y + TOP_RATES_ROWS + row;

	top_gpu_metrics__row(&m->gpu_metrics, row, last, label, sizeof label, value, sizeof value);
	snprintf(line, sizeof line, " %-12s %9s", label, value);
	put(y, l->rates.x, l->spark_x, line, TEXT_KEEP_HEAD);
	if (l->spark_w <= 0)
		return;
	full = top_gpu_metrics__window(&m->gpu_metrics, row, last, l->spark_w, values);
	sparkline__render_max(values, l->spark_w, full, utf8_mode, spark, sizeof spark);
	attron(A_BOLD);
	mvaddstr(y, l->rates.x + l->spark_x, spark);
	attroff(A_BOLD);
}

static void draw_rates(const struct top_model *m, const struct top_layout *l)
{
	char t[256], late[128] = "";

	/* ranks that share one GPU have no GPU panel: the late one is said here */
	if (!l->gpus.h)
		top_late_rank__say(&m->late, late, sizeof late);
	snprintf(t, sizeof t, "Rates per second (history: last %d s)%s%s%s", l->spark_w,
		 l->metric_rows ? "; GPU metrics as sampled" : "", late[0] ? " | " : "", late);
	title(&l->rates, t);
	draw_rate(m, l, 1, "kernels/s", &m->kernels_hist, false);
	draw_rate(m, l, 2, "copies/s", &m->copies_hist, false);
	draw_rate(m, l, 3, "copy bytes/s", &m->copy_bytes_hist, true);
	for (int row = 0; row < l->metric_rows; row++)
		draw_gpu_metric(m, l, row);
}

/* ---- kernels -------------------------------------------------------------------- */

static const char *const sort_names[TOP_SORT__COUNT] = {
	[TOP_SORT_TOTAL] = "total", [TOP_SORT_COUNT] = "count", [TOP_SORT_AVG] = "average",
	[TOP_SORT_SHARE] = "share", [TOP_SORT_NAME] = "name",
};

int top_draw__page_rows(const struct top_layout *l)
{
	return l->kernel_rows > 0 ? l->kernel_rows : 1;
}

/* A column heading, marked when the table is sorted by it. */
static void heading(char *buf, size_t cap, const char *name, int width, bool left,
		    const struct top_ui *ui, enum top_sort col)
{
	char marked[32];

	snprintf(marked, sizeof marked, "%s%s", name,
		 ui->sort != col ? "" : ui->ascending ? (utf8_mode ? "\u25b2" : "^")
						      : (utf8_mode ? "\u25bc" : "v"));
	/* the arrow is one column but up to three bytes */
	if (left)
		snprintf(buf, cap, "%s", marked);
	else
		snprintf(buf, cap, "%*s%s", width - text__width(marked, utf8_mode), "", marked);
}

static void draw_kernels(const struct top_model *m, const struct top_view *v,
			 const struct top_ui *ui, const struct top_layout *l)
{
	const struct top_rect *r = &l->kernels;
	char t[256], h[5][48], line[LINE_MAX_BYTES];
	int y = r->y + 2;

	snprintf(t, sizeof t, "Kernels: %zu of %zu names | sort: %s %s%s%s%s", v->n,
		 m->kernel_names.n - (m->kernels[0].count ? 0 : 1), sort_names[ui->sort],
		 ui->ascending ? "ascending" : "descending", ui->filter[0] ? " | filter \"" : "",
		 ui->filter, ui->filter[0] ? "\"" : "");
	title(r, t);
	heading(h[0], sizeof h[0], "Share", 7, false, ui, TOP_SORT_SHARE);
	heading(h[1], sizeof h[1], "Total", 9, false, ui, TOP_SORT_TOTAL);
	heading(h[2], sizeof h[2], "Count", 9, false, ui, TOP_SORT_COUNT);
	heading(h[3], sizeof h[3], "Avg", 9, false, ui, TOP_SORT_AVG);
	heading(h[4], sizeof h[4], "Name", 0, true, ui, TOP_SORT_NAME);
	snprintf(line, sizeof line, "%s %s %s %s  %s", h[0], h[1], h[2], h[3], h[4]);
	attron(A_UNDERLINE);
	put(r->y + 1, r->x, r->w, line, TEXT_KEEP_HEAD);
	attroff(A_UNDERLINE);
	if (!v->n) {
		put(y, r->x + 2, r->w - 2,
		    ui->filter[0] ? "(no kernel name matches the filter)" : "(no kernels yet)",
		    TEXT_KEEP_HEAD);
		return;
	}
	for (int row = 0; row < l->kernel_rows && (size_t)(ui->scroll + row) < v->n; row++) {
		int32_t i = v->rows[ui->scroll + row];
		const struct top_kernel_stat *k = &m->kernels[i];
		char total[32], count[32], avg[32], prefix[128];
		double share = m->kernel_total_ns ? 100.0 * (double)k->total_ns /
							    (double)m->kernel_total_ns : 0;

		prof_units__duration(total, sizeof total, k->total_ns, PROF_UNITS_COMPACT);
		prof_units__count(count, sizeof count, (double)k->count);
		prof_units__duration(avg, sizeof avg, k->count ? k->total_ns / k->count : 0, PROF_UNITS_COMPACT);
		snprintf(prefix, sizeof prefix, "%6.1f%% %9s %9s %9s  ", share, total, count, avg);
		mvaddstr(y + row, r->x, prefix);
		put(y + row, r->x + (int)strlen(prefix), r->w - (int)strlen(prefix),
		    name_table__name(&m->kernel_names, i), TEXT_KEEP_HEAD);
	}
}

/* ---- NVTX ----------------------------------------------------------------------- */

static void draw_stacks(const struct top_model *m, const struct top_rect *r)
{
	char line[LINE_MAX_BYTES], who[96];
	int y = r->y + 1, rows = r->h - 1, active = 0, shown = 0;

	title(r, m->nvtx_mode == TOP_NVTX_AT_CLOCK ? "NVTX stack per thread (open now)"
						   : "NVTX stack per thread (last completed)");
	for (size_t i = 0; i < m->n_threads; i++)
		active += m->threads[i].depth > 0;
	if (!active) {
		put(y, r->x + 1, r->w - 2, "(no open NVTX ranges)", TEXT_KEEP_HEAD);
		return;
	}
	/* more threads than rows: the last row says how many are left out */
	if (active > rows)
		rows--;
	for (size_t i = 0; i < m->n_threads && shown < rows; i++) {
		const struct top_thread *t = &m->threads[i];
		size_t used;

		if (!t->depth)
			continue;
		int who_w;

		snprintf(who, sizeof who, "%u%s%s%s: ", (unsigned)(t->global_tid & 0xFFFFFF),
			 t->name[0] ? " (" : "", t->name, t->name[0] ? ")" : "");
		who_w = text__width(who, utf8_mode);
		if (who_w > r->w / 3)
			who_w = r->w / 3;
		put(y + shown, r->x + 1, who_w, who, TEXT_KEEP_HEAD);
		used = 0;
		line[0] = '\0';
		for (int d = 0; d < t->depth && used < sizeof line - 1; d++)
			used += (size_t)snprintf(line + used, sizeof line - used, "%s%s",
						 d ? " > " : "",
						 name_table__name(&m->range_names, t->frame[d].range));
		/* the innermost range is what the thread does now: keep the tail */
		put(y + shown, r->x + 1 + who_w, r->w - 2 - who_w, line, TEXT_KEEP_TAIL);
		shown++;
	}
	if (active > shown) {
		snprintf(line, sizeof line, "(+%d more threads)", active - shown);
		put(y + shown, r->x + 1, r->w - 2, line, TEXT_KEEP_HEAD);
	}
}

static void draw_ranges(const struct top_model *m, const struct top_view *v,
			const struct top_rect *r)
{
	char line[128];

	title(r, "Busiest NVTX ranges (total time)");
	if (r->h < 2)
		return;
	attron(A_UNDERLINE);
	put(r->y + 1, r->x + 1, r->w - 2, "    Total     Count       Avg  Name", TEXT_KEEP_HEAD);
	attroff(A_UNDERLINE);
	if (!v->n)
		put(r->y + 2, r->x + 1, r->w - 2, "(no NVTX ranges yet)", TEXT_KEEP_HEAD);
	for (int row = 0; row < r->h - 2 && (size_t)row < v->n; row++) {
		const struct top_range_stat *s = &m->ranges[v->rows[row]];
		char total[32], count[32], avg[32];

		prof_units__duration(total, sizeof total, s->total_ns, PROF_UNITS_COMPACT);
		prof_units__count(count, sizeof count, (double)s->count);
		prof_units__duration(avg, sizeof avg, s->count ? s->total_ns / s->count : 0, PROF_UNITS_COMPACT);
		snprintf(line, sizeof line, "%9s %9s %9s  ", total, count, avg);
		put(r->y + 2 + row, r->x + 1, r->w - 2, line, TEXT_KEEP_HEAD);
		put(r->y + 2 + row, r->x + 1 + (int)strlen(line), r->w - 2 - (int)strlen(line),
		    name_table__name(&m->range_names, v->rows[row]), TEXT_KEEP_HEAD);
	}
}

/* ---- footer, help, too small ------------------------------------------------------- */

static void draw_footer(const struct top_model *m, const struct top_ui *ui,
			const struct top_rect *r)
{
	char line[LINE_MAX_BYTES];

	attron(A_REVERSE);
	mvhline(r->y, r->x, ' ', r->w);
	if (ui->editing) {
		snprintf(line, sizeof line, " filter: %s_   (Enter applies, Esc cancels)", ui->edit);
	} else if (m->error[0]) {
		snprintf(line, sizeof line, " error: %s", m->error);
	} else {
		snprintf(line, sizeof line,
			 " q quit  s/S sort column/order  p %s  / filter  %s PgUp/PgDn scroll  h help",
			 ui->paused ? "resume" : "pause", utf8_mode ? "\u2191\u2193" : "arrows");
	}
	put(r->y, r->x, r->w, line, TEXT_KEEP_HEAD);
	attroff(A_REVERSE);
}

static const char *const help_lines[] = {
	"perfkit top - keys",
	"",
	"  q          quit (a program top runs keeps running; top waits for it)",
	"  s          sort the kernel table by the next column:",
	"             total, count, average, share, name",
	"  S          reverse the sort order",
	"  p          pause / resume (the replay clock stops too)",
	"  /          filter kernels by name (case-insensitive); empty clears",
	"  Up/Down    scroll the kernel table by a row",
	"  PgUp/PgDn  scroll it by a page; Home/End to either end",
	"  h or ?     this help; any key closes it",
	"",
	"Rates count events by their capture time, one bucket per second.",
	"NVML metrics (util, memory, power, SM clock) show N/A where the",
	"driver or GPU cannot report them, and for a capture not live here.",
	"A capture made with perfkit run --gpu-metrics adds SM active, tensor",
	"pipe and DRAM read + write (% of peak, each second's mean).",
};

static void draw_help(const struct top_layout *l)
{
	int n = (int)(sizeof help_lines / sizeof help_lines[0]);

	for (int i = 0; i < n && i < l->rows; i++) {
		if (i == 0)
			attron(A_BOLD);
		put(i + 1, 2, l->cols - 4, help_lines[i], TEXT_KEEP_HEAD);
		attroff(A_BOLD);
	}
}

static void draw_too_small(const struct top_layout *l)
{
	char line[128];
	int w;

	snprintf(line, sizeof line, "terminal too small (%dx%d); perfkit top needs %dx%d",
		 l->cols, l->rows, TOP_MIN_COLS, TOP_MIN_ROWS);
	w = (int)strlen(line);
	put(l->rows / 2, w < l->cols ? (l->cols - w) / 2 : 0, l->cols, line, TEXT_KEEP_HEAD);
	if (l->rows / 2 + 1 < l->rows)
		put(l->rows / 2 + 1, 0, l->cols, "q quits", TEXT_KEEP_HEAD);
}

void top_draw__frame(const struct top_model *m, const struct top_view *kernels,
		     const struct top_view *ranges, const struct top_ui *ui,
		     const struct top_layout *l)
{
	utf8_mode = ui->utf8;
	erase();
	if (l->too_small) {
		draw_too_small(l);
	} else if (ui->help) {
		draw_help(l);
	} else {
		draw_header(m, ui, &l->header);
		draw_rates(m, l);
		if (l->gpus.h)
			draw_gpus(m, l);
		draw_kernels(m, kernels, ui, l);
		if (l->stacks.h)
			draw_stacks(m, &l->stacks);
		if (l->ranges.h)
			draw_ranges(m, ranges, &l->ranges);
		draw_footer(m, ui, &l->footer);
	}
	refresh();
}
