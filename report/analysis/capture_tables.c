/* capture_tables.c - adds the analysis tables (metrics, peaks, findings) to a
 * finished capture through its own SQLite connection. See capture_tables.h. */
#include "capture_tables.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "diagnose.h"

static const char *const schema =
	"CREATE TABLE IF NOT EXISTS PERFKIT_KERNEL_METRICS ("
	" globalPid INTEGER NOT NULL, correlationId INTEGER NOT NULL, deviceId INTEGER,"
	" durationNs INTEGER, flopsF64 REAL, flopsF32 REAL, flopsF16 REAL, tensorInst REAL,"
	" dramReadBytes INTEGER, dramWriteBytes INTEGER, l2Bytes INTEGER);"
	"CREATE INDEX IF NOT EXISTS PERFKIT_KERNEL_METRICS_corr"
	" ON PERFKIT_KERNEL_METRICS(globalPid, correlationId);"
	"CREATE TABLE IF NOT EXISTS PERFKIT_PEAKS (key TEXT PRIMARY KEY, value REAL, text TEXT);"
	"CREATE TABLE IF NOT EXISTS PERFKIT_FINDINGS (rank INTEGER, rule TEXT, title TEXT,"
	" severity TEXT, share REAL, timeNs INTEGER, evidence TEXT, change TEXT);";

static int open_rw(const char *capture, sqlite3 **db, struct prof_error *err)
{
	if (sqlite3_open_v2(capture, db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		int rc = prof_error__set(err, PROF_E_IO, "%s: cannot open for writing: %s", capture,
					 *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return rc;
	}
	sqlite3_busy_timeout(*db, 5000);
	return 0;
}

static int exec(sqlite3 *db, const char *capture, const char *sql, struct prof_error *err)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int rc = prof_error__set(err, PROF_E_SQL, "%s: %s", capture, msg ? msg : "SQL error");
		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

/* nsys's shortName: the function name without return type, namespace-free
 * template arguments or parameters ("void ns::k<float>(int)" -> "k"). */
static void short_name(char *dst, size_t cap, const char *demangled)
{
	const char *end = demangled + strcspn(demangled, "(<");
	const char *begin = demangled;

	for (const char *p = demangled; p < end; p++)
		if (*p == ' ' || *p == ':')
			begin = p + 1;
	snprintf(dst, cap, "%.*s", (int)(end - begin), begin);
}

static sqlite3_int64 intern(sqlite3 *db, const char *text)
{
	sqlite3_stmt *st = NULL;
	sqlite3_int64 id = 0;

	if (sqlite3_prepare_v2(db, "SELECT id FROM StringIds WHERE value = ?1 LIMIT 1", -1, &st, NULL))
		return 0;
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (id)
		return id;
	if (sqlite3_prepare_v2(db, "INSERT INTO StringIds (value) VALUES (?1)", -1, &st, NULL))
		return 0;
	sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_DONE)
		id = sqlite3_last_insert_rowid(db);
	sqlite3_finalize(st);
	return id;
}

/* Profiled launches have no kernel row (CUPTI gives replayed kernels no
 * timestamps): rebuild it from the launch described on the metrics line. The
 * kernel ran inside the launch call, so it ends by the call's EXIT. */
static int rebuild_kernel(sqlite3 *db, char **f, sqlite3_int64 gpid)
{
	static const char *const sql =
		"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,"
		" correlationId, globalPid, demangledName, shortName, mangledName, registersPerThread,"
		" gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory)"
		" SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19"
		" WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL"
		"  WHERE correlationId = ?6 AND globalPid = ?7)";
	long long dur = atoll(f[3]), enter = atoll(f[11]), leave = atoll(f[12]);
	long long start = leave - dur > enter ? leave - dur : enter;
	char shortn[512];
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL))
		return -1;
	short_name(shortn, sizeof shortn, f[25]);
	sqlite3_bind_int64(st, 1, start);
	sqlite3_bind_int64(st, 2, start + dur);
	sqlite3_bind_int64(st, 3, atoll(f[2]));
	sqlite3_bind_int64(st, 4, atoll(f[23]));
	sqlite3_bind_int64(st, 5, atoll(f[22]));
	sqlite3_bind_int64(st, 6, atoll(f[1]));
	sqlite3_bind_int64(st, 7, gpid);
	sqlite3_bind_int64(st, 8, intern(db, f[25]));
	sqlite3_bind_int64(st, 9, intern(db, shortn));
	sqlite3_bind_int64(st, 10, intern(db, f[24]));
	sqlite3_bind_int64(st, 11, atoll(f[20]));
	for (int i = 0; i < 6; i++)
		sqlite3_bind_int64(st, 12 + i, atoll(f[13 + i]));
	sqlite3_bind_int64(st, 18, atoll(f[21]));
	sqlite3_bind_int64(st, 19, atoll(f[19]));
	rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
	sqlite3_finalize(st);
	return rc;
}

#define TSV_METRIC_FIELDS 11
#define TSV_LAUNCH_FIELDS 26

static int import_tsv(sqlite3 *db, sqlite3_stmt *ins, bool have_kernels, const char *path,
		      struct prof_error *err)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	int rows = 0;

	if (!f)
		return prof_error__set(err, PROF_E_IO, "%s: cannot open", path);
	while (fgets(line, sizeof line, f)) {
		char *field[TSV_LAUNCH_FIELDS], *save = NULL, *end;
		int n = 0;
		sqlite3_int64 gpid;

		if (!strchr(line, '\n'))
			continue; /* cut short by a dying process */
		line[strcspn(line, "\n")] = 0;
		for (char *t = strtok_r(line, "\t", &save); t && n < TSV_LAUNCH_FIELDS; t = strtok_r(NULL, "\t", &save))
			field[n++] = t;
		if (n != TSV_METRIC_FIELDS && n != TSV_LAUNCH_FIELDS)
			continue;
		strtoll(field[0], &end, 10);
		if (*end)
			continue;
		gpid = (sqlite3_int64)((atoll(field[0]) & 0xFFFFFF) << 24);
		sqlite3_bind_int64(ins, 1, gpid);
		sqlite3_bind_int64(ins, 2, atoll(field[1]));
		sqlite3_bind_int64(ins, 3, atoll(field[2]));
		sqlite3_bind_int64(ins, 4, atoll(field[3]));
		for (int i = 4; i < 8; i++) /* "-": not measured (--metrics=memory) */
			if (strcmp(field[i], "-"))
				sqlite3_bind_double(ins, i + 1, atof(field[i]));
			else
				sqlite3_bind_null(ins, i + 1);
		for (int i = 8; i < 11; i++)
			sqlite3_bind_int64(ins, i + 1, atoll(field[i]));
		if (sqlite3_step(ins) != SQLITE_DONE ||
		    (n == TSV_LAUNCH_FIELDS && have_kernels && rebuild_kernel(db, field, gpid))) {
			fclose(f);
			return prof_error__set(err, PROF_E_SQL, "%s: %s", path, sqlite3_errmsg(db));
		}
		sqlite3_reset(ins);
		rows++;
	}
	fclose(f);
	return rows;
}

static bool has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st = NULL;
	bool yes = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		yes = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	return yes;
}

int ctab__import_metrics_dir(const char *capture, const char *dir, struct prof_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	int total = 0, rc = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[4096];
		size_t len = strlen(e->d_name);

		if (strncmp(e->d_name, "metrics-", 8) || len < 5 || strcmp(e->d_name + len - 4, ".tsv"))
			continue;
		if (!db) {
			rc = open_rw(capture, &db, err);
			if (!rc)
				rc = exec(db, capture, schema, err);
			if (!rc)
				rc = exec(db, capture, "BEGIN", err);
			if (!rc && sqlite3_prepare_v2(db,
					"INSERT INTO PERFKIT_KERNEL_METRICS VALUES (?,?,?,?,?,?,?,?,?,?,?)",
					-1, &ins, NULL) != SQLITE_OK)
				rc = prof_error__set(err, PROF_E_SQL, "%s: %s", capture, sqlite3_errmsg(db));
			if (rc)
				goto out;
		}
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		rc = import_tsv(db, ins, has_table(db, "CUPTI_ACTIVITY_KIND_KERNEL"), path, err);
		if (rc < 0)
			goto out;
		total += rc;
		rc = 0;
	}
	if (db)
		rc = exec(db, capture, "COMMIT", err);
out:
	sqlite3_finalize(ins);
	sqlite3_close(db);
	closedir(d);
	return rc < 0 ? rc : total;
}

int ctab__peaks_cache_path(char *buf, size_t cap, const char *uuid)
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

int ctab__store_peaks_json(const char *capture, const char *json_text, struct prof_error *err)
{
	cJSON *root = cJSON_Parse(json_text), *peaks, *it;
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	int rc;

	peaks = cJSON_GetObjectItemCaseSensitive(root, "peaks");
	if (!cJSON_IsObject(peaks)) {
		cJSON_Delete(root);
		return prof_error__set(err, PROF_E_USAGE, "peaks document has no \"peaks\" object");
	}
	rc = open_rw(capture, &db, err);
	if (!rc)
		rc = exec(db, capture, schema, err);
	if (!rc)
		rc = exec(db, capture, "BEGIN; DELETE FROM PERFKIT_PEAKS", err);
	if (!rc && sqlite3_prepare_v2(db, "INSERT INTO PERFKIT_PEAKS VALUES (?, ?, ?)", -1, &ins, NULL))
		rc = prof_error__set(err, PROF_E_SQL, "%s: %s", capture, sqlite3_errmsg(db));
	if (rc)
		goto out;
	cJSON_ArrayForEach(it, peaks) {
		if (!cJSON_IsNumber(it))
			continue;
		sqlite3_bind_text(ins, 1, it->string, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(ins, 2, it->valuedouble);
		sqlite3_bind_null(ins, 3);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto sqlerr;
		sqlite3_reset(ins);
	}
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "gpu_uuid" : "gpu_name";
		cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
		if (!cJSON_IsString(v))
			continue;
		sqlite3_bind_text(ins, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_null(ins, 2);
		sqlite3_bind_text(ins, 3, v->valuestring, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto sqlerr;
		sqlite3_reset(ins);
	}
	rc = exec(db, capture, "COMMIT", err);
	goto out;
sqlerr:
	rc = prof_error__set(err, PROF_E_SQL, "%s: %s", capture, sqlite3_errmsg(db));
out:
	sqlite3_finalize(ins);
	sqlite3_close(db);
	cJSON_Delete(root);
	return rc;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
	    (buf = malloc((size_t)len + 1))) {
		if (fread(buf, 1, (size_t)len, f) == (size_t)len) {
			buf[len] = 0;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

int ctab__store_cached_peaks(const char *capture, struct prof_error *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char uuid[256] = "", path[4096];
	char *json;
	int rc;

	rc = open_rw(capture, &db, err);
	if (rc)
		return rc;
	if (sqlite3_prepare_v2(db, "SELECT uuid FROM TARGET_INFO_GPU ORDER BY id LIMIT 1", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(uuid, sizeof uuid, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (!uuid[0] || ctab__peaks_cache_path(path, sizeof path, uuid))
		return 0;
	json = read_file(path);
	if (!json)
		return 0;
	rc = ctab__store_peaks_json(capture, json, err);
	free(json);
	return rc ? rc : 1;
}

int ctab__store_findings(const char *capture, const struct diag_report *r, struct prof_error *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	int rc = open_rw(capture, &db, err);

	if (!rc)
		rc = exec(db, capture, schema, err);
	if (!rc)
		rc = exec(db, capture, "BEGIN; DELETE FROM PERFKIT_FINDINGS", err);
	if (!rc && sqlite3_prepare_v2(db, "INSERT INTO PERFKIT_FINDINGS VALUES (?,?,?,?,?,?,?,?)", -1, &ins,
				      NULL) != SQLITE_OK)
		rc = prof_error__set(err, PROF_E_SQL, "%s: %s", capture, sqlite3_errmsg(db));
	for (int i = 0; !rc && i < r->nfindings; i++) {
		const struct diag_finding *f = &r->findings[i];
		sqlite3_bind_int(ins, 1, i + 1);
		sqlite3_bind_text(ins, 2, f->rule_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, f->title, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 4, diag_severity__name(f->severity), -1, SQLITE_STATIC);
		sqlite3_bind_double(ins, 5, f->share);
		sqlite3_bind_int64(ins, 6, f->time_ns);
		sqlite3_bind_text(ins, 7, f->evidence, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 8, f->change, -1, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			rc = prof_error__set(err, PROF_E_SQL, "%s: %s", capture, sqlite3_errmsg(db));
		sqlite3_reset(ins);
	}
	if (!rc)
		rc = exec(db, capture, "COMMIT", err);
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return rc;
}
