/* child_ends_in_wait.c - an LD_PRELOAD shim that makes a program under
 * `perfkit run` end at the worst moment for the loop that waits for it:
 * just after waitpid(WNOHANG) has said it still runs, before that call
 * returns. The first time waitpid(PID, WNOHANG) finds PID running, the shim
 * sends PID SIGTERM and waits, without reaping it, until it has ended, so
 * its SIGCHLD has been handled by the time perfkit sees the 0. A loop that
 * drops that wake-up waits for good (tests/cli/test_run_program_ends_in_wait.sh).
 * Only perfkit's own process acts: the program inherits LD_PRELOAD, and a
 * shell there may use waitpid too. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int armed = -1;

/* Whether this process is perfkit (its name in /proc/self/comm). */
static int is_perfkit(void)
{
	char name[32] = "";
	int fd = open("/proc/self/comm", O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, name, sizeof name - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 && strncmp(name, "perfkit\n", 8) == 0;
}

pid_t waitpid(pid_t pid, int *status, int options)
{
	static pid_t (*real)(pid_t, int *, int);
	pid_t got;

	if (!real)
		real = (pid_t(*)(pid_t, int *, int))dlsym(RTLD_NEXT, "waitpid");
	got = real(pid, status, options);
	if (armed < 0)
		armed = is_perfkit();
	if (got == 0 && (options & WNOHANG) && pid > 0 && armed) {
		siginfo_t info;

		armed = 0;
		kill(pid, SIGTERM);
		while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
			;
	}
	return got;
}
