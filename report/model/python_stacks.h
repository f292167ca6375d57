/* python_stacks.h - what `perfkit run --pytorch=modules`, `--python-sampling`
 * and `--python-backtrace=cuda` recorded, as every reader takes it
 * (python_stacks.c, python_modules.c, python_lines.c, python_places.c):
 * whether a capture has module ranges, samples or CUDA calls' stacks, the
 * sampling period, the nn.Module ranges with their direction, host time and the GPU time
 * of the work launched inside them, the time per Python line, the place in
 * the program of samples and of CUDA calls, and a stack's frames.
 *
 * The rows (docs/python.md): module ranges are NVTX ranges of the domain
 * "perfkit.pytorch", category 1 forward (push/pop on the calling thread),
 * 2 backward (start/end, on the thread they started on), 3 an optimizer's
 * step, named "QUALNAME (Class)"; PERFKIT_PYTHON_SAMPLES, _FRAMES and
 * _CUDA_CALLS hold the stacks (prof/tables.h). */
#ifndef REPORT_MODEL_PYTHON_STACKS_H
#define REPORT_MODEL_PYTHON_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/store.h"

/* The NVTX domain of the module ranges. */
#define PY_MODULES_DOMAIN "perfkit.pytorch"

/* A module range's category. */
enum py_direction {
	PY_FORWARD = 1,
	PY_BACKWARD = 2,
	PY_OPTIMIZER = 3,
};
/* "forward", "backward", "optimizer" ("?" for anything else). */
const char *py_direction__name(int direction);

/* What a capture holds of Python. */
struct py_capture {
	bool has_modules;    /* module ranges of PY_MODULES_DOMAIN */
	bool has_samples;    /* PERFKIT_PYTHON_SAMPLES rows */
	bool has_cuda_calls; /* PERFKIT_PYTHON_CUDA_CALLS rows */
	/* The time a sample stands for: 1e9 / python_sampling_hz, else (an
	 * older capture without the rate) the mean spacing of the most sampled
	 * thread's samples; 0 without samples. */
	int64_t period_ns;
	bool period_measured; /* taken from the samples, not the rate asked for */
};
int py_capture__read(struct prof_store *s, struct py_capture *c, struct prof_error *err);

/* ---- module ranges (python_modules.c) --------------------------------- */

/* One range of one module. */
struct py_module_range {
	int64_t id;              /* NVTX_EVENTS rowid */
	int64_t start_ns, end_ns;
	int64_t global_tid;      /* the thread it started on */
	int direction;           /* enum py_direction */
	int64_t name;            /* index into py_modules.names */
	int64_t self_ns;         /* the time it was the innermost module range
				  * open on its thread (the latest to start) */
	int64_t gpu_total_ns;    /* GPU work launched while it was open on its thread */
	int64_t gpu_self_ns;     /* ... while it was the innermost open one */
	int64_t self_kernels;    /* the kernels among that work */
	int64_t self_kernel_ns;  /* and their time */
};

struct py_modules {
	struct py_module_range *v; /* sorted by (thread, start, end descending) */
	size_t n, cap;
	char **names;              /* "QUALNAME (Class)", each distinct name once */
	size_t nnames, names_cap;
	int64_t gpu_inside_ns;     /* GPU work launched inside any of the ranges */
	int64_t rows_left_out;     /* module ranges and GPU rows with a bad span */
};

/* The module ranges that start in [from_ns, to_ns) with their host time
 * apart from their children and the GPU time of the work (kernels, copies,
 * memsets) launched inside them: a piece of work belongs to the ranges open
 * on the thread of the API call that launched it when the call started
 * (model/sql.h: SUM_LAUNCHED_BY, SUM_RANGE_OPEN_AT_CALL), to the innermost
 * of them (the latest to start) as its self time. A range's host self time
 * is its time less that of the module ranges inside it on its thread (the
 * time it is the innermost: children that overlap count once). Read once
 * for the connections to a finished file (prof_store__shared_take), in
 * the temporary table PY_MODULES_TABLE (id, globalTid, start, end,
 * direction, name) of the connection that reads them. */
int py_modules__load(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_modules *m,
		     struct prof_error *err);
void py_modules__exit(struct py_modules *m);
#define PY_MODULES_TABLE "temp.perfkit_py_modules"

/* "transformer.h.0.attn (GPT2Attention)" into the qualified name and the
 * class, pointers into buf (cap bytes); a name without " (Class)" is all
 * qualified name, with an empty class. The root module ("" qualified)
 * is named by its class alone: its qualified name is then the class. */
void py_module__split(const char *name, char *buf, size_t cap, const char **qualname,
		      const char **cls);

/* ---- time per Python line (python_lines.c) ---------------------------- */

/* A frame's place: the function, file and line (0 for a native frame,
 * whose file is its library). */
struct py_line {
	char *function, *file;
	int64_t line;
	int kind;                 /* 0 Python, 1 native */
	int64_t self[3];          /* samples with this line innermost, by state */
	int64_t total[3];         /* samples with this line anywhere, once each */
};

struct py_lines {
	struct py_line *v;
	size_t n, cap;
	int64_t samples[3];       /* every sample in the span, by state */
};

/* Every line of the samples taken in [from_ns, to_ns), sorted by self
 * samples (all states), most first; the state index is
 * enum prof_py_sample_state. */
int py_lines__load(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_lines *l,
		   struct prof_error *err);
/* The samples of each state in a line, summed. */
int64_t py_line__self(const struct py_line *l);
int64_t py_line__total(const struct py_line *l);
void py_lines__exit(struct py_lines *l);

/* ---- where in the program (python_places.c) --------------------------- */

/* A line of the program, named by the innermost Python frame of the
 * stacks that were there (native frames passed over: what a user changes
 * is Python) and the program's own line that led there, with how often and
 * how long. */
struct py_place {
	char *function, *file;
	int64_t line;
	/* the innermost frame of the program's own code below it, where the
	 * line is a library's (an installed package, the standard library,
	 * perfkit's hook): the line of the program that called into it; NULL
	 * where the line is the program's or no frame of it is on the stack */
	char *caller_function, *caller_file;
	int64_t caller_line;
	int64_t count;            /* samples, or calls */
	int64_t weight;           /* samples, or the calls' time (ns) */
};

struct py_places {
	struct py_place *v;       /* most weight first */
	size_t n, cap;
};

/* The file of perfkit's module hooks (--pytorch=modules), whose frames are
 * the capture's own cost. */
#define PY_HOOK_FILE "perfkit_hook.py"

/* The samples taken outside CUDA calls in [from_ns, to_ns), by place,
 * whether their thread ran Python or C code that let the GIL go (a
 * PyTorch op's dispatch runs so: the host's work all the same); with
 * cuda_threads only those of the threads that made CUDA calls in the span
 * (not a DataLoader worker's, say), and not those in perfkit's hook. */
int py_places__sampled(struct prof_store *s, int64_t from_ns, int64_t to_ns,
		       bool cuda_threads, struct py_places *p, struct prof_error *err);
/* The CUDA calls of calls_sql (a SELECT of globalTid, correlationId,
 * start, end with ?1 and ?2 bound to from_ns and to_ns) by the place of
 * their stack (PERFKIT_PYTHON_CUDA_CALLS), weighed by their time. */
int py_places__of_calls(struct prof_store *s, const char *calls_sql, int64_t from_ns,
			int64_t to_ns, struct py_places *p, struct prof_error *err);
/* The samples taken inside a CUDA call (state 1) on the thread of one of
 * the calls of calls_sql, by place: where the stacks of the calls were not
 * recorded. */
int py_places__sampled_in_calls(struct prof_store *s, const char *calls_sql, int64_t from_ns,
				int64_t to_ns, struct py_places *p, struct prof_error *err);
void py_places__exit(struct py_places *p);

/* ---- a stack's frames (python_stacks.c) ------------------------------- */

/* The frames of stack (global_pid, stack_id), outermost first, as
 * "function (file:line)" for Python frames and "function [library]" for
 * native ones, joined by sep, into a malloc'd string (*out NULL when the
 * stack has no frame). */
int py_stack__format(struct prof_store *s, int64_t global_pid, int64_t stack_id, const char *sep,
		     char **out, struct prof_error *err);

#endif
