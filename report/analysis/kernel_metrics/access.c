/* access.c - access efficiency per kernel from the access counters (see
 * access.h). */
#include "access.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "kernel_rows.h"
#include "prof/tables.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/error.h"

double access__sectors_per_request(const struct access_counts *c)
{
	return c->requests > 0 ? c->sectors / c->requests : 0;
}

/* Measured on an H100 (ncu, cuBLAS's sm80_xmma SGEMM): cp.async copies
 * from global to shared memory (LDGSTS, how cuBLAS, CUTLASS and cuDNN load
 * their tiles) are global load requests that touch sectors
 * (l1tex__t_{requests,sectors}_pipe_lsu_mem_global_op_ld), but their bytes
 * are counted apart (sm__sass_data_bytes_mem_global_op_ldgsts), not in the
 * _op_ld bytes a capture holds: 131,072 requests, 524,288 sectors and 0
 * bytes, where the copies asked for 16 MiB. A full warp's request asks for
 * at least 32 bytes; fewer than one byte per thread of every request say
 * that some requests came without their bytes. */
bool access__bytes_left_out(const struct access_counts *c)
{
	return c->bytes_requested >= 0 && c->requests > 0 &&
	       c->bytes_requested < c->requests * ACCESS_WARP_THREADS;
}

double access__bytes_asked(const struct access_counts *c)
{
	if (c->bytes_requested < 0 || access__bytes_left_out(c))
		return -1;
	return c->requests > 0 ? c->bytes_requested : 0;
}

/* The ideal per request when the bytes do not give it: 4-byte words where
 * they were not measured; where cp.async copies left theirs out, the width
 * of those copies (4, 8 or 16 bytes a thread) is unknown and the widest is
 * assumed, so that 16-byte tile copies are not taken for waste. */
static double assumed_ideal(const struct access_counts *c)
{
	return access__bytes_left_out(c) ? ACCESS_CP_ASYNC_IDEAL_SECTORS : ACCESS_DEFAULT_IDEAL_SECTORS;
}

/* The sectors the direction's requests would touch at best: the bytes they
 * asked for in whole sectors, and at least one per request. */
static double ideal_sectors(const struct access_counts *c)
{
	double bytes = access__bytes_asked(c);
	double by_bytes = bytes >= 0 ? bytes / ACCESS_SECTOR_BYTES : c->requests * assumed_ideal(c);

	return by_bytes > c->requests ? by_bytes : c->requests;
}

double access__ideal_sectors_per_request(const struct access_counts *c)
{
	if (c->requests <= 0)
		return ACCESS_DEFAULT_IDEAL_SECTORS;
	return ideal_sectors(c) / c->requests;
}

int access__word_bytes(const struct access_counts *c)
{
	double per_thread;

	if (access__bytes_asked(c) <= 0)
		return 0;
	per_thread = c->bytes_requested / c->requests / ACCESS_WARP_THREADS;
	for (int w = 1; w <= 16; w *= 2)
		if (fabs(per_thread - w) <= 0.1 * w)
			return w;
	return 0;
}

double access__overfetch(const struct access_kernel *k)
{
	double ideal = ideal_sectors(&k->ld) + ideal_sectors(&k->st);

	if (k->measured <= 0 || ideal <= 0)
		return 0;
	return (k->ld.sectors + k->st.sectors) / ideal;
}

enum access_verdict access__judge(const struct access_kernel *k, double max_overfetch)
{
	double over = access__overfetch(k);

	if (over <= 0)
		return ACCESS_UNKNOWN;
	return over > max_overfetch ? ACCESS_WASTEFUL : ACCESS_EFFICIENT;
}

bool access__recorded(struct prof_store *s)
{
	/* captures from before these counters (added together) have the
	 * table without them */
	return prof_store__has_column(s, PROF_T_KERNEL_METRICS, "ldSectors");
}

void access__free(struct access_kernel *k, int n)
{
	for (int i = 0; i < n; i++)
		free(k[i].name);
	free(k);
}

const struct access_kernel *access__find(const struct access_kernel *k, int n, const char *name)
{
	for (int i = 0; name && i < n; i++)
		if (!strcmp(k[i].name, name))
			return &k[i];
	return NULL;
}

/* Counters summed per direction; the bytes count only when every measured
 * launch has them. */
static void read_counts(struct prof_cursor *c, int col, int64_t measured, struct access_counts *out)
{
	out->sectors = prof_cursor__is_null(c, col) ? 0 : prof_cursor__double(c, col);
	out->requests = prof_cursor__is_null(c, col + 1) ? 0 : prof_cursor__double(c, col + 1);
	out->bytes_requested = prof_cursor__int64(c, col + 3) == measured && !prof_cursor__is_null(c, col + 2)
				       ? prof_cursor__double(c, col + 2)
				       : -1;
}

static int read_access_row(void *row, struct prof_cursor *c, const void *ctx)
{
	struct access_kernel *e = row;

	(void)ctx;
	if (kernel_rows__name(c, &e->name))
		return PROF_E_NOMEM;
	e->launches = prof_cursor__int64(c, 1);
	e->time_ns = prof_cursor__int64(c, 2);
	e->measured = prof_cursor__int64(c, 3);
	read_counts(c, 4, e->measured, &e->ld);
	read_counts(c, 8, e->measured, &e->st);
	e->l1_hit_pct = prof_cursor__is_null(c, 12) ? -1 : prof_cursor__double(c, 12);
	e->l2_hit_pct = prof_cursor__is_null(c, 13) ? -1 : prof_cursor__double(c, 13);
	return 0;
}

int access__load(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct access_kernel **out,
		 int *n, struct prof_error *err)
{
	/* the names and the window are those of roof__load, so that a
	 * roofline kernel finds its access figures by name */
	const char *sql =
		"SELECT (SELECT value FROM " PROF_T_STRINGS " WHERE id = a.nid), a.launches, a.total,"
		" b.measured, b.lds, b.ldr, b.ldb, b.ldbn, b.sts, b.str, b.stb, b.stbn, b.l1, b.l2"
		/* sums as roof__load makes them: none fails the query */
		" FROM (SELECT " PROF_SQL_KERNEL_NAME_ID("") " AS nid, count(*) AS launches,"
		"       " SUM_TOTAL_SATURATED("end - start") " AS total"
		"       FROM " PROF_T_KERNEL " WHERE start >= ?1 AND start < ?2 AND NOT " SUM_BAD_SPAN("")
		"       GROUP BY 1) a"
		" JOIN (SELECT " PROF_SQL_KERNEL_NAME_ID("k.") " AS nid, count(*) AS measured,"
		"       total(m.ldSectors) AS lds, total(m.ldRequests) AS ldr,"
		"       total(m.ldBytesRequested) AS ldb, count(m.ldBytesRequested) AS ldbn,"
		"       total(m.stSectors) AS sts, total(m.stRequests) AS str,"
		"       total(m.stBytesRequested) AS stb, count(m.stBytesRequested) AS stbn,"
		"       avg(m.l1HitPct) AS l1, avg(m.l2HitPct) AS l2"
		"       FROM " PROF_T_KERNEL_METRICS " m JOIN " PROF_T_KERNEL " k"
		"       ON k.correlationId = m.correlationId AND k.globalPid = m.globalPid"
		"       WHERE k.start >= ?1 AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.")
		"       AND m.ldSectors IS NOT NULL GROUP BY 1) b"
		" ON a.nid = b.nid ORDER BY a.total DESC";
	void *k;
	int cnt, rc;

	*out = NULL;
	*n = 0;
	if (!access__recorded(s))
		return 0;
	rc = kernel_rows__read(s, sql, from_ns, to_ns, sizeof **out, read_access_row, NULL, &k, &cnt,
			       err);
	if (rc < 0) {
		access__free(k, cnt);
		return rc;
	}
	*out = k;
	*n = cnt;
	return 0;
}
