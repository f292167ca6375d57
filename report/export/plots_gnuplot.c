/* plots_gnuplot.c - finding and running gnuplot, and bringing the SVG it
 * draws into a page (see plots_gnuplot.h). */
#include "plots_gnuplot.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/file.h"
#include "prof/temp_files.h"

/* Plots are drawn from binned data, so their SVG stays small. */
#define SVG_MAX_BYTES ((size_t)64 << 20)

static bool is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int plots_path(char *buf, size_t cap, const char *dir, const char *name, struct prof_error *err)
{
	int n = snprintf(buf, cap, "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= cap)
		return prof_error__set(err, PROF_E_IO, "path too long: %s/%s", dir, name);
	return 0;
}

bool gnuplot__find(const char *program, char *path, size_t cap)
{
	const char *dirs = getenv("PATH");

	if (!program || !*program)
		return false;
	if (strchr(program, '/')) {
		snprintf(path, cap, "%s", program);
		return is_executable(path);
	}
	while (dirs && *dirs) {
		size_t len = strcspn(dirs, ":");
		int n = len ? snprintf(path, cap, "%.*s/%s", (int)len, dirs, program)
			    : snprintf(path, cap, "./%s", program);

		if (n > 0 && (size_t)n < cap && is_executable(path))
			return true;
		dirs += len + (dirs[len] == ':');
	}
	return false;
}

int gnuplot__write_file(const char *dir, const char *name, const char *text,
			struct prof_error *err)
{
	char path[4096];
	FILE *f;

	if (plots_path(path, sizeof path, dir, name, err) < 0)
		return err->code;
	if (prof_temp__add(path, PROF_TEMP_FILE) < 0)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	f = fopen(path, "w");
	if (!f)
		return prof_error__set(err, PROF_E_IO, "cannot write '%s': %s", path, strerror(errno));
	fputs(text, f);
	if (fclose(f) != 0)
		return prof_error__set(err, PROF_E_IO, "cannot write '%s'", path);
	return 0;
}

/* The SVG gnuplot wrote; a missing file says gnuplot did not write it. */
static char *read_svg(const char *path, struct prof_error *err)
{
	FILE *f = fopen(path, "rb");
	char *svg;

	if (!f) {
		prof_error__set(err, PROF_E_IO, "gnuplot wrote no '%s'", path);
		return NULL;
	}
	if (prof_file__read_stream(f, SVG_MAX_BYTES, &svg, NULL))
		prof_error__set(err, PROF_E_IO, "cannot read '%s'", path);
	fclose(f);
	return svg;
}

static bool starts(const char *p, const char *prefix)
{
	return strncmp(p, prefix, strlen(prefix)) == 0;
}

/* Skip an element <tag>...</tag> at p; returns the position after it. */
static const char *skip_element(const char *p, const char *close)
{
	const char *end = strstr(p, close);

	return end ? end + strlen(close) : p;
}

int gnuplot__inline_svg(const char *path, const char *id_prefix, FILE *out,
			struct prof_error *err)
{
	static const char *const refs[] = { "id=\"", "id='", "href=\"#", "href='#", "url(#" };
	char *svg = read_svg(path, err);
	const char *p;
	bool in_body = false;

	if (!svg)
		return err->code;
	p = strstr(svg, "<svg");
	if (!p) {
		free(svg);
		return prof_error__set(err, PROF_E_IO, "'%s' is not an SVG file", path);
	}
	while (*p) {
		size_t i;

		/* gnuplot's <title>Gnuplot</title> would be every plot's tooltip */
		if (!in_body && (starts(p, "<title>") || starts(p, "<desc>"))) {
			p = skip_element(p, starts(p, "<title>") ? "</title>" : "</desc>");
			continue;
		}
		if (starts(p, "<g"))
			in_body = true;
		if (starts(p, "<g ")) {
			/* a group with nothing in it draws nothing; gnuplot's
			 * first ones' attributes hang on what the process drew
			 * before, so they are left out */
			const char *open_end = strchr(p, '>'), *q = open_end ? open_end + 1 : p;

			q += strspn(q, " \t\r\n");
			if (open_end && open_end[-1] != '/' && starts(q, "</g>")) {
				p = q + strlen("</g>");
				p += *p == '\n';
				continue;
			}
		}
		for (i = 0; i < sizeof refs / sizeof refs[0]; i++)
			if (starts(p, refs[i]) && (refs[i][0] != 'i' || (p > svg && strchr(" \t\n", p[-1]))))
				break;
		if (i < sizeof refs / sizeof refs[0]) {
			fputs(refs[i], out);
			fprintf(out, "%s-", id_prefix);
			p += strlen(refs[i]);
			continue;
		}
		fputc(*p++, out);
	}
	fputc('\n', out);
	free(svg);
	return ferror(out) ? PROF_E_IO : 0;
}

int plots_tmpdir__create(char *path, size_t cap, struct prof_error *err)
{
	struct prof_error why;

	if (prof_temp_dir__create("perfkit-html", path, cap, &why) < 0)
		return prof_error__set(err, why.code, "cannot create a folder for the plots: %s",
				       why.msg);
	return 0;
}

static void remove_tree(const char *path, int depth)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		struct prof_error ignored;
		char child[4096];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    plots_path(child, sizeof child, path, e->d_name, &ignored) < 0)
			continue;
		if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (depth > 0)
				remove_tree(child, depth - 1);
		} else {
			unlink(child);
		}
	}
	closedir(d);
	rmdir(path);
}

void plots_tmpdir__remove(const char *path)
{
	remove_tree(path, 1);
	prof_temp__forget_tree(path);
}

FILE *plots_data__open(const char *dir, const char *name, struct prof_error *err)
{
	char path[4096];
	FILE *f;

	if (plots_path(path, sizeof path, dir, name, err) < 0)
		return NULL;
	if (prof_temp__add(path, PROF_TEMP_FILE) < 0) {
		prof_error__set(err, PROF_E_NOMEM, "out of memory");
		return NULL;
	}
	f = fopen(path, "w");
	if (!f)
		prof_error__set(err, PROF_E_IO, "cannot write '%s'", path);
	return f;
}

int plots_data__close(FILE *f, struct prof_error *err)
{
	bool failed = ferror(f) != 0;

	if (fclose(f) != 0 || failed)
		return prof_error__set(err, PROF_E_IO, "cannot write a plot data file");
	return 0;
}
