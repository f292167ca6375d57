/* html_report.c - the HTML report page (see html_report.h): the document
 * around the sections and the built-in sections; the services sections
 * use (the table sink, notes, plots through gnuplot) are html_page.c. */
#include "html_report.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export_window.h"
#include "html_page_impl.h"
#include "plots_gnuplot.h"
#include "prof/escape.h"
#include "prof/tables.h"
#include "prof/temp_files.h"
#include "sink/sink.h"
#include "model/call_census.h"
#include "model/groups.h"
#include "model/python_stacks.h"
#include "model/sql.h"
#include "registry/registry.h"
#include "summary/summary.h"
#include "prof/error.h"

/* ---- built-in sections ------------------------------------------------- */

static int run_reports(struct html_page *p, const char *const *names, size_t n,
		       struct prof_error *err)
{
	for (size_t i = 0; i < n; i++) {
		int rc = registry__run(names[i], p->store, p->tables, err);

		if (rc < 0)
			return rc;
	}
	return 0;
}

static int render_overview(struct html_page *p, struct prof_error *err)
{
	const struct sum_overview *o = html_page__overview(p);

	if (!prof_store__is_finished(p->store))
		html_page__note(p, "This capture is still being written (or its writer stopped "
				   "early): the report covers what was flushed so far.");
	return o ? sum_overview__emit(o, p->tables, err) : summary__overview(p->store, p->tables, err);
}

static int render_tables(struct html_page *p, struct prof_error *err)
{
	static const char *const names[] = { "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum" };
	const struct sum_overview *o = html_page__overview(p);
	/* the kernels' groups are the overview's */
	int rc = o ? sum_kernel_groups__emit(&o->kernels, p->tables, err)
		   : registry__run("cuda_gpu_kern_sum", p->store, p->tables, err);

	return rc < 0 ? rc : run_reports(p, names, sizeof names / sizeof names[0], err);
}

/* The CUDA API calls: a long table, after what it explains. */
static int render_api(struct html_page *p, struct prof_error *err)
{
	static const char *const names[] = { "cuda_api_sum" };

	return run_reports(p, names, 1, err);
}

static int render_nvtx(struct html_page *p, struct prof_error *err)
{
	static const char *const names[] = { "nvtx_kern_sum" };
	const struct sum_overview *o;
	int rc;

	if (!prof_store__has_table(p->store, PROF_T_NVTX)) {
		html_page__note(p, "The capture has no NVTX ranges (annotate the program with "
				   "nvtxRangePush/Pop to get a breakdown by phase).");
		return 0;
	}
	/* the ranges' groups are the overview's */
	o = html_page__overview(p);
	rc = o ? sum_nvtx_groups__emit(&o->ranges, p->tables, err)
	       : registry__run("nvtx_sum", p->store, p->tables, err);
	return rc < 0 ? rc : run_reports(p, names, 1, err);
}

/* Python's side (perfkit run --pytorch=modules, --python-sampling): which
 * module and which line the step's time goes to. */
static bool has_python(struct prof_store *s)
{
	struct py_capture pc;
	struct prof_error err;

	return py_capture__read(s, &pc, &err) == 0 && (pc.has_modules || pc.has_samples);
}

static int render_python(struct html_page *p, struct prof_error *err)
{
	static const char *const names[] = { "module_sum", "python_sum" };

	return run_reports(p, names, sizeof names / sizeof names[0], err);
}

static int render_flame(struct html_page *p, struct prof_error *err)
{
	struct folded_options fo = { .weight = p->o->flame_weight };
	bool gpu = fo.weight == FOLDED_WEIGHT_GPU;
	struct folded_stacks st;
	char line[256];
	int rc;

	rc = folded__collect(p->store, &fo, &st, err);
	if (rc < 0)
		return rc;
	if (st.total_ns == 0) {
		html_page__note(p, gpu ? "No kernel time to draw." : "No API time to draw.");
		folded_stacks__exit(&st);
		return 0;
	}
	snprintf(line, sizeof line, "%s by process, thread, NVTX ranges open at the call, API "
		 "call%s: %zu unique stacks. Hover over a frame for its time; "
		 "perfkit report --format=folded%s writes these stacks for flamegraph.pl or "
		 "speedscope.", gpu ? "Kernel time" : "CUDA API time", gpu ? " and kernel" : "",
		 st.n, gpu ? "" : " --weight=api");
	fputs("<figure class=\"flame\">\n", p->out);
	rc = flamegraph__write_svg(&st, gpu ? "all kernels" : "all API calls", p->out);
	fputs("<figcaption>", p->out);
	prof_fputs_html(p->out, line);
	fputs("</figcaption>\n</figure>\n", p->out);
	folded_stacks__exit(&st);
	if (rc < 0)
		return prof_error__set(err, rc, "cannot write the flame graph");
	return 0;
}

static const struct html_section builtin_sections[] = {
	{ "overview", "Run", NULL, render_overview, true, false, true },
	/* the plots over time cover the loop the diagnosis found */
	{ "plots", "Plots", NULL, html_plots__render, false, false, false },
	{ "flame", "Flame graph", NULL, render_flame, true, false, true },
	{ "summaries", "Kernels and copies", NULL, render_tables, true, false, true },
	{ "nvtx", "NVTX breakdown", NULL, render_nvtx, true, false, true },
	{ "python", "PyTorch modules and Python lines", has_python, render_python, true, false, true },
	{ "api", "CUDA API calls", NULL, render_api, true, false, true },
};
#define NBUILTIN (sizeof builtin_sections / sizeof builtin_sections[0])

/* The page reads top-down: the answer, one step that shows it, the job's
 * ranks, the plots, the tables, then the rest. Sections not named here
 * (a caller's own) come last, in their order. */
static const char *const page_order[] = {
	"findings", "step", "ranks", "plots", "python", "summaries", "gpu-idle", "nvtx", "flame",
	"overview", "api", "gpu-metrics", "kernel-roofline",
};
#define NORDER (sizeof page_order / sizeof page_order[0])

static size_t place_of(const struct html_section *sec)
{
	for (size_t i = 0; i < NORDER; i++)
		if (!strcmp(page_order[i], sec->id))
			return i;
	return NORDER;
}

/* Orders list by page_order, keeping the order of equals (n is small). */
static void order_sections(const struct html_section **list, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		const struct html_section *x = list[i];
		size_t j = i;

		for (; j > 0 && place_of(list[j - 1]) > place_of(x); j--)
			list[j] = list[j - 1];
		list[j] = x;
	}
}

/* ---- the document ------------------------------------------------------- */

static const char page_style[] =
	"body{font:14px/1.45 'DejaVu Sans',Verdana,sans-serif;color:#1d1d1f;margin:0;"
	"background:#f6f7f9}\n"
	"header{background:#20324a;color:#fff;padding:14px 28px}\n"
	"header h1{margin:0;font-size:22px}header p{margin:4px 0 0;opacity:.85;"
	"word-break:break-all}\n"
	"nav{position:sticky;top:0;background:#fff;border-bottom:1px solid #d8dce2;"
	"padding:8px 28px;z-index:1}\n"
	"nav a{margin-right:18px;color:#20518f;text-decoration:none}\n"
	"main{max-width:1280px;margin:0 auto;padding:8px 28px 40px}\n"
	"section{background:#fff;border:1px solid #d8dce2;border-radius:6px;margin:18px 0;"
	"padding:4px 18px 14px}\n"
	"h2{font-size:19px;border-bottom:1px solid #e4e7eb;padding-bottom:4px}\n"
	"h3{font-size:15px;margin:18px 0 6px}\n"
	"div.table{overflow-x:auto}\n"
	"table{border-collapse:collapse;font-size:13px;margin-bottom:8px}\n"
	"th,td{border:1px solid #d8dce2;padding:3px 8px;text-align:left;vertical-align:top}\n"
	"th{background:#eef1f5;position:sticky;top:0}\n"
	"td{max-width:60em;overflow-wrap:anywhere}\n"
	".num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"tbody tr:nth-child(even){background:#f8f9fb}\n"
	"td.empty,td.more{color:#6b7280;font-style:italic}\n"
	"p.note{background:#fff7e0;border-left:4px solid #e0a800;padding:6px 10px}\n"
	"figure{margin:12px 0}figcaption{color:#4b5563;font-size:13px;margin-top:4px}\n"
	"figure svg{width:100%;height:auto;display:block}\n"
	"svg.flame rect{stroke:#fff;stroke-width:.5}\n"
	"svg.flame g:hover rect{stroke:#000;stroke-width:1}\n"
	"svg.flame text{pointer-events:none;fill:#000}\n"
	"td.symbol,span.symbol{cursor:help;text-decoration:underline dotted #9aa3ad}\n"
	"p.verdict{font-size:16px;margin:10px 0 6px}\n"
	"svg.budget{width:100%;height:28px;display:block;border-radius:3px}\n"
	"ul.keys{list-style:none;padding:0;margin:6px 0 12px;font-size:12.5px;display:flex;"
	"flex-wrap:wrap;gap:4px 16px}\n"
	"span.swatch{display:inline-block;width:11px;height:11px;margin-right:5px;"
	"vertical-align:-1px;border:1px solid #0003}\n"
	"span.swatch.path{background:#111;height:4px;vertical-align:3px;border:0}\n"
	"article.finding{border:1px solid #d8dce2;border-left:5px solid #9aa3ad;border-radius:4px;"
	"margin:12px 0;padding:2px 14px 6px}\n"
	"article.finding h3{margin:10px 0 4px}article.finding p{margin:6px 0}\n"
	"article.sev-high{border-left-color:#d62728}article.sev-medium{border-left-color:#f58518}\n"
	"article.sev-low{border-left-color:#e0c000}\n"
	"span.sev{font-size:11px;text-transform:uppercase;background:#eef1f5;border-radius:3px;"
	"padding:1px 5px;vertical-align:2px;margin-right:4px}\n"
	"p.share{color:#4b5563}p.change{background:#eef6ee;padding:6px 10px;border-radius:3px}\n"
	"ul.offenders{font-size:13px;margin:4px 0;overflow-wrap:anywhere}\n"
	"svg.step text,svg.bars text,svg.ranks text{font-size:11px;fill:#1d1d1f}\n"
	"svg.step .lane{fill:#fff}svg.step .lane.odd{fill:#f3f5f8}\n"
	"svg.step .lane-label text{font-size:12px;fill:#374151}\n"
	"svg.step .on-dark text{fill:#fff}svg.step rect{stroke:#fff;stroke-width:.3}\n"
	"svg .axis line{stroke:#6b7280}svg .axis line.grid{stroke:#d8dce2;stroke-dasharray:2 3}\n"
	"svg .axis text{font-size:11px;fill:#4b5563;text-anchor:middle}\n"
	"svg.step g.path line{stroke:#111;stroke-width:3;stroke-linecap:round;opacity:.8}\n"
	"svg.step g.path line.hop{stroke-width:1.2;stroke-dasharray:3 2}\n"
	"svg.ranks rect.comm{fill:#72b7b2}svg.ranks rect.wait{fill:#e45756}svg.ranks rect.step{fill:#9ecae9;stroke:#2f4f6f;"
	"stroke-width:.6}svg.ranks rect.step.odd{fill:#c6dbef}\n"
	"svg.ranks .late text.rank{font-weight:bold;fill:#b91c1c}\n"
	"p.straggler{font-size:15px;background:#fdecec;border-left:4px solid #d62728;padding:6px 10px}\n"
	"footer{color:#6b7280;font-size:12px;text-align:center;padding:10px}\n";

static void write_head(struct html_page *p, const struct html_section *const *sections, size_t n)
{
	FILE *f = p->out;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      /* nothing may load or run: the page is data, whatever the capture holds */
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<link rel=\"icon\" href=\"data:,\">\n<title>perfkit report: ", f);
	prof_fputs_html(f, prof_store__path(p->store));
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n"
		"<h1>perfkit report</h1>\n<p>", page_style);
	prof_fputs_html(f, prof_store__path(p->store));
	fputs(prof_store__kind(p->store) == PROF_STORE_NSYS ? " (Nsight Systems SQLite export)"
							     : " (perfkit capture)", f);
	fputs("</p>\n</header>\n<nav>", f);
	for (size_t i = 0; i < n; i++) {
		fputs("<a href=\"#", f);
		prof_fputs_html(f, sections[i]->id);
		fputs("\">", f);
		prof_fputs_html(f, sections[i]->title);
		fputs("</a>", f);
	}
	fputs("</nav>\n<main>\n", f);
}

static int write_section(struct html_page *p, const struct html_section *sec,
			 struct prof_error *err)
{
	int rc;

	fputs("<section id=\"", p->out);
	prof_fputs_html(p->out, sec->id);
	fputs("\">\n<h2>", p->out);
	prof_fputs_html(p->out, sec->title);
	fputs("</h2>\n", p->out);
	rc = sec->render(p, err);
	/* the sink closes a table left open by a section that stopped early */
	p->tables->end(p->tables);
	fputs("</section>\n", p->out);
	return rc;
}

/* One section rendered into a buffer of its own, to be written in its
 * place in the page later. */
struct rendered {
	char *text;
	size_t len;
	int rc;
	struct prof_error err;
};

static void render_aside(struct html_page *p, const struct html_section *sec, struct rendered *r)
{
	FILE *out = p->out, *f = open_memstream(&r->text, &r->len);

	if (!f) {
		r->rc = prof_error__set(&r->err, PROF_E_NOMEM, "out of memory");
		return;
	}
	p->out = p->tables->out = f;
	r->rc = write_section(p, sec, &r->err);
	p->out = p->tables->out = out;
	if (fclose(f) != 0 && r->rc >= 0)
		r->rc = prof_error__set(&r->err, PROF_E_NOMEM, "out of memory");
}

static const struct rpt_html_options table_opts = { .heading_level = 3, .max_rows = HTML_MAX_TABLE_ROWS,
						     .short_names = true };

/* Whether sec renders beside the others after the diagnosis. */
static bool on_timeline(const struct html_section *sec)
{
	return !sec->without_diagnosis && sec->on_timeline;
}

/* Whether sec may render beside the page's thread before the diagnosis's
 * sections, on the diagnosis's connection once it is done. */
static bool movable(const struct html_section *sec)
{
	return sec->without_diagnosis && sec->any_connection;
}

/* Section i taken to render by the caller (taken[i] was false): those
 * that render before the diagnosis's go to whichever thread comes to them
 * first. */
static bool claim(atomic_bool *taken, size_t i)
{
	return !atomic_exchange(&taken[i], true);
}

/* The sections on the diagnosis's timeline (on_timeline), rendered on a
 * thread of their own through a copy of the page: the diagnosis's
 * connection and a table sink of its own. The copy's timeline is the
 * page's, which no other section reads meanwhile; it is given back whole
 * when they are done. */
struct beside {
	pthread_t thread;
	struct html_page page;
	const struct html_section *const *list;
	size_t n;
	struct rendered *r;
};

static void *render_beside(void *arg)
{
	struct beside *b = arg;

	for (size_t i = 0; i < b->n; i++)
		if (on_timeline(b->list[i]))
			render_aside(&b->page, b->list[i], &b->r[i]);
	return NULL;
}

/* run(arg) started on a thread of its own with copy, a copy of p for it:
 * store, and a table sink of its own; false when none could start. */
static bool start_on_copy(pthread_t *thread, void *(*run)(void *), void *arg, struct html_page *copy,
			  const struct html_page *p, struct prof_store *store)
{
	*copy = *p;
	copy->store = store;
	copy->tables = rpt_sink_html__new(p->out, &table_opts);
	if (!copy->tables)
		return false;
	if (pthread_create(thread, NULL, run, arg) != 0) {
		rpt_sink__delete(copy->tables);
		return false;
	}
	return true;
}

/* Starts them on the diagnosis's connection store; false when no thread
 * could start (they render in turn with the others). */
static bool start_beside(struct beside *b, struct html_page *p, struct prof_store *store,
			 const struct html_section *const *list, size_t n, struct rendered *r)
{
	size_t on = 0;

	for (size_t i = 0; i < n; i++)
		on += on_timeline(list[i]);
	if (!store || !on)
		return false;
	*b = (struct beside){ .list = list, .n = n, .r = r };
	return start_on_copy(&b->thread, render_beside, b, &b->page, p, store);
}

/* The sections before the diagnosis that may move (movable), those the
 * page's thread has not begun once the diagnosis is done, rendered on a
 * thread that waits for that through a copy of the page on the
 * diagnosis's connection (which nothing else reads until the page's
 * thread takes the diagnosis, after this thread ends). over: the page's
 * thread has begun all of them, and the thread waits no more. */
struct early {
	pthread_t thread;
	struct html_page page;
	struct html_apart *apart;
	const struct html_section *const *list;
	size_t n;
	struct rendered *r;
	atomic_bool *taken; /* claim's */
	atomic_bool over;
};

static void *render_early(void *arg)
{
	struct early *e = arg;

	if (!html_apart__wait(e->apart, &e->over))
		return NULL;
	e->page.store = html_apart__store(e->apart);
	for (size_t i = 0; i < e->n; i++)
		if (movable(e->list[i]) && claim(e->taken, i))
			render_aside(&e->page, e->list[i], &e->r[i]);
	return NULL;
}

/* false: no section may move, or no thread could start. */
static bool start_early(struct early *e, struct html_page *p, struct html_apart *apart,
			const struct html_section *const *list, size_t n, struct rendered *r,
			atomic_bool *taken)
{
	size_t movers = 0;

	for (size_t i = 0; i < n; i++)
		movers += movable(list[i]);
	if (!apart || !movers)
		return false;
	*e = (struct early){ .apart = apart, .list = list, .n = n, .r = r, .taken = taken };
	atomic_init(&e->over, false);
	/* the store is the diagnosis's, taken once it is done */
	return start_on_copy(&e->thread, render_early, e, &e->page, p, NULL);
}

/* Tells the thread that the page's thread has begun every section it
 * could take, and waits for the one it renders. */
static void finish_early(struct early *e)
{
	atomic_store(&e->over, true);
	html_apart__wake(e->apart);
	pthread_join(e->thread, NULL);
	rpt_sink__delete(e->page.tables);
}

static void finish_beside(struct beside *b, struct html_page *p)
{
	pthread_join(b->thread, NULL);
	rpt_sink__delete(b->page.tables);
	/* the analyses its sections added to the timeline */
	p->keep = b->page.keep;
}

/* The sections in order, the diagnosis made apart (html_apart.c) while
 * those without it render and the file is checked whole, then those on
 * its timeline beside those that draw; each section's output is held
 * until all are done and written as the sections came, up to the first
 * that failed, as a page rendered in order would stop there. A diagnosis
 * done before the sections without it (a Python capture's flame graph
 * and module tables take longer than its diagnosis) hands its connection
 * and its thread's core to those not yet begun. */
static int write_sections_apart(struct html_page *p, const struct html_section *const *list, size_t n,
				struct html_apart *apart, struct prof_error *err)
{
	struct rendered *r = calloc(n, sizeof *r);
	atomic_bool *taken = malloc((n ? n : 1) * sizeof *taken);
	struct prof_store *diagnosis_store = NULL;
	struct beside b;
	struct early e;
	bool beside, early;
	int rc = 0;

	if (!r || !taken) {
		free(r);
		free(taken);
		html_apart__finish(apart, p, NULL);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		atomic_init(&taken[i], false);
	early = start_early(&e, p, apart, list, n, r, taken);
	for (size_t i = 0; i < n; i++)
		if (list[i]->without_diagnosis && claim(taken, i))
			render_aside(p, list[i], &r[i]);
	/* the whole file's check the reader put off (cmd_report.c), while the
	 * diagnosis has the other core: what it finds is told before the
	 * page is put in place, so its result waits there */
	(void)prof_store__check_whole_now(p->store);
	/* and the rows left out, counted here while the diagnosis runs: its
	 * header, the idle section and the page's own note take the count
	 * (shared by the file's connections) where each was a pass at the end */
	(void)sum_bad_spans__count(p->store, &(int64_t){ 0 }, &(struct prof_error){ 0 });
	if (early)
		finish_early(&e);
	free(taken);
	html_apart__help(apart);
	html_apart__finish(apart, p, &diagnosis_store);
	beside = start_beside(&b, p, diagnosis_store, list, n, r);
	for (size_t i = 0; i < n; i++)
		if (!list[i]->without_diagnosis && !(beside && on_timeline(list[i])))
			render_aside(p, list[i], &r[i]);
	if (beside)
		finish_beside(&b, p);
	prof_store__close(diagnosis_store);
	for (size_t i = 0; i < n && rc >= 0; i++) {
		if (r[i].text)
			fwrite(r[i].text, 1, r[i].len, p->out);
		if (r[i].rc < 0) {
			rc = r[i].rc;
			*err = r[i].err;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(r[i].text);
	free(r);
	return rc;
}

int html_report__write(struct prof_store *s, const struct html_options *o, FILE *out,
		       struct prof_error *err)
{
	static const struct html_options defaults = { .flame_weight = FOLDED_WEIGHT_GPU };
	struct html_page p = { .out = out, .store = s, .o = o ? o : &defaults };
	const struct html_section *extra = p.o->sections ? p.o->sections
							 : html_report__default_sections;
	size_t nextra = p.o->sections ? p.o->nsections : html_report__ndefault_sections, n = 0;
	const struct html_section **list = calloc(NBUILTIN + nextra, sizeof *list);
	struct html_apart *apart;
	int rc = 0;

	if (!list)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	p.tables = rpt_sink_html__new(out, &table_opts);
	if (!p.tables) {
		free(list);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	/* the API's table and the flame graph's launches: counted in the
	 * calls' census walk, which the overview's extent starts */
	sum_call_census__want(s, CALL_CENSUS_RUNS | CALL_CENSUS_LAUNCH_IDS);
	p.have_gnuplot = gnuplot__find(p.o->gnuplot ? p.o->gnuplot : "gnuplot", p.gnuplot,
				       sizeof p.gnuplot);
	/* first, so that its start (about 35 ms of its own) overlaps the rest */
	if (p.have_gnuplot)
		html_page__start_gnuplot(&p);
	/* The diagnosis is made apart while the sections that never read it
	 * render: the built-in ones every capture shows are of both kinds
	 * (the run's overview never reads it, the plots always do), so it
	 * starts before the others are asked whether they apply (their
	 * questions read the capture). */
	apart = html_apart__start(&p);
	/* the overview's busy walk first: the diagnosis borrows its intervals
	 * for the window's busy union once they are written (busy_tape.h),
	 * and walks the rows itself before */
	if (apart)
		(void)html_page__overview(&p);
	for (size_t i = 0; i < NBUILTIN; i++)
		if (!builtin_sections[i].applies || builtin_sections[i].applies(s))
			list[n++] = &builtin_sections[i];
	for (size_t i = 0; i < nextra; i++)
		if (!extra[i].applies || extra[i].applies(s))
			list[n++] = &extra[i];
	order_sections(list, n);
	write_head(&p, list, n);
	if (apart)
		rc = write_sections_apart(&p, list, n, apart, err);
	for (size_t i = 0; !apart && rc >= 0 && i < n; i++)
		rc = write_section(&p, list[i], err);
	fprintf(out, "</main>\n<footer>perfkit %s</footer>\n</body>\n</html>\n", PERFKIT_VERSION);
	rpt_sink__delete(p.tables);
	html_page__exit(&p);
	if (p.tmpdir[0])
		plots_tmpdir__remove(p.tmpdir);
	free(list);
	if (rc >= 0 && ferror(out))
		rc = prof_error__set(err, PROF_E_IO, "cannot write the HTML report");
	if (rc >= 0)
		rc = export__note_left_out(s, "the HTML report's plots and flame graph", NULL, err);
	return rc < 0 ? rc : 0;
}
