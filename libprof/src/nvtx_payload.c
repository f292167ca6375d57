/* nvtx_payload.c - decoding NVTX extended payloads with their schemas (see
 * prof/nvtx_payload.h).
 *
 * The schemas of a store are held in memory, sorted by (domain, schema,
 * process), each with its entries sorted by index and its enum values.
 * Decoding walks a schema's entries over a byte range of the blob: an entry
 * at offset o of size n is read only when o + n lies inside the range
 * (checked without overflow), a nested schema gets the sub-range it
 * occupies, and strings are copied up to their first NUL inside their own
 * bytes. Numbers are assembled byte by byte as little-endian, the layout
 * nsys and the collector record on x86-64 and AArch64. */
#include "prof/nvtx_payload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/array.h"
#include "prof/tables.h"

/* ---- blobs -------------------------------------------------------------- */

static uint64_t le_u64(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

int prof_nvtx_blob__header(const void *blob, size_t len, struct prof_nvtx_blob_header *h)
{
	const unsigned char *b = blob;

	memset(h, 0, sizeof *h);
	if (!blob || len < PROF_NVTX_BLOB_HEADER)
		return PROF_E_CORRUPT;
	h->domain_id = le_u64(b, 8);
	h->schema_id = le_u64(b + 8, 8);
	h->payload_size = le_u64(b + 16, 8);
	h->total_size = le_u64(b + 24, 8);
	if (h->payload_size > len - PROF_NVTX_BLOB_HEADER ||
	    h->total_size != h->payload_size + PROF_NVTX_BLOB_HEADER)
		return PROF_E_CORRUPT;
	return 0;
}

static void put_le_u64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (unsigned char)(v & 0xFF);
}

size_t prof_nvtx_payload__blob(void *buf, size_t cap, uint64_t domain_id, uint64_t schema_id,
			       const void *payload, size_t payload_size)
{
	unsigned char *b = buf;

	if (payload_size > SIZE_MAX - PROF_NVTX_BLOB_HEADER ||
	    cap < PROF_NVTX_BLOB_HEADER + payload_size)
		return 0;
	put_le_u64(b, domain_id);
	put_le_u64(b + 8, schema_id);
	put_le_u64(b + 16, payload_size);
	put_le_u64(b + 24, PROF_NVTX_BLOB_HEADER + payload_size);
	if (payload_size)
		memcpy(b + PROF_NVTX_BLOB_HEADER, payload, payload_size);
	return PROF_NVTX_BLOB_HEADER + payload_size;
}

/* ---- the schema set ----------------------------------------------------- */

struct ps_entry {
	uint64_t idx, flags, type, detail, offset;
	char *name;
};

struct ps_enum_value {
	uint64_t value;
	char *name;
};

struct ps_schema {
	int64_t pid; /* globalPid, -1 for none */
	uint64_t domain, id;
	char *name;
	uint64_t type, payload_size;
	bool described;       /* a NVTX_PAYLOAD_SCHEMAS row was seen */
	struct ps_entry *e;
	size_t ne, cap_e;
	struct ps_enum_value *v;
	size_t nv, cap_v;
};

struct prof_payload_schemas {
	struct ps_schema *s;
	size_t n, cap;
};

static int key_cmp(uint64_t d1, uint64_t s1, int64_t p1, uint64_t d2, uint64_t s2, int64_t p2)
{
	if (d1 != d2)
		return d1 < d2 ? -1 : 1;
	if (s1 != s2)
		return s1 < s2 ? -1 : 1;
	return (p1 > p2) - (p1 < p2);
}

/* The first schema not before (domain, id, pid). */
static size_t lower_bound(const struct prof_payload_schemas *ps, uint64_t domain, uint64_t id,
			  int64_t pid)
{
	size_t lo = 0, hi = ps->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ps_schema *m = &ps->s[mid];

		if (key_cmp(m->domain, m->id, m->pid, domain, id, pid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The schema of that key, made (empty) when the set has none yet: rows of
 * the three tables may come in any order. NULL when out of memory. */
static struct ps_schema *schema_at(struct prof_payload_schemas *ps, uint64_t domain, uint64_t id,
				   int64_t pid)
{
	size_t at;

	if (pid < 0)
		pid = -1;
	at = lower_bound(ps, domain, id, pid);
	if (at < ps->n && !key_cmp(ps->s[at].domain, ps->s[at].id, ps->s[at].pid, domain, id, pid))
		return &ps->s[at];
	if (prof_array__grow(&ps->s, &ps->cap, ps->n + 1, sizeof *ps->s))
		return NULL;
	memmove(&ps->s[at + 1], &ps->s[at], (ps->n - at) * sizeof *ps->s);
	ps->n++;
	memset(&ps->s[at], 0, sizeof ps->s[at]);
	ps->s[at].domain = domain;
	ps->s[at].id = id;
	ps->s[at].pid = pid;
	return &ps->s[at];
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int prof_payload_schemas__new(struct prof_payload_schemas **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : PROF_E_NOMEM;
}

int prof_payload_schemas__add_schema(struct prof_payload_schemas *ps,
				     const struct prof_payload_schema *row)
{
	struct ps_schema *s = schema_at(ps, row->domain_id, row->schema_id, row->global_pid);

	if (!s)
		return PROF_E_NOMEM;
	if (s->described)
		return 0; /* the first description of a key stands */
	s->described = true;
	s->type = row->type;
	s->payload_size = row->payload_size;
	s->name = dup_or_null(row->name);
	return row->name && !s->name ? PROF_E_NOMEM : 0;
}

int prof_payload_schemas__add_entry(struct prof_payload_schemas *ps,
				    const struct prof_payload_entry *row)
{
	struct ps_schema *s = schema_at(ps, row->domain_id, row->schema_id, row->global_pid);
	size_t at;

	if (!s)
		return PROF_E_NOMEM;
	for (at = s->ne; at > 0 && s->e[at - 1].idx > row->idx; at--)
		;
	if (at > 0 && s->e[at - 1].idx == row->idx)
		return 0; /* one entry per index: the first stands */
	if (prof_array__grow(&s->e, &s->cap_e, s->ne + 1, sizeof *s->e))
		return PROF_E_NOMEM;
	memmove(&s->e[at + 1], &s->e[at], (s->ne - at) * sizeof *s->e);
	s->ne++;
	s->e[at] = (struct ps_entry){ .idx = row->idx, .flags = row->flags, .type = row->type,
				      .detail = row->array_or_union_detail, .offset = row->offset };
	s->e[at].name = dup_or_null(row->name);
	return row->name && !s->e[at].name ? PROF_E_NOMEM : 0;
}

int prof_payload_schemas__add_enum_entry(struct prof_payload_schemas *ps,
					 const struct prof_payload_enum_entry *row)
{
	struct ps_schema *s = schema_at(ps, row->domain_id, row->schema_id, row->global_pid);

	if (!s)
		return PROF_E_NOMEM;
	if (prof_array__grow(&s->v, &s->cap_v, s->nv + 1, sizeof *s->v))
		return PROF_E_NOMEM;
	s->v[s->nv].value = row->value;
	s->v[s->nv].name = dup_or_null(row->name);
	if (row->name && !s->v[s->nv].name)
		return PROF_E_NOMEM;
	s->nv++;
	return 0;
}

size_t prof_payload_schemas__count(const struct prof_payload_schemas *ps)
{
	return ps ? ps->n : 0;
}

void prof_payload_schemas__delete(struct prof_payload_schemas *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->n; i++) {
		struct ps_schema *s = &ps->s[i];

		free(s->name);
		for (size_t j = 0; j < s->ne; j++)
			free(s->e[j].name);
		for (size_t j = 0; j < s->nv; j++)
			free(s->v[j].name);
		free(s->e);
		free(s->v);
	}
	free(ps->s);
	free(ps);
}

/* ---- loading ------------------------------------------------------------- */

/* "col" when the table has it, else "NULL": nsys versions differ, and only
 * perfkit's tables have globalPid. */
static const char *col_or_null(struct prof_store *s, const char *table, const char *col)
{
	return prof_store__has_column(s, table, col) ? col : "NULL";
}

static uint64_t u64_at(struct prof_cursor *c, int col)
{
	return (uint64_t)prof_cursor__int64(c, col);
}

static int64_t pid_at(struct prof_cursor *c, int col)
{
	return prof_cursor__is_null(c, col) ? -1 : prof_cursor__int64(c, col);
}

enum load_table { LOAD_SCHEMAS, LOAD_ENTRIES, LOAD_ENUMS };

static int load_rows(struct prof_store *s, struct prof_payload_schemas *ps, enum load_table which,
		     struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_PAYLOAD_SCHEMAS, PROF_T_PAYLOAD_SCHEMA_ENTRIES,
					      PROF_T_PAYLOAD_ENUM_ENTRIES };
	static const char *const cols[][8] = {
		{ "name", "type", "flags", "numEntries", "payloadSize", "alignTo", "globalPid" },
		{ "idx", "flags", "type", "name", "arrayOrUnionDetail", "offset", "globalPid" },
		{ "idx", "name", "value", "isFlag", "globalPid" },
	};
	const char *table = tables[which];
	char sql[768];
	size_t len;
	struct prof_cursor *c;
	int rc;

	if (!prof_store__has_column(s, table, "domainId") ||
	    !prof_store__has_column(s, table, "schemaId"))
		return 0;
	len = (size_t)snprintf(sql, sizeof sql, "SELECT domainId, schemaId");
	for (int i = 0; cols[which][i]; i++)
		len += (size_t)snprintf(sql + len, sizeof sql - len, ", %s",
					col_or_null(s, table, cols[which][i]));
	/* in key order, so that each row appends to the sorted set */
	snprintf(sql + len, sizeof sql - len, " FROM %s ORDER BY domainId, schemaId", table);
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		uint64_t domain = u64_at(c, 0), id = u64_at(c, 1);

		switch (which) {
		case LOAD_SCHEMAS: {
			struct prof_payload_schema r = {
				.domain_id = domain, .schema_id = id, .name = prof_cursor__text(c, 2),
				.type = u64_at(c, 3), .flags = u64_at(c, 4), .num_entries = u64_at(c, 5),
				.payload_size = u64_at(c, 6), .align_to = u64_at(c, 7),
				.global_pid = pid_at(c, 8),
			};
			rc = prof_payload_schemas__add_schema(ps, &r);
			break;
		}
		case LOAD_ENTRIES: {
			struct prof_payload_entry r = {
				.domain_id = domain, .schema_id = id, .idx = u64_at(c, 2),
				.flags = u64_at(c, 3), .type = u64_at(c, 4), .name = prof_cursor__text(c, 5),
				.array_or_union_detail = u64_at(c, 6), .offset = u64_at(c, 7),
				.global_pid = pid_at(c, 8),
			};
			rc = prof_payload_schemas__add_entry(ps, &r);
			break;
		}
		case LOAD_ENUMS: {
			struct prof_payload_enum_entry r = {
				.domain_id = domain, .schema_id = id, .idx = u64_at(c, 2),
				.name = prof_cursor__text(c, 3), .value = u64_at(c, 4),
				.is_flag = (int)prof_cursor__int64(c, 5), .global_pid = pid_at(c, 6),
			};
			rc = prof_payload_schemas__add_enum_entry(ps, &r);
			break;
		}
		}
		if (rc) {
			rc = prof_error__set(err, PROF_E_NOMEM, "%s: out of memory", prof_store__path(s));
			break;
		}
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int prof_payload_schemas__load(struct prof_store *s, struct prof_payload_schemas **out,
			       struct prof_error *err)
{
	int rc = prof_payload_schemas__new(out);

	if (rc)
		return prof_error__set(err, rc, "%s: out of memory", prof_store__path(s));
	for (int t = LOAD_SCHEMAS; rc == 0 && t <= LOAD_ENUMS; t++)
		rc = load_rows(s, *out, (enum load_table)t, err);
	if (rc) {
		prof_payload_schemas__delete(*out);
		*out = NULL;
	}
	return rc;
}

/* The schema a blob of process pid names: that process's, else one that
 * belongs to no process (an nsys export), else, when the blob's process is
 * unknown, the only one of that (domain, id). */
static const struct ps_schema *find_schema(const struct prof_payload_schemas *ps, uint64_t domain,
					   uint64_t id, int64_t pid)
{
	size_t at = lower_bound(ps, domain, id, INT64_MIN), n = 0;
	const struct ps_schema *any = NULL;

	for (; at < ps->n && ps->s[at].domain == domain && ps->s[at].id == id; at++, n++) {
		if (ps->s[at].pid == pid || ps->s[at].pid < 0)
			return &ps->s[at];
		any = &ps->s[at];
	}
	return pid < 0 && n == 1 ? any : NULL;
}

/* ---- decoding -------------------------------------------------------------- */

enum value_class { V_SIGNED, V_UNSIGNED, V_FLOAT, V_HALF, V_BF16, V_CHAR, V_OPAQUE };

struct type_info {
	uint8_t size, align;
	uint8_t cls; /* enum value_class */
};

/* NVTX_PAYLOAD_ENTRY_TYPE_* on LP64 (Linux, where captures are made):
 * size, alignment and how to read it. 0: not a type. */
static const struct type_info types[] = {
	[1] = { 1, 1, V_CHAR },       /* CHAR */
	[2] = { 1, 1, V_CHAR },       /* UCHAR */
	[3] = { 2, 2, V_SIGNED },     /* SHORT */
	[4] = { 2, 2, V_UNSIGNED },   /* USHORT */
	[5] = { 4, 4, V_SIGNED },     /* INT */
	[6] = { 4, 4, V_UNSIGNED },   /* UINT */
	[7] = { 8, 8, V_SIGNED },     /* LONG */
	[8] = { 8, 8, V_UNSIGNED },   /* ULONG */
	[9] = { 8, 8, V_SIGNED },     /* LONGLONG */
	[10] = { 8, 8, V_UNSIGNED },  /* ULONGLONG */
	[11] = { 1, 1, V_SIGNED },    /* INT8 */
	[12] = { 1, 1, V_UNSIGNED },  /* UINT8 */
	[13] = { 2, 2, V_SIGNED },    /* INT16 */
	[14] = { 2, 2, V_UNSIGNED },  /* UINT16 */
	[15] = { 4, 4, V_SIGNED },    /* INT32 */
	[16] = { 4, 4, V_UNSIGNED },  /* UINT32 */
	[17] = { 8, 8, V_SIGNED },    /* INT64 */
	[18] = { 8, 8, V_UNSIGNED },  /* UINT64 */
	[19] = { 4, 4, V_FLOAT },     /* FLOAT */
	[20] = { 8, 8, V_FLOAT },     /* DOUBLE */
	[21] = { 16, 16, V_OPAQUE },  /* LONGDOUBLE */
	[22] = { 8, 8, V_UNSIGNED },  /* SIZE */
	[23] = { 8, 8, V_UNSIGNED },  /* ADDRESS */
	[24] = { 4, 4, V_UNSIGNED },  /* WCHAR */
	[25] = { 1, 1, V_CHAR },      /* CHAR8 */
	[26] = { 2, 2, V_UNSIGNED },  /* CHAR16 */
	[27] = { 4, 4, V_UNSIGNED },  /* CHAR32 */
	[32] = { 1, 1, V_CHAR },      /* BYTE */
	[33] = { 16, 16, V_OPAQUE },  /* INT128 */
	[34] = { 16, 16, V_OPAQUE },  /* UINT128 */
	[42] = { 2, 2, V_HALF },      /* FLOAT16 */
	[43] = { 4, 4, V_FLOAT },     /* FLOAT32 */
	[44] = { 8, 8, V_FLOAT },     /* FLOAT64 */
	[45] = { 16, 16, V_OPAQUE },  /* FLOAT128 */
	[50] = { 2, 2, V_BF16 },      /* BF16 */
	[52] = { 4, 4, V_FLOAT },     /* TF32, stored as a float */
	[68] = { 4, 4, V_UNSIGNED },  /* CATEGORY */
	[69] = { 4, 4, V_UNSIGNED },  /* COLOR_ARGB */
	[70] = { 8, 8, V_UNSIGNED },  /* SCOPE_ID */
	[71] = { 4, 4, V_UNSIGNED },  /* PID_UINT32 */
	[72] = { 8, 8, V_UNSIGNED },  /* PID_UINT64 */
	[73] = { 4, 4, V_UNSIGNED },  /* TID_UINT32 */
	[74] = { 8, 8, V_UNSIGNED },  /* TID_UINT64 */
	[75] = { 1, 1, V_CHAR },      /* CSTRING: a char of the string when embedded */
	[76] = { 1, 1, V_CHAR },      /* CSTRING_UTF8 */
	[77] = { 2, 2, V_OPAQUE },    /* CSTRING_UTF16 */
	[78] = { 4, 4, V_OPAQUE },    /* CSTRING_UTF32 */
	[80] = { 8, 8, V_UNSIGNED },  /* NVTX_REGISTERED_STRING_HANDLE */
};

static const struct type_info *predefined(uint64_t type)
{
	if (type < sizeof types / sizeof types[0] && types[type].size)
		return &types[type];
	return NULL;
}

/* A bounded byte range of the blob. */
struct range {
	const unsigned char *p;
	uint64_t len;
};

/* Whether [off, off + n) lies inside r: no sum is formed that could wrap. */
static bool inside(const struct range *r, uint64_t off, uint64_t n)
{
	return off <= r->len && n <= r->len - off;
}

struct decoder {
	const struct prof_payload_schemas *ps;
	int64_t pid;
	uint64_t domain;
	struct prof_payload *out;
	int cap;
	struct prof_error *err;
	bool nomem;
};

static struct prof_payload_field *add_field(struct decoder *d, const char *prefix,
					    const struct ps_entry *e, enum prof_payload_kind kind)
{
	struct prof_payload *p = d->out;
	struct prof_payload_field *f;

	if (p->nfields >= PROF_PAYLOAD_MAX_FIELDS) {
		p->fields_left_out = true;
		return NULL;
	}
	if (p->nfields == d->cap) {
		int ncap = d->cap ? d->cap * 2 : 8;
		struct prof_payload_field *nv = realloc(p->fields, sizeof *nv * (size_t)ncap);

		if (!nv) {
			d->nomem = true;
			return NULL;
		}
		p->fields = nv;
		d->cap = ncap;
	}
	f = &p->fields[p->nfields++];
	memset(f, 0, sizeof *f);
	f->kind = kind;
	if (e->name)
		snprintf(f->name, sizeof f->name, "%s%s", prefix, e->name);
	else
		snprintf(f->name, sizeof f->name, "%sentry %llu", prefix, (unsigned long long)e->idx);
	return f;
}

/* IEEE 754 half precision to double. */
static double half_to_double(uint64_t h)
{
	int exp = (int)(h >> 10 & 0x1F);
	double mant = (double)(h & 0x3FF), v;

	if (exp == 0)
		v = ldexp(mant, -24);
	else if (exp == 31)
		v = mant ? NAN : INFINITY;
	else
		v = ldexp(mant + 1024, exp - 25);
	return h & 0x8000 ? -v : v;
}

static double float_bits(uint64_t bits32)
{
	float f;
	uint32_t b = (uint32_t)bits32;

	memcpy(&f, &b, sizeof f);
	return f;
}

static double double_bits(uint64_t bits64)
{
	double v;

	memcpy(&v, &bits64, sizeof v);
	return v;
}

/* A number of class cls in the n bytes at p. */
static void read_number(struct prof_payload_field *f, const unsigned char *p, unsigned n,
			unsigned cls)
{
	uint64_t raw = le_u64(p, n);

	switch (cls) {
	case V_SIGNED:
		f->kind = PROF_PAYLOAD_INT;
		/* sign-extend from n bytes */
		f->i = n < 8 && (raw >> (8 * n - 1) & 1) ? (int64_t)(raw | ~(((uint64_t)1 << (8 * n)) - 1))
							  : (int64_t)raw;
		break;
	case V_UNSIGNED:
	case V_CHAR:
		f->kind = PROF_PAYLOAD_UINT;
		f->u = raw;
		break;
	case V_FLOAT:
		f->kind = PROF_PAYLOAD_FLOAT;
		f->d = n == 4 ? float_bits(raw) : double_bits(raw);
		break;
	case V_HALF:
		f->kind = PROF_PAYLOAD_FLOAT;
		f->d = half_to_double(raw);
		break;
	case V_BF16:
		f->kind = PROF_PAYLOAD_FLOAT;
		f->d = float_bits(raw << 16);
		break;
	default:
		f->kind = PROF_PAYLOAD_UNDECODED;
	}
}

/* The bytes of a char array up to its first NUL, at most max of them. */
static char *copy_text(const unsigned char *p, uint64_t max)
{
	size_t n = 0;
	char *t;

	if (max > PROF_PAYLOAD_TEXT_MAX)
		max = PROF_PAYLOAD_TEXT_MAX;
	while (n < max && p[n])
		n++;
	t = malloc(n + 1);
	if (t) {
		memcpy(t, p, n);
		t[n] = '\0';
	}
	return t;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	if (a <= 1 || v % a == 0)
		return v;
	return v > UINT64_MAX - a ? UINT64_MAX : v + (a - v % a);
}

static int decode_schema(struct decoder *d, const struct ps_schema *s, const struct range *r,
			 const char *prefix, int depth);

/* An enum's value: its name when the enum has one for it. */
static int decode_enum(struct decoder *d, const struct ps_schema *en, const struct ps_entry *e,
		       const struct range *r, uint64_t off, const char *prefix, uint64_t *size)
{
	uint64_t n = en->described && en->payload_size ? en->payload_size : 4;
	struct prof_payload_field *f;

	*size = n;
	if (n > 8) {
		add_field(d, prefix, e, PROF_PAYLOAD_UNDECODED);
		return 0;
	}
	if (!inside(r, off, n))
		return prof_error__set(d->err, PROF_E_CORRUPT,
				       "NVTX payload: enum \"%s\" of %llu bytes at offset %llu past the payload's %llu bytes",
				       e->name ? e->name : "?", (unsigned long long)n,
				       (unsigned long long)off, (unsigned long long)r->len);
	f = add_field(d, prefix, e, PROF_PAYLOAD_ENUM);
	if (!f)
		return 0;
	f->u = le_u64(r->p + off, (size_t)n);
	f->i = (int64_t)f->u;
	for (size_t i = 0; i < en->nv; i++)
		if (en->v[i].value == f->u && en->v[i].name) {
			f->text = strdup(en->v[i].name);
			d->nomem |= !f->text;
			break;
		}
	return 0;
}

/* One entry at offset off of r; *size receives the bytes it takes (0 when
 * they cannot be known, which ends implicit offsets after it). */
static int decode_entry(struct decoder *d, const struct ps_entry *e, const struct range *r,
			uint64_t off, const char *prefix, int depth, uint64_t *size)
{
	const struct type_info *t = predefined(e->type);
	unsigned array = (unsigned)(e->flags & (7u << 4));
	struct prof_payload_field *f;

	*size = 0;
	if (e->flags & PROF_PAYLOAD_FLAG_POINTER) {
		/* an address in the annotated process: nothing to read here */
		*size = 8;
		add_field(d, prefix, e, PROF_PAYLOAD_UNDECODED);
		return 0;
	}
	if (!t) {
		const struct ps_schema *sub = e->type >= PROF_PAYLOAD_SCHEMA_ID_STATIC_START
			? find_schema(d->ps, d->domain, e->type, d->pid) : NULL;
		char nested[PROF_PAYLOAD_NAME_MAX];
		struct range rs;

		if (!sub || array) {
			add_field(d, prefix, e, PROF_PAYLOAD_UNDECODED);
			return 0;
		}
		if (sub->nv > 0 && sub->ne == 0)
			return decode_enum(d, sub, e, r, off, prefix, size);
		*size = sub->payload_size;
		if (!inside(r, off, sub->payload_size ? sub->payload_size : r->len - off))
			return prof_error__set(d->err, PROF_E_CORRUPT,
					       "NVTX payload: nested schema %llu of %llu bytes past the payload's end",
					       (unsigned long long)sub->id,
					       (unsigned long long)sub->payload_size);
		if (depth + 1 >= PROF_PAYLOAD_MAX_DEPTH) {
			d->out->fields_left_out = true;
			return 0;
		}
		rs.p = r->p + off;
		rs.len = sub->payload_size ? sub->payload_size : r->len - off;
		snprintf(nested, sizeof nested, "%s%s.", prefix, e->name ? e->name : "?");
		return decode_schema(d, sub, &rs, nested, depth + 1);
	}
	if (array == PROF_PAYLOAD_FLAG_ARRAY_FIXED_SIZE) {
		uint64_t n = e->detail;

		*size = n > UINT64_MAX / t->size ? UINT64_MAX : n * t->size;
		if (t->cls != V_CHAR) {
			add_field(d, prefix, e, PROF_PAYLOAD_UNDECODED);
			return 0;
		}
		if (!inside(r, off, *size))
			return prof_error__set(d->err, PROF_E_CORRUPT,
					       "NVTX payload: a %llu-byte string at offset %llu past the payload's %llu bytes",
					       (unsigned long long)*size, (unsigned long long)off,
					       (unsigned long long)r->len);
		f = add_field(d, prefix, e, PROF_PAYLOAD_STRING);
		if (f && !(f->text = copy_text(r->p + off, *size)))
			d->nomem = true;
		return 0;
	}
	if (array == PROF_PAYLOAD_FLAG_ARRAY_ZERO_TERMINATED && t->cls == V_CHAR) {
		uint64_t n = 0;

		if (off > r->len)
			return prof_error__set(d->err, PROF_E_CORRUPT,
					       "NVTX payload: a string at offset %llu past the payload's %llu bytes",
					       (unsigned long long)off, (unsigned long long)r->len);
		while (off + n < r->len && r->p[off + n])
			n++;
		*size = off + n < r->len ? n + 1 : 0;
		f = add_field(d, prefix, e, PROF_PAYLOAD_STRING);
		if (f && !(f->text = copy_text(r->p + off, n)))
			d->nomem = true;
		return 0;
	}
	if (array || e->type == PROF_PAYLOAD_TYPE_CSTRING || e->type == PROF_PAYLOAD_TYPE_CSTRING_UTF8) {
		/* a variable array, or a string that is a pointer */
		*size = array ? 0 : 8;
		add_field(d, prefix, e, PROF_PAYLOAD_UNDECODED);
		return 0;
	}
	*size = t->size;
	if (!inside(r, off, t->size))
		return prof_error__set(d->err, PROF_E_CORRUPT,
				       "NVTX payload: entry \"%s\" of %u bytes at offset %llu past the payload's %llu bytes",
				       e->name ? e->name : "?", t->size, (unsigned long long)off,
				       (unsigned long long)r->len);
	f = add_field(d, prefix, e, PROF_PAYLOAD_UNDECODED);
	if (f)
		read_number(f, r->p + off, t->size, t->cls);
	return 0;
}

/* The entries of s over r. An entry's offset is the schema's, except that
 * an entry after the first with offset 0 follows the one before it,
 * aligned to its type (a schema registered without offsets). */
static int decode_schema(struct decoder *d, const struct ps_schema *s, const struct range *r,
			 const char *prefix, int depth)
{
	uint64_t next = 0;
	bool next_known = true;

	for (size_t i = 0; i < s->ne && !d->nomem; i++) {
		const struct ps_entry *e = &s->e[i];
		const struct type_info *t = predefined(e->type);
		uint64_t off = e->offset, size;
		int rc;

		if (i > 0 && off == 0) {
			if (!next_known) {
				add_field(d, prefix, e, PROF_PAYLOAD_UNDECODED);
				continue;
			}
			off = align_up(next, t && !(e->flags & PROF_PAYLOAD_FLAG_POINTER) ? t->align : 8);
		}
		rc = decode_entry(d, e, r, off, prefix, depth, &size);
		if (rc)
			return rc;
		next_known = size > 0 && off <= UINT64_MAX - size;
		next = next_known ? off + size : 0;
	}
	return d->nomem ? PROF_E_NOMEM : 0;
}

int prof_payload__decode(const struct prof_payload_schemas *ps, int64_t global_pid,
			 const void *blob, size_t len, struct prof_payload *out,
			 struct prof_error *err)
{
	struct prof_nvtx_blob_header h;
	const struct ps_schema *s;
	struct decoder d = { .ps = ps, .pid = global_pid < 0 ? -1 : global_pid, .out = out, .err = err };
	struct range r;
	int rc;

	memset(out, 0, sizeof *out);
	if (prof_nvtx_blob__header(blob, len, &h))
		return prof_error__set(err, PROF_E_CORRUPT,
				       "NVTX payload: a %zu-byte blob whose header does not match its length",
				       len);
	out->domain_id = h.domain_id;
	out->schema_id = h.schema_id;
	s = ps ? find_schema(ps, h.domain_id, h.schema_id, d.pid) : NULL;
	if (!s || s->ne == 0)
		return 1;
	if (s->described && s->type != PROF_PAYLOAD_SCHEMA_STATIC &&
	    s->type != PROF_PAYLOAD_SCHEMA_DYNAMIC)
		return 1; /* a union: its layout depends on a selector we do not follow */
	if (s->name && !(out->schema_name = strdup(s->name)))
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	d.domain = h.domain_id;
	r.p = (const unsigned char *)blob + PROF_NVTX_BLOB_HEADER;
	r.len = h.payload_size;
	rc = decode_schema(&d, s, &r, "", 0);
	if (rc == PROF_E_NOMEM)
		prof_error__set(err, rc, "out of memory");
	return rc;
}

void prof_payload__exit(struct prof_payload *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nfields; i++)
		free(p->fields[i].text);
	free(p->fields);
	free(p->schema_name);
	memset(p, 0, sizeof *p);
}

const struct prof_payload_field *prof_payload__find(const struct prof_payload *p,
						    const char *name)
{
	for (int i = 0; p && name && i < p->nfields; i++)
		if (strcmp(p->fields[i].name, name) == 0)
			return &p->fields[i];
	return NULL;
}

bool prof_payload_field__int(const struct prof_payload_field *f, int64_t *v)
{
	if (!f)
		return false;
	switch (f->kind) {
	case PROF_PAYLOAD_INT:
		*v = f->i;
		return true;
	case PROF_PAYLOAD_UINT:
	case PROF_PAYLOAD_ENUM:
		if (f->u > (uint64_t)INT64_MAX)
			return false;
		*v = (int64_t)f->u;
		return true;
	default:
		return false;
	}
}
