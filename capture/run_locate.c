/* run_locate.c - finding what a session needs before it starts: the
 * injection library, the program as exec would find it, and the output's
 * name (the default one, or -o's pattern expanded). */
#include "run_session_parts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/job_env.h"
#include "run_collector.h"

int run__exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

const char *run__base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* buf = dir/name when it fits and the file exists. */
static int found_at(char *buf, size_t cap, const char *dir, const char *name)
{
	int n = snprintf(buf, cap, "%s%s%s", dir, name ? "/" : "", name ? name : "");

	return n > 0 && (size_t)n < cap && run__exists(buf);
}

/* The injection library: next to the binary (a carried or relocated build),
 * in the build tree, or installed. */
int run__locate_collector(char *buf, size_t cap)
{
	const char *built = run_collector__build_path();
	char self[PATH_MAX];
	ssize_t n;

	if (!built)
		return -1;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (found_at(buf, cap, self, RUN_COLLECTOR_LIB) ||
			    found_at(buf, cap, self, "../collectors/" RUN_COLLECTOR_LIB))
				return 0;
		}
	}
	if (found_at(buf, cap, built, NULL) ||
	    found_at(buf, cap, PERFKIT_INSTALL_LIBDIR, RUN_COLLECTOR_LIB))
		return 0;
	return -2;
}

/* The shell's exit status for a program that could not be executed. */
int run__cannot_run_status(int err)
{
	return err == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_CANNOT_EXECUTE;
}

/* What a shell would do with the program name: 0 found, else the shell's
 * exit status (127 not found, 126 not executable) after its message. A
 * folder passes access(X_OK) (it can be searched) but cannot be run. */
int run__resolve_program(const struct run_messages *msg, const char *name, char *buf,
			   size_t cap)
{
	const char *path = getenv("PATH");
	struct stat st;

	if (strchr(name, '/')) {
		snprintf(buf, cap, "%s", name);
		if (stat(buf, &st) < 0) {
			int err = errno;

			msg->error("%s: %s", name, strerror(err));
			return run__cannot_run_status(err);
		}
		if (S_ISDIR(st.st_mode)) {
			msg->error("%s: Is a directory", name);
			return RUN_EXIT_CANNOT_EXECUTE;
		}
		if (!S_ISREG(st.st_mode) || access(buf, X_OK) != 0) {
			msg->error("%s: Permission denied", name);
			return RUN_EXIT_CANNOT_EXECUTE;
		}
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*name) {
		size_t len = strcspn(path, ":");

		snprintf(buf, cap, "%.*s%s%s", (int)len, len ? path : ".", "/", name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 0;
		if (!path[len])
			break;
		path += len + 1;
	}
	msg->error("%s: command not found", name);
	return RUN_EXIT_NOT_FOUND;
}

/* perfkit-<program>-N.sqlite, the first N that is free. */
int run__default_output(const char *program, char *buf, size_t cap)
{
	const char *base = strrchr(program, '/');
	char name[64];
	size_t i;

	base = base ? base + 1 : program;
	for (i = 0; base[i] && i < sizeof(name) - 1; i++) {
		char c = base[i];
		int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

		name[i] = plain ? c : '_';
	}
	name[i] = '\0';
	for (int n = 1; n < 100000; n++) {
		snprintf(buf, cap, "perfkit-%s-%d.sqlite", name, n);
		if (!run__exists(buf))
			return 0;
	}
	return -1;
}

static const char *process_env(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

/* -o with %h, %p, %r, %q{VAR}: one name per host, launcher or rank when the
 * same command line runs on every node (`srun perfkit run -o job-%h-%r`). */
int run__expand_output(const char *pattern, char *buf, size_t cap, struct prof_error *err)
{
	char host[256] = "";
	struct prof_pattern_values v = { host, (long)getpid(), process_env, NULL };

	gethostname(host, sizeof(host) - 1);
	return prof_output_pattern__expand(pattern, &v, buf, cap, err);
}
