/* drain.c - the writer thread: the only thread that touches the store.
 *
 * Every flush interval it asks CUPTI for completed buffers, writes their
 * records and commits, so a reader sees data at most one interval old and a
 * process killed outright loses at most that much. A synchronisation that
 * succeeds asks for that flush sooner (drain__flush_soon): CUPTI keeps the
 * GPU times of kernels and copies in device memory until a flush reads them
 * back, and a program whose context then fails (an illegal address) takes
 * every time not read back with it. Others ask it to drain
 * through an atomic counter and a semaphore, both usable from a signal
 * handler; it answers by publishing the request number it has served.
 *
 * It runs at a lower priority than the program's threads (background_thread.c):
 * where every core is busy the program's threads come first and the writer
 * catches up at the next flush, or at exit, when the program waits for it. */
#include "collector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "prof/protocol.h"
#include "prof/store.h"

static struct {
	struct prof_writer *w;
	struct records *rec;
	uint32_t pid;
	uint64_t flush_interval_ns, sync_flush_gap_ns;
	pthread_t thread;
	int running;
	sem_t wake;
	_Atomic uint64_t requested, served;
	_Atomic int stop;
	_Atomic int flush_now;
	_Atomic uint64_t flush_asked_ns; /* when a synchronisation last asked */
	_Atomic uint64_t dropped;
	uint64_t busy_ns; /* writer thread only: time spent writing and committing */
	/* writer thread only: the flushes (those a synchronisation asked for
	 * among them) and the time CUPTI took over them, which is what a
	 * flush holds the program's launches up for at most */
	uint64_t flushes, sync_flushes, flush_ns;
	int discard; /* PROF_ENV_BENCH_DISCARD: buffers freed unread */
} drain;

/* How often the writer wakes between flushes to look for new threads, so
 * that a thread which names itself, calls CUDA and exits within a flush
 * interval keeps its name (thread_names.c): one readdir of the task list. */
#define THREAD_LOOK_NS 50000000ull

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void drain__add_dropped(uint64_t n)
{
	atomic_fetch_add_explicit(&drain.dropped, n, memory_order_relaxed);
}

int drain__is_writer_thread(void)
{
	return drain.running && pthread_equal(pthread_self(), drain.thread);
}

static pthread_mutex_t cupti_lock = PTHREAD_MUTEX_INITIALIZER;

void drain__wake(void)
{
	if (drain.running)
		sem_post(&drain.wake);
}

void drain__cupti_lock(void)
{
	pthread_mutex_lock(&cupti_lock);
}

void drain__cupti_unlock(void)
{
	pthread_mutex_unlock(&cupti_lock);
}

static void write_handed_over(void)
{
	struct handoff_node *node = buffers__take_all();

	while (node) {
		struct handoff_node *next = node->next;

		if (!drain.discard)
			records__buffer(drain.rec, node->records, node->valid_bytes);
		buffers__free(node);
		node = next;
	}
	gpu_metrics__write(drain.w);
	python_ranges__write(drain.rec, drain.w, drain.pid);
	python_sampler__write(drain.w, drain.pid);
	capture_window__write(drain.w, drain.pid);
}

static void commit(void)
{
	struct prof_error err;
	size_t dropped = 0;
	uint64_t n;

	/* Records lost for want of buffer space outside any one buffer's queue. */
	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
		drain__add_dropped(dropped);
	n = atomic_exchange_explicit(&drain.dropped, 0, memory_order_relaxed);
	if (n)
		prof_writer__count(drain.w, "dropped_records", (int64_t)n);
	prof_writer__flush(drain.w, &err);
}

static void *drain_main(void *arg)
{
	uint64_t next_flush = now_ns(CLOCK_MONOTONIC) + drain.flush_interval_ns;

	(void)arg;
	/* the program's signal handlers wait for this thread: it must never be
	 * the one interrupted */
	background_thread__enter();

	for (;;) {
		uint64_t now = now_ns(CLOCK_MONOTONIC), wait_ns, req;
		struct timespec until;
		int stop, asked;

		wait_ns = next_flush > now ? next_flush - now : 0;
		if (wait_ns > THREAD_LOOK_NS)
			wait_ns = THREAD_LOOK_NS;
		now = now_ns(CLOCK_REALTIME) + wait_ns;
		until.tv_sec = (time_t)(now / 1000000000u);
		until.tv_nsec = (long)(now % 1000000000u);
		while (sem_timedwait(&drain.wake, &until) < 0 && errno == EINTR)
			;
		req = atomic_load(&drain.requested);
		stop = atomic_load(&drain.stop);
		asked = atomic_exchange(&drain.flush_now, 0);
		drain__cupti_lock();
		collector__attach_if_due();
		if (!stop && !asked && req == atomic_load(&drain.served) &&
		    now_ns(CLOCK_MONOTONIC) < next_flush) {
			records__look_for_threads(drain.rec);
			capture_window__tick();
			drain__cupti_unlock();
			continue;
		}
		if (asked || now_ns(CLOCK_MONOTONIC) >= next_flush) {
			/* Complete buffers only: a forced flush would cut kernels
			 * still running into incomplete records. */
			uint64_t t0 = now_ns(CLOCK_MONOTONIC);

			cuptiActivityFlushAll(0);
			next_flush = now_ns(CLOCK_MONOTONIC);
			drain.flush_ns += next_flush - t0;
			drain.flushes++;
			drain.sync_flushes += asked != 0;
			next_flush += drain.flush_interval_ns;
		}
		capture_window__tick();
		now = now_ns(CLOCK_MONOTONIC);
		write_handed_over();
		commit();
		drain.busy_ns += now_ns(CLOCK_MONOTONIC) - now;
		atomic_store(&drain.served, req);
		drain__cupti_unlock();
		if (stop)
			break;
	}
	return NULL;
}

int drain__start(const struct drain_config *cfg)
{
	int rc;

	drain.w = cfg->writer;
	drain.pid = cfg->pid;
	drain.flush_interval_ns = cfg->flush_interval_ns;
	drain.sync_flush_gap_ns = cfg->sync_flush_gap_ns;
	drain.discard = getenv(PROF_ENV_BENCH_DISCARD) && !strcmp(getenv(PROF_ENV_BENCH_DISCARD), "1");
	rc = records__new(cfg->writer, cfg->pid, &drain.rec);
	if (rc < 0)
		return rc;
	if (sem_init(&drain.wake, 0, 0) < 0)
		goto fail;
	atomic_store(&drain.stop, 0);
	if (pthread_create(&drain.thread, NULL, drain_main, NULL) != 0)
		goto fail;
	drain.running = 1;
	return 0;
fail:
	records__delete(drain.rec);
	drain.rec = NULL;
	return PROF_E_NOMEM;
}

void drain__flush_soon(void)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t last = atomic_load_explicit(&drain.flush_asked_ns, memory_order_relaxed);

	/* At most one flush a gap: a flush holds up the program's launches
	 * (one every 10 ms cost a 20 ms PyTorch step 3 ms more; one every
	 * 100 ms, nothing above the machine's noise), and a program
	 * synchronising thousands of times a second would keep the writer
	 * flushing. */
	if (!drain.running || !drain.sync_flush_gap_ns || now - last < drain.sync_flush_gap_ns ||
	    !atomic_compare_exchange_strong(&drain.flush_asked_ns, &last, now))
		return;
	atomic_store(&drain.flush_now, 1);
	sem_post(&drain.wake);
}

int drain__sync(unsigned timeout_ms)
{
	struct timespec tick = { 0, 1000000 };
	uint64_t mine;

	if (!drain.running || drain__is_writer_thread())
		return -1;
	mine = atomic_fetch_add(&drain.requested, 1) + 1;
	sem_post(&drain.wake);
	for (unsigned waited = 0; waited < timeout_ms; waited++) {
		if (atomic_load(&drain.served) >= mine)
			return 0;
		nanosleep(&tick, NULL);
	}
	return -1;
}

void drain__stop(void)
{
	if (!drain.running)
		return;
	atomic_store(&drain.stop, 1);
	sem_post(&drain.wake);
	pthread_join(drain.thread, NULL);
	drain.running = 0;
	/* Whatever arrived after the thread's last look. */
	write_handed_over();
	records__finish(drain.rec);
	/* Whether the writer kept up: its time over the run's is its load. */
	prof_writer__count(drain.w, "writer_busy_ns", (int64_t)drain.busy_ns);
	prof_writer__count(drain.w, "flushes", (int64_t)drain.flushes);
	prof_writer__count(drain.w, "sync_flushes", (int64_t)drain.sync_flushes);
	prof_writer__count(drain.w, "flush_ns", (int64_t)drain.flush_ns);
	commit();
	records__delete(drain.rec);
	drain.rec = NULL;
}
