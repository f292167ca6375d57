/* threads.h - how many threads a reader runs its independent work on. */
#ifndef REPORT_MODEL_THREADS_H
#define REPORT_MODEL_THREADS_H

/* PERFKIT_THREADS where it is a positive number, else one a core online;
 * at most 256. */
int threads__count(void);

#endif
