/* capture_window.c - capture windows: the stretches of a run in which CUPTI
 * records (perfkit run --capture-range, --delay, --duration, --start-paused
 * with perfkit start and stop). Outside a window the activity kinds are
 * disabled, not filtered: the program pays for the injection and for the
 * few callbacks that watch for a window's opening, nothing per launch.
 *
 * What opens and closes a window:
 *  - an NVTX range (nvtx:NAME[@DOMAIN],skip=M,count=N): the push of the
 *    (M+1)-th opening of NAME opens it, the pop of the (M+N)-th closes it;
 *  - cudaProfilerStart and cudaProfilerStop (the driver's too);
 *  - the run's delay and duration, and the control file that `perfkit
 *    start` and `stop` write in the run's folder, looked at by the writer
 *    thread between its flushes (drain.c wakes every 50 ms).
 * An opening enables the kinds at once, on the thread that asked, so the
 * first launch after it is recorded; a closing disables them at once, so
 * nothing after it is (CUPTI still delivers the records of work launched
 * inside the window); readers keep what lies inside [start, end].
 * Disabled kinds still cost: CUPTI keeps its hooks in the launch path once
 * a kind was on (a launch 1.30x its cost before the window, against 1.00x
 * under the same injection with no window), so a closing also asks the
 * injection to detach CUPTI and attach it again with only the watching
 * callbacks (inject.c, at the return of the program's next
 * synchronisation; not for cudaProfilerApi windows, whose next opening can
 * come before the attach).
 *
 * Each window is a row of PERFKIT_CAPTURE_WINDOWS, written when it opens
 * (end NULL) and completed when it closes, so a process killed inside a
 * window leaves a row whose end readers take from its last record. */
#define _GNU_SOURCE
#include "collector.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include "prof/capture_range.h"
#include "prof/event.h"
#include "prof/protocol.h"
#include "prof/store.h"
#include "prof/trace_opts.h"

#define MAX_REGISTERED 64

/* An opening or a closing, for the writer thread to write. */
struct window_event {
	int64_t id;
	int64_t at_ns;
	bool opens;
	char why[96];
};

static struct {
	/* windows asked for, or a `perfkit stop` came to a run that asked for
	 * none: otherwise everything as before */
	_Atomic bool in_use;
	/* a run without windows is one window from the collector's start,
	 * written only once perfkit stop makes it one of several */
	bool implicit;
	int64_t implicit_start_ns;
	int toggled; /* the --trace groups a window turns on and off */
	pthread_mutex_t lock; /* opens, closes and the queue */
	_Atomic int open;     /* a window is open: the kinds are on */
	_Atomic int detach_due; /* a window closed: CUPTI is to be detached */
	int64_t windows;      /* opened so far */
	struct window_event *q;
	size_t used, cap;

	/* --capture-range; range.name[0] == 0: not an NVTX range */
	struct prof_capture_range range;
	_Atomic(void *) domain; /* the named domain's handle once created */
	_Atomic(void *) registered[MAX_REGISTERED]; /* NAME's registered handles */
	_Atomic int n_registered;
	_Atomic uint64_t openings;

	/* --delay and --duration: CLOCK_MONOTONIC, 0 none */
	uint64_t open_at_ns, close_at_ns;
	const char *opened_by_time; /* "delay", or "start" with --duration alone */

	/* the control file of perfkit start/stop */
	char control[PATH_MAX];
	struct timespec control_mtime;
	ino_t control_ino;
	long control_seq;
} cw = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The NAME ranges of the target domain on this thread: how deep the
 * domain's push/pop stack is, and where the open NAME range sits in it. */
static _Thread_local struct {
	int depth, match_depth;
	uint64_t ordinal;
} tl;

/* Under the lock. at_ns 0: now. */
static void queue(int64_t id, bool opens, const char *why, int64_t at_ns)
{
	struct window_event e = { .id = id, .opens = opens, .at_ns = at_ns };
	uint64_t ts = 0;

	if (!e.at_ns) {
		cuptiGetTimestamp(&ts);
		e.at_ns = (int64_t)ts;
	}
	snprintf(e.why, sizeof e.why, "%s", why);
	if (!collector__grow((void **)&cw.q, &cw.cap, cw.used, sizeof e, 16))
		cw.q[cw.used++] = e;
}

static void window_open(const char *why)
{
	pthread_mutex_lock(&cw.lock);
	if (!atomic_load(&cw.open)) {
		activity_kinds__window(cw.toggled, 1);
		atomic_store(&cw.open, 1);
		queue(++cw.windows, true, why, 0);
	}
	pthread_mutex_unlock(&cw.lock);
}

/* The kinds go off at once (a window of 20 steps costs those 20 steps),
 * except at the exit, whose last records are flushed next. */
static void window_close(const char *why, bool kinds_off)
{
	pthread_mutex_lock(&cw.lock);
	if (atomic_load(&cw.open)) {
		atomic_store(&cw.open, 0);
		queue(cw.windows, false, why, 0);
		if (kinds_off)
			activity_kinds__window(cw.toggled, 0);
		if (kinds_off)
			atomic_store(&cw.detach_due, 1);
	}
	pthread_mutex_unlock(&cw.lock);
}

int capture_window__recording(void)
{
	return !atomic_load_explicit(&cw.in_use, memory_order_relaxed) ||
	       atomic_load_explicit(&cw.open, memory_order_relaxed);
}

/* ---- what the run asked for ------------------------------------------------- */

static uint64_t env_u64(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 10) : 0;
}

static void enable_nvtx_callbacks(CUpti_SubscriberHandle sub)
{
	static const CUpti_CallbackId ids[] = {
		CUPTI_CBID_NVTX_nvtxRangePushA,       CUPTI_CBID_NVTX_nvtxRangePushEx,
		CUPTI_CBID_NVTX_nvtxRangePop,         CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
		CUPTI_CBID_NVTX_nvtxDomainRangePop,   CUPTI_CBID_NVTX_nvtxDomainCreateA,
		CUPTI_CBID_NVTX_nvtxDomainRegisterStringA,
	};

	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_NVTX, ids[i]);
}

static void enable_profiler_callbacks(CUpti_SubscriberHandle sub)
{
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
			    CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
			    CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
}

int capture_window__program_opens(void)
{
	return cw.range.profiler_api;
}

int capture_window__detach_due(void)
{
	return atomic_exchange(&cw.detach_due, 0);
}

/* The callbacks that watch for a window's opening and closing: at the
 * start, and again on each attach after a window. */
void capture_window__enable_callbacks(void *subscriber)
{
	if (cw.range.name[0])
		enable_nvtx_callbacks(subscriber);
	if (cw.range.profiler_api)
		enable_profiler_callbacks(subscriber);
}

static void read_control(bool at_start);
static void become_windowed(void);

int capture_window__init(int trace)
{
	const char *range = getenv(PROF_ENV_CAPTURE_RANGE);
	const char *dir = getenv(PROF_ENV_OUTPUT_DIR);
	uint64_t delay_ms = env_u64(PROF_ENV_CAPTURE_DELAY_MS);
	uint64_t duration_ms = env_u64(PROF_ENV_CAPTURE_DURATION_MS);
	uint64_t run_start = env_u64(PROF_ENV_RUN_START_NS), now = collector__monotonic_ns();
	bool paused = env_u64(PROF_ENV_START_PAUSED) != 0;

	cw.toggled = trace;
	if (dir && *dir)
		snprintf(cw.control, sizeof cw.control, "%s/%s", dir, PROF_CONTROL_FILE);
	const char *why;

	/* the launcher checked it: one that does not parse is not perfkit run's */
	if (range && *range && prof_capture_range__parse(range, &cw.range, &why) < 0) {
		collector__say(PROF_ENV_CAPTURE_RANGE " is not nvtx:NAME[@DOMAIN][,skip=M][,count=N] or "
			       "cudaProfilerApi; recording the whole run");
		range = NULL;
		delay_ms = duration_ms = 0;
		paused = false;
	}
	if ((!range || !*range) && !delay_ms && !duration_ms && !paused) {
		/* the whole run, as without windows, until a perfkit stop */
		uint64_t ts = 0;

		cuptiGetTimestamp(&ts);
		cw.implicit = true;
		cw.implicit_start_ns = (int64_t)ts;
		atomic_store(&cw.open, 1);
		read_control(true); /* what the control file said before: not ours */
		return 0;
	}
	atomic_store(&cw.in_use, true);
	if (cw.range.name[0]) {
		/* NVTX is recorded throughout, so that the range that opens a
		 * window has its start (CUPTI records the push before the
		 * callback can enable anything) */
		activity_kinds__start(trace & PROF_TRACE_NVTX);
		cw.toggled &= ~PROF_TRACE_NVTX;
	}
	if (!run_start || run_start > now)
		run_start = now;
	if (delay_ms || duration_ms) {
		cw.open_at_ns = run_start + delay_ms * 1000000u;
		cw.opened_by_time = delay_ms ? "delay" : "start";
		if (duration_ms)
			cw.close_at_ns = cw.open_at_ns + duration_ms * 1000000u;
	}
	/* a process started after `perfkit start` joins the open window */
	read_control(true);
	capture_window__tick();
	return 1;
}

/* ---- NVTX -------------------------------------------------------------------- */

static bool is_registered_name(const void *handle)
{
	int n = atomic_load(&cw.n_registered);

	for (int i = 0; i < n && i < MAX_REGISTERED; i++)
		if (atomic_load(&cw.registered[i]) == handle)
			return true;
	return false;
}

static bool attr_is_name(const nvtxEventAttributes_t *a)
{
	if (!a)
		return false;
	if (a->messageType == NVTX_MESSAGE_TYPE_ASCII)
		return a->message.ascii && !strcmp(a->message.ascii, cw.range.name);
	if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED)
		return is_registered_name(a->message.registered);
	return false;
}

/* Whether a range of this domain counts: the default domain (NULL) unless
 * @DOMAIN was named. */
static bool is_target_domain(const void *domain)
{
	if (!cw.range.domain[0])
		return domain == NULL;
	return domain && domain == atomic_load(&cw.domain);
}

static void on_push(bool matches)
{
	char why[96];

	tl.depth++;
	if (tl.match_depth || !matches)
		return;
	tl.match_depth = tl.depth;
	tl.ordinal = atomic_fetch_add(&cw.openings, 1) + 1;
	if (tl.ordinal == cw.range.skip + 1) {
		snprintf(why, sizeof why, "nvtx:%.60s #%llu", cw.range.name,
			 (unsigned long long)tl.ordinal);
		window_open(why);
	}
}

static void on_pop(void)
{
	char why[96];

	if (tl.match_depth && tl.depth == tl.match_depth) {
		tl.match_depth = 0;
		if (tl.ordinal == cw.range.skip + cw.range.count) {
			snprintf(why, sizeof why, "nvtx:%.60s #%llu end", cw.range.name,
				 (unsigned long long)tl.ordinal);
			window_close(why, true);
		}
	}
	if (tl.depth > 0)
		tl.depth--;
}

static void on_nvtx(uint32_t cbid, const CUpti_NvtxData *d)
{
	const void *p = d->functionParams;

	if (!p)
		return;
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA:
		if (is_target_domain(NULL)) {
			const char *m = ((const nvtxRangePushA_params *)p)->message;

			on_push(m && !strcmp(m, cw.range.name));
		}
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		if (is_target_domain(NULL))
			on_push(attr_is_name(((const nvtxRangePushEx_params *)p)->eventAttrib));
		break;
	case CUPTI_CBID_NVTX_nvtxRangePop:
		if (is_target_domain(NULL))
			on_pop();
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
		const nvtxDomainRangePushEx_params *q = p;

		if (is_target_domain(q->domain))
			on_push(attr_is_name(q->core.eventAttrib));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainRangePop:
		if (is_target_domain(((const nvtxDomainRangePop_params *)p)->domain))
			on_pop();
		break;
	case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
		const char *name = ((const nvtxDomainCreateA_params *)p)->name;

		if (cw.range.domain[0] && name && !strcmp(name, cw.range.domain) && d->functionReturnValue)
			atomic_store(&cw.domain, *(void *const *)d->functionReturnValue);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
		const nvtxDomainRegisterStringA_params *q = p;
		int at;

		if (!q->string || strcmp(q->string, cw.range.name) || !d->functionReturnValue)
			break;
		at = atomic_fetch_add(&cw.n_registered, 1);
		if (at < MAX_REGISTERED)
			atomic_store(&cw.registered[at], *(void *const *)d->functionReturnValue);
		break;
	}
	default:
		break;
	}
}

void capture_window__on_callback(int domain, uint32_t cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;

	if (!atomic_load_explicit(&cw.in_use, memory_order_relaxed))
		return;
	if (domain == CUPTI_CB_DOMAIN_NVTX) {
		if (cw.range.name[0])
			on_nvtx(cbid, data);
		return;
	}
	if (!cw.range.profiler_api)
		return;
	/* the runtime's calls reach the driver's: the second is a no-op */
	if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	     cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) ||
	    (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)) {
		if (cb->callbackSite == CUPTI_API_ENTER)
			window_open("cudaProfilerStart");
	} else if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
		    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ||
		   (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
		if (cb->callbackSite == CUPTI_API_EXIT)
			window_close("cudaProfilerStop", true);
	}
}

/* ---- the writer thread ------------------------------------------------------- */

/* A run that asked for no windows meets perfkit stop or start: its
 * recording so far becomes window 1, opened at the collector's start. */
static void become_windowed(void)
{
	pthread_mutex_lock(&cw.lock);
	cw.implicit = false;
	cw.windows = 1;
	queue(1, true, "start", cw.implicit_start_ns);
	atomic_store(&cw.in_use, true);
	pthread_mutex_unlock(&cw.lock);
}

/* The control file's newest line, when it changed and is the user's own. */
static void read_control(bool at_start)
{
	struct stat st;
	char line[64], state[16];
	long seq;
	FILE *f;
	int fd;

	if (!cw.control[0] || stat(cw.control, &st) < 0)
		return;
	if (st.st_ino == cw.control_ino && st.st_mtim.tv_sec == cw.control_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == cw.control_mtime.tv_nsec)
		return;
	cw.control_ino = st.st_ino;
	cw.control_mtime = st.st_mtim;
	fd = open(cw.control, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	/* only the run's own user opens and closes its windows */
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return;
	}
	if (fgets(line, sizeof line, f) && sscanf(line, "%ld %15s", &seq, state) == 2 &&
	    seq > cw.control_seq) {
		cw.control_seq = seq;
		if (cw.implicit && !at_start)
			become_windowed();
		if (!strcmp(state, "open"))
			window_open("perfkit start");
		else if (!strcmp(state, "close") && !at_start)
			window_close("perfkit stop", true);
	}
	fclose(f);
}

void capture_window__tick(void)
{
	uint64_t now;

	if (cw.implicit) {
		read_control(false);
		return;
	}
	if (!atomic_load(&cw.in_use))
		return;
	now = collector__monotonic_ns();
	if (cw.open_at_ns && now >= cw.open_at_ns && (!cw.close_at_ns || now < cw.close_at_ns)) {
		cw.open_at_ns = 0;
		window_open(cw.opened_by_time);
	}
	if (cw.close_at_ns && now >= cw.close_at_ns) {
		cw.open_at_ns = cw.close_at_ns = 0;
		window_close("duration", true);
	}
	read_control(false);
}

void capture_window__write(struct prof_writer *w, uint32_t pid)
{
	struct window_event *q;
	size_t n;

	if (!atomic_load(&cw.in_use))
		return;
	pthread_mutex_lock(&cw.lock);
	q = cw.q;
	n = cw.used;
	cw.q = NULL;
	cw.used = cw.cap = 0;
	pthread_mutex_unlock(&cw.lock);
	for (size_t i = 0; i < n; i++) {
		int64_t gpid = prof_global_pid(pid);

		if (q[i].opens) {
			struct prof_capture_window row = {
				.global_pid = gpid, .id = q[i].id, .start_ns = q[i].at_ns,
				.end_ns = -1, .opened_by = q[i].why,
			};

			prof_writer__capture_window(w, &row);
		} else {
			prof_writer__capture_window_end(w, gpid, q[i].id, q[i].at_ns, q[i].why);
		}
	}
	free(q);
}

void capture_window__exit(void)
{
	if (atomic_load(&cw.in_use))
		window_close("exit", false);
}
