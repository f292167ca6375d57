/* roofline.c - per-kernel arithmetic intensity, achieved rates and class
 * against the measured (or nominal) ceilings. See roofline.h. */
#include "roofline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/core/gpu_work.h"
#include "kernel_rows.h"
#include "occupancy.h"
#include "prof/output.h"
#include "prof/tables.h"
#include "sink/table.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/error.h"

const char *roof_class__name(enum roof_class c)
{
	switch (c) {
	case ROOF_MEMORY: return "memory-bound";
	case ROOF_COMPUTE: return "compute-bound";
	case ROOF_LATENCY: return "latency-bound";
	case ROOF_LAUNCH: return "launch-bound";
	}
	return "?";
}

static const struct {
	const char *name, *peak_key;
	/* dense FLOPs per SM per clock (NVIDIA's A100 and H100 figures) */
	double sm80_per_clock, sm90_per_clock;
} tensor_precisions[ROOF_T__COUNT] = {
	[ROOF_T_F16] = { "FP16", "tensor_fp16_flops_per_s", 2048, 4096 },
	[ROOF_T_BF16] = { "BF16", "tensor_bf16_flops_per_s", 2048, 4096 },
	[ROOF_T_TF32] = { "TF32", "tensor_tf32_flops_per_s", 1024, 2048 },
	[ROOF_T_F64] = { "FP64", "tensor_fp64_flops_per_s", 128, 256 },
	[ROOF_T_F8] = { "FP8", "tensor_fp8_flops_per_s", 0, 8192 },
};

const char *roof_tensor__name(enum roof_tensor t)
{
	return t >= 0 && t < ROOF_T__COUNT ? tensor_precisions[t].name : "?";
}

/* The tensor ceilings perfkit peaks did not measure, from the GPU's SM
 * count and clock where its architecture's rate per clock is known. */
static void nominal_tensor(struct roof_peaks *p, const struct occ_gpu *g)
{
	for (int t = 0; t < ROOF_T__COUNT; t++) {
		double per_clock = 0;

		if (g->compute_major == 8 && g->compute_minor == 0)
			per_clock = tensor_precisions[t].sm80_per_clock;
		else if (g->compute_major == 9)
			per_clock = tensor_precisions[t].sm90_per_clock;
		if (p->tensor_flops_per_s[t] <= 0)
			p->tensor_flops_per_s[t] = (double)g->sm_count * per_clock * (double)g->clock_rate_hz;
	}
}

int roof_peaks__load(struct prof_store *s, struct roof_peaks *p, struct prof_error *err)
{
	struct occ_gpu g;
	int rc;

	memset(p, 0, sizeof *p);
	{
		struct prof_cursor *c;
		rc = prof_cursor__open(s, "SELECT key, value, text FROM " PROF_T_PEAKS, &c, err);
		if (rc)
			return rc;
		while ((rc = prof_cursor__next(c, err)) == 1) {
			const char *k = prof_cursor__text(c, 0);
			double v = prof_cursor__is_null(c, 1) ? 0 : prof_cursor__double(c, 1);
			if (!k)
				continue;
			if (!strcmp(k, "dram_bytes_per_s")) p->dram_bytes_per_s = v;
			else if (!strcmp(k, "l2_bytes_per_s")) p->l2_bytes_per_s = v;
			else if (!strcmp(k, "fp64_flops_per_s")) p->fp64_flops_per_s = v;
			else if (!strcmp(k, "fp32_flops_per_s")) p->fp32_flops_per_s = v;
			else if (!strcmp(k, "fp16_flops_per_s")) p->fp16_flops_per_s = v;
			else if (!strcmp(k, "bf16_flops_per_s")) p->bf16_flops_per_s = v;
			else if (!strcmp(k, "gpu_name") && prof_cursor__text(c, 2))
				snprintf(p->source, sizeof p->source, "measured by perfkit peaks on %s",
					 prof_cursor__text(c, 2));
			for (int t = 0; t < ROOF_T__COUNT; t++)
				if (!strcmp(k, tensor_precisions[t].peak_key) && v > 0) {
					p->tensor_flops_per_s[t] = v;
					p->tensor_measured[t] = true;
				}
		}
		prof_cursor__close(c);
		if (rc < 0)
			return rc;
		if (p->dram_bytes_per_s > 0 && p->fp32_flops_per_s > 0) {
			p->measured = true;
			if (!p->source[0])
				snprintf(p->source, sizeof p->source, "measured by perfkit peaks");
			/* a capture without a GPU row keeps only the measured ones */
			if (occ_gpu__from_store(s, 0, &g, NULL) == 0)
				nominal_tensor(p, &g);
			return 0;
		}
	}
	/* nominal ceilings: 128 FP32 and 64 FP64 lanes per SM on sm_80/sm_90 */
	rc = occ_gpu__from_store(s, 0, &g, err);
	if (rc)
		return rc;
	p->dram_bytes_per_s = (double)g.memory_bandwidth_bytes_per_s;
	p->fp32_flops_per_s = (double)g.sm_count * 128 * 2 * (double)g.clock_rate_hz;
	p->fp64_flops_per_s = (double)g.sm_count * 64 * 2 * (double)g.clock_rate_hz;
	p->fp16_flops_per_s = 2 * p->fp32_flops_per_s;
	p->bf16_flops_per_s = p->fp16_flops_per_s;
	nominal_tensor(p, &g);
	snprintf(p->source, sizeof p->source,
		 "nominal from " PROF_T_GPU " (%.100s); run `perfkit peaks` for measured ceilings",
		 g.name[0] ? g.name : "unknown GPU");
	return 0;
}

void roof__derive(struct roof_kernel *k, const struct roof_peaks *p)
{
	double t = k->metric_time_ns > 0 ? (double)k->metric_time_ns * 1e-9 : 0;
	double bytes_roof, tensor = 0, cuda_core_max;

	k->tensor_precision = -1;
	for (int i = 0; i < ROOF_T__COUNT; i++) {
		tensor += k->tensor_flops[i];
		if (k->tensor_flops[i] > 0 &&
		    (k->tensor_precision < 0 || k->tensor_flops[i] > k->tensor_flops[k->tensor_precision]))
			k->tensor_precision = i;
	}
	k->flops = k->flops_f64 + k->flops_f32 + k->flops_f16 + tensor;
	k->ai_dram = k->dram_bytes > 0 ? k->flops / k->dram_bytes : 0;
	k->ai_l2 = k->l2_bytes > 0 ? k->flops / k->l2_bytes : 0;
	k->flops_per_s = t > 0 ? k->flops / t : 0;
	k->dram_bytes_per_s = t > 0 ? k->dram_bytes / t : 0;
	k->l2_bytes_per_s = t > 0 ? k->l2_bytes / t : 0;
	if (k->flops_f64 >= k->flops_f32 && k->flops_f64 >= k->flops_f16)
		k->peak_flops = p->fp64_flops_per_s;
	else if (k->flops_f16 > k->flops_f32)
		k->peak_flops = p->fp16_flops_per_s;
	else
		k->peak_flops = p->fp32_flops_per_s;
	if (k->flops <= 0)
		k->peak_flops = p->fp32_flops_per_s;
	/* a kernel whose tensor cores did most of its FLOPs has their roof;
	 * one of an unknown rate keeps its CUDA cores' (its fraction then
	 * reads high rather than pass for latency-bound) */
	cuda_core_max = fmax(k->flops_f64, fmax(k->flops_f32, k->flops_f16));
	if (k->tensor_precision >= 0 && k->tensor_flops[k->tensor_precision] > cuda_core_max &&
	    p->tensor_flops_per_s[k->tensor_precision] > 0)
		k->peak_flops = p->tensor_flops_per_s[k->tensor_precision];
	else if (k->tensor_precision >= 0 && k->tensor_flops[k->tensor_precision] <= cuda_core_max)
		k->tensor_precision = -1;

	/* the roof at this intensity is min(peak, AI * bandwidth); the fraction
	 * achieved of it is the distance to the nearer roof */
	if (k->flops > 0 && k->dram_bytes > 0 && p->dram_bytes_per_s > 0) {
		bytes_roof = k->ai_dram * p->dram_bytes_per_s;
		double roof = bytes_roof < k->peak_flops ? bytes_roof : k->peak_flops;
		k->roof_fraction = roof > 0 ? k->flops_per_s / roof : 0;
		k->klass = bytes_roof < k->peak_flops ? ROOF_MEMORY : ROOF_COMPUTE;
	} else if (p->dram_bytes_per_s > 0 && k->dram_bytes > 0) {
		k->roof_fraction = k->dram_bytes_per_s / p->dram_bytes_per_s;
		k->klass = ROOF_MEMORY;
	} else {
		k->roof_fraction = k->peak_flops > 0 ? k->flops_per_s / k->peak_flops : 0;
		k->klass = ROOF_COMPUTE;
	}
	if (k->roof_fraction < ROOF_LATENCY_FRACTION)
		k->klass = ROOF_LATENCY;
	if (k->launches >= ROOF_LAUNCH_MIN_COUNT && k->time_ns / k->launches < ROOF_LAUNCH_MAX_NS)
		k->klass = ROOF_LAUNCH;
}

bool roof__any_flops(const struct roof_kernel *k, int n)
{
	for (int i = 0; i < n; i++)
		if (k[i].has_flops)
			return true;
	return false;
}

int roof__tensor_unknown(const struct roof_kernel *k, int n)
{
	int count = 0;

	for (int i = 0; i < n; i++)
		count += k[i].has_flops && !k[i].has_tensor_flops && k[i].tensor_inst > 0;
	return count;
}

void roof__free(struct roof_kernel *k, int n)
{
	for (int i = 0; i < n; i++)
		free(k[i].name);
	free(k);
}

int roof__count_measured(struct prof_store *s, int64_t *n, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc;

	*n = 0;
	rc = prof_cursor__open(s, "SELECT count(*) FROM " PROF_T_KERNEL_METRICS, &c, err);
	if (rc < 0)
		return rc;
	rc = prof_cursor__next(c, err);
	if (rc > 0)
		*n = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int read_roof_row(void *row, struct prof_cursor *c, const void *peaks)
{
	struct roof_kernel *e = row;

	if (kernel_rows__name(c, &e->name))
		return PROF_E_NOMEM;
	e->launches = prof_cursor__int64(c, 1);
	e->time_ns = prof_cursor__int64(c, 2);
	e->measured = prof_cursor__int64(c, 3);
	e->metric_time_ns = prof_cursor__int64(c, 4);
	e->flops_f64 = prof_cursor__double(c, 5);
	e->flops_f32 = prof_cursor__double(c, 6);
	e->flops_f16 = prof_cursor__double(c, 7);
	e->tensor_inst = prof_cursor__double(c, 8);
	e->dram_bytes = prof_cursor__double(c, 9);
	e->l2_bytes = prof_cursor__double(c, 10);
	e->has_flops = prof_cursor__int64(c, 11) > 0;
	for (int t = 0; t < ROOF_T__COUNT; t++)
		e->tensor_flops[t] = prof_cursor__double(c, 12 + t);
	e->has_tensor_flops = prof_cursor__int64(c, 12 + ROOF_T__COUNT) > 0;
	roof__derive(e, peaks);
	return 0;
}

int roof__load(struct prof_store *s, const struct roof_peaks *p, int64_t from_ns, int64_t to_ns,
	       struct roof_kernel **out, int *n, struct prof_error *err)
{
	const char *sql =
		"SELECT (SELECT value FROM " PROF_T_STRINGS " WHERE id = a.nid), a.launches, a.total,"
		" b.measured, b.mt, b.f64, b.f32, b.f16, b.tensor, b.dram, b.l2, b.counted,"
		" b.t16, b.tb16, b.tf32, b.t64, b.t8, b.tensor_counted"
		/* sums that cannot fail the query with "integer overflow" (a
		 * damaged file's counters, kernels of 2^62 ns), read as doubles or
		 * held at INT64_MAX; kernels with a bad span left out, as the
		 * kernel summary leaves them out */
		" FROM (SELECT " PROF_SQL_KERNEL_NAME_ID("") " AS nid, count(*) AS launches,"
		"       " SUM_TOTAL_SATURATED("end - start") " AS total"
		"       FROM " PROF_T_KERNEL " WHERE start >= ?1 AND start < ?2 AND NOT " SUM_BAD_SPAN("")
		"       GROUP BY 1) a"
		" JOIN (SELECT " PROF_SQL_KERNEL_NAME_ID("k.") " AS nid, count(m.durationNs) AS measured,"
		"       " SUM_TOTAL_SATURATED("m.durationNs") " AS mt,"
		"       total(m.flopsF64) AS f64, total(m.flopsF32) AS f32, total(m.flopsF16) AS f16,"
		"       total(m.tensorInst) AS tensor, total(m.dramReadBytes + m.dramWriteBytes) AS dram,"
		"       total(m.l2Bytes) AS l2, count(m.flopsF32) AS counted,"
		"       total(m.tensorFlopsF16) AS t16, total(m.tensorFlopsBF16) AS tb16,"
		"       total(m.tensorFlopsTF32) AS tf32, total(m.tensorFlopsF64) AS t64,"
		"       total(m.tensorFlopsF8) AS t8,"
		"       count(coalesce(m.tensorFlopsF16, m.tensorFlopsBF16, m.tensorFlopsTF32,"
		"                      m.tensorFlopsF64, m.tensorFlopsF8)) AS tensor_counted"
		"       FROM " PROF_T_KERNEL_METRICS " m JOIN " PROF_T_KERNEL " k"
		"       ON k.correlationId = m.correlationId AND k.globalPid = m.globalPid"
		/* launches measured for their access counters alone carry no
		 * duration, bytes or FLOPs: they are not roofline rows */
		"       WHERE k.start >= ?1 AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.")
		"       AND m.durationNs IS NOT NULL GROUP BY 1) b"
		" ON a.nid = b.nid ORDER BY a.total DESC";
	void *k;
	int cnt, rc;

	*out = NULL;
	*n = 0;
	rc = kernel_rows__read(s, sql, from_ns, to_ns, sizeof **out, read_roof_row, p, &k, &cnt, err);
	if (rc < 0) {
		roof__free(k, cnt);
		return rc;
	}
	*out = k;
	*n = cnt;
	return 0;
}

int roof__rows(const struct roof_kernel *k, int n, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = {
		{ "Kernel", RPT_TEXT, 0 },
		{ "Launches", RPT_INT, 0 },
		{ "Measured", RPT_INT, 0 },
		{ "Total Time (ns)", RPT_INT, 0 },
		{ "GFLOP/s", RPT_REAL, 1 },
		{ "DRAM GB/s", RPT_REAL, 1 },
		{ "L2 GB/s", RPT_REAL, 1 },
		{ "AI DRAM (FLOP/B)", RPT_REAL, 3 },
		{ "AI L2 (FLOP/B)", RPT_REAL, 3 },
		{ "Roof (%)", RPT_PERCENT, 1 },
		{ "Class", RPT_TEXT, 0 },
	};
	int rc = sink->begin(sink, "roofline", "Roofline: per-kernel intensity and achieved rates",
			     cols, (int)(sizeof cols / sizeof cols[0]));

	for (int i = 0; !rc && i < n; i++) {
		struct rpt_cell cells[11] = {
			{ .s = k[i].name },
			{ .i = k[i].launches },
			{ .i = k[i].measured },
			{ .i = k[i].time_ns },
			{ .d = k[i].flops_per_s / 1e9, .is_null = !k[i].has_flops },
			{ .d = k[i].dram_bytes_per_s / 1e9 },
			{ .d = k[i].l2_bytes_per_s / 1e9, .is_null = k[i].l2_bytes <= 0 },
			{ .d = k[i].ai_dram, .is_null = k[i].dram_bytes <= 0 || !k[i].has_flops },
			{ .d = k[i].ai_l2, .is_null = k[i].l2_bytes <= 0 || !k[i].has_flops },
			{ .d = 100 * k[i].roof_fraction },
			{ .s = roof_class__name(k[i].klass) },
		};
		rc = sink->row(sink, cells);
	}
	if (!rc)
		rc = sink->end(sink);
	return rc;
}

/* Gnuplot reads the kernel names from the data file, so they only need the
 * data-file quoting: no double quotes or newlines inside a quoted field. */
static void put_dat_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		fputc(*s == '"' || *s == '\n' || *s == '\r' || *s == '\\' ? '\'' : *s, f);
	fputc('"', f);
}

const char *const roof_plot_files[ROOF_PLOT_FILES] = { "roofline-points.dat", "roofline-roofs.dat",
							"roofline.gp" };

static void put_points(FILE *f, const struct roof_kernel *k, int n)
{
	double max_t = 1;

	for (int i = 0; i < n; i++)
		if ((double)k[i].time_ns > max_t)
			max_t = (double)k[i].time_ns;
	fprintf(f, "# ai_dram_flop_per_byte gflop_per_s point_size total_time_ns name\n");
	for (int i = 0; i < n; i++) {
		if (k[i].ai_dram <= 0 || k[i].flops_per_s <= 0)
			continue;
		fprintf(f, "%.6g %.6g %.3f %lld ", k[i].ai_dram, k[i].flops_per_s / 1e9,
			0.5 + 3.0 * sqrt((double)k[i].time_ns / max_t), (long long)k[i].time_ns);
		put_dat_string(f, k[i].name);
		fputc('\n', f);
	}
}

/* The highest tensor-core ceiling among the kernels' roofs, 0 when none
 * has one. */
static double tensor_roof(const struct roof_kernel *k, int n, const struct roof_peaks *p)
{
	double best = 0;

	for (int i = 0; i < n; i++)
		if (k[i].tensor_precision >= 0 && p->tensor_flops_per_s[k[i].tensor_precision] > best)
			best = p->tensor_flops_per_s[k[i].tensor_precision];
	return best;
}

/* the DRAM and L2 slopes up to the FP32 ridge, then the flat FP32 roof; a
 * ceiling not measured is NaN (the script then leaves its line out), and
 * the DRAM slope up to the tensor-core roof where a kernel has one */
static void put_roofs(FILE *f, const struct roof_peaks *p, double tensor)
{
	fprintf(f, "# ai gflop_per_s_dram gflop_per_s_l2 gflop_per_s_dram_tensor\n");
	for (double ai = 1.0 / 64; ai <= 4096; ai *= 1.25) {
		double dram = ai * p->dram_bytes_per_s, l2 = ai * p->l2_bytes_per_s;
		double dram_tensor = fmin(dram, tensor);
		if (dram > p->fp32_flops_per_s)
			dram = p->fp32_flops_per_s;
		if (l2 > p->fp32_flops_per_s)
			l2 = p->fp32_flops_per_s;
		fprintf(f, "%.6g %.6g ", ai, dram / 1e9);
		if (p->l2_bytes_per_s > 0)
			fprintf(f, "%.6g", l2 / 1e9);
		else
			fputs("NaN", f);
		if (tensor > 0)
			fprintf(f, " %.6g\n", dram_tensor / 1e9);
		else
			fputs(" NaN\n", f);
	}
}

static void put_script(FILE *f, bool l2_roof, bool tensor_roof)
{
	fputs("# roofline.gp - log-log roofline; run with: gnuplot roofline.gp (writes roofline.svg)\n"
	      "set terminal svg size 900,600 background rgb 'white'\n"
	      "set output 'roofline.svg'\n"
	      "set logscale xy\n"
	      "set xlabel 'arithmetic intensity (FLOP/byte, DRAM)'\n"
	      "set ylabel 'GFLOP/s'\n"
	      "set key top left\n"
	      "plot 'roofline-roofs.dat' using 1:2 with lines lw 2 title 'DRAM roof + FP32 peak', \\\n",
	      f);
	if (l2_roof)
		fputs("     'roofline-roofs.dat' using 1:3 with lines dt 2 title 'L2 roof', \\\n", f);
	if (tensor_roof)
		fputs("     'roofline-roofs.dat' using 1:4 with lines lw 2 dt 3 title 'DRAM roof + tensor-core peak', \\\n",
		      f);
	fputs("     'roofline-points.dat' using 1:2:3 with points pt 7 ps variable title 'kernels (size: total time)'\n",
	      f);
}

int roof__write_plot(const char *dir, const struct roof_kernel *k, int n, const struct roof_peaks *p,
		     unsigned flags, struct prof_error *err)
{
	struct prof_output *out[ROOF_PLOT_FILES] = { NULL };
	char path[4096];
	int rc = 0;

	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return prof_error__set(err, PROF_E_IO, "cannot create %s: %s", dir, strerror(errno));
	/* every file refused or opened before any is written: a refusal
	 * leaves the folder as it was */
	for (int i = 0; !rc && i < ROOF_PLOT_FILES; i++) {
		if (snprintf(path, sizeof path, "%s/%s", dir, roof_plot_files[i]) >= (int)sizeof path)
			rc = prof_error__set(err, PROF_E_IO, "%s: name too long", dir);
		else
			rc = prof_output__open(path, flags, NULL, &out[i], err);
	}
	if (!rc) {
		put_points(prof_output__stream(out[0]), k, n);
		double tensor = tensor_roof(k, n, p);

		put_roofs(prof_output__stream(out[1]), p, tensor);
		put_script(prof_output__stream(out[2]), p->l2_bytes_per_s > 0, tensor > 0);
	}
	for (int i = 0; !rc && i < ROOF_PLOT_FILES; i++)
		rc = prof_output__commit(out[i], err);
	for (int i = 0; i < ROOF_PLOT_FILES; i++)
		prof_output__delete(out[i]);
	return rc;
}
