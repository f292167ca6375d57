/* python_runtime.c - CPython's threads, frames and code objects read from
 * inside the process (python_runtime.h says why this way).
 *
 * The frame layouts of 3.11, 3.12 and 3.13 are known here (the fields this
 * reads are the first ones of _PyInterpreterFrame, which these versions
 * keep in one of two orders); everything else is found by calibration:
 * the offsets of a code object's name, file and line table are where the
 * words equal the id()s Python gave, a thread state's frame pointer is the
 * word that leads to the calling frame's code, and the result is checked
 * by resolving the calling frame's line and comparing it with the line
 * Python says the call is on. */
#define _GNU_SOURCE /* process_vm_readv */
#include "python_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "prof/event.h"

/* Where the fields are; see the file comment. */
static struct {
	bool ready;
	pid_t pid;
	uint64_t interp;
	size_t interp_threads_head;
	size_t ts_next, ts_native_tid, ts_frame;
	bool ts_frame_indirect; /* 3.11/3.12: tstate->cframe->current_frame */
	size_t cframe_current;  /* current_frame's offset in the cframe */
	size_t fr_code, fr_previous, fr_instr, fr_owner, fr_size;
	size_t co_filename, co_qualname, co_linetable, co_firstlineno, co_code;
	uint64_t code_type, str_type, bytes_type;
	size_t str_ascii_data, str_compact_data; /* where a str's characters start */
	void *(*gilstate_get)(void);
	uint64_t gil; /* 3.12+: the interpreter's GIL (last holder at +8, locked at +16); 0: unknown */
} L;

#define FRAME_OWNED_BY_CSTACK 3
#define CODE_HEADER_MAX 512
#define STR_MAX 255
#define LINETABLE_MAX 65536

/* Set on a thread that reads its own stack (a CUDA call's backtrace): its
 * frames cannot go away while it is in the call, and the code they run is
 * held by them, so plain loads are safe there and cost nanoseconds where a
 * system call costs a microsecond. */
static __thread bool own_stack;

/* Copy len bytes at addr of this process; 0, or -1 when any is unmapped. */
static int rd(uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (!addr)
		return -1;
	if (own_stack) {
		memcpy(buf, (const void *)(uintptr_t)addr, len);
		return 0;
	}
	return process_vm_readv(L.pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static uint64_t rd64(uint64_t addr)
{
	uint64_t v = 0;

	return rd(addr, &v, sizeof v) ? 0 : v;
}

/* ---- the line of an instruction: the 3.11+ location table ------------------ */

static uint32_t varint(const uint8_t **p, const uint8_t *end)
{
	uint32_t v = 0;
	int shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 24)
			break;
	}
	return v;
}

static int32_t svarint(const uint8_t **p, const uint8_t *end)
{
	uint32_t v = varint(p, end);

	return (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

/* The line of code unit `at`, from the table's entries (first byte: bit 7
 * set, the kind in bits 3-6, the length less one in bits 0-2). 0 where
 * the instruction has no line. */
static int32_t line_of(const uint8_t *t, size_t len, int32_t first_line, uint32_t at)
{
	const uint8_t *p = t, *end = t + len;
	int32_t line = first_line;
	uint32_t addr = 0;

	while (p < end) {
		uint8_t head = *p++;
		int code = (head >> 3) & 15, has_line = 1;
		uint32_t units = (head & 7) + 1u;

		if (!(head & 128))
			return 0; /* not at an entry: a table read torn */
		if (code == 15) {
			has_line = 0;
		} else if (code == 14) {
			line += svarint(&p, end);
			varint(&p, end);
			varint(&p, end);
			varint(&p, end);
		} else if (code == 13) {
			line += svarint(&p, end);
		} else if (code >= 10) {
			line += code - 10;
			p += 2;
		} else {
			p += 1;
		}
		if (at < addr + units)
			return has_line ? line : 0;
		addr += units;
	}
	return 0;
}

/* ---- strings ----------------------------------------------------------------- */

/* A str object's text (ASCII or Latin-1; other text is kept as '?'), into
 * buf; its length, or -1 when addr is no str. */
static int str_read(uint64_t addr, char *buf, size_t cap)
{
	uint8_t head[40];
	uint64_t type, length;
	uint32_t state;
	size_t n, at;
	int kind;

	if (rd(addr, head, sizeof head))
		return -1;
	memcpy(&type, head + 8, 8);
	memcpy(&length, head + 16, 8);
	memcpy(&state, head + 32, 4);
	if (type != L.str_type)
		return -1;
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1)) /* not compact: no str the compiler makes */
		return -1;
	at = ((state >> 6) & 1) ? L.str_ascii_data : L.str_compact_data;
	n = length < cap - 1 ? length : cap - 1;
	if (n > STR_MAX)
		n = STR_MAX;
	if (kind == 1) {
		if (rd(addr + at, buf, n))
			return -1;
	} else {
		uint8_t wide[STR_MAX * 4];

		if (kind != 2 && kind != 4)
			return -1;
		if (rd(addr + at, wide, n * (size_t)kind))
			return -1;
		for (size_t i = 0; i < n; i++) {
			uint32_t ch = kind == 2 ? (uint32_t)(wide[2 * i] | wide[2 * i + 1] << 8)
						: (uint32_t)(wide[4 * i] | wide[4 * i + 1] << 8 |
							     wide[4 * i + 2] << 16 |
							     (uint32_t)wide[4 * i + 3] << 24);

			buf[i] = ch < 128 ? (char)ch : '?';
		}
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] >= 128)
			buf[i] = '?'; /* Latin-1 beyond ASCII: kept valid UTF-8 */
	buf[n] = '\0';
	return (int)n;
}

/* ---- code objects, resolved once -------------------------------------------- */

struct code_entry {
	uint64_t code, qualname_ptr, filename_ptr;
	int32_t function, file, first_line;
	uint8_t *linetable;
	size_t linetable_len;
};

#define CODE_CACHE 4096
static struct code_entry code_cache[CODE_CACHE];
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;

static int32_t intern_str(uint64_t addr)
{
	char buf[STR_MAX + 1];
	int n = str_read(addr, buf, sizeof buf);

	return n < 0 ? 0 : python_names__intern(buf, (size_t)n);
}

/* The entry of a code object whose header is hdr; NULL when it cannot be
 * read. A cached entry counts only while the same name and file sit at the
 * same address (a freed code object's address may be reused). */
static const struct code_entry *code_resolve(uint64_t code, const uint8_t *hdr)
{
	struct code_entry *e = &code_cache[(code >> 4) % CODE_CACHE];
	uint64_t qualname, filename, linetable, lt_len = 0;
	int32_t first_line;

	memcpy(&qualname, hdr + L.co_qualname, 8);
	memcpy(&filename, hdr + L.co_filename, 8);
	memcpy(&linetable, hdr + L.co_linetable, 8);
	memcpy(&first_line, hdr + L.co_firstlineno, 4);
	if (e->code == code && e->qualname_ptr == qualname && e->filename_ptr == filename &&
	    e->first_line == first_line)
		return e;
	if (rd(linetable + 16, &lt_len, 8) || lt_len > LINETABLE_MAX ||
	    rd64(linetable + 8) != L.bytes_type)
		return NULL;
	free(e->linetable);
	memset(e, 0, sizeof *e);
	e->linetable = malloc(lt_len ? lt_len : 1);
	if (!e->linetable || rd(linetable + 32, e->linetable, lt_len)) {
		free(e->linetable);
		e->linetable = NULL;
		return NULL;
	}
	e->linetable_len = lt_len;
	e->function = intern_str(qualname);
	e->file = intern_str(filename);
	if (!e->function || !e->file) {
		e->code = 0;
		return NULL;
	}
	e->code = code;
	e->qualname_ptr = qualname;
	e->filename_ptr = filename;
	e->first_line = first_line;
	return e;
}

/* One frame: its code's names and the line of instr. -1 when it is no
 * Python frame (a C shim) or unreadable. */
static int frame_resolve(uint64_t code, uint64_t instr, struct py_frame_ref *out)
{
	uint8_t hdr[CODE_HEADER_MAX];
	const struct code_entry *e;
	uint64_t type;
	int rc = -1;

	if (rd(code, hdr, L.co_code) )
		return -1;
	memcpy(&type, hdr + 8, 8);
	if (type != L.code_type)
		return -1;
	pthread_mutex_lock(&code_lock);
	e = code_resolve(code, hdr);
	if (e) {
		uint64_t at = instr >= code + L.co_code ? (instr - code - L.co_code) / 2 : 0;

		out->function = e->function;
		out->file = e->file;
		out->kind = PROF_PY_FRAME_PYTHON;
		out->line = line_of(e->linetable, e->linetable_len, e->first_line, (uint32_t)at);
		rc = 0;
	}
	pthread_mutex_unlock(&code_lock);
	return rc;
}

/* ---- threads and stacks ------------------------------------------------------ */

static uint64_t current_frame(uint64_t tstate)
{
	uint64_t p = rd64(tstate + L.ts_frame);

	return L.ts_frame_indirect ? rd64(p + L.cframe_current) : p;
}

int python_runtime__stack(uint64_t tstate, struct py_frame_ref *out, int cap)
{
	uint64_t frame;
	int n = 0;

	if (!L.ready)
		return 0;
	frame = current_frame(tstate);
	for (int hops = 0; frame && n < cap && hops < 4 * PY_MAX_DEPTH; hops++) {
		uint8_t f[96];
		uint64_t code, instr, prev;

		if (rd(frame, f, L.fr_size))
			break;
		memcpy(&code, f + L.fr_code, 8);
		memcpy(&instr, f + L.fr_instr, 8);
		memcpy(&prev, f + L.fr_previous, 8);
		if (f[L.fr_owner] != FRAME_OWNED_BY_CSTACK && frame_resolve(code, instr, &out[n]) == 0)
			n++;
		frame = prev;
	}
	return n;
}

int python_runtime__own_stack(struct py_frame_ref *out, int cap)
{
	uint64_t tstate = python_runtime__current_tstate();
	int n;

	if (!tstate)
		return 0;
	own_stack = true;
	n = python_runtime__stack(tstate, out, cap);
	own_stack = false;
	return n;
}

int python_runtime__gil_holder(uint64_t *holder)
{
	uint8_t gil[24];
	int32_t locked;

	if (!L.gil || rd(L.gil, gil, sizeof gil))
		return -1;
	memcpy(holder, gil + 8, 8);
	memcpy(&locked, gil + 16, 4);
	if (!locked)
		*holder = 0; /* free: no thread runs Python this instant */
	return 0;
}

int python_runtime__threads(uint64_t *tstates, int cap)
{
	uint64_t t;
	int n = 0;

	if (!L.ready)
		return 0;
	t = rd64(L.interp + L.interp_threads_head);
	while (t && n < cap) {
		tstates[n++] = t;
		t = rd64(t + L.ts_next);
	}
	return n;
}

int64_t python_runtime__native_tid(uint64_t tstate)
{
	return (int64_t)rd64(tstate + L.ts_native_tid);
}

uint64_t python_runtime__current_tstate(void)
{
	if (!L.ready || !L.gilstate_get || getpid() != L.pid)
		return 0;
	return (uint64_t)(uintptr_t)L.gilstate_get();
}

int python_runtime__ready(void)
{
	return L.ready;
}

/* ---- calibration ------------------------------------------------------------- */

/* The first 8-byte-aligned offset in [from, to) of obj whose word is value;
 * 0 when none. */
static size_t find_word(uint64_t obj, size_t from, size_t to, uint64_t value)
{
	for (size_t off = from; off < to; off += 8)
		if (rd64(obj + off) == value)
			return off;
	return 0;
}

int python_runtime__calibrate(const struct perfkit_py_calibration *c, const char **why)
{
	unsigned minor = (unsigned)(c->hexversion >> 16) & 0xff;
	struct py_frame_ref ref;
	uint64_t frame = 0;

	memset(&L, 0, sizeof L);
	L.pid = getpid();
	if ((c->hexversion >> 24) != 3 || minor < 11 || minor > 13) {
		*why = "Python 3.11, 3.12 or 3.13 is needed";
		return -1;
	}
	if (rd64(c->code + 8) != c->code_type) {
		*why = "this process's memory cannot be read (process_vm_readv refused)";
		return -1;
	}
	L.code_type = c->code_type;
	L.str_type = c->str_type;
	L.bytes_type = c->bytes_type;
	/* PyASCIIObject lost its wstr pointer in 3.12 */
	L.str_ascii_data = minor == 11 ? 48 : 40;
	L.str_compact_data = minor == 11 ? 72 : 56;
	if (minor == 11) {
		L.fr_code = 32, L.fr_previous = 48, L.fr_instr = 56, L.fr_owner = 69;
	} else {
		L.fr_code = 0, L.fr_previous = 8, L.fr_instr = 56, L.fr_owner = 70;
	}
	L.fr_size = 72;
	if (c->code_basicsize <= 0 || c->code_basicsize > CODE_HEADER_MAX) {
		*why = "a code object's size is not one this reader knows";
		return -1;
	}
	L.co_code = (size_t)c->code_basicsize;
	L.co_filename = find_word(c->code, 16, L.co_code, c->filename);
	L.co_qualname = find_word(c->code, 16, L.co_code, c->qualname);
	L.co_linetable = find_word(c->code, 16, L.co_code, c->linetable);
	for (size_t off = 16; off + 4 <= L.co_code; off += 4) {
		int32_t v = 0;

		if (!rd(c->code + off, &v, 4) && v == c->firstlineno) {
			L.co_firstlineno = off;
			break;
		}
	}
	if (!L.co_filename || !L.co_qualname || !L.co_linetable || !L.co_firstlineno) {
		*why = "a code object's fields were not found";
		return -1;
	}
	L.ts_next = 8; /* PyThreadState: prev, next, interp, ... in every 3.x */
	L.ts_native_tid = find_word(c->tstate, 24, 1024, c->native_tid);
	L.interp = c->interp;
	L.interp_threads_head = find_word(c->interp, 8, 4096, c->tstate_head);
	if (!L.ts_native_tid || !L.interp_threads_head) {
		*why = "a thread state's fields were not found";
		return -1;
	}
	/* The frame pointer: 3.13 keeps it in the thread state, 3.11 and 3.12
	 * one hop away (tstate->cframe->current_frame). */
	L.ts_frame_indirect = minor < 13;
	L.cframe_current = minor == 11 ? 8 : 0; /* 3.11's cframe starts with use_tracing */
	for (size_t off = 24; off < 512 && !frame; off += 8) {
		uint64_t p = rd64(c->tstate + off),
			 f = L.ts_frame_indirect ? rd64(p + L.cframe_current) : p;

		if (f && rd64(f + L.fr_code) == c->code) {
			L.ts_frame = off;
			frame = f;
		}
	}
	if (!frame) {
		*why = "the running frame was not found from the thread state";
		return -1;
	}
	L.ready = true;
	if (frame_resolve(c->code, rd64(frame + L.fr_instr), &ref) < 0 ||
	    strcmp(python_names__text(ref.function) ? python_names__text(ref.function) : "", "") == 0) {
		L.ready = false;
		*why = "the running frame's code could not be resolved";
		return -1;
	}
	*(void **)&L.gilstate_get = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	/* 3.12 and 3.13 point from the interpreter to their GIL; the hook calls
	 * with the GIL held, so it is the one locked with this thread the last
	 * holder. (3.11 keeps it in the runtime: not read.) */
	if (c->gil_held && minor >= 12)
		for (size_t off = 8; off < 16384 && !L.gil; off += 8) {
			uint64_t p = rd64(c->interp + off);
			int32_t locked = 0;

			if (p && rd64(p + 8) == c->tstate && !rd(p + 16, &locked, 4) && locked == 1)
				L.gil = p;
		}
	return 0;
}
