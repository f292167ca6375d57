/* run_python.c - what `perfkit run` asks of a Python program: its
 * nn.Modules marked (--pytorch=modules), its stacks sampled
 * (--python-sampling[=HZ]) or taken at each CUDA call
 * (--python-backtrace=cuda). All three go through the hook module in
 * python/ (sitecustomize.py), which the launcher puts first on PYTHONPATH;
 * a program that is not Python never reads it. */
#include "run_session_parts.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof/protocol.h"
#include "prof/trace_opts.h"

/* --python-sampling[=HZ]: samples a second, 0 when off, < 0 when the value
 * is not one (said). */
long run__python_sampling_hz(const struct run_session *s)
{
	return run__rate(s, "python-sampling", s->opt.python_sampling,
			 PROF_PYTHON_SAMPLING_HZ_DEFAULT, 1, PROF_PYTHON_SAMPLING_HZ_MAX);
}

int run__python_check(const struct run_session *s)
{
	if (s->opt.pytorch && strcmp(s->opt.pytorch, "modules")) {
		s->msg->error("--pytorch: unknown mode '%s' (choose modules)", s->opt.pytorch);
		return -1;
	}
	if (s->opt.pytorch && !(s->trace & PROF_TRACE_NVTX)) {
		s->msg->error("--pytorch=modules records NVTX ranges: add nvtx to --trace");
		return -1;
	}
	if (s->opt.python_backtrace && strcmp(s->opt.python_backtrace, "cuda")) {
		s->msg->error("--python-backtrace: unknown kind '%s' (choose cuda)",
			      s->opt.python_backtrace);
		return -1;
	}
	if (s->opt.python_native && strcmp(s->opt.python_native, "on") &&
	    strcmp(s->opt.python_native, "off")) {
		s->msg->error("--python-native-frames: '%s' is not on or off", s->opt.python_native);
		return -1;
	}
	if (s->opt.python_native && !s->opt.python_sampling) {
		s->msg->error("--python-native-frames goes with --python-sampling");
		return -1;
	}
	return run__python_sampling_hz(s) < 0 ? -1 : 0;
}

/* The hook's folder: beside the binary's folder (a build or a carried
 * build: build/python), or installed. */
static int locate_hook(char *buf, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (snprintf(buf, cap, "%s/../python", self) < (int)cap) {
				char probe[PATH_MAX + 32];

				snprintf(probe, sizeof probe, "%s/sitecustomize.py", buf);
				if (run__exists(probe))
					return 0;
			}
		}
	}
	if (snprintf(buf, cap, "%s", PERFKIT_INSTALL_PYTHONDIR) < (int)cap) {
		char probe[PATH_MAX + 32];

		snprintf(probe, sizeof probe, "%s/sitecustomize.py", buf);
		if (run__exists(probe))
			return 0;
	}
	return -1;
}

int run__python_env(const struct run_session *s)
{
	long hz = run__python_sampling_hz(s);
	char dir[PATH_MAX], num[32], *path;
	const char *old = getenv("PYTHONPATH");
	int rc;

	unsetenv(PROF_ENV_PYTORCH);
	unsetenv(PROF_ENV_PYTHON_SAMPLING);
	unsetenv(PROF_ENV_PYTHON_BACKTRACE);
	unsetenv(PROF_ENV_PYTHON_NATIVE);
	if (!s->opt.pytorch && !hz && !s->opt.python_backtrace)
		return 0;
	if (locate_hook(dir, sizeof dir) < 0) {
		s->msg->error("cannot find perfkit's Python hook (sitecustomize.py) next to perfkit "
			      "or in %s", PERFKIT_INSTALL_PYTHONDIR);
		return -1;
	}
	snprintf(num, sizeof num, "%ld", hz);
	if ((s->opt.pytorch && setenv(PROF_ENV_PYTORCH, s->opt.pytorch, 1) < 0) ||
	    (hz && setenv(PROF_ENV_PYTHON_SAMPLING, num, 1) < 0) ||
	    (s->opt.python_backtrace &&
	     setenv(PROF_ENV_PYTHON_BACKTRACE, s->opt.python_backtrace, 1) < 0) ||
	    (s->opt.python_native && setenv(PROF_ENV_PYTHON_NATIVE, s->opt.python_native, 1) < 0) ||
	    setenv(PROF_ENV_PYTHON_HOOK_DIR, dir, 1) < 0)
		goto fail;
	path = malloc(strlen(dir) + (old ? strlen(old) : 0) + 2);
	if (!path)
		goto fail;
	sprintf(path, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
	rc = setenv("PYTHONPATH", path, 1);
	free(path);
	if (rc < 0)
		goto fail;
	return 0;
fail:
	s->msg->error("cannot set the Python hook's environment");
	return -1;
}
