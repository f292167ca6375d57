/* run_signals.c - SIGINT and SIGTERM while a program runs under perfkit.
 *
 * The program runs in perfkit's process group, as it would run in the
 * shell's job without perfkit: it shares the terminal, reads it, stops
 * with Ctrl-Z and resumes with the job. So a signal sent to the group
 * reaches both perfkit and the program: the terminal's Ctrl-C, `kill -INT
 * -PGID`, and timeout(1), which signals its child (perfkit) and then the
 * child's group. Passing perfkit's copy on would make the program see it
 * twice. A signal sent to perfkit's pid alone (`kill -INT PID`, `timeout
 * --foreground`, a script's `kill $!`) reaches only perfkit, and must be
 * passed on, once.
 *
 * What perfkit learns from a signal cannot tell these apart: the siginfo
 * says who sent it (a process, or the terminal's driver), not whether it
 * went to perfkit or to its group. Forwarding only what a process outside
 * the program's group sent (sudo's rule) gives the program `kill -INT
 * -PGID` from another terminal twice and loses a script's `kill $!` (the
 * script is in the group); ignoring SIGINT while waiting (GNU time,
 * system()) loses `kill -INT PID`; a process group of the program's own
 * (tini) would take it out of the terminal's foreground group, where it
 * reads the terminal and stops with the job.
 *
 * So perfkit asks the group. A witness process, forked into it, blocks
 * SIGINT and SIGTERM and never takes them: a signal sent to the group stays
 * pending there, where /proc/PID/status shows it, whether the witness has
 * run since or not (the kernel marks every member of the group within the
 * sender's one kill()). A copy perfkit receives is passed on
 * RUN_SIGNALS_PASS_ON_MS later unless the witness shows the signal by then
 * (timeout signals the group just after perfkit); once it shows, the copies
 * perfkit receives within that time are the group's (timeout's second
 * one), and a new witness takes the old one's place. A signal the program
 * sent perfkit is not sent back to it. Where no witness can be had (no
 * fork, no /proc), perfkit passes on at once what a process sent, and not
 * what the terminal sent (that went to the whole foreground group).
 *
 * The handlers only count and wake the loop that waits for the program
 * (run_signals__wait, which polls a pipe they write); the loop decides. */
#include "run_signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PASS_ON_NS ((int64_t)RUN_SIGNALS_PASS_ON_MS * 1000000)

enum { WATCH_INT, WATCH_TERM, WATCHED };
static const int watched_signal[WATCHED] = { SIGINT, SIGTERM };

static int watched_index(int sig)
{
	for (int i = 0; i < WATCHED; i++)
		if (watched_signal[i] == sig)
			return i;
	return -1;
}

/* Written by the handlers. */
static volatile sig_atomic_t last_signal, program_pid;
static volatile sig_atomic_t received[WATCHED];        /* copies received, a count */
static volatile sig_atomic_t sent_by_process[WATCHED]; /* one of them a process sent */
static volatile sig_atomic_t deferred;                 /* the loop decides, not the handler */
static volatile sig_atomic_t wake_write = -1;          /* the pipe the loop polls */
static int wake_read = -1;

static int catch_depth;
static bool caught[WATCHED]; /* handled, old_action[] what perfkit found */
static struct sigaction old_action[WATCHED], old_child_action;

/* The loop's view of the copies. */
static struct {
	pid_t witness;                     /* 0: none */
	sig_atomic_t seen[WATCHED];        /* received[] at the last pass */
	bool by_process[WATCHED];          /* the waiting copy came from a process */
	int64_t waiting_since_ns[WATCHED]; /* a copy waits for its decision; 0: none */
	int64_t quiet_until_ns[WATCHED];   /* copies received before this are the group's */
} pass;

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void wake(void)
{
	int saved = errno, fd = wake_write;

	if (fd >= 0 && write(fd, "", 1) < 0) {
		/* a full pipe already wakes the loop */
	}
	errno = saved;
}

static void on_signal(int sig, siginfo_t *info, void *ctx)
{
	pid_t program = (pid_t)program_pid;
	bool by_process = info->si_code <= 0; /* kill, sigqueue, tgkill: not the terminal */
	int i = watched_index(sig);

	(void)ctx;
	last_signal = sig;
	if (program <= 0 || i < 0 || (by_process && info->si_pid == program))
		return;
	if (!deferred) {
		if (by_process)
			kill(program, sig);
		return;
	}
	if (by_process)
		sent_by_process[i] = 1;
	received[i]++;
	wake();
}

static void on_child(int sig)
{
	(void)sig;
	wake();
}

void run_signals__catch(void)
{
	struct sigaction sa;

	if (catch_depth++)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/* one handler at a time: copies are counted in the order they came */
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < WATCHED; i++)
		sigaddset(&sa.sa_mask, watched_signal[i]);
	for (int i = 0; i < WATCHED; i++)
		caught[i] = sigaction(watched_signal[i], &sa, &old_action[i]) == 0;
}

void run_signals__restore(void)
{
	if (catch_depth == 0 || --catch_depth)
		return;
	for (int i = 0; i < WATCHED; i++)
		if (caught[i])
			sigaction(watched_signal[i], &old_action[i], NULL);
}

int run_signals__take(void)
{
	int sig = last_signal;

	last_signal = 0;
	return sig;
}

void run_signals__child_reset(void)
{
	for (int i = 0; i < WATCHED; i++)
		if (caught[i])
			sigaction(watched_signal[i], &old_action[i], NULL);
}

/* ---- the witness ------------------------------------------------------------ */

static _Noreturn void witness_main(pid_t parent)
{
	struct sigaction keep, ignore;

	/* perfkit's end, however it comes, is the witness's */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(0);
	memset(&keep, 0, sizeof keep);
	memset(&ignore, 0, sizeof ignore);
	keep.sa_handler = SIG_DFL; /* blocked, so left pending: the record */
	ignore.sa_handler = SIG_IGN;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, watched_index(sig) >= 0 ? &keep : &ignore, NULL);
	for (;;)
		pause();
}

/* A new witness in perfkit's process group, its watched signals blocked
 * from its first instruction; 0 when none could be forked. */
static pid_t witness_start(void)
{
	sigset_t watched, old;
	pid_t parent = getpid(), pid;

	sigemptyset(&watched);
	for (int i = 0; i < WATCHED; i++)
		sigaddset(&watched, watched_signal[i]);
	sigprocmask(SIG_BLOCK, &watched, &old);
	pid = fork();
	if (pid == 0)
		witness_main(parent);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return pid > 0 ? pid : 0;
}

static void witness_end(pid_t witness)
{
	if (witness <= 0)
		return;
	kill(witness, SIGKILL);
	while (waitpid(witness, NULL, 0) < 0 && errno == EINTR)
		;
}

/* The mask of a "Name:\t<hex>" line of a /proc status file. */
static bool status_mask(const char *status, const char *name, unsigned long long *mask)
{
	const char *at = strstr(status, name);
	char *end;

	if (!at)
		return false;
	*mask = strtoull(at + strlen(name), &end, 16);
	return end != at + strlen(name);
}

/* Which watched signals are pending in the witness, a bit per index; -1
 * when that cannot be read (the witness is gone). */
static int witness_pending(pid_t witness)
{
	char path[64], status[4096];
	unsigned long long shared, own;
	ssize_t n;
	int fd, bits = 0;

	snprintf(path, sizeof path, "/proc/%d/status", (int)witness);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, status, sizeof status - 1);
	close(fd);
	if (n <= 0)
		return -1;
	status[n] = '\0';
	if (strstr(status, "\nState:\tZ") || !status_mask(status, "\nShdPnd:", &shared) ||
	    !status_mask(status, "\nSigPnd:", &own))
		return -1;
	for (int i = 0; i < WATCHED; i++)
		if ((shared | own) & (1ULL << (watched_signal[i] - 1)))
			bits |= 1 << i;
	return bits;
}

/* ---- passing on --------------------------------------------------------------- */

void run_signals__pass_on_to(pid_t program)
{
	struct sigaction sa;
	int fds[2];

	memset(&pass, 0, sizeof pass);
	for (int i = 0; i < WATCHED; i++)
		pass.seen[i] = received[i];
	program_pid = program;
	/* without the pipe the handler passes on at once, as the terminal's
	 * signals aside */
	if (pipe(fds) < 0)
		return;
	for (int i = 0; i < 2; i++) {
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
		fcntl(fds[i], F_SETFL, O_NONBLOCK);
	}
	wake_read = fds[0];
	wake_write = fds[1];
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, &old_child_action);
	pass.witness = witness_start();
	deferred = 1;
}

void run_signals__stop(void)
{
	int fd = wake_write;

	program_pid = 0;
	deferred = 0;
	witness_end(pass.witness);
	pass.witness = 0;
	if (fd < 0)
		return;
	sigaction(SIGCHLD, &old_child_action, NULL);
	wake_write = -1;
	close(fd);
	close(wake_read);
	wake_read = -1;
}

/* The copies received since the last pass, each waiting for its decision
 * unless the group had the signal a moment ago. */
static void note_copies(int64_t now)
{
	for (int i = 0; i < WATCHED; i++) {
		sig_atomic_t got = received[i];

		if (got == pass.seen[i])
			continue;
		pass.seen[i] = got;
		if (now < pass.quiet_until_ns[i])
			continue;
		if (sent_by_process[i]) {
			sent_by_process[i] = 0;
			pass.by_process[i] = true;
		}
		if (!pass.waiting_since_ns[i])
			pass.waiting_since_ns[i] = now;
	}
}

/* The signals the witness shows reached the program with the group: their
 * copies are not passed on, and a new witness watches for the next ones. */
static void ask_the_group(int64_t now)
{
	int pending = pass.witness ? witness_pending(pass.witness) : -1;
	pid_t old = pass.witness;

	if (pending < 0 && old) {
		witness_end(old); /* gone: the rule without one, from now on */
		pass.witness = 0;
	}
	if (pending <= 0)
		return;
	for (int i = 0; i < WATCHED; i++) {
		if (!(pending & (1 << i)))
			continue;
		pass.quiet_until_ns[i] = now + PASS_ON_NS;
		pass.waiting_since_ns[i] = 0;
		pass.by_process[i] = false;
	}
	pass.witness = witness_start();
	witness_end(old);
}

/* Decide on the copies received. How many ms until the next decision is
 * due; -1 when none waits. */
static int pass_on(pid_t program)
{
	int64_t now = monotonic_ns(), next_ns = -1;

	note_copies(now);
	ask_the_group(now);
	/* the due ones in the order they came: the program sees them so */
	for (;;) {
		int oldest = -1;

		for (int i = 0; i < WATCHED; i++)
			if (pass.waiting_since_ns[i] &&
			    (oldest < 0 || pass.waiting_since_ns[i] < pass.waiting_since_ns[oldest]))
				oldest = i;
		if (oldest < 0)
			break;
		if (pass.witness && now < pass.waiting_since_ns[oldest] + PASS_ON_NS) {
			next_ns = pass.waiting_since_ns[oldest] + PASS_ON_NS - now;
			break;
		}
		if (pass.witness || pass.by_process[oldest])
			kill(program, watched_signal[oldest]);
		pass.waiting_since_ns[oldest] = 0;
		pass.by_process[oldest] = false;
	}
	return next_ns < 0 ? -1 : (int)((next_ns + 999999) / 1000000);
}

pid_t run_signals__wait(pid_t program, int *status, bool block)
{
	for (;;) {
		struct pollfd wake_up = { .fd = wake_read, .events = POLLIN };
		char drain[64];
		pid_t got;
		int due_ms;

		/* Emptied before the program is asked after, never between that
		 * and the poll: a SIGCHLD that comes once waitpid has said "still
		 * running" then leaves its byte for the poll, which would
		 * otherwise wait for good on a program that has ended. */
		while (wake_read >= 0 && read(wake_read, drain, sizeof drain) > 0)
			;
		got = waitpid(program, status, WNOHANG);
		if (got < 0 && errno == EINTR)
			continue;
		if (got != 0)
			return got;
		if (!deferred) {
			/* the handler passes signals on itself */
			if (!block)
				return 0;
			do
				got = waitpid(program, status, 0);
			while (got < 0 && errno == EINTR);
			return got;
		}
		due_ms = pass_on(program);
		if (!block)
			return 0;
		/* woken by a signal, the program's end (SIGCHLD) or a decision due */
		poll(&wake_up, 1, due_ms);
	}
}
