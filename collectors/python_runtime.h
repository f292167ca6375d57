/* python_runtime.h - reading CPython's own structures from inside the
 * process, for --python-sampling and --python-backtrace=cuda: where each
 * thread's frames are, what code a frame runs and at which line.
 *
 * The collector links no libpython and includes none of its headers: the
 * layout of the interpreter's structures differs between versions, so the
 * offsets are found at start-up from objects the hook module (python/)
 * points at (calibration), and every read goes through process_vm_readv,
 * which fails instead of faulting when another thread frees what is being
 * read. What is read is then checked (a code object's type is the one the
 * calibration saw), so a torn read yields a dropped frame, not a wrong one. */
#ifndef PERFKIT_PYTHON_RUNTIME_H
#define PERFKIT_PYTHON_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* What the hook module measures in Python and hands over (ctypes, the same
 * field order): addresses are id()s of live objects of the calling frame. */
struct perfkit_py_calibration {
	uint64_t hexversion;     /* sys.hexversion */
	uint64_t interp;         /* PyInterpreterState_Get() */
	uint64_t tstate;         /* PyThreadState_Get(), the calling thread */
	uint64_t tstate_head;    /* PyInterpreterState_ThreadHead(interp) */
	uint64_t native_tid;     /* threading.get_native_id() */
	uint64_t code;           /* id() of the calling function's code */
	uint64_t code_type;      /* id(types.CodeType) */
	uint64_t filename, name, qualname, linetable; /* id()s of its fields */
	int64_t firstlineno;
	int64_t code_basicsize;  /* types.CodeType.__basicsize__: the bytecode's offset */
	uint64_t str_type;       /* id(str) */
	uint64_t bytes_type;     /* id(bytes) */
	uint64_t gil_held;       /* 1: called with the GIL held (ctypes.PyDLL) */
};

/* One frame as the readers store it: the function, file and line, each an
 * index into the collector's name table (python_names__intern), and its
 * kind (enum prof_py_frame_kind: a native frame's file is its library). */
struct py_frame_ref {
	int32_t function, file;
	int32_t line;
	int32_t kind;
};

#define PY_MAX_DEPTH 128

/* python_ranges.c: the capture's clock (CUPTI's timestamp), exported for
 * the hook module too. */
int64_t perfkit_py_now(void);

/* Find the offsets; 0 when every one was found and checked, else -1 with
 * why in *why (a static string). Call with the GIL held, from the thread
 * that measured c. */
int python_runtime__calibrate(const struct perfkit_py_calibration *c, const char **why);
/* Calibrated and readable. */
int python_runtime__ready(void);

/* The interpreter's threads: their thread states, at most cap; the count
 * found. */
int python_runtime__threads(uint64_t *tstates, int cap);
/* A thread state's OS thread id, 0 when unreadable. */
int64_t python_runtime__native_tid(uint64_t tstate);
/* The calling thread's own stack, read with plain loads (its frames stay
 * while it is in the call that asks): the depth, 0 when it has none. */
int python_runtime__own_stack(struct py_frame_ref *out, int cap);
/* The thread state holding the GIL now into *holder (0: the GIL is
 * free); -1 when it is not known (3.11, or not found). */
int python_runtime__gil_holder(uint64_t *holder);
/* The calling thread's own thread state (0 when it has none). */
uint64_t python_runtime__current_tstate(void);
/* The frames of a thread, innermost first, resolved to names; the depth
 * (0: none, or unreadable). */
int python_runtime__stack(uint64_t tstate, struct py_frame_ref *out, int cap);

/* python_native.c: the native frames under a Python thread's innermost
 * Python frame (--python-sampling). start: once, from a thread that can
 * take signals, interpreter_address any address inside the interpreter
 * (libpython or the executable that holds it); 0, or -1 with why (a
 * static string). stack: the frames of thread tid, innermost first, at
 * most cap; 0 when none were taken. Called from the sampler thread only. */
int python_native__start(uint64_t interpreter_address, const char **why);
int python_native__stack(int64_t tid, struct py_frame_ref *out, int cap);

/* python_names.c: the collector's table of names (module names, function
 * names, file names) shared by the Python parts: interned once, read by
 * index on the writer thread. Indexes start at 1; 0 means none. */
int32_t python_names__intern(const char *text, size_t len);
/* The text of an index, valid until exit; NULL when out of range. */
const char *python_names__text(int32_t idx);
/* The StringIds id of an index in w's store, written the first time it is
 * asked for (writer thread only); 0 when none. */
struct prof_writer;
int64_t python_names__string_id(struct prof_writer *w, int32_t idx);

#endif
