/* run_recover.h - finishing the output of a `perfkit run` that was killed
 * before it merged its processes' files (`perfkit recover FILE`). */
#ifndef PERFKIT_RUN_RECOVER_H
#define PERFKIT_RUN_RECOVER_H

#include "run_session.h"

/* Merge what the killed run's processes recorded into path, which becomes a
 * finished capture marked "recovered". 0, or -1 with the message printed;
 * the process files are kept on failure. */
int run_recover(const struct run_messages *msg, const char *path);

#endif
