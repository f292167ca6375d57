/* python_native.c - the native frames of a sampled Python thread: the C
 * code its innermost Python frame called into (a PyTorch operator, a
 * blocking wait in libc, the CUDA driver), for --python-sampling.
 *
 * Another thread's machine stack can only be walked from that thread, so
 * the sampler sends it a real-time signal and its handler walks its own
 * stack with the compiler's unwinder (DWARF call-frame information, which
 * libraries built without frame pointers still carry), from the
 * interrupted instruction out to the first frame of the interpreter. The
 * handler only stores return addresses; the sampler names them (dladdr,
 * demangled) and caches each name.
 *
 * The handler must never wait on anything the interrupted code may hold:
 * the unwinder finds each frame's unwind table through glibc's lock-free
 * _dl_find_object (glibc 2.35 and later, used by libgcc 12 and later), so
 * without it native frames are not taken. One request is open at a time;
 * its state moves REQUESTED -> WRITING -> DONE by compare-and-swap, so a
 * handler that runs late (the signal was blocked) finds no request of its
 * own and returns, and the sampler never reads a walk half written. A
 * thread that does not answer three requests running (blocked in the
 * kernel: CUDA's context creation waits there, uninterruptible) is left
 * alone for a second at a time. */
#define _GNU_SOURCE /* dladdr, REG_RIP, gettid */
#include "collector.h"
#include "python_runtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include "prof/event.h"

#define INNER_KEPT 16   /* the innermost frames, where the time is spent */
#define OUTER_KEPT 32   /* and the outermost, nearest the Python frame */
#define WALK_MAX 512    /* frames walked at most */
#define TEXT_RANGES 8   /* the interpreter's executable segments */
#define ANSWER_NS 2000000 /* how long a thread has to answer */
#define DEAF_AFTER 3    /* requests unanswered before a thread is left alone */
#define DEAF_FOR_NS 1000000000 /* ... for this long */
#define DEAF_SLOTS 64

enum { IDLE, REQUESTED, WRITING, DONE };

/* A walk as the handler leaves it: inner[0..n_inner) innermost first,
 * then the ring of the frames after them, outer_seen in all. */
struct walk {
	uintptr_t pc0; /* the interrupted instruction */
	bool started, reached_python;
	int n_inner;
	uintptr_t inner[INNER_KEPT];
	long outer_seen;
	uintptr_t outer[OUTER_KEPT];
	int walked;
};

static struct {
	bool ready;
	int signo;
	uintptr_t text_lo[TEXT_RANGES], text_hi[TEXT_RANGES];
	int n_text;
	/* the open request: (seq << 2) | state, and whose */
	_Atomic uint64_t request;
	_Atomic pid_t target;
	struct walk walk;
	uint64_t seq;
	/* threads that stopped answering */
	struct deaf { pid_t tid; int misses; int64_t until_ns; } deaf[DEAF_SLOTS];
	/* names already made: pc -> frame (sampler thread only) */
	struct name_slot { uintptr_t pc; struct py_frame_ref frame; } *names;
	size_t names_cap, names_used;
} nat;

static bool in_interpreter(uintptr_t pc)
{
	for (int i = 0; i < nat.n_text; i++)
		if (pc >= nat.text_lo[i] && pc < nat.text_hi[i])
			return true;
	return false;
}

/* ---- the handler: on the sampled thread -------------------------------------- */

static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	int before = 0;
	uintptr_t ip = (uintptr_t)_Unwind_GetIPInfo(ctx, &before);

	if (++w->walked > WALK_MAX || !ip)
		return _URC_END_OF_STACK;
	/* the handler's own frames and the signal trampoline come first */
	if (!w->started) {
		if (ip != w->pc0)
			return _URC_NO_REASON;
		w->started = true;
	} else if (!before) {
		ip--; /* a return address: name the call, not what follows it */
	}
	if (in_interpreter(ip)) {
		w->reached_python = true;
		return _URC_END_OF_STACK;
	}
	if (w->n_inner < INNER_KEPT)
		w->inner[w->n_inner++] = ip;
	else
		w->outer[w->outer_seen++ % OUTER_KEPT] = ip;
	return _URC_NO_REASON;
}

static uintptr_t interrupted_pc(const void *ucontext)
{
	const ucontext_t *uc = ucontext;

#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

static void on_signal(int signo, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	uint64_t want = atomic_load(&nat.request);

	(void)signo;
	/* only the sampler's requests, only the one meant for this thread */
	if (info->si_code == SI_TKILL && info->si_pid == getpid() && (want & 3) == REQUESTED &&
	    atomic_load(&nat.target) == (pid_t)syscall(SYS_gettid) &&
	    atomic_compare_exchange_strong(&nat.request, &want, (want & ~3ull) | WRITING)) {
		memset(&nat.walk, 0, sizeof nat.walk);
		nat.walk.pc0 = interrupted_pc(ucontext);
		if (nat.walk.pc0)
			_Unwind_Backtrace(walk_frame, &nat.walk);
		atomic_store(&nat.request, (want & ~3ull) | DONE);
	}
	errno = saved_errno;
}

/* ---- start ---------------------------------------------------------------------- */

struct find_text {
	uintptr_t inside; /* an address of the interpreter's */
	bool found;
};

static int find_interpreter_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_text *f = arg;
	bool mine = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && f->inside >= lo && f->inside < lo + ph->p_memsz)
			mine = true;
	}
	if (!mine)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nat.n_text < TEXT_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			nat.text_lo[nat.n_text] = info->dlpi_addr + ph->p_vaddr;
			nat.text_hi[nat.n_text++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		}
	}
	f->found = true;
	return 1;
}

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *ctx, void *arg)
{
	(void)ctx;
	++*(int *)arg;
	return _URC_NO_REASON;
}

/* A real-time signal nobody handles: the highest free below SIGRTMAX. */
static int free_signal(void)
{
	for (int s = SIGRTMAX - 1; s > SIGRTMIN + 2; s--) {
		struct sigaction old;

		if (sigaction(s, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL)
			return s;
	}
	return -1;
}

int python_native__start(uint64_t interpreter_address, const char **why)
{
	struct find_text f = { .inside = (uintptr_t)interpreter_address };
	struct sigaction sa;
	int frames = 0;

#if !defined(__x86_64__) && !defined(__aarch64__)
	*why = "native frames are read on x86-64 and AArch64 only";
	return -1;
#endif
	/* the unwinder's lock-free way to the unwind tables (see the top) */
	if (!dlsym(RTLD_DEFAULT, "_dl_find_object")) {
		*why = "this C library (before glibc 2.35) has no lock-free _dl_find_object";
		return -1;
	}
	dl_iterate_phdr(find_interpreter_text, &f);
	if (!f.found || !nat.n_text) {
		*why = "the interpreter's code was not found";
		return -1;
	}
	nat.signo = free_signal();
	if (nat.signo < 0) {
		*why = "every real-time signal has a handler";
		return -1;
	}
	/* load the unwinder now, not first inside a handler */
	_Unwind_Backtrace(count_frame, &frames);
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(nat.signo, &sa, NULL) < 0) {
		*why = "the signal's handler could not be set";
		return -1;
	}
	nat.ready = true;
	return 0;
}

/* ---- the sampler's side ------------------------------------------------------- */

/* tid's record of unanswered requests; NULL when every slot is taken. */
static struct deaf *deaf_of(pid_t tid)
{
	struct deaf *free_slot = NULL;

	for (int i = 0; i < DEAF_SLOTS; i++) {
		if (nat.deaf[i].tid == tid)
			return &nat.deaf[i];
		if (!nat.deaf[i].misses && !free_slot)
			free_slot = &nat.deaf[i];
	}
	if (free_slot)
		*free_slot = (struct deaf){ .tid = tid };
	return free_slot;
}

/* Ask tid for its walk; true when it answered. */
static bool ask(pid_t tid)
{
	uint64_t req, have;
	struct deaf *deaf = deaf_of(tid);
	int64_t deadline, now = (int64_t)collector__monotonic_ns();

	if (deaf && deaf->misses >= DEAF_AFTER && now < deaf->until_ns)
		return false;
	req = (++nat.seq << 2) | REQUESTED;
	atomic_store(&nat.target, tid);
	atomic_store(&nat.request, req);
	if (syscall(SYS_tgkill, getpid(), tid, nat.signo) < 0) {
		atomic_store(&nat.request, (uint64_t)IDLE);
		return false;
	}
	deadline = now + ANSWER_NS;
	for (;;) {
		have = atomic_load(&nat.request);
		if (have == ((req & ~3ull) | DONE))
			break;
		/* not started in time: withdrawn, unless the handler just took it */
		if (have == req && (int64_t)collector__monotonic_ns() > deadline) {
			if (atomic_compare_exchange_strong(&nat.request, &have, (uint64_t)IDLE)) {
				if (deaf && ++deaf->misses >= DEAF_AFTER)
					deaf->until_ns = (int64_t)collector__monotonic_ns() + DEAF_FOR_NS;
				return false;
			}
			continue;
		}
		sched_yield();
	}
	if (deaf)
		*deaf = (struct deaf){ 0 };
	atomic_store(&nat.request, (uint64_t)IDLE);
	return true;
}

/* The library's file name, without its folders. */
static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "?";
}

static struct py_frame_ref name_pc(uintptr_t pc)
{
	struct py_frame_ref f = { .kind = PROF_PY_FRAME_NATIVE };
	Dl_info info;
	char text[512];
	char *demangled = NULL;
	const char *fn;

	if (!dladdr((void *)pc, &info) || !info.dli_fname) {
		snprintf(text, sizeof text, "0x%lx", (unsigned long)pc);
		f.function = python_names__intern(text, strlen(text));
		f.file = python_names__intern("?", 1);
		return f;
	}
	demangled = collector__demangle(info.dli_sname);
	fn = demangled ? demangled : info.dli_sname;
	if (fn)
		snprintf(text, sizeof text, "%s", fn);
	else /* a function the library does not export: its offset in it */
		snprintf(text, sizeof text, "+0x%lx", (unsigned long)(pc - (uintptr_t)info.dli_fbase));
	free(demangled);
	f.function = python_names__intern(text, strlen(text));
	fn = base_name(info.dli_fname);
	f.file = python_names__intern(fn, strlen(fn));
	return f;
}

/* pc's frame, named once. */
static struct py_frame_ref frame_of(uintptr_t pc)
{
	size_t j;

	if ((nat.names_used + 1) * 2 > nat.names_cap) {
		size_t cap = nat.names_cap ? nat.names_cap * 2 : 4096;
		struct name_slot *n = calloc(cap, sizeof *n);

		if (!n)
			return name_pc(pc);
		for (size_t i = 0; i < nat.names_cap; i++) {
			if (!nat.names[i].pc)
				continue;
			for (j = (nat.names[i].pc >> 2) & (cap - 1); n[j].pc; j = (j + 1) & (cap - 1))
				;
			n[j] = nat.names[i];
		}
		free(nat.names);
		nat.names = n;
		nat.names_cap = cap;
	}
	for (j = (pc >> 2) & (nat.names_cap - 1); nat.names[j].pc; j = (j + 1) & (nat.names_cap - 1))
		if (nat.names[j].pc == pc)
			return nat.names[j].frame;
	nat.names[j].pc = pc;
	nat.names[j].frame = name_pc(pc);
	nat.names_used++;
	return nat.names[j].frame;
}

int python_native__stack(int64_t tid, struct py_frame_ref *out, int cap)
{
	const struct walk *w = &nat.walk;
	long outer;
	int n = 0;

	if (!nat.ready || tid <= 0 || cap <= 0 || !ask((pid_t)tid) || !w->started)
		return 0;
	for (int i = 0; i < w->n_inner && n < cap; i++)
		out[n++] = frame_of(w->inner[i]);
	outer = w->outer_seen < OUTER_KEPT ? w->outer_seen : OUTER_KEPT;
	if (w->outer_seen > OUTER_KEPT && n < cap) {
		char text[64];

		snprintf(text, sizeof text, "[%ld native frames]", w->outer_seen - OUTER_KEPT);
		out[n++] = (struct py_frame_ref){ .function = python_names__intern(text, strlen(text)),
						  .file = python_names__intern("?", 1),
						  .kind = PROF_PY_FRAME_NATIVE };
	}
	for (long i = w->outer_seen - outer; i < w->outer_seen && n < cap; i++)
		out[n++] = frame_of(w->outer[i % OUTER_KEPT]);
	return n;
}
