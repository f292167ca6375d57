/* bench_top.c - perfkit top's frame time and memory while a capture grows
 * at a given event rate.
 *
 * A background thread plays the collector: it writes events through the
 * writer API at --rate events per second (kernels with ~200 names, copies,
 * allocations and frees, nested NVTX ranges on 4 threads, in the shares a
 * training loop shows), flushing every 500 ms as the collector does, into
 * DIR/proc-<pid>.sqlite, with an output file naming DIR in live_dir, the way
 * `perfkit run` lays a run out. The main thread is perfkit top: every
 * refresh interval it runs one frame (refresh step: read the new rows;
 * views; layout; draw step into an ncurses screen whose output is
 * /dev/null) and times it.
 *
 * Prints one row per period: events/s fed, rows/s read, frame time p50 /
 * p99 / max, RSS; then the totals. Frame time must stay under 100 ms and RSS
 * flat while the capture grows.
 *
 * Files go into a fresh folder under DIR (default /tmp), removed at the end.
 *
 *   bench_top [--rate N] [--seconds S] [--period S] [--refresh-ms MS] [DIR] */
#include <curses.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "prof/protocol.h"
#include "prof/store.h"
#include "top.h"
#include "top_draw.h"
#include "top_feed.h"
#include "top_layout.h"
#include "top_model.h"

#define BENCH_PID 4242
#define FLUSH_NS 500000000LL
#define TICK_NS 5000000LL /* the writer's batches: 200 per second */
#define MAX_FRAMES 100000

struct writer_ctx {
	const char *path;
	double rate;            /* events per second */
	_Atomic int stop;
	_Atomic long long events;
	int failed;
};

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One batch of n events ending about at t (CLOCK_REALTIME). Shares: 80 %
 * kernels, 8 % copies, 4 % allocations/frees, 8 % NVTX ranges. */
static int write_batch(struct prof_writer *w, int64_t t, long n, int64_t *names)
{
	static int64_t alloc_balance;
	int64_t gpid = prof_global_pid(BENCH_PID);

	for (long i = 0; i < n; i++) {
		uint64_t x = bench_rnd();
		int kind = (int)(x % 100);
		int64_t s = t - TICK_NS + (int64_t)((x >> 8) % TICK_NS);
		int rc;

		if (kind < 80) {
			int hot = (int)((x >> 20) % 200);
			struct prof_kernel k = {
				.start_ns = s, .end_ns = s + 2000 + (int64_t)((x >> 32) % 50000),
				.global_pid = gpid, .stream_id = 7, .correlation_id = (int32_t)i,
				.demangled_name = names[(x >> 40) & 3 ? hot % 16 : hot],
			};

			k.short_name = k.demangled_name;
			rc = prof_writer__kernel(w, &k);
		} else if (kind < 88) {
			struct prof_memcpy m = { .start_ns = s, .end_ns = s + 5000, .global_pid = gpid,
						 .bytes = 1 << (10 + (x >> 24) % 12),
						 .copy_kind = PROF_COPY_HTOD };

			rc = prof_writer__memcpy(w, &m);
		} else if (kind < 92) {
			/* alternate so device memory in use stays bounded */
			struct prof_memory_event e = { .start_ns = s, .global_pid = gpid,
						       .bytes = 1 << 20, .mem_kind = PROF_MEM_DEVICE,
						       .operation = alloc_balance > 0 };

			alloc_balance += e.operation ? -1 : 1;
			rc = prof_writer__memory(w, &e);
		} else {
			/* a step range with a child range, as they end (child first) */
			int64_t tid = prof_global_tid(BENCH_PID, BENCH_PID + (uint32_t)(x >> 50) % 4);
			struct prof_nvtx_event ev = {
				.start_ns = s, .end_ns = s + 1000, .event_type = PROF_NVTX_PUSHPOP,
				.global_tid = tid, .end_global_tid = tid,
				.text_id = names[200 + (x >> 44) % 8],
			};

			rc = prof_writer__nvtx(w, &ev);
			if (!rc && (x & 1)) {
				ev.start_ns = s - 1000;
				ev.end_ns = s + 3000;
				ev.text_id = names[208];
				rc = prof_writer__nvtx(w, &ev);
				i++;
			}
		}
		if (rc)
			return rc;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct writer_ctx *c = arg;
	struct prof_error err = { 0 };
	struct prof_writer *w;
	int64_t names[209], next_flush, tick, started;
	char text[128];
	double owed = 0;

	if (prof_writer__create(c->path, PROF_WRITER_OVERWRITE, &w, &err)) {
		fprintf(stderr, "bench_top: %s\n", err.msg);
		c->failed = 1;
		return NULL;
	}
	prof_writer__process(w, BENCH_PID, "bench_app");
	for (int i = 0; i < 200; i++) {
		snprintf(text, sizeof text,
			 "void kernels::op_%d<float, %d>(const float*, float*, int, kernels::Params)", i,
			 32 << (i % 4));
		names[i] = prof_writer__string(w, text);
	}
	for (int i = 200; i < 209; i++) {
		snprintf(text, sizeof text, "%s_%d", i < 208 ? "layer" : "step", i - 200);
		names[i] = prof_writer__string(w, text);
	}
	started = tick = now_ns(CLOCK_MONOTONIC);
	next_flush = started + FLUSH_NS;
	while (!atomic_load(&c->stop)) {
		long n;

		tick += TICK_NS;
		owed += c->rate * (double)TICK_NS / 1e9;
		n = (long)owed;
		owed -= (double)n;
		if (write_batch(w, now_ns(CLOCK_REALTIME), n, names)) {
			fprintf(stderr, "bench_top: %s\n", prof_writer__last_error(w)->msg);
			c->failed = 1;
			break;
		}
		atomic_fetch_add(&c->events, n);
		if (now_ns(CLOCK_MONOTONIC) >= next_flush) {
			prof_writer__flush(w, &err);
			next_flush += FLUSH_NS;
		}
		while (now_ns(CLOCK_MONOTONIC) < tick)
			usleep(500);
	}
	prof_writer__delete(w);
	return NULL;
}

static double rss_mb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static double pct_ms(int64_t *v, int n, double p)
{
	if (!n)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_i64);
	return (double)v[(int)(p * (n - 1) + 0.5)] / 1e6;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_top [--rate N] [--seconds S] [--period S] [--refresh-ms MS] [DIR]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double rate = 100000, seconds = 30, period = 5;
	int refresh_ms = TOP_REFRESH_MS_DEFAULT, n_all = 0;
	const char *base = NULL;
	char root[512], live[600], out[600], proc[700];
	struct writer_ctx wc = { 0 };
	struct top_feed_config cfg = { 0 };
	struct prof_error err = { 0 };
	struct prof_writer *w_out;
	struct top_model m;
	struct top_feed *feed;
	struct top_ui ui = { .sort = TOP_SORT_TOTAL };
	struct top_view kv = { 0 }, rv = { 0 };
	struct top_layout layout;
	pthread_t writer;
	SCREEN *screen;
	FILE *null_out, *null_in;
	static int64_t period_ns[MAX_FRAMES], all_ns[MAX_FRAMES];
	int n_period = 0;
	int64_t t0, next_row, last_rows = 0;
	long long last_events = 0;
	double rss0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rate") && i + 1 < argc)
			rate = atof(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--period") && i + 1 < argc)
			period = atof(argv[++i]);
		else if (!strcmp(argv[i], "--refresh-ms") && i + 1 < argc)
			refresh_ms = atoi(argv[++i]);
		else if (argv[i][0] == '-' || base)
			usage();
		else
			base = argv[i];
	}
	if (rate <= 0 || seconds <= 0 || period <= 0 || refresh_ms <= 0)
		usage();
	snprintf(root, sizeof root, "%s/bench-top-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(root)) {
		perror("bench_top: mkdtemp");
		return 2;
	}
	snprintf(out, sizeof out, "%s/out.sqlite", root);
	snprintf(live, sizeof live, "%s/run", root);
	prof_proc_file__path(proc, sizeof proc, live, BENCH_PID);
	mkdir(live, 0755);
	/* the output of a `perfkit run` in progress: it names the process folder */
	if (prof_writer__create(out, 0, &w_out, &err)) {
		fprintf(stderr, "bench_top: %s\n", err.msg);
		return 2;
	}
	prof_writer__meta(w_out, "command", "bench_app");
	prof_writer__meta(w_out, PROF_META_LIVE_DIR, live);
	prof_writer__flush(w_out, &err);

	wc.path = proc;
	wc.rate = rate;
	pthread_create(&writer, NULL, writer_main, &wc);
	while (access(proc, F_OK) && !wc.failed)
		usleep(1000);
	usleep(100000);

	null_out = fopen("/dev/null", "w");
	null_in = fopen("/dev/null", "r");
	screen = newterm("xterm", null_out, null_in);
	if (!screen) {
		fprintf(stderr, "bench_top: no terminfo entry for xterm\n");
		return 2;
	}
	set_term(screen);
	resizeterm(50, 160);
	top_layout__compute(160, 50, &layout);
	ui.utf8 = false;
	snprintf(ui.status, sizeof ui.status, "live capture");

	top_model__init(&m);
	cfg.path = out;
	if (top_feed__open(&cfg, &m, &feed, &err)) {
		endwin();
		fprintf(stderr, "bench_top: %s\n", err.msg);
		return 2;
	}
	rss0 = rss_mb();
	printf("%8s %12s %12s %10s %10s %10s %8s\n", "t_s", "events/s", "rows_read/s",
	       "frame_p50", "frame_p99", "frame_max", "RSS_MB");
	fflush(stdout);
	t0 = now_ns(CLOCK_MONOTONIC);
	next_row = t0 + (int64_t)(period * 1e9);
	for (;;) {
		int64_t f0 = now_ns(CLOCK_MONOTONIC), f1, next_frame;

		/* one frame: refresh step, views, draw step */
		top_feed__refresh(feed, &m, now_ns(CLOCK_REALTIME), f0, f0 + 60000000LL);
		top_model__kernel_view(&m, ui.sort, ui.ascending, ui.filter, &kv);
		top_model__range_view(&m, &rv);
		top_draw__frame(&m, &kv, &rv, &ui, &layout);
		f1 = now_ns(CLOCK_MONOTONIC);
		if (n_period < MAX_FRAMES)
			period_ns[n_period++] = f1 - f0;
		if (n_all < MAX_FRAMES)
			all_ns[n_all++] = f1 - f0;
		if (f1 >= next_row) {
			long long ev = atomic_load(&wc.events);
			double span = period;
			int64_t max = 0;

			for (int i = 0; i < n_period; i++)
				if (period_ns[i] > max)
					max = period_ns[i];
			printf("%8.0f %12.0f %12.0f %9.1fms %9.1fms %9.1fms %8.1f\n",
			       (double)(f1 - t0) / 1e9, (double)(ev - last_events) / span,
			       (double)(m.rows_read - last_rows) / span, pct_ms(period_ns, n_period, 0.5),
			       pct_ms(period_ns, n_period, 0.99), (double)max / 1e6, rss_mb());
			fflush(stdout);
			last_events = ev;
			last_rows = m.rows_read;
			n_period = 0;
			next_row += (int64_t)(period * 1e9);
		}
		if (f1 - t0 >= (int64_t)(seconds * 1e9) || wc.failed)
			break;
		next_frame = f0 + (int64_t)refresh_ms * 1000000;
		while (now_ns(CLOCK_MONOTONIC) < next_frame)
			usleep(1000);
	}
	atomic_store(&wc.stop, 1);
	pthread_join(writer, NULL);
	endwin();
	delscreen(screen);
	fclose(null_out);
	fclose(null_in);
	printf("total: %lld events fed, %lld rows read, %d frames, frame p50 %.1f ms, p99 %.1f ms; "
	       "RSS %.1f MB after open, %.1f MB at the end; %zu kernel names\n",
	       (long long)atomic_load(&wc.events), (long long)m.rows_read, n_all,
	       pct_ms(all_ns, n_all, 0.5), pct_ms(all_ns, n_all, 0.99), rss0, rss_mb(),
	       m.kernel_names.n - 1);
	top_view__exit(&kv);
	top_view__exit(&rv);
	top_feed__close(feed);
	top_model__exit(&m);
	prof_writer__delete(w_out);
	nftw(root, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	return wc.failed;
}
