/* thread_names.c - every traced thread's OS name, so readers can say
 * "autograd (GPU 0)" or "NCCL proxy" instead of "thread 741".
 *
 * The OS name is what pthread_setname_np set (/proc/PID/task/TID/comm);
 * PyTorch names its autograd threads pt_autograd_N, NCCL its proxy and
 * service threads. It is read on the writer thread, never on the program's:
 * when a thread's first row is read, and for a thread that may exit before
 * then, when a look at the process's task list (the writer wakes for one
 * every 50 ms between flushes: drain.c) first finds it. A thread that
 * lives less than that and exits before its rows are read goes unnamed. The names are written at the end, read
 * again for threads still alive (a later name is the truer one), for the
 * threads that have rows and no NVTX name: a name the program gave through
 * nvtxNameOsThread (records.c on_name) wins, and a thread has one row in
 * ThreadNames. A run killed before the end keeps its NVTX names only.
 *
 * Plain C, no CUPTI, so the unit tests build it where CUPTI is missing. */
#include "thread_names.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prof/error.h"
#include "prof/event.h"
#include "prof/store.h"

#define THREAD_SCAN_NS 25000000ull /* drain.c wakes to look every 50 ms */
#define OS_NAME_SIZE 16 /* Linux's TASK_COMM_LEN, its NUL included */

struct thread_slot {
	uint32_t tid; /* 0: free */
	bool has_rows, nvtx_named;
	char name[OS_NAME_SIZE];
};

struct thread_names {
	uint32_t pid;
	char proc_root[64];
	struct thread_slot *slots; /* open addressing, a power of two */
	size_t cap, used;
	uint32_t last_seen; /* the thread of the last row: most rows repeat it */
	uint64_t last_scan_ns;
};

int thread_names__new(uint32_t pid, const char *proc_root, struct thread_names **out)
{
	struct thread_names *t = calloc(1, sizeof *t);

	*out = NULL;
	if (!t)
		return PROF_E_NOMEM;
	t->cap = 64;
	t->slots = calloc(t->cap, sizeof *t->slots);
	if (!t->slots) {
		free(t);
		return PROF_E_NOMEM;
	}
	t->pid = pid;
	snprintf(t->proc_root, sizeof t->proc_root, "%s", proc_root);
	*out = t;
	return 0;
}

void thread_names__delete(struct thread_names *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

/* The thread's name now, into name; false when it has exited (or /proc
 * cannot say). */
static bool read_os_name(const struct thread_names *t, uint32_t tid, char name[OS_NAME_SIZE])
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "%s/%u/task/%u/comm", t->proc_root, t->pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, name, OS_NAME_SIZE - 1);
	close(fd);
	if (n <= 0)
		return false;
	name[n] = '\0';
	name[strcspn(name, "\n")] = '\0';
	return true;
}

static size_t slot_of(const struct thread_names *t, uint32_t tid)
{
	size_t i = (tid * 2654435761u) & (t->cap - 1);

	while (t->slots[i].tid && t->slots[i].tid != tid)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int grow(struct thread_names *t)
{
	struct thread_slot *old = t->slots;
	size_t old_cap = t->cap;

	t->slots = calloc(old_cap * 2, sizeof *t->slots);
	if (!t->slots) {
		t->slots = old;
		return PROF_E_NOMEM;
	}
	t->cap = old_cap * 2;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].tid)
			t->slots[slot_of(t, old[i].tid)] = old[i];
	free(old);
	return 0;
}

/* tid's slot, made (with its name read) when it is new; NULL without
 * memory, when the thread goes unnamed. */
static struct thread_slot *find_or_add(struct thread_names *t, uint32_t tid)
{
	struct thread_slot *s;

	if (!tid)
		return NULL;
	s = &t->slots[slot_of(t, tid)];
	if (s->tid)
		return s;
	if ((t->used + 1) * 2 > t->cap) {
		if (grow(t) < 0)
			return NULL;
		s = &t->slots[slot_of(t, tid)];
	}
	s->tid = tid;
	t->used++;
	read_os_name(t, tid, s->name);
	return s;
}

void thread_names__seen(struct thread_names *t, uint32_t tid)
{
	struct thread_slot *s;

	if (tid == t->last_seen)
		return;
	t->last_seen = tid;
	s = find_or_add(t, tid);
	if (!s || s->has_rows)
		return;
	s->has_rows = true;
	/* named by now, if it names itself before its first call */
	read_os_name(t, tid, s->name);
}

void thread_names__nvtx(struct thread_names *t, uint32_t tid)
{
	struct thread_slot *s = find_or_add(t, tid);

	if (s)
		s->nvtx_named = true;
}

void thread_names__scan(struct thread_names *t, uint64_t now_ns)
{
	char path[96];
	struct dirent *e;
	DIR *d;

	if (t->last_scan_ns && now_ns - t->last_scan_ns < THREAD_SCAN_NS)
		return;
	t->last_scan_ns = now_ns;
	snprintf(path, sizeof path, "%s/%u/task", t->proc_root, t->pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		unsigned long tid = strtoul(e->d_name, &end, 10);

		if (*end || !tid || tid > UINT32_MAX)
			continue;
		find_or_add(t, (uint32_t)tid);
	}
	closedir(d);
}

int thread_names__write(struct thread_names *t, struct prof_writer *w)
{
	int rc = 0;

	for (size_t i = 0; i < t->cap; i++) {
		struct thread_slot *s = &t->slots[i];

		if (!s->tid || !s->has_rows || s->nvtx_named)
			continue;
		read_os_name(t, s->tid, s->name);
		if (!s->name[0])
			continue;
		int e = prof_writer__thread_name(w, prof_global_tid(t->pid, s->tid), s->name);

		if (e < 0)
			rc = e;
		s->nvtx_named = true; /* written once */
	}
	return rc;
}
