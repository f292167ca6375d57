/* process_info.c - what a process records about its place in a job: its host and,
 * when a launcher numbered it (torchrun, Open MPI, PMI, Slurm), its rank
 * (PERFKIT_PROCESS_INFO), and a clock pair at its start and end
 * (PERFKIT_CLOCKS): the host's realtime clock and CUPTI's timestamp read
 * together, from which captures of several hosts are put on one time
 * base. The GPUs it saw are written with the DEVICE records (records.c). */
#include "collector.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "prof/event.h"
#include "prof/job_env.h"
#include "prof/store.h"

static const char *getenv_fn(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

static void host_name(char *buf, size_t cap)
{
	if (gethostname(buf, cap) < 0)
		buf[0] = '\0';
	buf[cap - 1] = '\0';
}

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The two clocks read as close together as two calls allow: CUPTI's
 * between two reads of the realtime clock, paired with their middle. */
static void clock_pair(struct prof_writer *w, uint32_t pid, const char *host, const char *at)
{
	struct prof_clock_pair c = { .global_pid = prof_global_pid(pid), .host = host, .at = at };
	uint64_t ts = 0;
	int64_t before = realtime_ns();

	if (cuptiGetTimestamp(&ts) != CUPTI_SUCCESS)
		return;
	c.realtime_ns = before + (realtime_ns() - before) / 2;
	c.timestamp_ns = (int64_t)ts;
	prof_writer__clock_pair(w, &c);
}

void process_info__record_start(struct prof_writer *w, uint32_t pid)
{
	struct prof_process_info p = { .global_pid = prof_global_pid(pid) };
	struct prof_job_rank rank;
	char host[256];

	host_name(host, sizeof host);
	prof_job_rank__read(&rank, getenv_fn, NULL);
	p.host = host;
	p.rank = rank.launcher ? rank.rank : -1;
	p.world_size = rank.launcher ? rank.world_size : -1;
	p.local_rank = rank.launcher ? rank.local_rank : -1;
	p.launcher = rank.launcher ? prof_launcher__name(rank.launcher) : NULL;
	prof_writer__process_info(w, &p);
	clock_pair(w, pid, host, "start");
}

void process_info__record_end(struct prof_writer *w, uint32_t pid)
{
	char host[256];

	host_name(host, sizeof host);
	clock_pair(w, pid, host, "end");
}
