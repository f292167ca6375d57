/* peaks_doc.c - the peaks document of `perfkit peaks`: its cache path, and
 * its numbers and GPU names as PERFKIT_PEAKS rows. See peaks_doc.h. */
#include "peaks_doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "prof/analysis_tables.h"
#include "prof/file.h"
#include "prof/store.h"

int peaks_doc__cache_path(char *buf, size_t cap, const char *uuid)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char base[3072];

	if (xdg && *xdg)
		snprintf(base, sizeof base, "%s/perfkit", xdg);
	else if (home && *home)
		snprintf(base, sizeof base, "%s/.cache/perfkit", home);
	else
		return PROF_E_IO;
	/* the uuid names a file: keep only characters that are safe in one */
	snprintf(buf, cap, "%s/peaks-", base);
	for (const char *p = uuid; *p; p++) {
		size_t n = strlen(buf);
		char ch = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  *p == '-' ? *p : '_';
		if (n + 6 >= cap)
			return PROF_E_USAGE;
		buf[n] = ch;
		buf[n + 1] = 0;
	}
	strncat(buf, ".json", cap - strlen(buf) - 1);
	return 0;
}

/* The rows: every number of "peaks" in document order, then the GPU's name
 * and uuid as text. */
int peaks_doc__store(const char *capture, const char *json_text, struct prof_error *err)
{
	static const char *const text_keys[] = { "gpu_name", "gpu_uuid" };
	cJSON *root = cJSON_Parse(json_text), *peaks, *it;
	struct prof_peak *rows = NULL;
	int n = 0, rc;

	peaks = cJSON_GetObjectItemCaseSensitive(root, "peaks");
	if (!cJSON_IsObject(peaks)) {
		rc = prof_error__set(err, PROF_E_USAGE, "peaks document has no \"peaks\" object");
		goto out;
	}
	rows = calloc((size_t)cJSON_GetArraySize(peaks) + 2, sizeof *rows);
	if (!rows) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	cJSON_ArrayForEach(it, peaks)
		if (cJSON_IsNumber(it))
			rows[n++] = (struct prof_peak){ .key = it->string, .value = it->valuedouble };
	for (int i = 0; i < 2; i++) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(root, text_keys[i]);

		if (cJSON_IsString(v))
			rows[n++] = (struct prof_peak){ .key = text_keys[i], .text = v->valuestring };
	}
	rc = prof_analysis__store_peaks(capture, rows, n, err);
out:
	free(rows);
	cJSON_Delete(root);
	return rc;
}

/* The uuid of the capture's first GPU; "" when it names none. */
static int capture_gpu_uuid(const char *capture, char *uuid, size_t cap, struct prof_error *err)
{
	struct prof_store *s;
	struct prof_cursor *c;
	int rc = prof_store__open(capture, &s, err);

	uuid[0] = '\0';
	if (rc)
		return rc;
	/* a capture without the table or the column has no GPU to match */
	if (!prof_cursor__open(s, "SELECT uuid FROM TARGET_INFO_GPU ORDER BY id LIMIT 1", &c, NULL)) {
		if (prof_cursor__next(c, NULL) == 1 && prof_cursor__text(c, 0))
			snprintf(uuid, cap, "%s", prof_cursor__text(c, 0));
		prof_cursor__close(c);
	}
	prof_store__close(s);
	return 0;
}

int peaks_doc__store_cached(const char *capture, struct prof_error *err)
{
	char uuid[256], path[4096];
	char *json;
	int rc = capture_gpu_uuid(capture, uuid, sizeof uuid, err);

	if (rc)
		return rc;
	if (!uuid[0] || peaks_doc__cache_path(path, sizeof path, uuid))
		return 0;
	/* no cache, or one that cannot be read: nothing to store */
	if (prof_file__read(path, 0, &json, NULL))
		return 0;
	rc = peaks_doc__store(capture, json, err);
	free(json);
	return rc ? rc : 1;
}
