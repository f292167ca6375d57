/* thread_names.h - the OS names of a process's traced threads, read once
 * per thread on the writer thread and written to ThreadNames at the end
 * (thread_names.c says when and why).
 *
 * Free of CUPTI headers so the unit tests build it without CUDA. */
#ifndef PERFKIT_THREAD_NAMES_H
#define PERFKIT_THREAD_NAMES_H

#include <stdint.h>

struct prof_writer;
struct thread_names;

/* The threads of process pid, their names read under proc_root ("/proc";
 * a test's folder in the tests). 0 or PROF_E_NOMEM. */
int thread_names__new(uint32_t pid, const char *proc_root, struct thread_names **out);
void thread_names__delete(struct thread_names *t);
/* A row of thread tid was read: its name is read if this is its first. */
void thread_names__seen(struct thread_names *t, uint32_t tid);
/* Thread tid has an NVTX name, which wins over its OS name. */
void thread_names__nvtx(struct thread_names *t, uint32_t tid);
/* Looks for threads new since the last look (at most every 25 ms), so that
 * one which exits before its rows are read keeps the name it had. */
void thread_names__scan(struct thread_names *t, uint64_t now_ns);
/* Writes the name of each thread with rows and no NVTX name, once. 0, or
 * the writer's negative error. */
int thread_names__write(struct thread_names *t, struct prof_writer *w);

#endif
